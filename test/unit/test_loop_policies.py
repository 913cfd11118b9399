"""What a method decides inside the loop comes in as policies: the same loop and ports
behave as each method's policies say (blame a failure, set a situation aside, spare a
step a question)."""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.loop import OpenWorldPlanner, Reaction
from cowp_ros.cowp.loop_state import KnownSituation
from cowp_ros.cowp.policies import PAPER_POLICIES, LoopPolicies
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.grounded.policies import GROUNDED_POLICIES
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.paper.monitor import PlanMonitor
from cowp_ros.methods.paper.predicates import PredicateGenerator
from cowp_ros.pddl import PlanningTask, edits
from cowp_ros.planning import PlanStep, make_planner
from cowp_ros.tasks import TaskSpec
from cowp_ros.tasks.phrases import ActionPhrases


def paper_ports_with(
    spec: TaskSpec, task: PlanningTask, model: ScriptedModel, policies: LoopPolicies
) -> OpenWorldPlanner:
    """The paper's ports, in this process, with the given policies."""
    phrases = ActionPhrases(spec.phrases)
    return OpenWorldPlanner(
        task,
        monitor=PlanMonitor(model, phrases),
        acquirer=KnowledgeAcquirer(model, phrases),
        predicates=PredicateGenerator(model, reserved=frozenset(task.predicates)),
        planner=make_planner("pyperplan"),
        phrases=phrases,
        description=spec.description,
        task_name=spec.name,
        policies=policies,
        model=model,
    )


def fail_holding_after_a_harmless_crack(fill_cup: TaskSpec, policies: LoopPolicies):
    task = edits.add_object(fill_cup.load(), "cup_2", "cup")
    loop = paper_ports_with(fill_cup, task, ScriptedModel(default_yes_no=True), policies)
    loop.plan()
    while (step := loop.next_step()) is not None and step.action != "hold_cup":
        loop.step_done(True)
    held = loop.next_step()
    assert held is not None
    assert loop.observe("the cup is cracked") is Reaction.FEASIBLE  # judged harmless
    loop.step_done(False)
    return loop, held


def test_the_papers_policies_only_replan_after_a_failure(fill_cup: TaskSpec) -> None:
    loop, held = fail_holding_after_a_harmless_crack(fill_cup, PAPER_POLICIES)
    assert loop.next_step() == held  # the same step again, from the unchanged state
    assert loop.report.of_kind("pddl_change") == []
    assert not any("failed after it" in e.text for e in loop.report.events)


def test_the_grounded_policies_blame_the_harmless_situation(fill_cup: TaskSpec) -> None:
    loop, held = fail_holding_after_a_harmless_crack(fill_cup, GROUNDED_POLICIES)
    (blamed,) = [e for e in loop.report.of_kind("predicate") if "failed after it" in e.text]
    assert blamed.text == (
        "understood: the cup is cracked as (is_cracked cup_1): hold the cup failed after it"
    )
    changes = [e.data["change"] for e in loop.report.of_kind("pddl_change")]
    assert changes == ["add_fact", "add_precondition"]
    assert all(held.args[0] not in s.args for s in loop.remaining_steps)


class AskEveryStep:
    """A guard that spares no step: every remaining step is put to the monitor."""

    def guarded(self, step: PlanStep, known: KnownSituation, task: PlanningTask) -> bool:
        return False


class KeepEverySituation:
    """A moot policy that sets nothing aside."""

    def replaced_by(
        self,
        known: KnownSituation,
        task: PlanningTask,
        remaining: Sequence[PlanStep],
        learned: Sequence[object],
    ) -> None:
        return None


def test_a_methods_own_guard_and_moot_rules_are_used(tiny: PlanningTask) -> None:
    """With the paper's guard, steps that do not touch the dirty cup's stand-in are not
    asked about again; with a guard that spares nothing, they are."""
    phrases = ActionPhrases(
        {"find_cup": "find {0}", "hold_cup": "hold {0}", "place_cup": "place {0} on {1}"}
    )

    def questions_with(policies: LoopPolicies) -> list[str]:
        model = ScriptedModel(yes_no=[("hold the cup, if the cup is dirty", False), ("", True)])
        loop = OpenWorldPlanner(
            tiny,
            monitor=PlanMonitor(model, phrases),
            acquirer=KnowledgeAcquirer(model, phrases),
            predicates=PredicateGenerator(model, reserved=frozenset(tiny.predicates)),
            planner=make_planner("pyperplan"),
            phrases=phrases,
            description="serving a cup",
            policies=policies,
            model=model,
        )
        loop.plan()
        loop.step_done(True)
        assert loop.observe("the cup is dirty") is Reaction.ACQUIRED
        return model.questions("yes_no")

    guarded = questions_with(PAPER_POLICIES)
    unguarded = questions_with(
        LoopPolicies(blame=PAPER_POLICIES.blame, moot=KeepEverySituation(), guard=AskEveryStep())
    )
    assert not [q for q in guarded if "the bowl, if" in q]
    assert [q for q in unguarded if "the bowl, if" in q]
