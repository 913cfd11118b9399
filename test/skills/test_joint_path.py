"""A path through waypoints is timed as one move of the arm at its configured speed."""

from __future__ import annotations

import pytest

from cowp_ros.skills.joint_path import timed_path


def test_one_point_takes_the_move_duration_of_a_single_goal() -> None:
    (point,) = timed_path([0.0] * 6, [[1.0, 0.2, 0, 0, 0, 0]], 0.5, 1.0)
    assert point.time_s == pytest.approx(2.0)  # 1 rad at 0.5 rad/s
    assert point.velocities == (0.0,) * 6
    (short,) = timed_path([0.0] * 6, [[0.1, 0, 0, 0, 0, 0]], 0.5, 1.0)
    assert short.time_s == pytest.approx(1.0)  # never shorter than the minimum


def test_inner_points_pass_through_smoothly_and_the_end_stops() -> None:
    path = [[0.2 * k, 0.1 * k, 0, 0, 0, 0] for k in range(1, 6)]
    points = timed_path([0.0] * 6, path, 0.5, 1.0)
    times = [p.time_s for p in points]
    assert times == sorted(times) and times[-1] == pytest.approx(2.0)
    for point in points[:-1]:  # steady through each inner point: 1 rad in 2 s
        assert point.velocities[0] == pytest.approx(0.5)
        assert point.velocities[1] == pytest.approx(0.25)
    assert points[-1].velocities == (0.0,) * 6
    assert [p.positions for p in points] == [tuple(float(v) for v in w) for w in path]
