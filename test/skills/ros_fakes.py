"""In-process fakes of the robot's server side, built from installable message types.

Each fake is a small node that behaves like the real driver on the topics of
config/robot.yaml: a joint trajectory controller that follows the trajectory it gets
and publishes /joint_states, a Hand-E that closes until it meets an object, a base
that drives toward /goal_pose and publishes /odom. control_msgs and
nav2_simple_commander are not installable here, so the action-mode backends are tested
against test doubles of rclpy's ActionClient and of BasicNavigator with the same API.
"""

from __future__ import annotations

import enum
import math
import threading
import time
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import rclpy
from action_msgs.msg import GoalStatus
from geometry_msgs.msg import PoseStamped
from nav_msgs.msg import Odometry
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

RATE_S = 0.02


class RosHarness:
    """One rclpy context with a MultiThreadedExecutor spinning in a background thread."""

    def __init__(self) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.executor = MultiThreadedExecutor(num_threads=6, context=self.context)
        self.nodes: list[Node] = []
        self.error: Exception | None = None
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._spin, daemon=True)
        self.thread.start()

    def _spin(self) -> None:
        """Spin until shutdown, riding out nodes that tests destroy while it spins.

        rclpy may still hold a destroyed node's entities in the wait set it is building
        (InvalidHandle); the next spin_once no longer has them.
        """
        while not self._stop.is_set() and self.context.ok():
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except _rclpy.InvalidHandle:
                continue
            except ExternalShutdownException:
                break
            except Exception as err:
                self.error = err
                raise

    def node(self, name: str, cls: type[Node] = Node, **kwargs: Any) -> Any:
        node = cls(name, context=self.context, **kwargs) if cls is Node else cls(self, **kwargs)
        self.executor.add_node(node)
        self.nodes.append(node)
        return node

    def add(self, node: Node) -> Node:
        self.executor.add_node(node)
        self.nodes.append(node)
        return node

    def remove(self, node: Node) -> None:
        self.executor.remove_node(node)
        self.nodes.remove(node)
        node.destroy_node()

    def shutdown(self) -> None:
        self._stop.set()
        self.thread.join(timeout=5)
        self.executor.shutdown()
        for node in self.nodes:
            node.destroy_node()
        rclpy.try_shutdown(context=self.context)
        self.thread.join(timeout=5)


class FakeArmController(Node):
    """Follows a one-point JointTrajectory linearly in time; publishes /joint_states.

    stall: takes trajectories but never moves (a controller that is not active).
    """

    def __init__(
        self,
        harness: RosHarness,
        *,
        joint_names: tuple[str, ...],
        start: tuple[float, ...],
        trajectory_topic: str | None,
        joint_states_topic: str = "/joint_states",
        stall: bool = False,
    ) -> None:
        super().__init__("fake_arm_controller", context=harness.context)
        self.joint_names = joint_names
        self.positions = list(start)
        self.stall = stall
        self.received: list[JointTrajectory] = []
        self._lock = threading.Lock()
        self._motion: tuple[float, float, list[float], list[float]] | None = None
        self.publisher = self.create_publisher(JointState, joint_states_topic, 10)
        if trajectory_topic:
            self.create_subscription(JointTrajectory, trajectory_topic, self.follow, 10)
        self.create_timer(RATE_S, self._tick)

    def follow(self, msg: JointTrajectory) -> None:
        self.received.append(msg)
        if self.stall or not msg.points:
            return
        point = msg.points[-1]
        seconds = point.time_from_start.sec + point.time_from_start.nanosec * 1e-9
        order = {name: i for i, name in enumerate(msg.joint_names)}
        goal = [point.positions[order[name]] for name in self.joint_names]
        with self._lock:
            self._motion = (time.monotonic(), max(seconds, 1e-3), list(self.positions), goal)

    @property
    def moving(self) -> bool:
        with self._lock:
            return self._motion is not None

    def _tick(self) -> None:
        with self._lock:
            if self._motion is not None:
                started, seconds, start, goal = self._motion
                fraction = min(1.0, (time.monotonic() - started) / seconds)
                self.positions = [a + (b - a) * fraction for a, b in zip(start, goal, strict=True)]
                if fraction >= 1.0:
                    self._motion = None
            positions = list(self.positions)
        msg = JointState(name=list(self.joint_names), position=positions)
        msg.header.stamp = self.get_clock().now().to_msg()
        self.publisher.publish(msg)


class FakeHandE(Node):
    """Moves the finger toward the commanded position at a fixed speed.

    object_at: where the fingers meet an object when closing (None: nothing there, so
    they close fully).
    """

    def __init__(
        self,
        harness: RosHarness,
        *,
        finger_joint: str,
        command_topic: str | None,
        object_at: float | None,
        start: float = 0.025,
        speed_m_s: float = 0.1,
        joint_states_topic: str = "/joint_states",
    ) -> None:
        super().__init__("fake_hande", context=harness.context)
        self.finger_joint = finger_joint
        self.position = start
        self.target = start
        self.object_at = object_at
        self.speed = speed_m_s
        self.commands: list[float] = []
        self._lock = threading.Lock()
        self.publisher = self.create_publisher(JointState, joint_states_topic, 10)
        if command_topic:
            self.create_subscription(Float64MultiArray, command_topic, self.command, 10)
        self.create_timer(RATE_S, self._tick)

    def command(self, msg: Float64MultiArray | float) -> None:
        target = msg if isinstance(msg, float) else float(msg.data[0])
        with self._lock:
            self.commands.append(target)
            self.target = target

    def settled(self) -> bool:
        with self._lock:
            return abs(self.position - self._limit()) < 1e-9

    def _limit(self) -> float:
        if self.object_at is not None and self.target < self.object_at <= self.position:
            return self.object_at
        return self.target

    def _tick(self) -> None:
        with self._lock:
            limit = self._limit()
            step = self.speed * RATE_S
            if abs(limit - self.position) <= step:
                self.position = limit
            else:
                self.position += math.copysign(step, limit - self.position)
            position = self.position
        self.publisher.publish(JointState(name=[self.finger_joint], position=[position]))


class FakeOdomBase(Node):
    """Drives straight toward the last /goal_pose, then turns; publishes /odom.

    ignore_goals: subscribes but never moves (a base whose driver is stuck).
    """

    def __init__(
        self,
        harness: RosHarness,
        *,
        goal_topic: str | None,
        odom_topic: str = "/odom",
        speed_m_s: float = 4.0,
        turn_rad_s: float = 8.0,
        ignore_goals: bool = False,
    ) -> None:
        super().__init__("fake_base", context=harness.context)
        self.x = self.y = self.yaw = 0.0
        self.speed, self.turn = speed_m_s, turn_rad_s
        self.ignore_goals = ignore_goals
        self.goals: list[PoseStamped] = []
        self._goal: tuple[float, float, float] | None = None
        self._lock = threading.Lock()
        self.publisher = self.create_publisher(Odometry, odom_topic, 10)
        if goal_topic:
            self.create_subscription(PoseStamped, goal_topic, self.on_goal, 10)
        self.create_timer(RATE_S, self._tick)

    def on_goal(self, msg: PoseStamped) -> None:
        self.goals.append(msg)
        if self.ignore_goals:
            return
        q = msg.pose.orientation
        yaw = math.atan2(2 * (q.w * q.z + q.x * q.y), 1 - 2 * (q.y * q.y + q.z * q.z))
        with self._lock:
            self._goal = (msg.pose.position.x, msg.pose.position.y, yaw)

    @property
    def moving(self) -> bool:
        with self._lock:
            return self._goal is not None

    def _tick(self) -> None:
        with self._lock:
            if self._goal is not None:
                gx, gy, gyaw = self._goal
                dx, dy = gx - self.x, gy - self.y
                dist = math.hypot(dx, dy)
                step = self.speed * RATE_S
                if dist > step:
                    self.x += dx / dist * step
                    self.y += dy / dist * step
                else:
                    self.x, self.y = gx, gy
                    error = math.atan2(math.sin(gyaw - self.yaw), math.cos(gyaw - self.yaw))
                    turn = self.turn * RATE_S
                    self.yaw = gyaw if abs(error) <= turn else self.yaw + math.copysign(turn, error)
                    if self.yaw == gyaw:
                        self._goal = None
            x, y, yaw = self.x, self.y, self.yaw
        msg = Odometry()
        msg.header.frame_id = "map"
        msg.pose.pose.position.x, msg.pose.pose.position.y = x, y
        msg.pose.pose.orientation.z = math.sin(yaw / 2)
        msg.pose.pose.orientation.w = math.cos(yaw / 2)
        self.publisher.publish(msg)


# --- test doubles for the action-mode backends (control_msgs is not installable) ---


def fake_action_type(goal_factory: Callable[[], Any]) -> SimpleNamespace:
    """Stands in for control_msgs.action.X: only `Goal()` is used by the backends."""
    return SimpleNamespace(Goal=goal_factory)


def follow_joint_trajectory_goal() -> SimpleNamespace:
    return SimpleNamespace(trajectory=None)


def gripper_command_goal() -> SimpleNamespace:
    return SimpleNamespace(command=SimpleNamespace(position=0.0, max_effort=0.0))


class FakeGoalHandle:
    def __init__(self, client: FakeActionClient, accepted: bool) -> None:
        self.client = client
        self.accepted = accepted
        self.result_future = Future()
        self.canceled = False

    def get_result_async(self) -> Future:
        return self.result_future

    def cancel_goal_async(self) -> Future:
        self.canceled = True
        self.client.on_cancel(self)
        future = Future()
        future.set_result(SimpleNamespace(return_code=0))
        return future


class FakeActionClient:
    """Test double of rclpy.action.ActionClient, driving a fake robot part.

    execute(goal, handle) runs in a thread and returns (status, result) when the motion
    ends; it should watch handle.canceled. server_up False: wait_for_server times out.
    """

    def __init__(
        self,
        execute: Callable[[Any, FakeGoalHandle], tuple[int, Any]],
        *,
        server_up: bool = True,
        accept: bool = True,
    ) -> None:
        self.execute = execute
        self.server_up = server_up
        self.accept = accept
        self.goals: list[Any] = []
        self.waited: list[float] = []

    def wait_for_server(self, timeout_sec: float | None = None) -> bool:
        self.waited.append(timeout_sec or 0.0)
        if not self.server_up:
            time.sleep(min(timeout_sec or 0.0, 0.2))
        return self.server_up

    def send_goal_async(self, goal: Any, feedback_callback: Any = None) -> Future:
        self.goals.append(goal)
        handle = FakeGoalHandle(self, self.accept)
        future = Future()
        future.set_result(handle)
        if self.accept:

            def run() -> None:
                status, result = self.execute(goal, handle)
                handle.result_future.set_result(SimpleNamespace(status=status, result=result))

            threading.Thread(target=run, daemon=True).start()
        return future

    def on_cancel(self, handle: FakeGoalHandle) -> None:
        pass


def arm_action_server(controller: FakeArmController, *, error_code: int = 0):
    """The server side of FollowJointTrajectory over the fake controller."""

    def execute(goal: Any, handle: FakeGoalHandle) -> tuple[int, Any]:
        controller.follow(goal.trajectory)
        time.sleep(2 * RATE_S)
        while controller.moving:
            if handle.canceled:
                controller.follow(
                    JointTrajectory(joint_names=list(controller.joint_names), points=[])
                )
                return GoalStatus.STATUS_CANCELED, SimpleNamespace(error_code=0, error_string="")
            time.sleep(RATE_S)
        time.sleep(2 * RATE_S)  # let the last joint state out
        status = GoalStatus.STATUS_SUCCEEDED if error_code == 0 else GoalStatus.STATUS_ABORTED
        return status, SimpleNamespace(error_code=error_code, error_string="fake error")

    return execute


def gripper_action_server(hand: FakeHandE, *, allow_stalling: bool = False):
    """The server side of GripperCommand over the fake Hand-E (Robotiq-style stall)."""

    def execute(goal: Any, handle: FakeGoalHandle) -> tuple[int, Any]:
        hand.command(float(goal.command.position))
        time.sleep(2 * RATE_S)
        while not hand.settled():
            if handle.canceled:
                return GoalStatus.STATUS_CANCELED, None
            time.sleep(RATE_S)
        time.sleep(2 * RATE_S)
        reached = abs(hand.position - goal.command.position) < 1e-6
        result = SimpleNamespace(
            position=hand.position, effort=0.0, stalled=not reached, reached_goal=reached
        )
        ok = reached or allow_stalling
        return (GoalStatus.STATUS_SUCCEEDED if ok else GoalStatus.STATUS_ABORTED), result

    return execute


class TaskResult(enum.Enum):
    """Same names as nav2_simple_commander.robot_navigator.TaskResult."""

    UNKNOWN = 0
    SUCCEEDED = 1
    CANCELED = 2
    FAILED = 3


class FakeNavigator:
    """Test double of BasicNavigator: goToPose / isTaskComplete / getResult / cancelTask.

    The drive takes `drive_s` seconds and ends in `outcome`; goToPose returns a task
    token as Kilted's BasicNavigator does (or True with `legacy_bool`).
    """

    def __init__(
        self,
        *,
        drive_s: float = 0.3,
        outcome: TaskResult = TaskResult.SUCCEEDED,
        server_up: bool = True,
        accept: bool = True,
        legacy_bool: bool = False,
    ) -> None:
        self.drive_s = drive_s
        self.outcome = outcome
        self.accept = accept
        self.legacy_bool = legacy_bool
        self.poses: list[PoseStamped] = []
        self.cancels = 0
        self.task_arguments: list[Any] = []
        self._started = 0.0
        self._result: TaskResult | None = None
        self.nav_to_pose_client = SimpleNamespace(
            wait_for_server=lambda timeout_sec=None: server_up
        )

    def goToPose(self, pose: PoseStamped, behavior_tree: str = "") -> Any:  # noqa: N802
        self.poses.append(pose)
        if not self.accept:
            return None
        self._started = time.monotonic()
        self._result = None
        return True if self.legacy_bool else "NAVIGATE_TO_POSE"

    def isTaskComplete(self, task: Any = None) -> bool:  # noqa: N802
        self.task_arguments.append(task)
        if self._result is not None:
            return True
        if time.monotonic() - self._started >= self.drive_s:
            self._result = self.outcome
            return True
        return False

    def getResult(self) -> TaskResult:  # noqa: N802
        return self._result or TaskResult.UNKNOWN

    def getFeedback(self) -> Any:  # noqa: N802
        return None

    def cancelTask(self) -> None:  # noqa: N802
        self.cancels += 1
        self._result = TaskResult.CANCELED

    def getTaskError(self) -> tuple[int, str]:  # noqa: N802
        return 204, "no valid path"
