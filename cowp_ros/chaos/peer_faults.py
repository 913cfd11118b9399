"""The hostile-peer family: any program on the ROS domain calling the graph's services.

Each kind builds a `Scenario` whose command is `cowp chaos peer-run`: it starts the
node under attack as its own process, sends the attack as a ROS peer would, and writes
what came back to `graph.json` (`cowp_ros.ros.chaos_peer`). Besides every invariant of
the other families (the run's processes, the planner's worker included, stay within
memory; no traceback; nothing left running), a peer run must keep its own figures:
the attack was refused with a message that names the bound (`refused`), at once
(`answer_s`), and a search stopped at its memory cap stayed under it (`worker_peak_mb`).
"""

from __future__ import annotations

import json

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.faults import FaultContext, fault
from cowp_ros.chaos.record import Scenario

PEER_BOUND_S = 150.0
"""Bring-up of one node on a busy machine, the attack, shutdown."""
PEER_RSS_BYTES = 1536 * 2**20
"""The node, its planner worker (capped at WORKER_MEMORY_MB), the attacking process."""
WORKER_MEMORY_MB = 512
ANSWER_WITHIN_S = 20.0


def peer_scenario(
    ctx: FaultContext,
    attack: str,
    node: str,
    note: str,
    expect: dict[str, float] | None = None,
    **options: object,
) -> Scenario:
    spec = {"attack": attack, "node": node, **options}
    # 215..232: valid on Linux, and apart from the 1..100 the graph kinds and tests draw
    env = {"ROS_DOMAIN_ID": str(215 + ctx.rng.randrange(18)),
           "ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}  # fmt: skip
    model = SensibleModel()
    return Scenario(
        args=["chaos", "peer-run", "--out", "{folder}", "--llm-url", "{url}",
              "--spec", json.dumps(spec)],
        responder=model,
        env=env,
        waits_s=PEER_BOUND_S,
        max_rss_bytes=PEER_RSS_BYTES,
        expect={"refused": 1.0, "answer_s": ANSWER_WITHIN_S, **(expect or {})},
        note=note,
    )  # fmt: skip


@fault("peer_plan_grounding", "peer", "a 750-byte Plan request that grounds 729M actions")
def peer_plan_grounding(ctx: FaultContext) -> Scenario:
    if ctx.rng.random() < 0.5:
        return peer_scenario(ctx, "plan_grounding", "planner", "refused by the grounding bound")
    # the grounding bound lifted: the worker's memory cap must end it, with the reason.
    # pyperplan's worker, which reports its peak: Fast Downward's translator, under the
    # same cap, at times computes for the whole deadline first (a timeout, bounded too)
    return peer_scenario(
        ctx, "plan_grounding", "planner",
        f"grounding bound lifted: stopped at the {WORKER_MEMORY_MB} MB memory cap",
        expect={"worker_peak_mb": float(WORKER_MEMORY_MB), "answer_s": 60.0},
        set=["planner.planner=pyperplan", "planner.max_ground_actions=1000000000",
             f"planner.memory_mb={WORKER_MEMORY_MB}"],
        expect_text="memory budget",
    )  # fmt: skip


@fault("peer_plan_huge", "peer", "a Plan request with a 2.1 MB domain")
def peer_plan_huge(ctx: FaultContext) -> Scenario:
    kilobytes = ctx.pick([600, 2100, 8000])
    return peer_scenario(
        ctx, "plan_huge_pddl", "planner", f"a {kilobytes} KB domain", kilobytes=kilobytes
    )


@fault("peer_plan_hold", "peer", "a peer's endless search beside a normal Plan request")
def peer_plan_hold(ctx: FaultContext) -> Scenario:
    return peer_scenario(
        ctx, "plan_beside_slow", "planner", "slow search in one slot", expect={"answer_s": 20.0},
        set=["planner.max_timeout_s=15"],
    )  # fmt: skip


@fault("peer_candidates", "peer", "an AcquireKnowledge request with 300 candidates")
def peer_candidates(ctx: FaultContext) -> Scenario:
    count = ctx.pick([33, 300, 5000])
    return peer_scenario(
        ctx, "commonsense_candidates", "commonsense", f"{count} candidates", count=count
    )


@fault("peer_evil_name", "peer", "a candidate name holding PDDL: `mug) (:action evil`")
def peer_evil_name(ctx: FaultContext) -> Scenario:
    name = ctx.pick(["mug) (:action evil", f"mug {ctx.canary}", "mug;(:init)", "MUG"])
    return peer_scenario(ctx, "commonsense_evil_name", "commonsense", f"name {name!r}", name=name)


@fault("peer_template", "peer", "a phrase template with a 20 MB width or a conversion")
def peer_template(ctx: FaultContext) -> Scenario:
    template = ctx.pick(["fill {0:>20000000} from {1}", "fill {0!r} from {1}", "{0.__class__}"])
    return peer_scenario(
        ctx, "commonsense_template", "commonsense", f"template {template!r}", template=template
    )


@fault("peer_long_goal", "peer", "a RunTask goal whose task is 1-10 MB")
def peer_long_goal(ctx: FaultContext) -> Scenario:
    megabytes = ctx.pick([1, 10])
    return peer_scenario(
        ctx, "long_goal", "task_manager", f"a {megabytes} MB task name", megabytes=megabytes
    )


@fault("peer_negated_goal", "peer", "a 480-byte Plan request negating a 6-ary predicate")
def peer_negated_goal(ctx: FaultContext) -> Scenario:
    return peer_scenario(
        ctx, "plan_negated_goal", "planner", "refused by the complement bound (30^6 facts)",
        expect={"answer_s": 10.0},
    )  # fmt: skip


@fault("peer_type_chain", "peer", "a Plan or CheckPlan request whose types chain 600-9,000 deep")
def peer_type_chain(ctx: FaultContext) -> Scenario:
    depth = ctx.pick([600, 1000, 9000])
    node = ctx.pick(["planner", "commonsense"])
    return peer_scenario(
        ctx, "type_chain", node, f"a chain of {depth:,} types to the {node}",
        expect={"answer_s": 10.0}, depth=depth,
    )  # fmt: skip


@fault("peer_url_query_key", "peer", "the model's key in llm_url's query, read by a peer")
def peer_url_query_key(ctx: FaultContext) -> Scenario:
    return peer_scenario(
        ctx, "url_query_key", "commonsense", "get_parameters llm_url", query_key=ctx.secret
    )


@fault("peer_set_method", "peer", "SetParameters on the commonsense node's method")
def peer_set_method(ctx: FaultContext) -> Scenario:
    method = ctx.pick(["grounded", "cowp_llm_state", "nonsense"])
    return peer_scenario(ctx, "set_method", "commonsense", f"method := {method}", method=method)


@fault("peer_long_step", "peer", "an ExecuteSkill step with a 1 MB action name or 40 arguments")
def peer_long_step(ctx: FaultContext) -> Scenario:
    if ctx.rng.random() < 0.5:
        return peer_scenario(ctx, "long_step", "executor", "a 1 MB action name", bytes=2**20)
    return peer_scenario(ctx, "long_step", "executor", "40 arguments", arguments=40)


@fault("peer_acquire_misfit", "peer", "AcquireKnowledge fields the request's PDDL does not have")
def peer_acquire_misfit(ctx: FaultContext) -> Scenario:
    fields, what = ctx.pick(
        [
            ({"role_type": "spoon"}, "a role no role action takes"),
            ({"candidate_types": ["spaceship"]}, "a kind the domain lacks"),
            ({"candidate_types": ["cup"]}, "the role's own kind"),
        ]
    )
    return peer_scenario(ctx, "acquire_misfit", "commonsense", what, fields=fields)


@fault("peer_report_folder", "peer", "COWP_REPORTS_DIR a symlink, a dangling link or /dev/full")
def peer_report_folder(ctx: FaultContext) -> Scenario:
    how = ctx.pick(["link", "dangling", "device"])
    return peer_scenario(
        ctx, "report_folder", "none", f"the reports folder: {how}",
        expect={"answer_s": 60.0}, folder=how,
    )  # fmt: skip
