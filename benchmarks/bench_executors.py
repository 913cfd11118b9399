"""Bench the executor node's spinning: rclpy's MultiThreadedExecutor against the steady one.

    .venv/bin/python benchmarks/bench_executors.py [--runs 10] [--seconds 4] [--plot executors.png]
    .venv/bin/python benchmarks/bench_executors.py --smoke   # CI: one short run of each

A listener node subscribes the way the skill executor's backends do (the arm's and the
gripper's joint states on /joint_states, odometry, the UR speed scaling; all in one
reentrant callback group). A separate publisher process plays the robot's drivers: the
arm's and the gripper's joint_state broadcasters at 50 Hz each, odometry at 50 Hz, speed
scaling at 20 Hz. Each run builds a fresh node and executor (4 worker threads), lets it
settle for a second, then counts the messages its callbacks hear and the CPU seconds its
process spends over the window. Each run is a process of its own, so that one run's
stuck executor cannot load the next. rclpy's executor falls into its loop at random, so runs
are repeated: prints the median and the range over the runs of each executor, and the
ratio of the medians.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

PUBLISHER = """
import sys, threading, rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from nav_msgs.msg import Odometry
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64
prefix = sys.argv[1]
rclpy.init()
node = Node("bench_drivers")
arm = node.create_publisher(JointState, prefix + "/joint_states", 10)
hand = node.create_publisher(JointState, prefix + "/joint_states", 10)
odom = node.create_publisher(Odometry, prefix + "/odom", 10)
scaling = node.create_publisher(Float64, prefix + "/speed_scaling", 10)
joints = [f"joint_{i}" for i in range(6)]
node.create_timer(0.02, lambda: arm.publish(JointState(name=joints, position=[0.0] * 6)))
node.create_timer(0.02, lambda: hand.publish(JointState(name=["finger"], position=[0.0])))
node.create_timer(0.02, lambda: odom.publish(Odometry()))
node.create_timer(0.05, lambda: scaling.publish(Float64(data=100.0)))
executor = SingleThreadedExecutor()
executor.add_node(node)

def until_stdin_closes():
    # The bench ends the drivers by closing our stdin: the executor then stops between
    # callbacks (a signal could land inside a publish, whose context it had just shut).
    sys.stdin.read()
    executor.shutdown()

threading.Thread(target=until_stdin_closes, daemon=True).start()
print("ready", flush=True)
try:
    executor.spin()
except ExternalShutdownException:  # interrupted from outside: the end of the drivers too
    pass
node.destroy_node()
rclpy.try_shutdown()
"""
PUBLISHED_PER_S = {"joint_states (x2 subscriptions)": 2 * (50 + 50), "odom": 50, "scaling": 20}


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def one_run(kind: str, prefix: str, seconds: float) -> dict[str, float]:
    import threading

    import rclpy
    from nav_msgs.msg import Odometry
    from rclpy.callback_groups import ReentrantCallbackGroup
    from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
    from rclpy.node import Node
    from sensor_msgs.msg import JointState
    from std_msgs.msg import Float64

    from cowp_ros.ros.executors import SteadyMultiThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node(f"bench_listener_{uuid.uuid4().hex[:8]}", context=context)
    group = ReentrantCallbackGroup()
    heard = [0]

    def count(_msg: object) -> None:
        heard[0] += 1

    for msg_type, topic in (
        (JointState, "/joint_states"),
        (JointState, "/joint_states"),
        (Odometry, "/odom"),
        (Float64, "/speed_scaling"),
    ):
        node.create_subscription(msg_type, prefix + topic, count, 10, callback_group=group)
    make = SteadyMultiThreadedExecutor if kind == "steady" else MultiThreadedExecutor
    executor = make(num_threads=4, context=context)
    executor.add_node(node)
    stop = threading.Event()

    def spin() -> None:
        while not stop.is_set() and context.ok():
            try:
                executor.spin_once(timeout_sec=0.1)
            except ExternalShutdownException:
                return

    thread = threading.Thread(target=spin, daemon=True)
    thread.start()
    try:
        time.sleep(1.0)  # discovery and matching
        heard0, cpu0, wall0 = heard[0], cpu_s(), time.monotonic()
        time.sleep(seconds)
        wall = time.monotonic() - wall0
        return {"cpu_per_s": (cpu_s() - cpu0) / wall, "heard_per_s": (heard[0] - heard0) / wall}
    finally:
        stop.set()
        thread.join(timeout=5)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def run_in_a_process(kind: str, prefix: str, seconds: float) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--one", kind, "--prefix", prefix, "--seconds", str(seconds)],
        capture_output=True,
        text=True,
        timeout=seconds + 60,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the {kind} run failed:\n{done.stderr[-2000:]}")
    return dict(json.loads(done.stdout.strip().splitlines()[-1]))


def summary(values: list[float]) -> str:
    return f"{statistics.median(values):7.2f} [{min(values):.2f}, {max(values):.2f}]"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each executor")
    parser.add_argument("--seconds", type=float, default=4.0, help="counting window per run")
    parser.add_argument("--json", type=Path, help="write the runs here")
    parser.add_argument("--plot", type=Path, help="write a figure of the runs here")
    parser.add_argument("--smoke", action="store_true", help="one short run of each (CI)")
    parser.add_argument("--one", choices=["rclpy", "steady"], help=argparse.SUPPRESS)
    parser.add_argument("--prefix", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:  # a single run, in this process, for the parent
        print(json.dumps(one_run(args.one, args.prefix, args.seconds)))
        return 0
    runs, seconds = (1, 1.0) if args.smoke else (args.runs, args.seconds)
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    prefix = f"/bench_{uuid.uuid4().hex[:8]}"
    drivers = subprocess.Popen(
        [sys.executable, "-c", PUBLISHER, prefix],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert drivers.stdout is not None
        if drivers.stdout.readline().strip() != "ready":
            print("bench_executors: the publisher process did not start", file=sys.stderr)
            return 1
        results: dict[str, list[dict[str, float]]] = {"rclpy": [], "steady": []}
        for index in range(runs):
            for kind in results:  # interleaved, so a change in load hits both alike
                results[kind].append(run_in_a_process(kind, prefix, seconds))
                print(f"run {index + 1}/{runs} {kind}: {results[kind][-1]}", flush=True)
    finally:
        assert drivers.stdin is not None
        drivers.stdin.close()  # the drivers' signal to stop (see PUBLISHER)
        try:
            drivers.wait(timeout=10)
        except subprocess.TimeoutExpired:
            drivers.kill()
            drivers.wait()
    published = sum(PUBLISHED_PER_S.values())
    print(f"\npublished: {published} callbacks/s due; {runs} runs of {seconds:g} s each")
    print(
        f"{'executor':10s} {'CPU s per s  median [range]':30s} {'callbacks/s median [range]':30s}"
    )
    for kind, rows in results.items():
        cpu = [r["cpu_per_s"] for r in rows]
        heard = [r["heard_per_s"] for r in rows]
        print(f"{kind:10s} {summary(cpu):30s} {summary(heard):30s}")
    medians = {k: statistics.median(r["cpu_per_s"] for r in rows) for k, rows in results.items()}
    print(
        f"CPU ratio rclpy / steady (medians): {medians['rclpy'] / max(medians['steady'], 1e-6):.1f}"
    )
    if args.json:
        args.json.write_text(json.dumps({"published_per_s": published, "runs": results}, indent=1))
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        figure, axes = plt.subplots(1, 2, figsize=(8, 3.2))
        for axis, key, label in (
            (axes[0], "cpu_per_s", "CPU seconds per second"),
            (axes[1], "heard_per_s", "callbacks per second"),
        ):
            for position, rows in enumerate(results.values()):
                axis.scatter([position] * len(rows), [r[key] for r in rows], alpha=0.6)
            axis.set_xticks(range(len(results)), list(results))
            axis.set_title(label)
        axes[1].axhline(published, linestyle="--", color="grey", label="published")
        axes[1].legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
