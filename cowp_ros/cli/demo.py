"""`cowp demo`: the COWP story end to end through real ROS 2 processes and a real model.

Brings up the sim profile (sim_world, planner, commonsense, executor, task_manager), or
with `--profile physics` the physics world behind the robot's own action backends, with
the embedded local model unless a server is configured, sends the scenario's task as a
RunTask goal, prints the feedback as a narrative, records a bag of the run, and shuts
everything down. Exit 0 when the run ends as the scenario expects (and, in physics,
with no safety invariant broken).
"""

from __future__ import annotations

import argparse
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

from cowp_ros.errors import CowpError
from cowp_ros.ros.names import (
    CURRENT_STEP_TOPIC,
    DETECTIONS_TOPIC,
    JOINT_STATES_TOPIC,
    ODOM_TOPIC,
    SITUATIONS_TOPIC,
    TASK_OUTCOMES_TOPIC,
    TOPIC_TYPES,
    WRIST_IMAGE_TOPIC,
)

if TYPE_CHECKING:
    from cowp_ros.llm.endpoint import RunningServer

# The node that holds each profile's world (its scenario, its objects).
WORLD_NODES = {"sim": "sim_world", "physics": "physics_world"}

# A run's inputs (situations, the current step) and what it decided (the outcome), so
# that replaying the bag into a graph can be checked against it; with the wrist images
# and the detections where the camera feeds the loop (a camera scenario: a frame is
# 0.7 MB, two a second, where elsewhere it is one photo nobody reads).
RECORDED_TOPICS = {
    topic: TOPIC_TYPES[topic]
    for topic in (
        SITUATIONS_TOPIC,
        CURRENT_STEP_TOPIC,
        TASK_OUTCOMES_TOPIC,
        ODOM_TOPIC,
        JOINT_STATES_TOPIC,
    )
}
CAMERA_TOPICS = {topic: TOPIC_TYPES[topic] for topic in (WRIST_IMAGE_TOPIC, DETECTIONS_TOPIC)}
OUTCOME_WAIT_S = 5.0  # the outcome follows the result; the bag should hold it


def register(subparsers: argparse._SubParsersAction) -> None:
    from cowp_ros.cli._tasks import add_tasks_argument
    from cowp_ros.cli.llm import add_llm_arguments, add_model_arguments
    from cowp_ros.methods.registry import DEFAULT_METHOD, importable_method_names

    parser = subparsers.add_parser(
        "demo",
        help="run a scenario end to end: sim graph, local model, RunTask, narrative, bag",
        description="Bring up the simulated robot and the COWP nodes, run the scenario's "
        "task, print what the robot planned, saw, asked, learned and did, and write a "
        "report and a bag of the run.",
    )
    parser.add_argument(
        "--scenario",
        default=None,
        help="scenario in config/scenarios/ or a YAML file (default: serve_water_cutlery_in_cup, "
        "the paper's demo situation; `--list` names them all)",
    )
    parser.add_argument(
        "--task",
        metavar="NAME",
        help="with no --scenario: this task in the world of its own problem, with no "
        "situation (raise one with `cowp task situation`)",
    )
    parser.add_argument(
        "--list", action="store_true", help="list the scenarios with what each shows, and stop"
    )
    parser.add_argument(
        "--profile",
        choices=sorted(WORLD_NODES),
        default="sim",
        help="sim: the embedded kinematic robot (default); physics: a MuJoCo world served "
        "through the UR, Hand-E and Nav2 actions the robot uses",
    )
    parser.add_argument(
        "--method",
        metavar="METHOD",
        default=DEFAULT_METHOD,
        help=f"situation handling of the commonsense node and task manager: "
        f"{', '.join(importable_method_names(on_graph=True))} (default {DEFAULT_METHOD}; "
        "see `cowp run --help`)",
    )
    parser.add_argument(
        "--out", type=Path, default=Path("build/demo"), help="folder for logs, report and bag"
    )
    parser.add_argument(
        "--timeout", type=float, default=900.0, help="seconds the task may take in all"
    )
    add_tasks_argument(parser)
    add_llm_arguments(parser)
    add_model_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cowp_ros.bringup.node_secrets import KEY_ENV
    from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
    from cowp_ros.bringup.supervisor import Supervisor
    from cowp_ros.cli._tasks import apply_tasks
    from cowp_ros.cli.llm import settings_from_args
    from cowp_ros.llm.endpoint import llm_endpoint
    from cowp_ros.methods.registry import graph_method
    from cowp_ros.sim.scenario import load_scenario
    from cowp_ros.tasks import get_task

    apply_tasks(args)  # the nodes inherit COWP_TASKS
    if args.list:
        return list_scenarios()
    started = time.monotonic()
    run_dir = args.out.expanduser().resolve() / time.strftime("%Y%m%d_%H%M%S")
    if args.scenario is None and args.task:
        from cowp_ros.cli._task_world import write_task_world

        args.scenario = str(write_task_world(args.task, run_dir))
    elif args.scenario is None:
        args.scenario = "serve_water_cutlery_in_cup"
    scenario = load_scenario(args.scenario)
    if args.task and get_task(args.task).name != get_task(scenario.task).name:
        raise CowpError(
            f"--task {args.task} and --scenario {args.scenario} (a scenario of "
            f"{scenario.task}) name two tasks",
            hint="give --scenario for a scenario of the task, or --task alone for the "
            "world of its own problem",
        )
    get_task(scenario.task)  # an unknown task is said before anything starts
    graph_method(args.method)  # and an unknown method, a method module that fails, or
    # a method that cannot run on the graph
    run_dir.mkdir(parents=True, exist_ok=True)
    print(f"scenario {scenario.name}: {scenario.description} (method: {args.method})")
    stop = threading.Event()
    signal.signal(signal.SIGINT, lambda *_: stop.set())

    endpoint = llm_endpoint(
        settings_from_args(args),
        model_path=args.model_path,
        model_name=args.model,
        on_start=_said_started,
    )
    with endpoint as llm:
        print(f"language model: {llm.model} at {llm.shown_url}")
        world = WORLD_NODES[args.profile]
        physics_report = run_dir / "physics.json"
        extra = (
            [f"physics_world.report_path={physics_report.resolve()}"]
            if world == "physics_world"
            else []
        )
        # A scenario whose camera shows its situations needs the detector to see them.
        camera = args.profile == "sim" and any(e.seen_by for e in scenario.events)
        profile = with_parameter_overrides(
            load_profile("sim_camera" if camera else args.profile),
            [
                f"{world}.scenario={_scenario_ref(args.scenario)}",
                *extra,
                f"commonsense.llm_url={llm.base_url}",
                f"commonsense.llm_model={llm.model}",
                f"commonsense.method={args.method}",
                f"task_manager.report_dir={run_dir.resolve()}",
            ],
        )
        # The key reaches the commonsense node through its environment, never a
        # parameter (any ROS peer can read those); a key in the URL is moved the same way.
        keys = {"commonsense": {KEY_ENV: llm.api_key}} if llm.api_key else {}
        supervisor = Supervisor(
            profile, run_dir / "logs", node_environment=keys, say=lambda _m: None
        )
        supervisor.start()
        try:
            ready_s = supervisor.wait_ready(120.0)
            print(f"{len(profile.nodes)} nodes ready in {ready_s:.1f} s (logs: {run_dir / 'logs'})")
            code = _run_task(
                scenario.task,
                run_dir,
                args.timeout,
                stop,
                started,
                expected_outcome(args.scenario),
                camera=camera,
            )
        finally:
            supervisor.stop()
        if world == "physics_world":
            _say_physics(physics_report)
        return code


def _say_physics(path: Path) -> None:
    """What the physics world saw: the objects moved, the safety invariants."""
    import json

    if not path.is_file():
        raise CowpError(f"physics_world wrote no report ({path}); see its log")
    report = json.loads(path.read_text())
    print(
        f"physics: {report['simulated_s']} s simulated at {report['real_time_factor']}x real "
        f"time; report: {path}"
    )
    for name, record in report["objects"].items():
        if record["held"]:
            print(
                f"  {name}: lifted {record['highest_lift_m'] * 100:.0f} cm, now on "
                f"{record['resting_on'] or 'nothing it rests on'}"
            )
    if report["violations"]:
        for violation in report["violations"]:
            print(
                f"  safety: {violation['rule']} ({violation['detail']}) at {violation['time_s']} s"
            )
        raise CowpError(f"{len(report['violations'])} safety invariants broken in physics")
    print(f"  safety: {report['safety_checks']} checks, no invariant broken")


def _scenario_ref(name_or_path: str) -> str:
    """What sim_world's scenario parameter gets: a shipped scenario's name, or the
    absolute path of a scenario file of one's own (the nodes run in other folders)."""
    if Path(name_or_path).suffix in {".yaml", ".yml"}:
        return str(Path(name_or_path).expanduser().resolve())
    return name_or_path


def list_scenarios() -> int:
    """`cowp demo --list`: each scenario, its task, what it shows and when it happens."""
    from cowp_ros.sim.scenario import available_scenarios, load_scenario

    for name in available_scenarios():
        scenario = load_scenario(name)
        print(f"{name}  ({scenario.task})")
        print(f"    {scenario.description}")
        for event in scenario.events:
            about = f", about {event.about}" if event.about else ""
            print(f'    at {event.action}: "{event.situation}"{about}')
    return 0


def _said_started(server: RunningServer) -> None:
    from cowp_ros.llm.endpoint import describe_server

    print(describe_server(server))


def expected_outcome(name: str) -> str:
    """The outcome a scenario expects (`expect:` in its file; default `completed`): a
    scenario with no solution succeeds when the robot says so instead of acting."""
    import yaml

    from cowp_ros.sim.scenario import scenario_path

    data = yaml.safe_load(scenario_path(name).read_text()) or {}
    return str(data.get("expect", "completed"))


def _run_task(
    task: str,
    run_dir: Path,
    timeout_s: float,
    stop,
    started: float,
    expected: str = "completed",
    camera: bool = False,
) -> int:
    from cowp_ros.ros.bags import BagRecorder
    from cowp_ros.ros.clients.narrative import follow_task
    from cowp_ros.ros.clients.task_client import TaskClient
    from cowp_ros.ros.result_delivery import OUTCOMES_QOS

    client = TaskClient()
    recorder = BagRecorder(
        client.node,
        run_dir / "bag",
        {**RECORDED_TOPICS, **(CAMERA_TOPICS if camera else {})},
        expected_qos={TASK_OUTCOMES_TOPIC: OUTCOMES_QOS},
    )
    try:
        client.wait_until_ready(60.0)
        print(f"\nRunTask: {task}")
        client.run_task(task)
        result = follow_task(client, timeout_s, stop)
        # The outcome is published with the result: spin until the bag has it too.
        recorder.take_until(
            TASK_OUTCOMES_TOPIC, lambda: client.executor.spin_once(timeout_sec=0.1), OUTCOME_WAIT_S
        )
    finally:
        recorder.close()
        client.close()
    print(f"\noutcome: {result.outcome.value}")
    print(f"explanation: {result.explanation}")
    print(f"executed: {' '.join(result.executed_steps) or 'nothing'}")
    print(f"report: {result.report_path}")
    print(f"bag: {run_dir / 'bag'} ({sum(recorder.counts.values())} messages)")
    print(f"demo time: {time.monotonic() - started:.1f} s")
    if result.outcome.value != expected:
        raise CowpError(
            f"the task ended as {result.outcome.value}, not {expected} as the scenario "
            f"expects: {result.explanation}"
        )
    print(f"as the scenario expects: {expected}")
    return 0
