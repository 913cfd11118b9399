"""executor: the ExecuteSkill action server that runs one PDDL plan step on the robot.

The task manager sends each step of a plan (`PlanStep`: action name and arguments);
this node announces it on `/cowp/current_step` (the situation detector and sim_world
follow it), maps it to a skill through config/skills.yaml and runs the skill's base,
arm, gripper and camera primitives on the backends the profile chose. Feedback says
which primitive runs; the result says what failed and why, naming the missing server,
the silent topic or the unmapped action. One step at a time: a second goal while one
runs is rejected, since the robot has one body.

The action callback blocks while the robot moves and the backends wait on messages
delivered by other callbacks, so everything runs in one reentrant callback group on a
MultiThreadedExecutor (STYLE.md: a single-threaded executor would deadlock here), the
steady one of ros/executors.py, which does not spin a core while a callback waits to start.
"""

from __future__ import annotations

import threading
import traceback
from pathlib import Path
from typing import Any

from rclpy.action import CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle
from rclpy.callback_groups import ReentrantCallbackGroup

from cowp_interfaces.action import ExecuteSkill
from cowp_interfaces.msg import PlanStep
from cowp_ros.resources import share_path
from cowp_ros.ros.executors import SteadyMultiThreadedExecutor
from cowp_ros.ros.goal_limits import step_problem, step_size_problem
from cowp_ros.ros.names import CURRENT_STEP_TOPIC
from cowp_ros.ros.node_main import run_node
from cowp_ros.ros.own_node import ActionNode
from cowp_ros.ros.parameters import Param, declare_parameters, positive
from cowp_ros.ros.result_delivery import ResultAwareActionServer
from cowp_ros.ros.skill_backends.common import Timeouts
from cowp_ros.ros.skill_backends.factory import build_backends
from cowp_ros.skills.backends import PROFILES, choices, resolve_choice
from cowp_ros.skills.config import load_robot_config
from cowp_ros.skills.interfaces import Status
from cowp_ros.skills.roles import registered_skill_map
from cowp_ros.skills.runner import SkillRunner, arm_geometry
from cowp_ros.skills.skill_map import load_skill_map
from cowp_ros.skills.world import Whereabouts

# The node's parameters; config/executor.yaml shows the same defaults.
PARAMETERS = (
    Param(
        "profile",
        "sim",
        f"robot profile ({', '.join(PROFILES)}): what the 'auto' backends become",
    ),
    Param(
        "base_backend",
        "auto",
        f"base backend ({', '.join(choices('base'))}); auto = nav2 on the robot profile, "
        "topic otherwise",
    ),
    Param(
        "arm_backend",
        "auto",
        f"arm backend ({', '.join(choices('arm'))}); auto = action (FollowJointTrajectory) "
        "outside sim when control_msgs imports, topic otherwise",
    ),
    Param(
        "gripper_backend",
        "auto",
        f"gripper backend ({', '.join(choices('gripper'))}); action = ParallelGripperCommand "
        "(Kilted's parallel_gripper_action_controller), gripper_command = the older "
        "GripperCommand; auto = action outside sim when control_msgs imports, topic otherwise",
    ),
    Param("robot_config", "", "robot contract YAML ('' = config/robot.yaml)"),
    Param("skills_config", "", "PDDL action -> skill YAML ('' = config/skills.yaml)"),
    Param(
        "server_timeout_s",
        5.0,
        "seconds to wait for an action server or a command topic's subscriber",
        positive,
    ),
    Param(
        "topic_timeout_s",
        3.0,
        "seconds of silence on a state topic (odometry, joint states, detections) that fail a step",
        positive,
    ),
    Param("navigate_timeout_s", 120.0, "seconds a drive to a named location may take", positive),
    Param(
        "arm_timeout_margin_s",
        10.0,
        "seconds an arm move may take beyond its planned duration, stretched by the speed "
        "scaling the UR driver reports",
        positive,
    ),
    Param("gripper_timeout_s", 10.0, "seconds a gripper open or close may take", positive),
    Param(
        "detect_timeout_s",
        5.0,
        "seconds a find step waits for the detector to see its object",
        positive,
    ),
    Param(
        "verify_detections",
        False,
        "find steps wait for a detection of their object (true) or just go and look (false)",
    ),
    Param(
        "detect_frames",
        1,
        "a verified find step waits for its object in this many of the detector's frames "
        "(situation_detector's min_frames + 1: what it saw is said before the step ends)",
        positive,
    ),
    Param(
        "look_with_depth",
        False,
        "a pick looks where its object should be with the wrist depth camera (robot.yaml "
        "camera.depth_topic) and grasps it where it is seen (false: `look` is skipped)",
    ),
    Param(
        "look_with_detections",
        False,
        "without depth: a pick looks with the wrist colour camera and grasps its object "
        "where the detector's box and the surface's height put it (robot.yaml "
        "camera.info_topic; look_with_depth goes first when both are true)",
    ),
)


class SkillExecutor(ActionNode):
    """ExecuteSkill server over the skill layer; see the module docstring."""

    def __init__(self, **node_kwargs: Any) -> None:
        super().__init__("executor", **node_kwargs)
        value = declare_parameters(self, PARAMETERS)
        robot_path = Path(value["robot_config"] or share_path("config", "robot.yaml"))
        skills_path = Path(value["skills_config"] or share_path("config", "skills.yaml"))
        self.robot = load_robot_config(robot_path)
        skill_map, unbound = registered_skill_map(
            load_skill_map(skills_path, arm_poses=set(self.robot.arm.poses))
        )
        for line in unbound:  # said now, not when the robot reaches the step
            self.get_logger().warning(f"no skill runs {line} (cowp doctor --task lists them)")
        self.choice = resolve_choice(
            value["profile"],
            value["base_backend"],
            value["arm_backend"],
            value["gripper_backend"],
        )
        timeouts = Timeouts(
            server_s=float(value["server_timeout_s"]),
            topic_s=float(value["topic_timeout_s"]),
            navigate_s=float(value["navigate_timeout_s"]),
            arm_margin_s=float(value["arm_timeout_margin_s"]),
            gripper_s=float(value["gripper_timeout_s"]),
            detect_s=float(value["detect_timeout_s"]),
        )
        self.group = ReentrantCallbackGroup()
        self.backends = build_backends(
            self,
            self.robot,
            self.choice,
            timeouts,
            self.group,
            verify_detections=bool(value["verify_detections"]),
            detect_frames=int(value["detect_frames"]),
            look_with_depth=bool(value["look_with_depth"]),
            look_with_detections=bool(value["look_with_detections"]),
            detection_classes=skill_map.detection_classes,
        )
        self.world = Whereabouts(
            set(self.robot.base.locations),
            location_aliases=skill_map.location_aliases,
            object_locations=skill_map.object_locations,
            sources=(skills_path, robot_path),
        )
        self.runner = SkillRunner(
            skill_map,
            self.world,
            self.backends,
            locations=self.robot.base.locations,
            arm_poses=self.robot.arm.poses,
            carry_pose=self.robot.arm.carry_pose,
            geometry=arm_geometry(self.robot),
            surfaces=self.robot.surfaces,
        )

        self._lock = threading.Lock()
        self._busy = False
        self._cancel = threading.Event()
        self.step_publisher = self.create_publisher(PlanStep, CURRENT_STEP_TOPIC, 10)
        self.server = ResultAwareActionServer(
            self,
            ExecuteSkill,
            "execute_skill",
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            cancel_callback=self.on_cancel,
            callback_group=self.group,
        )
        b = self.backends
        self.get_logger().info(
            f"ready: profile {value['profile']}; base: {b.base.description}; "
            f"arm: {b.arm.description}; gripper: {b.gripper.description}; "
            f"detections: {b.camera.description if b.camera else 'not verified'}"
        )

    def on_goal(self, goal: ExecuteSkill.Goal) -> GoalResponse:
        too_large = step_size_problem(goal.step)
        if too_large is not None:  # not kept: an accepted goal stays for its result
            self.get_logger().warning(f"rejected a step: {too_large}")
            return GoalResponse.REJECT
        with self._lock:
            if self._busy:
                self.get_logger().warning(
                    f"rejected {goal.step.action}: another step is still running"
                )
                return GoalResponse.REJECT
            self._busy = True
            self._cancel = threading.Event()
        return GoalResponse.ACCEPT

    def on_cancel(self, _goal_handle: ServerGoalHandle) -> CancelResponse:
        self._cancel.set()
        return CancelResponse.ACCEPT

    def execute(self, goal_handle: ServerGoalHandle) -> ExecuteSkill.Result:
        step: PlanStep = goal_handle.request.step
        problem = step_problem(step)
        if problem is not None:  # ended before it is announced, logged or run
            with self._lock:
                self._busy = False
            goal_handle.abort()
            self.get_logger().warning(f"refused a step: {problem}")
            return ExecuteSkill.Result(success=False, message=f"refused: {problem}")
        cancel = self._cancel
        label = f"{step.action}({', '.join(step.arguments)})"
        try:
            self.step_publisher.publish(step)
            self.get_logger().info(f"step {label}")

            def report(progress: float, status: str) -> None:
                goal_handle.publish_feedback(
                    ExecuteSkill.Feedback(progress=float(progress), status=status)
                )

            outcome = self.runner.run(step.action, list(step.arguments), cancel, report)
            status, message = outcome.status, outcome.message
        except Exception as err:  # a bug, but the caller still gets a result that says so
            self.get_logger().error(traceback.format_exc())
            status, message = Status.FAILED, f"{label}: internal error: {err!r}"
        finally:
            with self._lock:
                self._busy = False
        if status is Status.CANCELED and goal_handle.is_cancel_requested:
            goal_handle.canceled()
        elif status is Status.SUCCEEDED:
            goal_handle.succeed()
        else:
            goal_handle.abort()
        # rclpy wants one severity per logging call site, hence two calls.
        if status is Status.SUCCEEDED:
            self.get_logger().info(f"succeeded: {message}")
        else:
            self.get_logger().warning(f"{status.value}: {message}")
        return ExecuteSkill.Result(success=status is Status.SUCCEEDED, message=message)


def main(args: list[str] | None = None) -> None:
    run_node("executor", SkillExecutor, SteadyMultiThreadedExecutor, args=args)


if __name__ == "__main__":
    main()
