"""A run its fault never reached proves nothing: it is "not exercised", never a pass,
and the campaign draws it again; and the hostile-peer family runs for real."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.campaign import REGISTRY, Planned, campaign, run_one, summary
from cowp_ros.chaos.faults import FaultContext, FaultKind, Faulty
from cowp_ros.chaos.record import Scenario
from cowp_ros.chaos.server import Reply

ASK = ["llm", "ask", "Is it suitable to carry soup in a sieve?", "--no-cache",
       "--llm-url", "{url}", "--llm-model", "scripted", "--llm-timeout", "5"]  # fmt: skip


def _asking(fires: bool) -> Scenario:
    """`cowp llm ask` against a fault that fires on its one question, or on none."""
    responder = Faulty(
        lambda request: Reply(status=500, body=b""), lambda n: fires, SensibleModel()
    )
    return Scenario(args=list(ASK), responder=responder, timeout_s=5.0, note="")


@pytest.fixture
def kinds() -> Iterator[list[int]]:
    builds: list[int] = []

    def never(ctx: FaultContext) -> Scenario:
        builds.append(0)
        return _asking(fires=False)

    def second_time(ctx: FaultContext) -> Scenario:
        builds.append(1)
        return _asking(fires=builds.count(1) >= 2)

    REGISTRY["never_reached"] = FaultKind("never_reached", "llm", "test", never)
    REGISTRY["reached_on_redraw"] = FaultKind("reached_on_redraw", "llm", "test", second_time)
    yield builds
    del REGISTRY["never_reached"], REGISTRY["reached_on_redraw"]


def test_a_run_its_fault_never_reached_is_not_a_pass(kinds: list[int], tmp_path: Path) -> None:
    (run,) = campaign(0, 1, ["never_reached"], tmp_path)
    assert all(check.ok for check in run.checks)  # nothing broke, and yet:
    assert not run.passed and run.outcome == "not exercised"
    assert kinds.count(0) == 4  # drawn, then drawn again three times
    data = summary([run], 0, 1.0)
    assert data["passed"] == 0 and data["not_exercised"] == 1


def test_the_campaign_draws_an_unreached_run_again(kinds: list[int], tmp_path: Path) -> None:
    (run,) = campaign(0, 1, ["reached_on_redraw"], tmp_path)
    assert run.passed and run.redraws == 1 and run.faults_fired >= 1
    assert run.seed.endswith(":redraw1")


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "seed"),
    [("peer_plan_grounding", "0:4:peer_plan_grounding"), ("peer_evil_name", "0:1:peer_evil_name")],
)
def test_a_hostile_peer_run_keeps_every_invariant(kind: str, seed: str, tmp_path: Path) -> None:
    """The planner attack with its grounding bound lifted: refused at the worker's 512 MB
    memory cap, the worker's own peak under it; a name holding PDDL refused."""
    run = run_one(Planned(1, kind, seed), tmp_path)
    broken = {c.name: c.detail for c in run.checks if not c.ok}
    assert not broken, f"{kind} ({run.note}): {broken}"
    assert run.exercised and run.observed["refused"] == 1.0
    if kind == "peer_plan_grounding":
        assert "memory cap" in run.note
        assert 0 < run.observed["worker_peak_mb"] <= 512
