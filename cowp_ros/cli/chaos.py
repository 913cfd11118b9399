"""`cowp chaos`: inject faults into the command line and the ROS graph, and check what
must always hold.

    cowp chaos list                          the fault kinds
    cowp chaos run --seed 0 --runs 120       a seeded campaign; prints the table
    cowp chaos run --family graph --runs 24  the graph's faults only (minutes a run)
    cowp chaos run --family peer --runs 14   hostile ROS peers against each service

Each run starts `cowp` in its own process against a scripted OpenAI-compatible server on
127.0.0.1 that answers, delays and fails as the run's fault kind says (or with a broken
file, a bad value, a signal mid-plan), then checks the invariants: it ended within its
bound, wrote a strict-JSON report where one is due, let no injected text into any PDDL a
planner received, printed no key, left no process or temporary file, stayed within
memory, printed nothing a terminal would execute; a graph run (the sim nodes as
processes, a task, a node killed, the camera silent, a flood of situations, a cancel in
each phase, Ctrl-C to bringup) must also deliver its result, honour a cancel within a
second, and keep a flood's questions bounded. Exit code 0 when every run kept every
invariant, 4 when one did not (the failing runs' folders are kept under --out).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError

EXIT_VIOLATED = 4


def _list(args: argparse.Namespace) -> int:
    from cowp_ros.chaos.campaign import REGISTRY
    from cowp_ros.chaos.invariants import INVARIANTS

    print("fault kinds:")
    for kind in REGISTRY.values():
        print(f"  {kind.name:<20} {kind.family:<5} {kind.summary}")
    print("invariants checked on every run:")
    for name in INVARIANTS:
        print(f"  {name}")
    return 0


def _names(args: argparse.Namespace) -> list[str]:
    from cowp_ros.chaos.campaign import REGISTRY

    if args.kinds:
        names = [name.strip() for name in args.kinds.split(",") if name.strip()]
        unknown = [name for name in names if name not in REGISTRY]
        if unknown:
            raise CowpError(
                f"unknown fault kind {', '.join(unknown)}", hint="see 'cowp chaos list'"
            )
        return names
    return [k.name for k in REGISTRY.values() if args.family in (None, k.family)]


def _run(args: argparse.Namespace) -> int:
    from cowp_ros.chaos.campaign import campaign, summary, table, timed

    names = _names(args)
    out = Path(args.out)

    def progress(run: Any) -> None:
        if args.quiet:
            return
        broken = [c for c in run.checks if not c.ok]
        verdict = (
            "ok" if not broken else "BROKE " + "; ".join(f"{c.name}: {c.detail}" for c in broken)
        )
        if not run.exercised:
            verdict = f"NOT EXERCISED (the fault never reached it; {run.redraws} redraws)"
        elif run.redraws:
            verdict += f" (drawn {run.redraws + 1} times: the fault was not reached before)"
        print(
            f"{run.number:4d} {run.kind:<18} {run.outcome:<13} {run.wall_s:5.1f} s "
            f"{run.peak_rss_bytes / 2**20:5.0f} MiB  {verdict}  ({run.note[:50]})",
            flush=True,
        )

    runs, wall = timed(
        lambda: campaign(
            args.seed, args.runs, names, out, keep=args.keep, only=args.only, progress=progress
        )
    )
    data = summary(runs, args.seed, wall)
    (out / "summary.json").write_text(json.dumps(data, indent=1) + "\n")
    print()
    print(table(data))
    print(f"\nsummary: {out / 'summary.json'}; run folders: {out / 'runs'}")
    return 0 if data["passed"] == data["runs"] else EXIT_VIOLATED


def _graph_run(args: argparse.Namespace) -> int:
    from cowp_ros.ros.chaos_graph import graph_run

    try:
        spec = json.loads(args.spec)
    except ValueError as err:
        raise CowpError(f"--spec is not JSON: {err}") from None
    if not isinstance(spec, dict):
        raise CowpError("--spec must be a JSON object")
    return graph_run(spec, args.out.resolve(), args.llm_url)


def _peer_run(args: argparse.Namespace) -> int:
    from cowp_ros.ros.chaos_peer import peer_run

    try:
        spec = json.loads(args.spec)
    except ValueError as err:
        raise CowpError(f"--spec is not JSON: {err}") from None
    if not isinstance(spec, dict) or "attack" not in spec:
        raise CowpError("--spec must be a JSON object with an attack")
    return peer_run(spec, args.out.resolve(), args.llm_url)


def register(subparsers: Any) -> None:
    """Add `cowp chaos` and its subcommands."""
    parser = subparsers.add_parser(
        "chaos",
        help="inject faults into the command line and the graph, and check the invariants",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="chaos_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)
    listing = commands.add_parser("list", help="the fault kinds and the invariants")
    listing.set_defaults(func=_list)
    run = commands.add_parser("run", help="a seeded campaign of runs")
    run.add_argument("--seed", type=int, default=0, help="seed of the schedule (default 0)")
    run.add_argument("--runs", type=int, default=120, help="how many runs (default 120)")
    run.add_argument("--kinds", help="comma-separated fault kinds (default: all)")
    run.add_argument(
        "--family", choices=("llm", "cli", "graph", "peer"), help="only this family's kinds"
    )
    run.add_argument("--only", type=int, metavar="N", help="repeat only run number N")
    run.add_argument("--out", default="build/chaos", help="output folder (default build/chaos)")
    run.add_argument("--keep", action="store_true", help="keep every run's folder")
    run.add_argument("--quiet", action="store_true", help="no line per run")
    run.set_defaults(func=_run)
    graph = commands.add_parser(
        "graph-run",
        help="one graph fault: bring up the sim nodes, run a task, break something "
        "(what a graph run of the campaign executes)",
    )
    graph.add_argument("--spec", required=True, help="the fault, as JSON (see graph_faults)")
    graph.add_argument("--out", required=True, type=Path, help="the run's folder")
    graph.add_argument("--llm-url", required=True, help="the (scripted) model server's URL")
    graph.set_defaults(func=_graph_run)
    peer = commands.add_parser(
        "peer-run",
        help="one hostile-peer attack: start the node it targets, call it as any ROS "
        "program could, record the answer (what a peer run of the campaign executes)",
    )
    peer.add_argument("--spec", required=True, help="the attack, as JSON (see peer_faults)")
    peer.add_argument("--out", required=True, type=Path, help="the run's folder")
    peer.add_argument("--llm-url", required=True, help="the (scripted) model server's URL")
    peer.set_defaults(func=_peer_run)
