"""The gripper's stop rule on hand-made timelines of heard positions: a stop needs
positions heard across the settle time, so silence or a late command is never a grasp."""

from __future__ import annotations

import pytest

from cowp_ros.skills.finger_rest import FingerRest, RestRule

RULE = RestRule(tolerance_m=0.0005, settle_time_s=0.5, response_time_s=2.0)
OPEN, CLOSED = 0.025, 0.0


def closing(samples: list[tuple[float, float]]) -> FingerRest:
    rest = FingerRest(RULE, target=CLOSED, started_at=0.0)
    for at, position in samples:
        rest.heard(at, position)
    return rest


def test_nothing_heard_is_never_a_stop() -> None:
    assert not closing([]).at_rest()


def test_reaching_the_target_is_a_stop_at_once() -> None:
    assert closing([(0.02, 0.0002)]).at_rest()


def test_fingers_heard_still_for_the_settle_time_after_moving_have_stopped() -> None:
    moving = [(0.02 * i, OPEN - 0.002 * i) for i in range(7)]  # 25 mm down to 13 mm
    still = [(0.14 + 0.02 * i, 0.013) for i in range(1, 27)]  # then 0.52 s at 13 mm
    rest = closing(moving + still)
    assert rest.at_rest()
    assert not closing(moving + still[:20]).at_rest()  # only 0.4 s still


def test_a_quiet_topic_is_not_a_stop_however_long_the_wait() -> None:
    """The publisher (or the callback thread hearing it) is held up: the same old
    position is all there is, and no new message means no evidence of rest."""
    rest = closing([(0.0, OPEN), (0.02, 0.024), (0.04, 0.023)])
    assert not rest.at_rest()
    rest.heard(0.04, 0.023)  # the cached message read again: no news
    assert not rest.at_rest()
    # Unmoved fingers too: only a message heard response_time_s after the command counts.
    assert not closing([(0.0, 0.012), (0.5, 0.012)]).at_rest()


def test_positions_after_a_gap_that_moved_across_it_are_not_a_stop() -> None:
    rest = closing([(0.0, OPEN), (0.02, 0.024), (0.90, 0.008)])  # 0.9 s gap, moved 16 mm
    assert not rest.at_rest()
    rest.heard(0.92, 0.0076)
    assert not rest.at_rest()


def test_a_command_not_yet_acted_on_waits_for_the_response_time() -> None:
    """The fingers have not started to move: at 0.5 s that is latency, not a stop;
    after response_time_s they are judged where they are (blocked, or on the object)."""
    still = [(0.02 * i, 0.012) for i in range(60)]  # 1.2 s at 12 mm
    rest = closing(still)
    assert not rest.at_rest()
    rest.heard(2.0, 0.012)
    assert rest.at_rest()


def test_a_repeated_arrival_time_is_ignored() -> None:
    rest = closing([(0.0, OPEN), (0.1, 0.020)])
    rest.heard(0.1, CLOSED)  # same arrival time: not a new message, so not taken
    assert not rest.at_rest()
    rest.heard(0.12, CLOSED)
    assert rest.at_rest()


@pytest.mark.parametrize("target", [OPEN, CLOSED])
def test_the_rule_holds_for_opening_and_closing(target: float) -> None:
    start = CLOSED if target == OPEN else OPEN
    rest = FingerRest(RULE, target=target, started_at=0.0)
    rest.heard(0.0, start)
    rest.heard(0.3, (start + target) / 2)
    assert not rest.at_rest()
    rest.heard(0.6, target)
    assert rest.at_rest()
