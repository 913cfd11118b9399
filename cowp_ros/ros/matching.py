"""A publisher that speaks once waits for every subscriber it can see, not just the first.

Discovery is not simultaneous: a one-shot publisher (`cowp task situation`, `cowp
replay`) that publishes as soon as one subscriber matched loses its message for every
other subscriber still being matched, a bag recorder among them, since a volatile
reliable topic keeps nothing for a late reader. The graph already lists those
subscriptions (`get_subscriptions_info_by_topic`) before the match completes, so the
publisher waits until it has matched each compatible one it sees, within a bound.
Subscriptions whose QoS can never match it (a reliable reader of a best-effort
replay) are left out: waiting for them would only wait out the bound.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping
from typing import Any

from rclpy.node import Node
from rclpy.qos import QoSCompatibility, qos_check_compatible

POLL_S = 0.05


def compatible_subscriptions(node: Node, topic: str, publisher: Any) -> int:
    """How many subscriptions the graph shows on `topic` that `publisher` can match."""
    count = 0
    for info in node.get_subscriptions_info_by_topic(topic):
        compatibility, _ = qos_check_compatible(publisher.qos_profile, info.qos_profile)
        if compatibility != QoSCompatibility.ERROR:
            count += 1
    return count


def everyone_matched(node: Node, topic: str, publisher: Any) -> bool:
    """At least one subscriber, and every compatible one the graph shows is matched."""
    matched = publisher.get_subscription_count()
    return matched > 0 and matched >= compatible_subscriptions(node, topic, publisher)


def wait_for_every_subscriber(
    node: Node,
    publishers: Mapping[str, Any],
    timeout_s: float,
    stop: threading.Event | None = None,
    spin: Any = None,
) -> list[str]:
    """Wait (up to `timeout_s`) until each topic's publisher matched every subscriber
    it can see; returns the topics where it did not. `spin(seconds)` runs the node's
    executor meanwhile when the caller does not spin it elsewhere."""
    deadline = time.monotonic() + timeout_s
    while True:
        pending = [t for t, p in publishers.items() if not everyone_matched(node, t, p)]
        if not pending or time.monotonic() >= deadline or (stop is not None and stop.is_set()):
            return pending
        if spin is not None:
            spin(POLL_S)
        else:
            time.sleep(POLL_S)
