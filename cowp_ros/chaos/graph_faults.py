"""The ROS graph's faults: a task on the simulated robot while something goes wrong.

Each kind builds a `Scenario` whose command is `cowp chaos graph-run`: it brings up the
sim profile's nodes (each its own process, as `cowp bringup` does), sends the task
"serve water" as a RunTask goal, does the fault at its moment, and waits for the
result, which it writes with its timings to `graph.json` in the run's folder. The
scripted model server runs in the harness, as for the command-line kinds; the nodes
inherit the run's mark, TMPDIR and PDDL archive, so every invariant applies unchanged,
plus the graph's own (`expect`): the result arrived, a cancel was honoured within a
second, a flood cost a bounded number of questions.
"""

from __future__ import annotations

import json
import signal

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.faults import FaultContext, fault
from cowp_ros.chaos.record import Scenario
from cowp_ros.chaos.server import Reply, Request

GRAPH_RSS_BYTES = 2 * 2**30
"""Five node processes, the run's own, and their children: more than one command."""
GRAPH_BOUND_S = 240.0
"""Bring-up, a task of seven simulated steps (about 30 s of motion), shutdown."""
CANCEL_WITHIN_S = 1.0
FLOOD_SITUATIONS = 50
FLOOD_QUESTIONS = 20 * 6
"""At most 20 situations reach the loop (the task manager's max_situations_per_task),
each asked about at most the 6 steps of serve water."""

PHASES = ("planning", "monitoring", "acquiring", "executing")


class Slow:
    """A responder that answers like `SensibleModel`, each answer `delay_s` late (a model
    that thinks, so a cancel can come while it does)."""

    def __init__(self, sane: SensibleModel, delay_s: float) -> None:
        self.sane, self.delay_s = sane, delay_s

    def __call__(self, request: Request) -> Reply | None:
        reply = self.sane(request)
        if reply is None:
            return None
        return Reply(status=reply.status, body=reply.body, delay_s=self.delay_s)


def graph_scenario(
    ctx: FaultContext,
    kind: str,
    responder: SensibleModel | Slow,
    note: str,
    **options: object,
) -> Scenario:
    spec = {"kind": kind, **options}
    # A graph of its own: another run's nodes (or anybody's on this machine) on the same
    # DDS domain would answer its goals.
    env = {"ROS_DOMAIN_ID": str(1 + ctx.rng.randrange(100)),  # 1..100: safe on Linux
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}  # fmt: skip
    return Scenario(
        args=["chaos", "graph-run", "--out", "{folder}", "--llm-url", "{url}",
              "--spec", json.dumps(spec)],
        responder=responder,
        env=env,
        report=True,
        waits_s=GRAPH_BOUND_S,
        max_rss_bytes=GRAPH_RSS_BYTES,
        expect=_expectations(kind),
        note=note,
    )  # fmt: skip


def _expectations(kind: str) -> dict[str, float]:
    expected: dict[str, float] = {"result_arrived": 1.0}
    if kind == "cancel":
        expected["cancel_latency_s"] = CANCEL_WITHIN_S
    if kind == "flood":
        expected["questions"] = float(FLOOD_QUESTIONS)
    return expected


def _dirty_cup_model() -> SensibleModel:
    """A model that judges grasping the dirty cup unsuitable (so the loop acquires)."""
    return SensibleModel(no=[r"grasp the cup, if the cup is dirty", r"\bcup\b.*\bdirty\b"])


@fault("node_killed", "graph", "a node SIGKILLed mid-task (executor, commonsense, planner)")
def node_killed(ctx: FaultContext) -> Scenario:
    node = ctx.pick(["executor", "commonsense", "planner", "sim_world"])
    after = ctx.pick([1.0, 3.0, 6.0])
    return graph_scenario(
        ctx, "kill", _dirty_cup_model(), f"{node} killed {after:g} s into the task",
        node=node, after_s=after, events=True,
    )  # fmt: skip


@fault("server_gone", "graph", "the executor's action server gone before the task starts")
def server_gone(ctx: FaultContext) -> Scenario:
    return graph_scenario(
        ctx, "kill", _dirty_cup_model(), "executor killed before the goal",
        node="executor", after_s=-1.0, events=False,
    )  # fmt: skip


@fault("camera_silent", "graph", "the detector runs, and the camera sends no frame")
def camera_silent(ctx: FaultContext) -> Scenario:
    return graph_scenario(
        ctx, "camera_silent", _dirty_cup_model(), "no camera frames", events=ctx.rng.random() < 0.5
    )


@fault("situation_flood", "graph", "50 distinct situations in 10 s on /cowp/situations")
def situation_flood(ctx: FaultContext) -> Scenario:
    hostile = ctx.rng.random() < 0.5
    return graph_scenario(
        ctx, "flood", SensibleModel(), "flood" + (" of hostile text" if hostile else ""),
        count=FLOOD_SITUATIONS, hostile=hostile, canary=ctx.canary,
    )  # fmt: skip


@fault("cancel_in_phase", "graph", "RunTask canceled while planning, monitoring, acquiring, moving")
def cancel_in_phase(ctx: FaultContext) -> Scenario:
    phase = ctx.pick(list(PHASES))
    responder = Slow(_dirty_cup_model(), delay_s=5.0 if phase in ("monitoring", "acquiring") else 0)
    return graph_scenario(ctx, "cancel", responder, f"cancel while {phase}", phase=phase)


@fault("ctrl_c_bringup", "graph", "Ctrl-C to `cowp bringup` while a task runs")
def ctrl_c_bringup(ctx: FaultContext) -> Scenario:
    after = ctx.pick([2.0, 5.0])
    responder = Slow(_dirty_cup_model(), delay_s=ctx.pick([0.0, 3.0]))
    return graph_scenario(
        ctx, "ctrl_c", responder, f"SIGINT to bringup {after:g} s into the task",
        after_s=after, signal=int(signal.SIGINT),
    )  # fmt: skip
