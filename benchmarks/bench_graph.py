"""Bench the ROS graph: bring-up time to ready, end-to-end task time, per-phase times.

    .venv/bin/python benchmarks/bench_graph.py [--runs 3] [--scenario serve_water_dirty_cup]
    .venv/bin/python benchmarks/bench_graph.py --smoke   # CI: one run, the scripted model,
                                                         # the scenario without situations

Each run brings up the sim profile (real node processes), sends the scenario's task as
a RunTask goal and reads the task manager's report, whose `timing` holds the seconds
spent planning (Plan service), monitoring (CheckPlan), acquiring (AcquireKnowledge) and
executing (ExecuteSkill), and perceiving: from the start of the step during which a
situation was seen to its arrival at the task manager (in the simulation, sim_world's
perceive_delay_s plus transport; on the robot, the detector's debounce and inference).
The embedded model is started once and shared by the runs; the commonsense node's answer
cache is off, so every run asks the model for real (the server's prompt cache stays on).
Prints medians over the runs.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import tempfile
import time
from pathlib import Path

from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
from cowp_ros.bringup.supervisor import Supervisor
from cowp_ros.chaos.answers import SMOKE_HELP, sensible_model_server
from cowp_ros.cowp.report import read_report
from cowp_ros.llm.endpoint import llm_endpoint
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.ros.clients.task_client import TaskClient
from cowp_ros.sim.scenario import load_scenario
from cowp_ros.tasks import get_task

PHASES = ("perceive", "plan", "monitor", "acquire", "execute")


def one_run(scenario_name: str, url: str, model: str, out: Path) -> dict[str, float]:
    scenario = load_scenario(scenario_name)
    spec = get_task(scenario.task)
    present = sorted(set(scenario.objects) - set(spec.task_objects) & set(spec.load().objects))
    profile = with_parameter_overrides(
        load_profile("sim"),
        [
            f"sim_world.scenario={scenario_name}",
            "sim_world.publish_camera=false",
            f"commonsense.llm_url={url}",
            f"commonsense.llm_model={model}",
            "commonsense.answer_cache=false",
            f"task_manager.present_objects={json.dumps(present)}",
            f"task_manager.report_dir={out}",
        ],
    )
    started = time.monotonic()
    supervisor = Supervisor(profile, out / "logs", say=lambda _m: None)
    supervisor.start()
    try:
        ready_s = supervisor.wait_ready(120)
        client = TaskClient()
        try:
            client.wait_until_ready(60)
            sent = time.monotonic()
            client.run_task(scenario.task)
            while not client.is_task_complete():
                time.sleep(0.05)
            result = client.get_result()
            task_s = time.monotonic() - sent
        finally:
            client.close()
    finally:
        supervisor.stop()
    timing = read_report(result.report_path).sections["graph"]["timing"]
    row = {
        "ready_s": ready_s,
        "task_s": task_s,
        "end_to_end_s": time.monotonic() - started,
        "outcome": result.outcome.value,
    }
    for phase in PHASES:
        row[f"{phase}_s"] = timing.get(phase, {}).get("seconds", 0.0)
        row[f"{phase}_calls"] = timing.get(phase, {}).get("calls", 0)
    return row


def calm_copy(name: str, folder: Path) -> Path:
    """The scenario without its situations (the smoke run: the graph's whole path, minus
    the minutes the monitor and acquirer take on a loaded two-core machine)."""
    import yaml

    from cowp_ros.sim.scenario import scenario_path

    document = yaml.safe_load(scenario_path(name).read_text())
    document["name"] = f"{document['name']}_calm"
    document["events"] = []
    path = folder / f"{document['name']}.yaml"
    path.write_text(yaml.safe_dump(document))
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--scenario", default="serve_water_dirty_cup")
    parser.add_argument("--smoke", action="store_true", help=f"one run; {SMOKE_HELP}")
    args = parser.parse_args()
    rows = []
    with contextlib.ExitStack() as stack:
        if args.smoke:
            args.runs = 1
            stack.enter_context(sensible_model_server())
            calm = stack.enter_context(tempfile.TemporaryDirectory(prefix="bench_graph_"))
            args.scenario = str(calm_copy(args.scenario, Path(calm)))
        settings = LLMSettings.resolve() if args.smoke else LLMSettings()  # smoke: the scripted
        llm = stack.enter_context(llm_endpoint(settings))
        tmp = stack.enter_context(tempfile.TemporaryDirectory())
        assert llm.base_url and llm.model
        for index in range(args.runs):
            row = one_run(args.scenario, llm.base_url, llm.model, Path(tmp) / str(index))
            rows.append(row)
            print(
                f"run {index + 1}/{args.runs}: ready {row['ready_s']:.1f} s, task "
                f"{row['task_s']:.1f} s, end to end {row['end_to_end_s']:.1f} s, {row['outcome']}",
                flush=True,
            )
    print(f"\nmedians over {len(rows)} run(s) of {args.scenario}:")
    for key in ("ready_s", "task_s", "end_to_end_s", *(f"{p}_s" for p in PHASES)):
        values = [r[key] for r in rows]
        calls = ""
        if key[:-2] in PHASES:
            calls = f"  ({statistics.median(r[key[:-2] + '_calls'] for r in rows):.0f} calls)"
        print(f"  {key:<14} {statistics.median(values):8.2f} s{calls}")
    print("outcomes: " + ", ".join(r["outcome"] for r in rows))


if __name__ == "__main__":
    main()
