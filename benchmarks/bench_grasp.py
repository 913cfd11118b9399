"""Picks where the base really stopped and the object really stands, in the physics world.

    .venv/bin/python benchmarks/bench_grasp.py --trials 100 --seed 0
        [--json benchmarks/results/grasp/grasp.json] [--plot benchmarks/results/grasp/grasp.png]

Each trial draws where Nav2 left the base (anywhere within its default goal checker:
0.25 m and 0.25 rad of the counter's pose), how far the object stands from its
calibrated spot (up to 5 cm, any direction; a long object also turned up to 0.3 rad),
and which object (cups, glasses, bottles, bowls, plates, cutlery), with a second object
on the next spot. The same trial then runs three times, each from a fresh world, through the
executor's own SkillRunner and skills.yaml's pick skill:

- fixed poses: robot.yaml's calibrated joint angles (the base brought back within
  robot.yaml's tolerance by the executor's arrival check first, as on every profile);
- grasps from the base's pose only: computed for the calibrated spot from where the
  base stopped, no camera (what the camera adds);
- new grasps: the base's pose as TF gives it, the wrist camera looking where the object
  should be (one depth image), the grasp computed from where it was seen by UR's
  closed-form inverse kinematics, a missed grasp looked at and approached once more;
- new grasps with a colour camera only: the same, the object found from the detector's
  box on one colour image and the surface's known height (skills/box_refine.py); the
  boxes are where the object's pixels are (MuJoCo's segmentation image), since YOLO
  does not recognise the world's primitive shapes: tighter than a real detector's.

A pick succeeds when the step says so and the object, read back from the physics, is
between both pads and 10 cm above where it stood; a step that says done while the
object stayed put is counted as a false success. The backends drive the world
in-process (cowp_ros/physics/direct.py: the controller's goal checks, the grasp
threshold, the arrival law), not over ROS: the graph path runs in CI, and a hundred
picks over it would mostly measure process start-up. Prints each failure's reason, the
time per pick (p50, p95; wall and simulated) and, last, `grasp success: K/N (fixed
poses: K0/N)`.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

os.environ.setdefault("MUJOCO_GL", "egl")

import numpy as np

from cowp_ros.physics.direct import (
    BoxCamera,
    BoxLocator,
    DepthCamera,
    DepthLocator,
    DirectArm,
    DirectBase,
    DirectGripper,
    WorldPoses,
)
from cowp_ros.physics.safety import ObjectLog
from cowp_ros.physics.scene import layout_for, model_xml
from cowp_ros.physics.world import PhysicsWorld
from cowp_ros.resources import share_path
from cowp_ros.skills.config import RobotConfig, load_robot_config
from cowp_ros.skills.interfaces import Backends, Pose2D
from cowp_ros.skills.object_shapes import Form, shape_of
from cowp_ros.skills.runner import SkillRunner, arm_geometry
from cowp_ros.skills.skill_map import SkillMap, load_skill_map
from cowp_ros.skills.world import Whereabouts, object_class

KINDS = ("cup", "mug", "glass", "bottle", "bowl", "plate", "fork", "spoon")
NAV2_POSITION_M = 0.25
NAV2_YAW_RAD = 0.25
DISPLACED_M = 0.05
BAR_TURN_RAD = 0.3
LOCATION = "counter"
LIFTED_M = 0.1
METHODS = {
    "fixed": "fixed poses",
    "spot": "grasps from the base's pose only (no camera: the object at its calibrated spot)",
    "new": "new grasps",
    "colour": "new grasps, colour camera only (detector boxes and the surface's height)",
}


@dataclasses.dataclass(frozen=True)
class Trial:
    index: int
    kind: str
    stopped: Pose2D
    shift: tuple[float, float]
    turn: float


def draw(rng: np.random.Generator, index: int, at: Pose2D) -> Trial:
    radius = NAV2_POSITION_M * math.sqrt(rng.uniform())
    angle = rng.uniform(-math.pi, math.pi)
    stopped = Pose2D(
        at.x + radius * math.cos(angle),
        at.y + radius * math.sin(angle),
        at.yaw + rng.uniform(-NAV2_YAW_RAD, NAV2_YAW_RAD),
    )
    kind = str(rng.choice(KINDS))
    moved = DISPLACED_M * math.sqrt(rng.uniform())
    direction = rng.uniform(-math.pi, math.pi)
    turn = rng.uniform(-BAR_TURN_RAD, BAR_TURN_RAD) if shape_of(kind).form is Form.BAR else 0.0
    return Trial(
        index, kind, stopped, (moved * math.cos(direction), moved * math.sin(direction)), turn
    )


def build(robot: RobotConfig, trial: Trial) -> PhysicsWorld:
    neighbour = "mug" if trial.kind != "mug" else "cup"
    objects = [
        (f"{trial.kind}_1", trial.kind, LOCATION, {}),
        (f"{neighbour}_2", neighbour, LOCATION, {}),
    ]
    layout = layout_for(dict(robot.base.locations), objects, robot.surfaces)
    target = layout.objects[0]
    layout.objects[0] = dataclasses.replace(
        target,
        x=target.x + trial.shift[0],
        y=target.y + trial.shift[1],
        yaw=target.yaw + trial.turn,
    )
    world = PhysicsWorld(
        model_xml(layout, trial.stopped, gripper_effort_n=robot.gripper.max_effort_n),
        arm=robot.arm.poses[robot.arm.carry_pose or "carry"],
        fingers=robot.gripper.open_position_m,
    )
    world.settle(0.3)
    return world


def pick(robot: RobotConfig, skills: SkillMap, trial: Trial, method: str) -> dict[str, object]:
    world = build(robot, trial)
    name = f"{trial.kind}_1"
    camera: DepthCamera | BoxCamera | None = None
    locator: DepthLocator | BoxLocator | None = None
    if method == "new":
        camera = DepthCamera(world)
        locator = DepthLocator(camera, robot.surfaces.height)
    elif method == "colour":
        camera = BoxCamera(world, object_class)
        locator = BoxLocator(camera, robot.surfaces.height)
    poses = WorldPoses(world, objects=False) if method != "fixed" else None
    backends = Backends(
        DirectBase(world, robot),
        DirectArm(world, robot),
        DirectGripper(world, robot),
        None,
        poses,
        locator,
    )
    runner = SkillRunner(
        skills,
        Whereabouts(
            set(robot.base.locations),
            location_aliases=skills.location_aliases,
            object_locations={**skills.object_locations, trial.kind: LOCATION},
        ),
        backends,
        locations=robot.base.locations,
        arm_poses=robot.arm.poses,
        carry_pose=robot.arm.carry_pose,
        geometry=arm_geometry(robot),
        surfaces=robot.surfaces,
    )
    log = ObjectLog()
    log.start(world, [name])
    started, sim_started = time.perf_counter(), world.time
    outcome = runner.run("pick_up", [name], threading.Event())
    wall = time.perf_counter() - started
    log.update(world)
    record = log.records[name]
    lifted = record.held and float(world.body_pose(name)[0][2]) - record.start[2] > LIFTED_M
    if camera is not None:
        camera.close()
    if outcome.ok and lifted:
        verdict, reason = "picked", ""
    elif outcome.ok:
        verdict, reason = "false success", "the step said done; the object stayed put"
    else:
        verdict, reason = "failed", outcome.message
    return {
        "verdict": verdict,
        "reason": reason,
        "wall_s": round(wall, 3),
        "simulated_s": round(world.time - sim_started, 3),
    }


def percentile(values: list[float], q: float) -> float:
    return float(np.percentile(values, q)) if values else float("nan")


def plot(rows: list[dict[str, object]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(10, 4.6), sharex=True, sharey=True)
    for ax, method, title in zip(
        axes, ("fixed", "new"), ("fixed poses", "new grasps"), strict=True
    ):
        for verdict, colour, marker in (
            ("picked", "tab:green", "o"),
            ("failed", "tab:red", "x"),
            ("false success", "tab:purple", "s"),
        ):
            chosen = [r for r in rows if r[method]["verdict"] == verdict]  # type: ignore[index]
            ax.scatter(
                [r["base_error_m"] for r in chosen],
                [r["object_shift_m"] for r in chosen],
                c=colour,
                marker=marker,
                label=f"{verdict} ({len(chosen)})",
            )
        ax.set_title(title)
        ax.set_xlabel("where Nav2 left the base: distance from the goal (m)")
        ax.legend(loc="upper right", fontsize=8)
    axes[0].set_ylabel("object moved from its calibrated spot (m)")
    fig.suptitle("Picks from the counter in the physics world")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--smoke", action="store_true", help="CI: two trials")
    args = parser.parse_args()
    if args.smoke:
        args.trials = 2
    if args.trials < 1:
        print("bench_grasp: --trials must be at least 1", file=sys.stderr)
        return 2
    robot = load_robot_config(share_path("config", "robot.yaml"))
    skills = load_skill_map(share_path("config", "skills.yaml"), arm_poses=set(robot.arm.poses))
    at = robot.base.locations[LOCATION]
    rng = np.random.default_rng(args.seed)
    rows: list[dict[str, object]] = []
    for index in range(args.trials):
        trial = draw(rng, index, at)
        row: dict[str, object] = {
            "trial": index,
            "kind": trial.kind,
            "base_error_m": round(math.hypot(trial.stopped.x - at.x, trial.stopped.y - at.y), 4),
            "base_yaw_error_rad": round(trial.stopped.yaw - at.yaw, 4),
            "object_shift_m": round(math.hypot(*trial.shift), 4),
        }
        for method in METHODS:
            row[method] = pick(robot, skills, trial, method)
        rows.append(row)
        fixed, new, colour = row["fixed"], row["new"], row["colour"]
        print(
            f"[{index + 1}/{args.trials}] {trial.kind:7s} base {row['base_error_m']:.3f} m "
            f"{row['base_yaw_error_rad']:+.3f} rad, object {row['object_shift_m']:.3f} m: "
            f"fixed {fixed['verdict']}, new {new['verdict']} ({new['wall_s']:.1f} s), "  # type: ignore[index]
            f"colour only {colour['verdict']}",  # type: ignore[index]
            flush=True,
        )
    summary: dict[str, object] = {}
    for method in METHODS:
        results = [r[method] for r in rows]
        walls = [float(r["wall_s"]) for r in results]  # type: ignore[index]
        sims = [float(r["simulated_s"]) for r in results]  # type: ignore[index]
        summary[method] = {
            "picked": sum(1 for r in results if r["verdict"] == "picked"),  # type: ignore[index]
            "false_success": sum(1 for r in results if r["verdict"] == "false success"),  # type: ignore[index]
            "wall_s_p50": round(percentile(walls, 50), 2),
            "wall_s_p95": round(percentile(walls, 95), 2),
            "simulated_s_p50": round(percentile(sims, 50), 2),
            "simulated_s_p95": round(percentile(sims, 95), 2),
        }
        print(f"\n{METHODS[method]}:")
        print(
            f"  picked {summary[method]['picked']}/{len(rows)}, false successes "  # type: ignore[index]
            f"{summary[method]['false_success']}; time per pick p50 "  # type: ignore[index]
            f"{summary[method]['wall_s_p50']} s, p95 {summary[method]['wall_s_p95']} s wall "  # type: ignore[index]
            f"({summary[method]['simulated_s_p50']} s, {summary[method]['simulated_s_p95']} s "  # type: ignore[index]
            "simulated)"
        )
        for r in rows:
            result = r[method]
            if result["verdict"] != "picked":  # type: ignore[index]
                print(
                    f"  trial {r['trial']} ({r['kind']}): {result['verdict']}: {result['reason']}"
                )  # type: ignore[index]
    commit = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False
    ).stdout.strip()
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(
            json.dumps(
                {
                    "command": " ".join(["benchmarks/bench_grasp.py", *sys.argv[1:]]),
                    "commit": commit,
                    "machine": f"{os.cpu_count()} cores",
                    "summary": summary,
                    "trials": rows,
                },
                indent=1,
            )
            + "\n"
        )
    if args.plot:
        plot(rows, args.plot)
    new_ok = summary["new"]["picked"]  # type: ignore[index]
    fixed_ok = summary["fixed"]["picked"]  # type: ignore[index]
    colour_ok = summary["colour"]["picked"]  # type: ignore[index]
    print(f"colour camera only: {colour_ok}/{len(rows)}")
    print(f"grasp success: {new_ok}/{len(rows)} (fixed poses: {fixed_ok}/{len(rows)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
