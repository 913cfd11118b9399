"""The physics world served through the real drivers' action interfaces.

Each class is the physics counterpart of one driver the robot profile talks to, with
the same action type, name, goal checks and result codes, so the executor's action
backends (cowp_ros/ros/skill_backends) run here exactly as on the robot:
- `TrajectoryDriver`: control_msgs/FollowJointTrajectory, as the UR driver's
  scaled_joint_trajectory_controller serves it (path and goal tolerances from the goal,
  else the controller's defaults; INVALID_JOINTS, PATH_TOLERANCE_VIOLATED, ...);
- `GripperDriver`: control_msgs/ParallelGripperCommand, as Kilted's
  parallel_gripper_action_controller serves it with a max_effort interface and
  allow_stalling (config/robot/hande_controller.yaml);
- `NavigationDriver`: nav2_msgs/NavigateToPose, planned and followed as Nav2 does with
  its default goal checker (cowp_ros/physics/navigation.py).
Execute callbacks wait on the stepping thread's ticks and check the cancel request on
each, as ros2/examples' action servers do.
"""

from __future__ import annotations

import math
import random
import threading
from typing import Any

from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.callback_groups import CallbackGroup
from rclpy.node import Node
from sensor_msgs.msg import JointState

from cowp_ros.physics import trajectory as traj
from cowp_ros.physics.navigation import GridPlanner, PathFollower
from cowp_ros.physics.stepping import SteppingThread
from cowp_ros.physics.world import ARM_JOINTS
from cowp_ros.skills.config import GripperConfig
from cowp_ros.skills.interfaces import Pose2D

# joint_trajectory_controller's defaults when a goal gives no tolerance (the UR driver's
# ur_controllers.yaml sets goal_time 0.0 and per-joint goal tolerances of 0 there; a
# stand-in that checks nothing would hide a blocked arm, so these are the values the
# controller's parameters take in cowp's physics profile).
DEFAULT_PATH_TOLERANCE = 0.2
DEFAULT_GOAL_TOLERANCE = 0.02
DEFAULT_GOAL_TIME_S = 1.0
GRIPPER_GOAL_TOLERANCE = 0.001  # config/robot/hande_controller.yaml
STALL_VELOCITY = 0.001
STALL_TIMEOUT_S = 0.5


def _seconds(duration: Any) -> float:
    return float(duration.sec) + float(duration.nanosec) * 1e-9


def _accept(_goal: Any) -> GoalResponse:
    return GoalResponse.ACCEPT


def _cancel(_handle: Any) -> CancelResponse:
    return CancelResponse.ACCEPT


class TrajectoryDriver:
    def __init__(
        self,
        node: Node,
        stepping: SteppingThread,
        name: str,
        group: CallbackGroup,
        *,
        abort_goal: int = 0,
    ) -> None:
        """`abort_goal`: the number (from 1) of a goal to abort half-way, a fault a test
        injects (a protective stop, a controller that gives up); 0 = none."""
        from control_msgs.action import FollowJointTrajectory

        self.action = FollowJointTrajectory
        self.node = node
        self.stepping = stepping
        self.abort_goal = abort_goal
        self.goals = 0
        self.server = ActionServer(
            node, FollowJointTrajectory, name, execute_callback=self.execute,
            goal_callback=_accept, cancel_callback=_cancel, callback_group=group,
        )  # fmt: skip

    def _tolerances(self, goal: Any, names: list[str]) -> traj.Tolerances:
        path = {t.name: t.position for t in goal.path_tolerance}
        final = {t.name: t.position for t in goal.goal_tolerance}
        goal_time = _seconds(goal.goal_time_tolerance) or DEFAULT_GOAL_TIME_S
        return traj.Tolerances(
            tuple(path.get(n, DEFAULT_PATH_TOLERANCE) for n in ARM_JOINTS),
            tuple(final.get(n, DEFAULT_GOAL_TOLERANCE) for n in ARM_JOINTS),
            goal_time,
        )

    def execute(self, handle: Any) -> Any:
        goal = handle.request
        result = self.action.Result()
        names = list(goal.trajectory.joint_names)
        points = [
            traj.Point(
                _seconds(p.time_from_start),
                tuple(p.positions),
                tuple(p.velocities) if len(p.velocities) else None,
            )
            for p in goal.trajectory.points
        ]
        problem = traj.validate(names, ARM_JOINTS, points)
        if problem is None and set(names) != set(ARM_JOINTS):
            problem = traj.Verdict(traj.INVALID_JOINTS, "the goal must name every arm joint")
        if problem is not None:
            result.error_code, result.error_string = problem.code, problem.message
            handle.abort()
            return result
        order = [names.index(n) for n in ARM_JOINTS]
        ordered = [
            traj.Point(
                p.time_s,
                tuple(p.positions[i] for i in order),
                None if p.velocities is None else tuple(p.velocities[i] for i in order),
            )
            for p in points
        ]
        self.goals += 1
        abort = self.goals == self.abort_goal
        with self.stepping.lock:
            world = self.stepping.world
            playing = traj.PlayingTrajectory(
                world.arm_positions(), ordered, self._tolerances(goal, names), ARM_JOINTS
            )
            world.play(playing)
        while True:
            with self.stepping.lock:
                if (
                    abort
                    and world.trajectory is playing
                    and (world.trajectory_time >= playing.duration / 2)
                ):
                    world.stop_arm()
                    world.verdict = traj.Verdict(
                        traj.PATH_TOLERANCE_VIOLATED, "aborted half-way (an injected fault)"
                    )
                verdict = world.verdict if world.trajectory is not playing else None
                if world.trajectory is not playing and verdict is None:
                    verdict = traj.Verdict(traj.INVALID_GOAL, "replaced by a newer trajectory")
                if handle.is_cancel_requested and verdict is None:
                    world.stop_arm()
                    handle.canceled()
                    result.error_string = "canceled; holding position"
                    return result
                if verdict is not None:
                    break
                feedback = self.action.Feedback()
                feedback.joint_names = list(ARM_JOINTS)
                feedback.actual.positions = list(world.arm_positions())
                feedback.desired.positions = list(playing.sample(world.trajectory_time))
            handle.publish_feedback(feedback)
            self.stepping.wait_sim(0.05)
        result.error_code, result.error_string = verdict.code, verdict.message
        if verdict.code == traj.SUCCESSFUL:
            handle.succeed()
        else:
            handle.abort()
        return result


class GripperDriver:
    def __init__(
        self,
        node: Node,
        stepping: SteppingThread,
        name: str,
        group: CallbackGroup,
        config: GripperConfig,
    ) -> None:
        """`config`: the finger joint, and how the goal's effort reads (newtons, or the
        Hand-E driver's fraction of its force range)."""
        from control_msgs.action import ParallelGripperCommand

        self.action = ParallelGripperCommand
        self.stepping = stepping
        self.config = config
        self.finger_joint = config.finger_joint
        self.server = ActionServer(
            node, ParallelGripperCommand, name, execute_callback=self.execute,
            goal_callback=_accept, cancel_callback=_cancel, callback_group=group,
        )  # fmt: skip

    def _state(self) -> JointState:
        world = self.stepping.world
        return JointState(
            name=[self.finger_joint],
            position=[world.finger_position()],
            velocity=[world.finger_velocity()],
            effort=[world.finger_force()],
        )

    def execute(self, handle: Any) -> Any:
        command = handle.request.command
        result = self.action.Result()
        if len(command.position) != 1:
            handle.abort()
            return result
        target = float(command.position[0])
        effort = (
            self.config.effort_newtons(float(command.effort[0])) if len(command.effort) else None
        )
        world = self.stepping.world
        with self.stepping.lock:
            world.command_gripper(target, effort)
            still_since = world.time
        while True:
            with self.stepping.lock:
                position, velocity, now = (
                    world.finger_position(),
                    world.finger_velocity(),
                    world.time,
                )
                if abs(velocity) > STALL_VELOCITY:
                    still_since = now
                reached = abs(position - world.finger_goal) <= GRIPPER_GOAL_TOLERANCE
                stalled = not reached and now - still_since >= STALL_TIMEOUT_S
                state = self._state()
                if handle.is_cancel_requested:
                    world.command_gripper(position)
                    handle.canceled()
                    result.state = state
                    return result
            if reached or stalled:
                break
            handle.publish_feedback(self.action.Feedback(state=state))
            self.stepping.wait_sim(0.02)
        result.state, result.reached_goal, result.stalled = state, reached, stalled
        handle.succeed()  # allow_stalling: a stall on an object is a success
        return result


class NavigationDriver:
    def __init__(
        self,
        node: Node,
        stepping: SteppingThread,
        name: str,
        group: CallbackGroup,
        planner: GridPlanner,
        *,
        xy_tolerance: float,
        yaw_tolerance: float,
        timeout_s: float,
        stop_anywhere: random.Random | None = None,
    ) -> None:
        """`stop_anywhere`: a fault: the base comes to rest at a random pose within the
        goal checker's tolerance (drawn from this generator) instead of where it first
        entered it."""
        from nav2_msgs.action import NavigateToPose

        self.action = NavigateToPose
        self.node = node
        self.stepping = stepping
        self.planner = planner
        self.xy_tolerance = xy_tolerance
        self.yaw_tolerance = yaw_tolerance
        self.timeout_s = timeout_s
        self.stop_anywhere = stop_anywhere
        self.active = threading.Event()
        self._goal_lock = threading.Lock()
        self.server = ActionServer(
            node, NavigateToPose, name, execute_callback=self.execute,
            goal_callback=self._on_goal, cancel_callback=_cancel, callback_group=group,
        )  # fmt: skip

    def _on_goal(self, _goal: Any) -> GoalResponse:
        return GoalResponse.REJECT if self.active.is_set() else GoalResponse.ACCEPT

    def execute(self, handle: Any) -> Any:
        self.active.set()
        try:
            return self._navigate(handle)
        finally:
            with self.stepping.lock:
                self.stepping.world.command_base(0.0, 0.0, 0.0)
            self.active.clear()

    def _navigate(self, handle: Any) -> Any:
        result = self.action.Result()
        pose = handle.request.pose.pose
        q = pose.orientation
        goal = Pose2D(
            pose.position.x,
            pose.position.y,
            math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z)),
        )
        world = self.stepping.world
        with self.stepping.lock:
            start = world.base_pose()
            started = world.time
        path = self.planner.plan(start, goal)
        if path is None:
            result.error_code = self.action.Result.UNKNOWN
            result.error_msg = f"no path to ({goal.x:.2f}, {goal.y:.2f})"
            handle.abort()
            return result
        follower = PathFollower(
            path, goal, xy_tolerance=self.xy_tolerance, yaw_tolerance=self.yaw_tolerance
        )
        if self.stop_anywhere is not None:
            draw = self.stop_anywhere
            radius = self.xy_tolerance * math.sqrt(draw.random()) * 0.95
            angle = draw.uniform(-math.pi, math.pi)
            stop = Pose2D(
                goal.x + radius * math.cos(angle),
                goal.y + radius * math.sin(angle),
                goal.yaw + draw.uniform(-0.95, 0.95) * self.yaw_tolerance,
            )
            path = [*path[:-1], (stop.x, stop.y)]
            follower = PathFollower(path, stop, xy_tolerance=0.01, yaw_tolerance=0.01)
        while True:
            with self.stepping.lock:
                here = world.base_pose()
                now = world.time
                if handle.is_cancel_requested:
                    world.command_base(0.0, 0.0, 0.0)
                    handle.canceled()
                    return result
                if follower.reached(here):
                    world.command_base(0.0, 0.0, 0.0)
                    break
                if now - started > self.timeout_s:
                    world.command_base(0.0, 0.0, 0.0)
                    result.error_code = self.action.Result.TIMEOUT
                    result.error_msg = (
                        f"did not reach the goal within {self.timeout_s:g} s "
                        f"({here.distance_to(goal):.2f} m away)"
                    )
                    handle.abort()
                    return result
                world.command_base(*follower.command(here))
            feedback = self.action.Feedback()
            feedback.current_pose.pose.position.x = here.x
            feedback.current_pose.pose.position.y = here.y
            feedback.distance_remaining = float(follower.remaining(here))
            handle.publish_feedback(feedback)
            self.stepping.wait_sim(0.05)
        # Let the base come to rest before reporting, as Nav2's controller stops it.
        self.stepping.wait_sim(0.3)
        result.error_code = self.action.Result.NONE
        handle.succeed()
        return result
