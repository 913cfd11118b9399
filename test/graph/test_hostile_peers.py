"""The graph's services called by a hostile ROS peer: every request bounded, every
refusal immediate and named, no peer able to hold a service from the task manager."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from graph_harness import Probe, partial_profile

from cowp_interfaces.msg import PlanStep
from cowp_interfaces.srv import AcquireKnowledge, CheckPlan, Plan
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.chaos.workspace import slow_domain, slow_problem
from cowp_ros.ros.nodes import planner, task_manager
from cowp_ros.tasks import get_task

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ATTACK_DOMAIN = (
    "(define (domain boom) (:requirements :strips :typing) (:types thing)"
    " (:predicates (p ?a - thing) (q ?a - thing ?b - thing) (goal_reached))"
    " (:action blow :parameters (?a - thing ?b - thing ?c - thing ?d - thing"
    " ?e - thing ?f - thing) :precondition (and (p ?a) (p ?b) (p ?c) (p ?d) (p ?e) (p ?f))"
    " :effect (and (q ?a ?b) (q ?c ?d) (q ?e ?f))))"
)
ATTACK_PROBLEM = (
    "(define (problem boom1) (:domain boom) (:objects "
    + " ".join(f"o{i}" for i in range(30))
    + " - thing) (:init "
    + " ".join(f"(p o{i})" for i in range(30))
    + ") (:goal (goal_reached)))"
)


def call(probe: Probe, srv_type, name: str, request, timeout_s: float = 60.0):
    client = probe.node.create_client(srv_type, name)
    assert client.wait_for_service(timeout_sec=30), name
    return probe.wait_future(client.call_async(request), timeout_s, name)


def test_the_planner_never_outwaits_the_task_manager() -> None:
    longest = {p.name: p.default for p in planner.PARAMETERS}["max_timeout_s"]
    waits = {p.name: p.default for p in task_manager.PARAMETERS}["planner_timeout_s"]
    assert longest <= waits


def test_the_grounding_attack_is_refused_at_once(start_graph, probe: Probe) -> None:
    start_graph(partial_profile(["planner"]))
    started = time.monotonic()
    response = call(
        probe,
        Plan,
        "/cowp/plan",
        Plan.Request(domain_pddl=ATTACK_DOMAIN, problem_pddl=ATTACK_PROBLEM, timeout_s=20.0),
    )
    assert time.monotonic() - started < 10
    assert response.status == "error" and not response.success
    assert "grounds 729,000,000 actions" in response.message


def test_what_parsing_and_negation_would_cost_is_refused_at_once(start_graph, probe: Probe) -> None:
    """A 480-byte negated goal grew the planner node by a gigabyte; a type chain 1,000
    deep held a slot for two minutes. Both are refused before the library or a worker
    does the work, and a normal request is answered meanwhile."""
    from cowp_ros.ros.chaos_peer import negated_goal_pddl, type_chain_pddl

    start_graph(partial_profile(["planner"]))
    for (domain, problem), message in [
        (negated_goal_pddl(), "729,000,000 complement facts, over the limit"),
        (type_chain_pddl(1000), "ancestors, over the limit of 32"),
    ]:
        started = time.monotonic()
        response = call(
            probe,
            Plan,
            "/cowp/plan",
            Plan.Request(domain_pddl=domain, problem_pddl=problem, timeout_s=20.0),
        )
        assert time.monotonic() - started < 10
        assert response.status == "error" and message in response.message, response.message
    task = get_task("serve_water").load()
    normal = call(
        probe,
        Plan,
        "/cowp/plan",
        Plan.Request(domain_pddl=task.domain_text(), problem_pddl=task.problem_text()),
    )
    assert normal.success, normal.message


def test_a_search_past_its_memory_budget_is_an_error_that_says_so(
    start_graph, probe: Probe
) -> None:
    # pyperplan's worker: Fast Downward's translator, under the same cap, at times
    # computes for the whole deadline before it runs out (a timeout, bounded too)
    start_graph(
        partial_profile(
            ["planner"],
            [
                "planner.planner=pyperplan",
                "planner.memory_mb=300",
                "planner.max_ground_actions=1000000000",
            ],
        )
    )
    response = call(
        probe,
        Plan,
        "/cowp/plan",
        Plan.Request(domain_pddl=ATTACK_DOMAIN, problem_pddl=ATTACK_PROBLEM, timeout_s=50.0),
    )
    assert response.status == "error"
    assert "ran out of its 300 MB memory budget" in response.message, response.message


def test_a_slow_peer_does_not_hold_the_planner_from_others(start_graph, probe: Probe) -> None:
    start_graph(partial_profile(["planner"], ["planner.max_timeout_s=8"]))
    slow_client = probe.node.create_client(Plan, "/cowp/plan")
    assert slow_client.wait_for_service(timeout_sec=30)
    slow = slow_client.call_async(
        Plan.Request(domain_pddl=slow_domain(), problem_pddl=slow_problem(12), timeout_s=1e9)
    )
    sent = time.monotonic()
    probe.spin_until(lambda: time.monotonic() - sent > 2.0, 5.0, "the slow search to start")
    task = get_task("serve_water").load()
    started = time.monotonic()
    response = call(
        probe,
        Plan,
        "/cowp/plan",
        Plan.Request(domain_pddl=task.domain_text(), problem_pddl=task.problem_text()),
    )
    assert response.success, response.message
    assert time.monotonic() - started < 6, "the plan waited behind the slow search"
    assert not slow.done()
    assert probe.wait_future(slow, 30.0, "the slow search").status == "timeout"


def test_a_request_past_the_concurrent_limit_is_refused_at_once(start_graph, probe: Probe) -> None:
    start_graph(partial_profile(["planner"], ["planner.max_timeout_s=10"]))
    client = probe.node.create_client(Plan, "/cowp/plan")
    assert client.wait_for_service(timeout_sec=30)
    endless = Plan.Request(domain_pddl=slow_domain(), problem_pddl=slow_problem(12), timeout_s=1e9)
    holding = [client.call_async(endless) for _ in range(2)]
    sent = time.monotonic()
    probe.spin_until(lambda: time.monotonic() - sent > 2.0, 5.0, "both searches to start")
    started = time.monotonic()
    third = probe.wait_future(client.call_async(endless), 30.0, "the third request")
    assert time.monotonic() - started < 5, "the third request waited for a slot"
    assert third.status == "error" and "busy" in third.message
    for future in holding:
        assert probe.wait_future(future, 30.0, "a held search").status == "timeout"


@pytest.fixture
def commonsense(start_graph) -> Iterator[SensibleModel]:
    model = SensibleModel()
    with ScriptedLLMServer(model) as server:
        start_graph(
            partial_profile(
                ["commonsense"],
                [
                    f"commonsense.llm_url={server.url}",
                    "commonsense.llm_model=scripted",
                    "commonsense.answer_cache=false",
                    "commonsense.warm_prefix=false",  # it counts every request
                    "commonsense.monitor_calibration=off",
                    "commonsense.method=cowp",
                ],
            )
        )
        yield model


def test_commonsense_bounds_candidates_per_request(commonsense, probe: Probe) -> None:
    kinds = [f"kind_{i}" for i in range(300)]
    started = time.monotonic()
    response = call(
        probe,
        AcquireKnowledge,
        "/cowp/acquire_knowledge",
        AcquireKnowledge.Request(
            task="serve_water",
            role_type="cup",
            actions=["fill_water"],
            candidate_types=kinds,
            candidate_examples=[f"{k}_1" for k in kinds],
        ),
    )
    assert not response.success and "300 candidate kinds" in response.message
    assert time.monotonic() - started < 10
    assert not commonsense.asked, "the model was asked about a refused request"


def test_commonsense_sends_back_no_name_it_would_not_take(commonsense, probe: Probe) -> None:
    evil = "mug) (:action evil"
    response = call(
        probe,
        AcquireKnowledge,
        "/cowp/acquire_knowledge",
        AcquireKnowledge.Request(
            task="serve_water",
            role_type="cup",
            candidate_types=[evil],
            candidate_examples=["mug_1"],
            select_only=True,
        ),
    )
    assert not response.success and "PDDL syntax" in response.message
    assert evil not in [*response.accepted, response.chosen]


def test_commonsense_refuses_a_template_with_a_format_spec(commonsense, probe: Probe) -> None:
    step = PlanStep(action="fill_water", arguments=["cup_1", "faucet_1"])
    response = call(
        probe,
        CheckPlan,
        "/cowp/check_plan",
        CheckPlan.Request(
            task="serve_water",
            steps=[step],
            situation="the cup is dirty",
            phrase_actions=["fill_water"],
            phrase_templates=["fill {0:>20000000} from {1}"],
        ),
    )
    assert not response.success and "only plain fields" in response.message
    assert not commonsense.asked
