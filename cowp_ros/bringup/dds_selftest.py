"""A DDS round trip between two real processes, for `cowp doctor` and the tests.

If ROS 2 imports but discovery is broken (a firewall, a wrong `ROS_DOMAIN_ID`, a
middleware that failed to load), every node starts and nothing ever arrives. This
check catches that in seconds: a child process publishes numbered `std_msgs/String`
messages on a fresh topic and this process waits for one of them.

Run as a module, it is the publishing child:
    python -m cowp_ros.bringup.dds_selftest publish TOPIC SECONDS
"""

from __future__ import annotations

import subprocess
import sys
import time
import uuid
from dataclasses import dataclass


@dataclass(frozen=True)
class SelfTestResult:
    ok: bool
    detail: str
    seconds: float


def _publish(topic: str, seconds: float) -> int:
    """Child side: publish every 0.1 s until `seconds` pass or the parent goes away."""
    import rclpy
    from rclpy.node import Node
    from std_msgs.msg import String

    rclpy.init()
    node = Node("cowp_dds_selftest_publisher")
    publisher = node.create_publisher(String, topic, 10)
    deadline = time.monotonic() + seconds
    count = 0
    try:
        while time.monotonic() < deadline:
            publisher.publish(String(data=f"cowp selftest {count}"))
            count += 1
            rclpy.spin_once(node, timeout_sec=0.1)
    except KeyboardInterrupt:
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


def run_selftest(timeout_s: float = 15.0) -> SelfTestResult:
    """Start a publisher process and wait here, in a subscriber, for its first message."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node
    from std_msgs.msg import String

    topic = f"/cowp_selftest_{uuid.uuid4().hex[:8]}"
    start = time.monotonic()
    child = subprocess.Popen(
        [sys.executable, "-m", "cowp_ros.bringup.dds_selftest", "publish", topic, str(timeout_s)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    context = rclpy.Context()
    rclpy.init(context=context)
    received: list[str] = []
    node: Node | None = None
    executor = SingleThreadedExecutor(context=context)
    try:
        node = Node("cowp_dds_selftest_subscriber", context=context)
        node.create_subscription(String, topic, lambda msg: received.append(msg.data), 10)
        executor.add_node(node)
        while not received and time.monotonic() - start < timeout_s:
            if child.poll() is not None and child.returncode != 0:
                err = (child.stderr.read() if child.stderr else "").strip().splitlines()
                tail = err[-1] if err else f"exit code {child.returncode}"
                return SelfTestResult(
                    False, f"publisher process failed: {tail}", time.monotonic() - start
                )
            executor.spin_once(timeout_sec=0.1)
    finally:
        # The executor before the node: the order cowp_ros.ros.own_node explains.
        executor.shutdown()
        if node is not None:
            node.destroy_node()
        rclpy.try_shutdown(context=context)
        child.terminate()
        try:
            child.wait(timeout=5)
        except subprocess.TimeoutExpired:
            child.kill()
    elapsed = time.monotonic() - start
    if received:
        return SelfTestResult(True, f"message across processes in {elapsed:.1f} s", elapsed)
    return SelfTestResult(
        False,
        f"no message within {timeout_s:.0f} s on {topic}: discovery is not working "
        "(check ROS_DOMAIN_ID, ROS_AUTOMATIC_DISCOVERY_RANGE and the firewall)",
        elapsed,
    )


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "publish":
        sys.exit(_publish(sys.argv[2], float(sys.argv[3])))
    print(__doc__, file=sys.stderr)
    sys.exit(2)
