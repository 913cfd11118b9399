"""In-process fakes of the robot's server side, built from installable message types.

Each fake is a small node that behaves like the real driver on the topics of
config/robot.yaml: a joint trajectory controller that follows the trajectory it gets
(at the speed scaling it publishes, like the UR's scaled controller) and publishes
/joint_states, a Hand-E that closes until it meets an object, a base that drives
toward /goal_pose and publishes /odom. control_msgs and nav2_msgs are not installable
here, so the action-mode backends are tested against a test double of rclpy's
ActionClient whose servers follow the upstream controllers' rules, with goal and
result types built from docs/kilted_interfaces.md (kilted_facts.py).
"""

from __future__ import annotations

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
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.task import Future
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64, Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.own_node import destroy_actions

RATE_S = 0.05
"""How often the fakes publish. Their motion follows the time that really passed, as a
real robot's does, so a timer that fires late on a busy machine shows up as a jump in
position, never as a robot that stood still."""


def elapsed_since(fake: Any) -> float:
    """Seconds since the fake's previous tick (its `_last_tick`), which this resets."""
    now = time.monotonic()
    elapsed, fake._last_tick = now - fake._last_tick, now
    return elapsed


class RosHarness:
    """One rclpy context; every node spins on an executor of its own, in its own thread,
    as on the robot each node spins in its own process.

    (One rclpy MultiThreadedExecutor for all of them saturated a core: it offers a
    ready callback again until a worker has started it (cowp_ros/ros/executors.py), and
    a callback whose mutually exclusive group is busy is handed out, given up and handed
    out again. With fakes publishing many times a second that grew to thousands of
    queued handlers, scanned on every spin, and every motion test's timing went with it.)
    """

    def __init__(self) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        self.nodes: list[Node] = []
        self.error: Exception | None = None
        self._spinners: dict[int, tuple[Executor, threading.Event, threading.Thread]] = {}

    def _spin(self, executor: Executor, stop: threading.Event) -> None:
        while not stop.is_set() and self.context.ok():
            try:
                executor.spin_once(timeout_sec=0.1)
            except ExternalShutdownException:
                break
            except Exception as err:
                self.error = err
                raise

    def node(self, name: str, cls: type[Node] = Node, **kwargs: Any) -> Any:
        node = cls(name, context=self.context, **kwargs) if cls is Node else cls(self, **kwargs)
        return self.add(node)

    def add(self, node: Node, *, threads: int = 1) -> Any:
        """Spin `node` on its own executor; `threads` > 1 for a node that waits inside a
        callback for what its other callbacks receive (the skill executor's actions)."""
        executor: Executor = (
            SingleThreadedExecutor(context=self.context)
            if threads == 1
            else SteadyMultiThreadedExecutor(num_threads=threads, context=self.context)
        )
        executor.add_node(node)
        stop = threading.Event()
        thread = threading.Thread(target=self._spin, args=(executor, stop), daemon=True)
        self._spinners[id(node)] = (executor, stop, thread)
        self.nodes.append(node)
        thread.start()
        return node

    def remove(self, node: Node) -> None:
        executor, stop, thread = self._spinners.pop(id(node))
        stop.set()
        thread.join(timeout=5)
        executor.remove_node(node)
        executor.shutdown()
        self.nodes.remove(node)
        destroy_actions(node)  # a fake's action server, a plain node's action client
        node.destroy_node()

    def shutdown(self) -> None:
        for node in list(self.nodes):
            self.remove(node)
        rclpy.try_shutdown(context=self.context)


class FakeArmController(Node):
    """Follows a one-point JointTrajectory linearly in time; publishes /joint_states.

    stall: takes trajectories but never moves (a controller that is not active).
    speed_fraction: plays trajectories at this fraction of their speed, as the UR's
    scaled_joint_trajectory_controller does at the pendant's speed slider.
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
        speed_fraction: float = 1.0,
    ) -> None:
        super().__init__("fake_arm_controller", context=harness.context)
        self.joint_names = joint_names
        self.positions = list(start)
        self.stall = stall
        self.speed_fraction = speed_fraction
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
        seconds = max(seconds, 1e-3) / self.speed_fraction
        with self._lock:
            self._motion = (time.monotonic(), seconds, list(self.positions), goal)

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


class FakeSpeedScaling(Node):
    """The UR driver's speed_scaling_state_broadcaster: std_msgs/Float64, in percent."""

    def __init__(self, harness: RosHarness, *, topic: str, percent: float) -> None:
        super().__init__("fake_speed_scaling", context=harness.context)
        self.percent = percent
        self.publisher = self.create_publisher(Float64, topic, 10)
        self.create_timer(RATE_S, lambda: self.publisher.publish(Float64(data=self.percent)))


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
        self._last_tick = time.monotonic()
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

    def velocity(self) -> float:
        """What a hardware interface with a real velocity state would report."""
        return 0.0 if self.settled() else self.speed

    def _limit(self) -> float:
        if self.object_at is not None and self.target < self.object_at <= self.position:
            return self.object_at
        return self.target

    def _tick(self) -> None:
        with self._lock:
            limit = self._limit()
            step = self.speed * elapsed_since(self)
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
        self._last_tick = time.monotonic()
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
            dt = elapsed_since(self)
            if self._goal is not None:
                gx, gy, gyaw = self._goal
                dx, dy = gx - self.x, gy - self.y
                dist = math.hypot(dx, dy)
                step = self.speed * dt
                if dist > step:
                    self.x += dx / dist * step
                    self.y += dy / dist * step
                else:
                    self.x, self.y = gx, gy
                    error = math.atan2(math.sin(gyaw - self.yaw), math.cos(gyaw - self.yaw))
                    turn = self.turn * dt
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


# --- test doubles for the action-mode backends (control_msgs, nav2_msgs) -----------


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
    ends; it should watch handle.canceled. server_up False: the server never appears
    (server_is_ready stays False, so a wait for it runs to its deadline or a cancel).
    accept: False, or a function of the goal (the server's goal callback).
    """

    def __init__(
        self,
        execute: Callable[[Any, FakeGoalHandle], tuple[int, Any]] | None,
        *,
        server_up: bool = True,
        accept: bool | Callable[[Any], bool] = True,
    ) -> None:
        self.execute = execute
        self.server_up = server_up
        self.accept = accept
        self.goals: list[Any] = []
        self.cancels = 0

    def server_is_ready(self) -> bool:
        return self.server_up

    def send_goal_async(self, goal: Any, feedback_callback: Any = None) -> Future:
        self.goals.append(goal)
        accepted = self.accept(goal) if callable(self.accept) else self.accept
        handle = FakeGoalHandle(self, accepted)
        future = Future()
        future.set_result(handle)
        if accepted and self.execute is not None:
            execute = self.execute

            def run() -> None:
                status, result = execute(goal, handle)
                handle.result_future.set_result(SimpleNamespace(status=status, result=result))

            threading.Thread(target=run, daemon=True).start()
        return future

    def on_cancel(self, handle: FakeGoalHandle) -> None:
        self.cancels += 1


def arm_action_server(controller: FakeArmController, action: Any, *, error_code: int = 0):
    """The server side of FollowJointTrajectory over the fake controller."""

    def execute(goal: Any, handle: FakeGoalHandle) -> tuple[int, Any]:
        controller.follow(goal.trajectory)
        time.sleep(2 * RATE_S)
        while controller.moving:
            if handle.canceled:
                controller.follow(
                    JointTrajectory(joint_names=list(controller.joint_names), points=[])
                )
                return GoalStatus.STATUS_CANCELED, action.Result()
            time.sleep(RATE_S)
        time.sleep(2 * RATE_S)  # let the last joint state out
        status = GoalStatus.STATUS_SUCCEEDED if error_code == 0 else GoalStatus.STATUS_ABORTED
        return status, action.Result(error_code=error_code, error_string="fake error")

    return execute


def parallel_gripper_server(
    hand: FakeHandE,
    action: Any,
    *,
    allow_stalling: bool = False,
    goal_tolerance: float = 0.01,
    stall_timeout_s: float = 0.3,
    stall_velocity_threshold: float = 0.001,
    velocity_state: bool = True,
):
    """parallel_gripper_action_controller's rules (ros2_controllers, Kilted) over the
    fake Hand-E: success within goal_tolerance (reached_goal); a velocity below the
    threshold for stall_timeout is a stall, aborted unless allow_stalling. With
    velocity_state False the velocity reads 0, as the Hand-E driver's does, so a stall
    is reported while the fingers still move."""

    def execute(goal: Any, handle: FakeGoalHandle) -> tuple[int, Any]:
        target = float(goal.command.position[0])
        hand.command(target)
        last_moving = time.monotonic()
        while True:
            time.sleep(RATE_S)
            if handle.canceled:
                return GoalStatus.STATUS_CANCELED, action.Result()
            result = action.Result()
            result.state.position = [hand.position]
            result.state.effort = [0.0]
            if abs(target - hand.position) < goal_tolerance:
                result.reached_goal = True
                return GoalStatus.STATUS_SUCCEEDED, result
            velocity = hand.velocity() if velocity_state else 0.0
            now = time.monotonic()
            if abs(velocity) > stall_velocity_threshold:
                last_moving = now
            elif now - last_moving > stall_timeout_s:
                result.stalled = True
                ok = GoalStatus.STATUS_SUCCEEDED if allow_stalling else GoalStatus.STATUS_ABORTED
                return ok, result

    return execute


def accepts_one_position(goal: Any) -> bool:
    """The controller's goal callback: exactly one position, else REJECT."""
    return len(goal.command.position) == 1


def gripper_command_server(hand: FakeHandE, action: Any, *, allow_stalling: bool = False):
    """The server side of the older GripperCommand over the fake Hand-E."""

    def execute(goal: Any, handle: FakeGoalHandle) -> tuple[int, Any]:
        hand.command(float(goal.command.position))
        time.sleep(2 * RATE_S)
        while not hand.settled():
            if handle.canceled:
                return GoalStatus.STATUS_CANCELED, None
            time.sleep(RATE_S)
        time.sleep(2 * RATE_S)
        reached = abs(hand.position - goal.command.position) < 1e-6
        result = action.Result(
            position=hand.position, effort=0.0, stalled=not reached, reached_goal=reached
        )
        ok = reached or allow_stalling
        return (GoalStatus.STATUS_SUCCEEDED if ok else GoalStatus.STATUS_ABORTED), result

    return execute


def navigate_to_pose_server(
    action: Any, *, drive_s: float = 0.3, error_code: int = 0, error_msg: str = ""
):
    """bt_navigator's NavigateToPose: drives for drive_s, then succeeds or aborts."""

    def execute(goal: Any, handle: FakeGoalHandle) -> tuple[int, Any]:
        end = time.monotonic() + drive_s
        while time.monotonic() < end:
            if handle.canceled:
                return GoalStatus.STATUS_CANCELED, action.Result()
            time.sleep(RATE_S)
        result = action.Result(error_code=error_code, error_msg=error_msg)
        status = GoalStatus.STATUS_SUCCEEDED if error_code == 0 else GoalStatus.STATUS_ABORTED
        return status, result

    return execute
