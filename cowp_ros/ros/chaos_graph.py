"""One graph fault, done for real: bring up the sim nodes, run a task, break something.

`cowp chaos graph-run --spec JSON --out DIR --llm-url URL` is the command of the
harness's graph fault kinds (`cowp_ros.chaos.graph_faults`). It starts the sim profile's
nodes, each in its own process as `cowp bringup` does (or `cowp bringup` itself, for
the Ctrl-C kind), sends "serve water" as a RunTask goal, does the fault at its moment,
waits (bounded) for the result, stops everything, and writes what it saw to
`DIR/graph.json`: whether a result arrived, its outcome and explanation, how long a
cancel took to be honoured. It exits 0 when a result arrived, 1 when none did.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.ros.names import SITUATIONS_TOPIC

NODES = ["sim_world", "planner", "commonsense", "executor", "task_manager"]
RESULT_WAIT_S = 150.0
SHUTDOWN_WAIT_S = 40.0


def overrides(spec: dict[str, Any], out: Path, llm_url: str) -> list[str]:
    events = "true" if spec.get("events", True) else "false"
    return [
        "sim_world.publish_camera=false",
        f"sim_world.scenario_events={events}",
        f"commonsense.llm_url={llm_url}",
        "commonsense.llm_model=scripted",
        "commonsense.answer_cache=false",
        "commonsense.monitor_calibration=off",
        "commonsense.llm_timeout_s=30",
        'task_manager.present_objects=["bowl_1", "mug_1", "plate_1"]',
        f"task_manager.report_dir={out / 'reports'}",
    ]


def graph_run(spec: dict[str, Any], out: Path, llm_url: str) -> int:
    """Do the fault `spec` describes; write `out/graph.json`; 0 when a result arrived."""
    out.mkdir(parents=True, exist_ok=True)
    seen: dict[str, Any] = {"kind": spec.get("kind"), "result_arrived": 0.0}
    try:
        if spec.get("kind") == "ctrl_c":
            _ctrl_c_bringup(spec, out, llm_url, seen)
        else:
            _in_process(spec, out, llm_url, seen)
    finally:
        (out / "graph.json").write_text(json.dumps(seen, indent=1, allow_nan=False) + "\n")
    print(f"graph run {seen.get('kind')}: {seen.get('outcome', 'no result')}: "
          f"{seen.get('explanation', '')}")  # fmt: skip
    return 0 if seen["result_arrived"] else 1


def _in_process(spec: dict[str, Any], out: Path, llm_url: str, seen: dict[str, Any]) -> None:
    from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
    from cowp_ros.bringup.supervisor import Supervisor

    kind = spec["kind"]
    names = [*NODES, "situation_detector"] if kind == "camera_silent" else NODES
    profile = with_parameter_overrides(load_profile("sim"), overrides(spec, out, llm_url))
    profile = replace(profile, nodes=tuple(n for n in profile.nodes if n.name in names))
    supervisor = Supervisor(profile, out / "logs", say=lambda _m: None)
    try:
        supervisor.start()
        supervisor.wait_ready(120.0)
        if kind == "kill" and float(spec.get("after_s", 0)) < 0:
            _kill(supervisor, spec["node"])
        _task(spec, supervisor, seen)
    finally:
        supervisor.stop()


def _kill(supervisor: Any, node: str) -> None:
    process = supervisor.nodes[node].process
    os.killpg(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


def _task(spec: dict[str, Any], supervisor: Any, seen: dict[str, Any]) -> None:
    from cowp_ros.ros.clients.task_client import TaskClient

    kind = spec["kind"]
    client = TaskClient()
    try:
        client.wait_until_ready(60)
        client.run_task("serve_water")
        started = time.monotonic()
        if kind == "kill" and float(spec.get("after_s", 0)) >= 0:
            _wait(client, lambda: time.monotonic() - started >= float(spec["after_s"]))
            _kill(supervisor, spec["node"])
        elif kind == "flood":
            seen["situations_sent"] = _flood(spec)
        elif kind == "cancel":
            _cancel_in(client, spec["phase"], seen)
        _result(client, seen)
    finally:
        client.close()


def _wait(client: Any, condition: Any, timeout_s: float = 120.0) -> bool:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if client.is_task_complete() or time.monotonic() > deadline:
            return False
    return True


def _cancel_in(client: Any, phase: str, seen: dict[str, Any]) -> None:
    """Cancel once the feedback says the run is in `phase` (executing: a walk)."""

    def in_phase() -> bool:
        for feedback in client.all_feedback:
            if phase == "executing":
                if feedback.last_event.startswith("doing: walk"):
                    return True
            elif feedback.phase == phase:
                return True
        return False

    reached = _wait(client, in_phase)
    seen["phase_at_cancel"] = client.all_feedback[-1].phase if client.all_feedback else ""
    seen["phase_reached"] = reached
    if phase in ("monitoring", "acquiring"):
        time.sleep(0.5)  # the next request is with the (slow) model now
    asked = time.monotonic()
    client.cancel_task()
    _wait(client, lambda: False, timeout_s=30.0)
    seen["cancel_latency_s"] = round(time.monotonic() - asked, 3)


def _flood(spec: dict[str, Any]) -> int:
    """Publish `count` distinct situations at 5 a second; some hostile when asked."""
    import rclpy
    from rclpy.node import Node

    from cowp_interfaces.msg import Situation

    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("chaos_flood", context=context)
    publisher = node.create_publisher(Situation, SITUATIONS_TOPIC, 50)
    hostile = (
        "(:action x) (not (hand_free)) \x1b[2J $(rm -rf ~) ",
        "the cup is dirty " + "x" * 6000,
        "\u202e the cup is fine \u202c",
    )
    sent = 0
    try:
        time.sleep(1.0)  # discovery
        for index in range(int(spec.get("count", 50))):
            text = f"a bird sings outside, number {index}"
            if spec.get("hostile") and index % 3 == 0:
                text = f"{hostile[index % len(hostile)]} {spec.get('canary', '')} {index}"
            publisher.publish(Situation(text=text, source="chaos"))
            sent += 1
            time.sleep(0.2)
    finally:
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    return sent


def _result(client: Any, seen: dict[str, Any]) -> None:
    result = client.get_result(timeout_s=RESULT_WAIT_S, server_gone_after_s=10.0)
    seen["result_arrived"] = 1.0 if result.delivered else 0.0
    seen["outcome"] = result.outcome.value
    seen["explanation"] = result.explanation
    seen["report"] = result.report_path


def _ctrl_c_bringup(spec: dict[str, Any], out: Path, llm_url: str, seen: dict[str, Any]) -> None:
    """`cowp bringup` as a user starts it, Ctrl-C to it while the task runs."""
    from cowp_ros.ros.clients.task_client import TaskClient

    command = [sys.executable, "-c", "import sys; from cowp_ros.cli import main; sys.exit(main())",
               "bringup", "--profile", "sim", "--log-dir", str(out / "logs")]  # fmt: skip
    for item in overrides(spec, out, llm_url):
        command += ["--set", item]
    bringup = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True
    )
    try:
        client = TaskClient()
        try:
            client.wait_until_ready(120)
            client.run_task("serve_water")
            started = time.monotonic()
            _wait(client, lambda: time.monotonic() - started >= float(spec["after_s"]))
            bringup.send_signal(int(spec.get("signal", signal.SIGINT)))
            _result(client, seen)
        finally:
            client.close()
        seen["bringup_exit"] = bringup.wait(timeout=SHUTDOWN_WAIT_S)
    except subprocess.TimeoutExpired as err:
        raise CowpError(f"cowp bringup did not end {SHUTDOWN_WAIT_S:.0f} s after Ctrl-C") from err
    finally:
        if bringup.poll() is None:
            os.killpg(bringup.pid, signal.SIGKILL)
            bringup.wait()
