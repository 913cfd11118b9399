"""The step runner over recording backends: sequencing, world updates, failure, cancel."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.interfaces import Backends, MotionResult, Pose2D, Status
from cowp_ros.skills.runner import SkillRunner
from cowp_ros.skills.skill_map import SkillMap
from cowp_ros.skills.world import Whereabouts


class Recorder:
    """Every backend at once; records calls and answers from a script."""

    description = "recorder"

    def __init__(self, fail_on: str = "", holds: bool = True, sees: bool = True) -> None:
        self.calls: list[str] = []
        self.fail_on = fail_on
        self.holds = holds
        self.sees = sees
        self.cancel_on = ""

    def _answer(self, call: str, cancel: threading.Event) -> MotionResult:
        self.calls.append(call)
        if call == self.cancel_on:
            cancel.set()
            return MotionResult.canceled(f"{call} canceled")
        if call == self.fail_on:
            return MotionResult.failure(f"{call} broke")
        return MotionResult.success(call)

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> MotionResult:
        return self._answer(f"base {name}", cancel)

    def move_to(
        self,
        name: str,
        positions: Sequence[float],
        cancel: threading.Event,
        via: Sequence[Sequence[float]] = (),
    ) -> MotionResult:
        return self._answer(f"arm {name}", cancel)

    def open(self, cancel: threading.Event) -> MotionResult:
        return self._answer("gripper open", cancel)

    def close(self, cancel: threading.Event, *, expect_object: bool) -> MotionResult:
        outcome = self._answer(f"gripper close{' grasp' if expect_object else ''}", cancel)
        if expect_object and outcome.ok and not self.holds:
            return MotionResult.failure("grasp failed: fingers closed to 0.0 mm")
        return outcome

    def holding(self, cancel: threading.Event) -> MotionResult:
        return self._answer("gripper holding", cancel)

    def find(self, class_name: str, cancel: threading.Event) -> MotionResult:
        outcome = self._answer(f"detect {class_name}", cancel)
        return outcome if self.sees else MotionResult.failure(f"no {class_name} seen")


def make(
    robot: RobotConfig,
    skill_map: SkillMap,
    backend: Recorder,
    camera: bool = False,
    carry_pose: str = "",
) -> SkillRunner:
    world = Whereabouts(
        set(robot.base.locations),
        location_aliases=skill_map.location_aliases,
        object_locations=skill_map.object_locations,
    )
    backends = Backends(backend, backend, backend, backend if camera else None)
    return SkillRunner(
        skill_map,
        world,
        backends,
        locations=robot.base.locations,
        arm_poses=robot.arm.poses,
        carry_pose=carry_pose,
    )


def test_pick_then_place_moves_the_cup_in_the_world(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    backend = Recorder()
    runner = make(robot, skill_map, backend)
    reports: list[tuple[float, str]] = []
    outcome = runner.run(
        "hold_cup", ["cup_1"], threading.Event(), lambda p, s: reports.append((p, s))
    )
    assert outcome.ok, outcome.message
    assert backend.calls == [
        "base counter",
        "gripper open",
        "arm pre_grasp",
        "arm grasp",
        "gripper close grasp",
        "arm pre_grasp",
        "gripper holding",
        "arm carry",
    ]
    assert runner.world.holding == "cup_1"
    assert reports[0] == (0.0, "navigating to cup_1") and reports[-1][0] == 1.0
    assert [p for p, _ in reports] == sorted(p for p, _ in reports)

    backend.calls.clear()
    assert runner.run("place_cup", ["cup_1", "table_1"], threading.Event()).ok
    assert backend.calls[0] == "base table" and "gripper open" in backend.calls
    assert runner.world.holding is None
    assert runner.world.location_of("cup_1") == "table"


def test_a_drive_first_tucks_the_arm_into_the_carry_pose(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    backend = Recorder()
    runner = make(robot, skill_map, backend, carry_pose="carry")
    assert runner.run("find_faucet", ["faucet_1"], threading.Event()).ok
    # Where the arm is at start is not known: it is tucked before the first drive.
    assert backend.calls[:2] == ["arm carry", "base sink"]
    backend.calls.clear()
    assert runner.run("walk", ["table_1"], threading.Event()).ok
    # find left the arm at look_down: tucked again before driving on.
    assert backend.calls == ["arm carry", "base table"]
    backend.calls.clear()
    assert runner.run("hold_cup", ["cup_1"], threading.Event()).ok
    # already tucked after the walk; the pick skill ends in the carry pose too
    assert backend.calls[0] == "base counter" and backend.calls[-1] == "arm carry"
    backend.calls.clear()
    assert runner.run("walk", ["table_1"], threading.Event()).ok
    assert backend.calls == ["base table"]


def test_the_base_stays_when_the_arm_cannot_be_tucked(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    backend = Recorder(fail_on="arm carry")
    runner = make(robot, skill_map, backend, carry_pose="carry")
    outcome = runner.run("walk", ["table_1"], threading.Event())
    assert not outcome.ok and "base kept still" in outcome.message
    assert not any(call.startswith("base") for call in backend.calls)


def test_an_object_that_slipped_fails_the_step_and_is_no_longer_held(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    backend = Recorder(fail_on="gripper holding")
    runner = make(robot, skill_map, backend)
    outcome = runner.run("hold_cup", ["cup_1"], threading.Event())
    assert outcome.status is Status.FAILED
    assert "[pick skill, checking the grasp of cup_1]" in outcome.message
    assert runner.world.holding is None and "arm carry" not in backend.calls


def test_navigation_is_skipped_when_already_there(robot: RobotConfig, skill_map: SkillMap) -> None:
    backend = Recorder()
    runner = make(robot, skill_map, backend)
    assert runner.run("find_faucet", ["faucet_1"], threading.Event()).ok
    assert runner.run("turnon_faucet", ["faucet_1"], threading.Event()).ok
    assert backend.calls.count("base sink") == 1


def test_substitute_variant_runs_on_the_substitute(robot: RobotConfig, skill_map: SkillMap) -> None:
    backend = Recorder()
    runner = make(robot, skill_map, backend)
    assert runner.run("hold_cup", ["bowl_1"], threading.Event()).ok
    assert runner.world.holding == "bowl_1"
    outcome = runner.run("fill_cup_bowl", ["bowl_1", "faucet_1"], threading.Event())
    assert outcome.ok and "variant of fill_cup" in outcome.message
    assert "base sink" in backend.calls


def test_failed_primitive_stops_the_step_and_says_where(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    backend = Recorder(fail_on="arm grasp")
    runner = make(robot, skill_map, backend)
    outcome = runner.run("hold_cup", ["cup_1"], threading.Event())
    assert outcome.status is Status.FAILED
    assert outcome.message.startswith("hold_cup(cup_1) [pick skill, reaching cup_1]")
    assert "arm grasp broke" in outcome.message
    assert backend.calls[-1] == "arm grasp" and runner.world.holding is None


def test_missed_grasp_fails_and_holds_nothing(robot: RobotConfig, skill_map: SkillMap) -> None:
    runner = make(robot, skill_map, Recorder(holds=False))
    outcome = runner.run("grasp_coke", ["coke_1"], threading.Event())
    assert not outcome.ok and "grasp failed" in outcome.message
    assert runner.world.holding is None


def test_failed_drive_forgets_where_the_base_is(robot: RobotConfig, skill_map: SkillMap) -> None:
    backend = Recorder(fail_on="base table")
    runner = make(robot, skill_map, backend)
    assert not runner.run("walk", ["table_1"], threading.Event()).ok
    assert runner.world.base_location is None


def test_cancel_mid_skill_ends_canceled(robot: RobotConfig, skill_map: SkillMap) -> None:
    backend = Recorder()
    backend.cancel_on = "arm pre_grasp"
    runner = make(robot, skill_map, backend)
    outcome = runner.run("hold_cup", ["cup_1"], threading.Event())
    assert outcome.status is Status.CANCELED
    assert backend.calls[-1] == "arm pre_grasp"


def test_cancel_before_start_runs_nothing(robot: RobotConfig, skill_map: SkillMap) -> None:
    backend = Recorder()
    cancel = threading.Event()
    cancel.set()
    outcome = make(robot, skill_map, backend).run("walk", ["table_1"], cancel)
    assert outcome.status is Status.CANCELED and backend.calls == []


def test_unmapped_action_is_a_failed_outcome(robot: RobotConfig, skill_map: SkillMap) -> None:
    outcome = make(robot, skill_map, Recorder()).run("juggle", ["ball_1"], threading.Event())
    assert outcome.status is Status.FAILED and "juggle" in outcome.message
    assert "skills.yaml" in outcome.message


def test_unknown_object_location_is_a_failed_outcome(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    outcome = make(robot, skill_map, Recorder()).run("find_cup", ["unicorn_1"], threading.Event())
    assert not outcome.ok and "no location known for 'unicorn_1'" in outcome.message


def test_detection_is_checked_only_with_a_camera(robot: RobotConfig, skill_map: SkillMap) -> None:
    plain = Recorder()
    assert make(robot, skill_map, plain).run("find_coke", ["coke_1"], threading.Event()).ok
    assert not any(c.startswith("detect") for c in plain.calls)

    blind = Recorder(sees=False)
    outcome = make(robot, skill_map, blind, camera=True).run(
        "find_coke", ["coke_1"], threading.Event()
    )
    assert not outcome.ok and "no bottle seen" in outcome.message  # coke -> COCO bottle
    assert blind.calls[-1] == "detect bottle"


def test_a_put_down_fetches_its_object_unless_held_putting_another_down_first(
    robot: RobotConfig, skill_map: SkillMap
) -> None:
    backend = Recorder()
    runner = make(robot, skill_map, backend)
    # place_plate with no grasp step before it: the plate is picked up first
    assert runner.run("place_plate", ["plate_1", "table_1"], threading.Event()).ok
    assert backend.calls[:2] == ["base cupboard", "gripper open"]
    assert "gripper close grasp" in backend.calls and backend.calls.count("base table") == 1
    backend.calls.clear()
    assert runner.run("grasp_coke", ["coke_1"], threading.Event()).ok
    backend.calls.clear()
    assert runner.run("place_plate", ["plate_2", "table_1"], threading.Event()).ok
    # the coke is put down where the base is (the fridge) before the plate is fetched
    assert backend.calls[:2] == ["gripper holding", "arm pre_grasp"]
    assert backend.calls.index("gripper open") < backend.calls.index("base cupboard")
    assert runner.world.location_of("coke_1") == "fridge" and runner.world.holding is None
