"""Every shipped scenario in the physics world: outcome, time, real-time factor, safety.

    .venv/bin/python benchmarks/bench_physics.py [--scenario NAME ...] [--rtf 0]
        [--json benchmarks/results/physics/scenarios.json]

Per scenario it measures two real-time factors (simulated seconds per wall second) on
this machine: the physics world stepping alone (its model, 20 simulated seconds with
the arm moving, no ROS), and the physics_world node during a whole run of the graph
(physics_world, planner, commonsense, executor, task_manager as separate processes)
with the real-time cap set by --rtf (0: as fast as the machine lets it). The model is
the scripted server answering by the scenario's own rules (`sim/scenario_story.py`), so
the figures measure the robot and the world, not a language model. It runs every
shipped scenario by default; where a scenario's file does not say which situation
blocks (`blocks:`), the scripted model judges every situation harmless, so its outcome
says how the robot fared, not what a model would decide. Each run's physics report says
what became of each object, when a held object left the fingers, and whether a safety
invariant broke.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
from cowp_ros.bringup.supervisor import Supervisor
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer
from cowp_ros.errors import CowpError
from cowp_ros.physics.trajectory import PlayingTrajectory, Point, Tolerances
from cowp_ros.physics.world import ARM_JOINTS
from cowp_ros.physics.world_setup import build_world
from cowp_ros.resources import share_path
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.sim.scenario import available_scenarios, load_scenario
from cowp_ros.sim.scenario_story import no_patterns
from cowp_ros.skills.config import load_robot_config
from cowp_ros.tasks import get_task
from cowp_ros.tasks.presence import present_problem


def stepping_alone(name: str, seconds: float = 20.0) -> float:
    """Simulated seconds per wall second of the world alone, the arm moving between its
    calibrated poses the whole time."""
    robot = load_robot_config(share_path("config", "robot.yaml"))
    world = build_world(name, robot, "counter").world
    poses = [robot.arm.poses[p] for p in ("pre_grasp", "carry", "look_down", "carry")]
    tolerances = Tolerances((0.0,) * 6, (0.0,) * 6, 0.0)
    started = time.perf_counter()
    index = 0
    while world.time < seconds:
        if world.trajectory is None:
            goal = poses[index % len(poses)]
            index += 1
            world.play(
                PlayingTrajectory(
                    world.arm_positions(), [Point(2.0, goal, (0.0,) * 6)], tolerances, ARM_JOINTS
                )
            )
        world.step(5)
    return world.time / (time.perf_counter() - started)


def graph_run(name: str, rtf: float, out: Path) -> dict[str, object]:
    scenario = load_scenario(name)
    spec = get_task(scenario.task)
    task, _ = present_problem(
        spec.load(), spec.task_objects, world=scenario.objects, world_source="the scenario"
    )
    report = out / f"{name}.physics.json"
    with ScriptedLLMServer() as served:
        served.responder = SensibleModel(no=no_patterns(scenario, task))
        profile = with_parameter_overrides(
            load_profile("physics"),
            [
                f"physics_world.scenario={name}",
                f"physics_world.real_time_factor={rtf}",
                f"physics_world.report_path={report}",
                f"commonsense.llm_url={served.url}",
                "commonsense.llm_model=scripted",
                "commonsense.answer_cache=false",
                f"task_manager.report_dir={out / 'reports'}",
            ],
        )
        supervisor = Supervisor(profile, out / "logs" / name, say=lambda _m: None)
        supervisor.start()
        try:
            supervisor.wait_ready(120)
            client = TaskClient()
            try:
                client.wait_until_ready(60)
                sent = time.monotonic()
                client.run_task(scenario.task)
                result = client.get_result(timeout_s=900)
                task_s = time.monotonic() - sent
            finally:
                client.close()
        finally:
            supervisor.stop()
    physics = json.loads(report.read_text()) if report.is_file() else {}
    return {
        "scenario": name,
        "task": scenario.task,
        "expected": scenario.expect,
        "outcome": result.outcome.value,
        "as_expected": result.outcome.value == scenario.expect,
        "explanation": result.explanation,
        "task_wall_s": round(task_s, 1),
        "simulated_s": physics.get("simulated_s"),
        "graph_rtf": physics.get("real_time_factor"),
        "violations": physics.get("violations"),
        "carried": {n: r["resting_on"] for n, r in physics.get("objects", {}).items() if r["held"]},
        "opened_m": physics.get("opened_m", {}),
        "releases": physics.get("releases", []),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scenario", action="append", help="a scenario (default: every one)")
    parser.add_argument("--rtf", type=float, default=0.0, help="physics_world.real_time_factor")
    parser.add_argument("--json", type=Path, help="write the figures here")
    parser.add_argument("--keep", type=Path, help="keep the node logs and reports here")
    parser.add_argument(
        "--smoke", action="store_true", help="CI: one scenario's world stepping alone, no graph"
    )
    args = parser.parse_args()
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    # a domain of its own: another graph on this machine must not answer its goals
    os.environ["ROS_DOMAIN_ID"] = os.environ.get(
        "COWP_BENCH_ROS_DOMAIN_ID", str(random.SystemRandom().randint(101, 200))
    )
    if args.smoke:
        alone = stepping_alone("serve_water_cutlery_in_cup", seconds=2.0)
        print(f"serve_water_cutlery_in_cup stepping alone: real-time factor {alone:.1f}")
        return 0
    known = available_scenarios()
    unknown = [name for name in args.scenario or [] if name not in known]
    if unknown:
        print(
            f"bench_physics: unknown scenario {', '.join(unknown)}; known: {', '.join(known)}",
            file=sys.stderr,
        )
        return 2
    names = args.scenario or known
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        out = args.keep or Path(scratch)
        for name in names:
            alone = stepping_alone(name)
            try:
                row = graph_run(name, args.rtf, out)
            except CowpError as err:  # the run could not start or end: a row that says so
                row = {
                    "scenario": name,
                    "outcome": "error",
                    "as_expected": False,
                    "explanation": str(err),
                    "task_wall_s": 0.0,
                    "simulated_s": None,
                    "graph_rtf": None,
                    "violations": None,
                    "carried": {},
                }
            row["stepping_alone_rtf"] = round(alone, 1)
            rows.append(row)
            print(
                f"{name:34s} {row['outcome']:12s} {'ok ' if row['as_expected'] else 'NOT'} "
                f"{row['task_wall_s']:6.1f} s wall, {row['simulated_s']} s simulated, "
                f"graph RTF {row['graph_rtf']}, alone {row['stepping_alone_rtf']}, "
                f"{len(row['violations'] or [])} violations, carried {row['carried']}",
                flush=True,
            )
            if not row["as_expected"]:
                print(f"    {row['explanation']}", flush=True)
    expected = sum(1 for r in rows if r["as_expected"])
    clean = sum(1 for r in rows if r["violations"] == [])
    summary = {
        "command": " ".join(["benchmarks/bench_physics.py", *sys.argv[1:]]),
        "machine": f"{os.cpu_count()} cores",
        "rtf_cap": args.rtf,
        "scenarios": rows,
        "as_expected": f"{expected}/{len(rows)}",
        "without_violations": f"{clean}/{len(rows)}",
        "graph_rtf_median": statistics.median(float(r["graph_rtf"] or 0) for r in rows),
        "stepping_alone_rtf_median": statistics.median(
            float(r["stepping_alone_rtf"]) for r in rows
        ),
    }
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(summary, indent=2) + "\n")
    print(
        f"physics scenarios as expected: {expected}/{len(rows)}; without a safety violation: "
        f"{clean}/{len(rows)}; real-time factor median {summary['graph_rtf_median']:.1f} in "
        f"the graph, {summary['stepping_alone_rtf_median']:.1f} stepping alone"
    )
    return 0 if expected == len(rows) and clean == len(rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
