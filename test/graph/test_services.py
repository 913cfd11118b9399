"""The planner and commonsense services called directly, as another ROS program would."""

from __future__ import annotations

import time

import pytest
from graph_harness import Probe, partial_profile

from cowp_interfaces.msg import PlanStep
from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.tasks import get_task

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def call(probe: Probe, srv_type, name: str, request, timeout_s: float = 120.0):
    client = probe.node.create_client(srv_type, name)
    assert client.wait_for_service(timeout_sec=30), name
    return probe.wait_future(client.call_async(request), timeout_s, name)


def test_plan_service_plans_a_task_and_reports_bad_pddl(start_graph, probe: Probe) -> None:
    start_graph(partial_profile(["planner"]))
    response = call(probe, Plan, "/cowp/plan", Plan.Request(task="fill_cup"))
    assert response.success and response.status == "found"
    assert response.steps[-1].action == "place_cup" and response.planner
    task = get_task("serve_water").load()
    response = call(
        probe,
        Plan,
        "/cowp/plan",
        Plan.Request(domain_pddl=task.domain_text(), problem_pddl=task.problem_text()),
    )
    assert response.success and response.steps[-1].action == "deliver_water"
    broken = call(
        probe, Plan, "/cowp/plan", Plan.Request(domain_pddl="(define (domain", problem_pddl="x")
    )
    assert not broken.success and broken.status == "error" and broken.message
    unknown = call(probe, Plan, "/cowp/plan", Plan.Request(task="make_coffee"))
    assert unknown.status == "error" and "unknown task" in unknown.message


@pytest.mark.llm
def test_commonsense_answers_and_reports_bad_requests(start_graph, local_llm, probe) -> None:
    url, model = local_llm
    start_graph(
        partial_profile(
            ["commonsense"],
            [
                f"commonsense.llm_url={url}",
                f"commonsense.llm_model={model}",
                "commonsense.method=cowp",
            ],
        )
    )
    step = PlanStep(action="fill_water", arguments=["cup_1", "faucet_1"])
    check = call(
        probe,
        CheckPlan,
        "/cowp/check_plan",
        CheckPlan.Request(task="serve_water", steps=[step], situation="the cup is dirty"),
    )
    assert check.success, check.message
    assert check.questions == [
        "Is it suitable for a robot to fill the cup with water from the faucet, "
        "if the cup is dirty?"
    ]
    assert len(check.answers) == len(check.p_yes) == len(check.unclear) == 1
    assert check.failing_step in (-1, 0)
    assert (check.predicate == "(is_dirty cup_1)") == (not check.feasible)

    only_predicate = call(
        probe,
        CheckPlan,
        "/cowp/check_plan",
        CheckPlan.Request(task="serve_water", situation="the cup is dirty"),
    )
    assert only_predicate.predicate == "(is_dirty cup_1)" and not only_predicate.questions
    assert only_predicate.predicate_subject == "cup_1"

    acquire = call(
        probe,
        AcquireKnowledge,
        "/cowp/acquire_knowledge",
        AcquireKnowledge.Request(
            task="serve_water",
            role_type="cup",
            actions=["fill_water"],
            candidate_types=["bowl", "mug"],
            candidate_examples=["bowl_1", "mug_1"],
            situation="the cup is dirty",
        ),
    )
    assert acquire.success, acquire.message
    assert set(acquire.question_candidates) == {"bowl", "mug"}
    assert set(acquire.accepted) <= {"bowl", "mug"}
    assert (acquire.chosen in acquire.accepted) if acquire.accepted else acquire.chosen == ""
    assert "" in acquire.question_actions  # the role question, asked of each kind

    vouched = call(
        probe,
        AcquireKnowledge,
        "/cowp/acquire_knowledge",
        AcquireKnowledge.Request(
            task="serve_water",
            role_type="cup",
            actions=["fill_water"],
            candidate_types=["mug"],
            candidate_examples=["mug_1"],
            without_role_question=True,
        ),
    )
    assert vouched.success, vouched.message
    assert list(vouched.question_actions) == ["fill_water"]  # Prompt 2 only

    mismatched = call(
        probe,
        AcquireKnowledge,
        "/cowp/acquire_knowledge",
        AcquireKnowledge.Request(task="serve_water", candidate_types=["bowl"]),
    )
    assert not mismatched.success and "same length" in mismatched.message
    unknown = call(
        probe,
        CheckPlan,
        "/cowp/check_plan",
        CheckPlan.Request(task="make_coffee", situation="x"),
    )
    assert not unknown.success and "unknown task" in unknown.message


@pytest.mark.llm
def test_commonsense_grounded_decides_once_for_the_steps_up_to_the_blocked_one(
    start_graph, local_llm, probe
) -> None:
    url, model = local_llm
    start_graph(
        partial_profile(
            ["commonsense"],
            [
                f"commonsense.llm_url={url}",
                f"commonsense.llm_model={model}",
                "commonsense.method=grounded",
            ],
        )
    )
    steps = [
        PlanStep(action="walk_to", arguments=["faucet_1"]),
        PlanStep(action="fill_water", arguments=["cup_1", "faucet_1"]),
    ]
    check = call(
        probe,
        CheckPlan,
        "/cowp/check_plan",
        CheckPlan.Request(task="serve_water", steps=steps, situation="the cup is broken"),
    )
    assert check.success, check.message
    assert list(check.questions) == [
        "Task: serving a cup of water to a person at the table. The cup is broken. Can the "
        "robot still use the cup for the task?"
    ]
    if check.feasible:
        assert check.failing_step == -1 and not check.predicate
    else:  # the decision, with no made-up verdict for the walk (it does not use the cup)
        assert check.failing_step == 1 and list(check.question_steps) == [1]
        assert check.reason.startswith(
            "decided: the cup is broken: blocks after 1 question: it can no longer be used"
        )
        assert check.predicate == "(is_broken cup_1)" and check.predicate_source == "grounding"


def test_commonsense_reads_the_grounded_prefix_ahead_at_start_and_after_stand_ins(
    start_graph, probe: Probe
) -> None:
    from cowp_ros.chaos.answers import SensibleModel
    from cowp_ros.chaos.server import ScriptedLLMServer
    from cowp_ros.llm.client import WARM_QUESTION
    from cowp_ros.methods.grounded.questions import EXAMPLES

    def readings(server: ScriptedLLMServer) -> list[str]:
        """The last words of each prefix reading (the task's, once the node knows it)."""
        asked = [r.json["messages"][-1]["content"] for r in server.chat_requests]
        return [q for q in asked if q.endswith(WARM_QUESTION)]

    def warmed(server: ScriptedLLMServer) -> int:
        return len(readings(server))

    def wait_warmed(server: ScriptedLLMServer, count: int) -> None:
        deadline = time.monotonic() + 60.0
        while warmed(server) < count:
            assert time.monotonic() < deadline, f"{count} prefix reading(s) never came"
            probe.executor.spin_once(timeout_sec=0.1)

    with ScriptedLLMServer(SensibleModel()) as server:
        start_graph(
            partial_profile(
                ["commonsense"],
                [f"commonsense.llm_url={server.url}", "commonsense.llm_model=scripted"],
            )
        )
        wait_warmed(server, 1)  # at start-up, before any request
        first = next(
            r for r in server.chat_requests if r.json["messages"][-1]["content"] == WARM_QUESTION
        )
        examples = [m["content"] for m in first.json["messages"][1:-1:2]]
        assert examples == [e.question for e in EXAMPLES]  # the monitor's shared prefix
        request = AcquireKnowledge.Request(
            task="serve_water",
            role_type="cup",
            actions=["fill_water"],
            candidate_types=["mug"],
            candidate_examples=["mug_1"],
            situation="the cup is dirty",
        )
        assert call(probe, AcquireKnowledge, "/cowp/acquire_knowledge", request).success
        wait_warmed(server, 2)  # stand-in questions evicted it: read again
        # at start-up no task is known; after a request, its task's words end the prefix
        assert readings(server) == [
            WARM_QUESTION,
            f"Task: serving a cup of water to a person at the table. {WARM_QUESTION}",
        ]


def test_commonsense_grounded_asks_a_new_plans_needs_once_and_keeps_them(
    start_graph, probe: Probe
) -> None:
    from cowp_ros.chaos.answers import SensibleModel
    from cowp_ros.chaos.server import ScriptedLLMServer
    from cowp_ros.methods.grounded.situation_monitor import NEED, STATE, TASK_STATE, USE

    steps = [
        PlanStep(action="walk_to", arguments=["faucet_1"]),
        PlanStep(action="fill_water", arguments=["cup_1", "faucet_1"]),
    ]
    with ScriptedLLMServer(SensibleModel()) as server:
        start_graph(
            partial_profile(
                ["commonsense"],
                [
                    f"commonsense.llm_url={server.url}",
                    "commonsense.llm_model=scripted",
                    "commonsense.method=grounded",
                    "commonsense.answer_cache=false",
                ],
            )
        )
        plan = CheckPlan.Request(task="serve_water", steps=steps)  # no situation: a new plan
        ahead = call(probe, CheckPlan, "/cowp/check_plan", plan)
        assert ahead.success, ahead.message
        assert ahead.feasible and ahead.failing_step == -1 and not ahead.predicate
        # Each role the plan uses, at its first step: the faucet (walked to), the cup.
        assert list(ahead.variants).count(TASK_STATE) == 2
        assert set(ahead.variants) <= {TASK_STATE, NEED} and set(ahead.question_steps) == {0, 1}
        assert ahead.model_calls == len(ahead.questions)
        # Kept for the node's life: the same plan again asks nothing ...
        again = call(probe, CheckPlan, "/cowp/check_plan", plan)
        assert again.success and list(again.questions) == [] and again.model_calls == 0
        # ... and a situation about the cup asks only its own questions.
        plan.situation = "the cup has a sticker on its side"
        check = call(probe, CheckPlan, "/cowp/check_plan", plan)
        assert check.success, check.message
        assert check.questions and set(check.variants) <= {USE, STATE}
