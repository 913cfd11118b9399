"""A node killed outright (no goodbye sent) is noticed by its peers within seconds: the
nodes cowp starts announce a 3 s DDS lease instead of Fast DDS's default 20 s."""

from __future__ import annotations

import os
import signal
import time

import pytest
from graph_harness import Probe, partial_profile

from cowp_interfaces.srv import Plan
from cowp_ros.bringup.liveliness import PROFILE_ENV, liveliness_environment

pytestmark = [pytest.mark.ros, pytest.mark.slow]


def test_a_users_own_dds_profile_is_left_alone() -> None:
    assert liveliness_environment({PROFILE_ENV: "/mine.xml"}) == {}
    assert liveliness_environment({"RMW_IMPLEMENTATION": "rmw_cyclonedds_cpp"}) == {}
    assert liveliness_environment({})[PROFILE_ENV].endswith("fastdds_liveliness.xml")


def test_a_killed_node_is_gone_in_seconds_not_twenty(start_graph, probe: Probe) -> None:
    supervisor = start_graph(partial_profile(["planner"]))
    client = probe.node.create_client(Plan, "/cowp/plan")
    assert client.wait_for_service(timeout_sec=30)
    os.killpg(supervisor.nodes["planner"].process.pid, signal.SIGKILL)
    killed = time.monotonic()
    probe.spin_until(lambda: not client.service_is_ready(), 15.0, "the dead planner to go")
    # a 3 s lease (about 3 s measured); Fast DDS's default lease is 20 s. The margin is
    # for a loaded machine, and still tells the two apart.
    assert time.monotonic() - killed < 10.0
