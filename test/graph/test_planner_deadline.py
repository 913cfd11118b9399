"""The planner node caps the deadline a client asks for, and takes integer parameters."""

from __future__ import annotations

import time

import pytest
from graph_harness import Probe, partial_profile

from cowp_interfaces.srv import Plan
from cowp_ros.chaos.workspace import slow_domain, slow_problem

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_a_client_cannot_hold_the_planner_for_ever(start_graph, probe: Probe) -> None:
    # integers where the node declares doubles: `--set planner.max_timeout_s=2` in bringup
    start_graph(partial_profile(["planner"], ["planner.max_timeout_s=2", "planner.timeout_s=5"]))
    client = probe.node.create_client(Plan, "/cowp/plan")
    assert client.wait_for_service(timeout_sec=30)
    request = Plan.Request(
        domain_pddl=slow_domain(), problem_pddl=slow_problem(12), timeout_s=1e9
    )  # unsolvable, and minutes of search
    started = time.monotonic()
    response = probe.wait_future(client.call_async(request), 60.0, "the capped plan")
    assert response.status == "timeout" and not response.success
    assert time.monotonic() - started < 30
