"""Stand-ins by what the domain lets them do: a kind with no plan in the role is never
asked about, a kind is asked only about the actions its plan uses, and a kind the domain
vouches for (a static fact its plan needs, `(manual broom_1)`) goes first without the role
question. A situation about the world that stops a step twice is blamed, and a stand-in
the role's other actions allow (a broom sweeping in a power outage) takes over."""

from __future__ import annotations

import pytest

from cowp_ros.cowp.acquisition import agreed_actions
from cowp_ros.cowp.answers import ROLE_ACTION, CandidateAssessment, RoleQuestion
from cowp_ros.cowp.loop import OpenWorldPlanner, Phase
from cowp_ros.cowp.policies import LoopPolicies
from cowp_ros.llm.language_model import YesNo
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.grounded.frugal_acquirer import FrugalAcquirer
from cowp_ros.methods.grounded.policies import GROUNDED_POLICIES
from cowp_ros.methods.grounded.stand_in_plans import plan_with, static_predicates
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.registry import build_loop
from cowp_ros.pddl import Atom, Literal, PlanningTask, edits
from cowp_ros.planning import make_planner
from cowp_ros.tasks import TaskSpec, get_task
from cowp_ros.tasks.phrases import ActionPhrases

PLANNER = make_planner("pyperplan")


@pytest.fixture(scope="module")
def clean() -> tuple[TaskSpec, PlanningTask]:
    spec = get_task("clean_area")
    return spec, spec.load_house()


def without_power(task: PlanningTask) -> PlanningTask:
    """The house with a power outage stated and stopping the powered cleaning."""
    outage = Atom("power_outage")
    task = edits.add_fact(task, outage)
    return edits.add_precondition(task, "clean_area", Literal(outage, positive=False))


def test_only_a_fact_no_action_changes_is_static(clean) -> None:
    _, task = clean
    static = static_predicates(task)
    assert "manual" in static and "beside" in static
    assert "holding" not in static and "switched_on" not in static


def test_a_broom_is_vouched_for_by_the_domain_and_asked_only_about_sweeping(clean) -> None:
    _, task = clean
    broom = plan_with(task, PLANNER, "vacuum", "broom", 30.0)
    assert broom is not None and broom.vouched
    assert broom.vouched_by == ("(manual broom_1)",)
    assert set(broom.actions) == {"grasp_vacuum", "sweep_area"}
    towel = plan_with(task, PLANNER, "vacuum", "towel", 30.0)
    assert towel is not None and not towel.vouched  # the copies let it be plugged in


def test_without_power_a_kind_the_domain_gives_no_other_way_has_no_plan(clean) -> None:
    _, task = clean
    dark = without_power(task)
    assert plan_with(dark, PLANNER, "vacuum", "towel", 30.0) is None
    assert plan_with(dark, PLANNER, "vacuum", "mop", 30.0) is not None


def test_vouched_kinds_come_first_and_kinds_with_no_plan_are_not_asked(clean) -> None:
    spec, task = clean
    dark = without_power(task)
    acquirer = FrugalAcquirer(
        KnowledgeAcquirer(ScriptedModel(), ActionPhrases(spec.phrases)),
        embedder=None,  # every kind equally close: the given order
        max_candidates=3,
        planner=PLANNER,
    )
    given = [("napkin", "napkin_1"), ("towel", "towel_1"), ("broom", "broom_1"), ("mop", "mop_1")]
    ranked = acquirer.rank(dark, "vacuum", given, spec.description)
    assert [kind for kind, _ in ranked] == ["broom", "mop"]
    lit = acquirer.rank(task, "vacuum", given, spec.description)
    assert [kind for kind, _ in lit] == ["broom", "mop", "napkin"]


def test_a_vouched_kind_skips_the_role_question(clean) -> None:
    spec, task = clean
    model = ScriptedModel(yes_no=[(r"Can a broom be used instead", 0.2)], default_yes_no=True)
    acquirer = FrugalAcquirer(
        KnowledgeAcquirer(model, ActionPhrases(spec.phrases), role_threshold=0.9),
        embedder=None,
        planner=PLANNER,
    )
    acquirer.rank(task, "vacuum", [("broom", "broom_1")], spec.description)
    actions = ["turnon_vacuum", "clean_area", "grasp_vacuum", "plug_vacuum", "sweep_area"]
    broom = acquirer.assess(task, "vacuum", actions, "broom", "broom_1", spec.description)
    assert broom.accepted
    assert [q.action for q in broom.questions] == ["grasp_vacuum", "sweep_area"]


def test_copies_are_made_only_of_the_actions_the_kind_was_found_fit_for() -> None:
    def question(action: str) -> RoleQuestion:
        return RoleQuestion(action, "?", YesNo(True, 0.9, "Yes"), True, False)

    broom = CandidateAssessment(
        "broom", "broom_1", [question(ROLE_ACTION), question("grasp_vacuum")]
    )
    actions = ["plug_vacuum", "grasp_vacuum", "sweep_area"]
    assert agreed_actions([broom], "broom", actions) == ["grasp_vacuum"]
    unasked = CandidateAssessment("mop", "mop_1")
    assert agreed_actions([broom, unasked], "mop", actions) == actions


def power_cut_while_cleaning(
    spec: TaskSpec, task: PlanningTask, policies: LoopPolicies | None = None
) -> OpenWorldPlanner:
    """The grounded loop told of a power outage it judges harmless, before cleaning."""
    model = ScriptedModel(yes_no=[(r"still go on with the task\?$", True)], default_yes_no=True)
    loop = build_loop("grounded", spec, model, problem=task)
    if policies is not None:
        loop.policies = policies
    loop.plan()
    while (step := loop.next_step()) is not None and step.action != "clean_area":
        loop.step_done(True)
    loop.observe("there is a power outage")
    assert loop.next_step() is not None and loop.next_step().action == "clean_area"
    return loop


def test_a_world_situation_is_blamed_after_a_second_failure_and_a_broom_sweeps(clean) -> None:
    spec, task = clean
    loop = power_cut_while_cleaning(spec, task)
    cleaning = loop.next_step()
    loop.step_done(False)
    assert loop.next_step() == cleaning  # one failure may be the robot's own: retried
    assert not any("failed after it" in e.text for e in loop.report.events)
    loop.step_done(False)
    assert any("failed after it" in e.text for e in loop.report.events)
    kinds = {task.objects[a] for s in loop.remaining_steps for a in s.args}
    assert kinds & {"broom", "mop"}
    assert any(s.action.startswith("sweep_area") for s in loop.remaining_steps)
    while loop.next_step() is not None:
        loop.step_done(True)
    assert loop.phase is Phase.COMPLETED


def test_without_world_stand_ins_a_world_situation_still_gives_up_at_once(clean) -> None:
    spec, task = clean
    strict = LoopPolicies(
        blame=GROUNDED_POLICIES.blame,
        moot=GROUNDED_POLICIES.moot,
        guard=GROUNDED_POLICIES.guard,
    )
    loop = power_cut_while_cleaning(spec, task, strict)
    loop.step_done(False)
    loop.step_done(False)
    assert loop.phase is Phase.NO_SOLUTION
    assert "no stand-in can help: it is about the world" in loop.explanation()


def test_a_world_situation_no_kind_can_work_around_says_so(clean) -> None:
    spec, house = clean
    by_hand = {"broom", "mop"}
    task = edits.keep_objects(house, [o for o, t in house.objects.items() if t not in by_hand])
    loop = power_cut_while_cleaning(spec, task)
    loop.step_done(False)
    loop.step_done(False)
    assert loop.phase is Phase.NO_SOLUTION
    # What is missing, in the task's terms: the close kinds have no way to do the job.
    said = loop.explanation()
    assert "no stand-in can help: no action of the task lets a towel" in said
    assert said.endswith("do the vacuum's job here")


def test_no_stand_in_names_the_close_kinds_the_domain_gives_no_way(clean) -> None:
    spec, house = clean
    by_hand = {"broom", "mop"}
    task = edits.keep_objects(house, [o for o, t in house.objects.items() if t not in by_hand])
    dark = without_power(task)
    acquirer = FrugalAcquirer(
        KnowledgeAcquirer(ScriptedModel(), ActionPhrases(spec.phrases)),
        embedder=None,
        max_candidates=2,
        planner=PLANNER,
    )
    given = [("towel", "towel_1"), ("napkin", "napkin_1"), ("bucket", "bucket_1")]
    assert acquirer.rank(dark, "vacuum", given, spec.description) == []
    assert acquirer.ruled_out("vacuum") == ("towel", "napkin")
    assert acquirer.rank(task, "vacuum", given, spec.description) == given[:2]
    assert acquirer.ruled_out("vacuum") == ()


def test_no_kind_takes_the_faucets_role_by_drawing_on_the_faucets_own_water() -> None:
    """fill_cup's domain says which objects supply water, so with the only faucet broken a
    sink (whose water is the faucet's) is ruled out for its role and the explanation can
    say so, while a second faucet of the house would still do."""
    spec = get_task("fill_cup")
    house = spec.load_house()
    broken = edits.add_fact(house, Atom("is_broken", ("faucet_1",)))
    broken = edits.add_precondition(
        broken, "turnon_faucet", Literal(Atom("is_broken", ("?f",)), positive=False)
    )
    assert PLANNER.solve(broken, 30.0).found  # faucet_2 supplies water
    others = {"faucet_2", "faucet_3"}
    broken = edits.keep_objects(broken, [o for o in broken.objects if o not in others])
    assert not PLANNER.solve(broken, 30.0).found
    assert plan_with(broken, PLANNER, "faucet", "sink", 30.0) is None
    acquirer = FrugalAcquirer(
        KnowledgeAcquirer(ScriptedModel(), ActionPhrases(spec.phrases)),
        embedder=None,
        planner=PLANNER,
    )
    assert acquirer.rank(broken, "faucet", [("sink", "sink_1")], spec.description) == []
    assert acquirer.ruled_out("faucet") == ("sink",)
