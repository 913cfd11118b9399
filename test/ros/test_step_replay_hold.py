"""A step's last camera picture is sent again while the live run stays at that step (a
still camera keeps sending), and stops when the run moves on; other messages never
repeat, and the last step's picture is not held."""

from __future__ import annotations

import queue
import threading

from cowp_ros.ros.bags import BagRecord
from cowp_ros.ros.step_replay import IMAGE_TYPE, Segment, StepFollower


class Counting:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def publish(self, data: bytes) -> None:
        self.sent.append(data)


def follower() -> tuple[StepFollower, dict[str, Counting]]:
    made = StepFollower.__new__(StepFollower)  # no node: only the publishing is tested
    publishers = {"/camera": Counting(), "/situations": Counting()}
    made.publishers = publishers
    made.rate = 1.0
    made._announced = queue.Queue()
    made.published = 0
    return made, publishers


SEGMENT = Segment(
    "find_cup(cup_1)",
    [
        BagRecord("/camera", IMAGE_TYPE, 0, b"first"),
        BagRecord("/situations", "cowp_interfaces/msg/Situation", 10_000_000, b"said"),
        BagRecord("/camera", IMAGE_TYPE, 100_000_000, b"last"),
    ],
)


def test_the_last_picture_is_held_until_the_run_moves_on() -> None:
    made, sent = follower()
    stop = threading.Event()
    moved_on = threading.Timer(0.8, lambda: made._announced.put("grasp_cup(cup_1)"))
    moved_on.start()
    made._publish(SEGMENT, stop, hold=True, hold_s=30.0)
    moved_on.join()
    pictures = sent["/camera"].sent
    assert pictures[:2] == [b"first", b"last"]
    assert len(pictures) >= 3 and set(pictures[2:]) == {b"last"}  # held, the last only
    assert sent["/situations"].sent == [b"said"]  # never repeated


def test_without_hold_or_past_the_bound_nothing_more_is_sent() -> None:
    made, sent = follower()
    made._publish(SEGMENT, threading.Event(), hold=False, hold_s=30.0)
    assert sent["/camera"].sent == [b"first", b"last"]
    made, sent = follower()
    made._publish(SEGMENT, threading.Event(), hold=True, hold_s=0.35)  # returns: bounded
    assert set(sent["/camera"].sent[2:]) <= {b"last"}
