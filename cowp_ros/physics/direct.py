"""The skill backends driving the physics world in-process, without ROS.

The graph path (physics_world serving FollowJointTrajectory, the gripper action and
NavigateToPose to the executor) is the robot's own and runs in CI; a bench that repeats
one pick a hundred times would spend nearly all its time starting processes. These
backends give the same SkillRunner the same physics with the judgements the ROS
backends make: a trajectory's goal checked by the controller's rules (path and goal
tolerance, its error codes), fingers judged where they came to rest against robot.yaml's
grasp threshold, and a base that Nav2 left anywhere within its goal checker corrected
once toward the goal by the executor's arrival law (skills/arrival.py). World time only
advances inside these calls, so a trial takes as long as the physics takes to step.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence

import numpy as np

from cowp_ros.physics.trajectory import PlayingTrajectory, Point, Tolerances
from cowp_ros.physics.world import ARM_JOINTS, PhysicsWorld
from cowp_ros.skills import arrival
from cowp_ros.skills.box_refine import Box, BoxView, locate_from_boxes
from cowp_ros.skills.config import RobotConfig
from cowp_ros.skills.depth_refine import DepthView, locate
from cowp_ros.skills.grip_verdict import command_verdict, holding_verdict
from cowp_ros.skills.interfaces import MotionResult, ObjectPose, Pose2D
from cowp_ros.skills.joint_path import timed_path

# The controller's defaults the physics_world node applies to a goal that names none.
PATH_TOLERANCE_RAD = 0.2
GOAL_TOLERANCE_RAD = 0.02
GOAL_TIME_S = 1.0
CONTROL_STEPS = 10  # physics steps between checks (20 ms at the 2 ms step)
GRIPPER_TIMEOUT_S = 3.0
CORRECTION_LIMIT_S = 30.0


class DirectArm:
    """FollowJointTrajectory semantics: one point, reached within the goal tolerance."""

    description = "physics arm (in-process)"

    def __init__(self, world: PhysicsWorld, robot: RobotConfig) -> None:
        self.world, self.robot = world, robot
        self.tolerances = Tolerances(
            (PATH_TOLERANCE_RAD,) * 6, (GOAL_TOLERANCE_RAD,) * 6, GOAL_TIME_S
        )

    def move_to(
        self,
        name: str,
        positions: Sequence[float],
        cancel: threading.Event,
        via: Sequence[Sequence[float]] = (),
    ) -> MotionResult:
        start = self.world.arm_positions()
        arm = self.robot.arm
        timed = timed_path(
            start, [*via, positions], arm.max_joint_velocity_rad_s, arm.min_move_duration_s
        )
        playing = PlayingTrajectory(
            start,
            [Point(p.time_s, p.positions, p.velocities) for p in timed],
            self.tolerances,
            ARM_JOINTS,
        )
        self.world.play(playing)
        while self.world.trajectory is playing:
            if cancel.is_set():
                self.world.stop_arm()
                return MotionResult.canceled(f"move to {name} canceled")
            self.world.step(CONTROL_STEPS)
        verdict = self.world.verdict
        if verdict is None or verdict.code != 0:
            detail = verdict.message if verdict is not None else "no verdict"
            return MotionResult.failure(f"arm move to {name}: {detail}")
        return MotionResult.success(f"arm at {name}")


class DirectGripper:
    """The Hand-E at robot.yaml's force; a grasp judged where the fingers came to rest."""

    description = "physics gripper (in-process)"

    def __init__(self, world: PhysicsWorld, robot: RobotConfig) -> None:
        self.world, self.config = world, robot.gripper

    def _command(self, target: float) -> float:
        self.world.command_gripper(target, self.config.max_effort_n)
        waited = 0.0
        while waited < GRIPPER_TIMEOUT_S:
            self.world.settle(0.1)
            waited += 0.1
            at_goal = abs(self.world.finger_position() - target) <= 0.0005
            if at_goal or (waited >= 0.3 and abs(self.world.finger_velocity()) < 1e-3):
                break
        return self.world.finger_position()

    def open(self, cancel: threading.Event) -> MotionResult:
        target = self.config.open_position_m
        return command_verdict(self._command(target), target, self.config, expect_object=False)

    def close(self, cancel: threading.Event, *, expect_object: bool) -> MotionResult:
        target = self.config.closed_position_m
        position = self._command(target)
        return command_verdict(position, target, self.config, expect_object=expect_object)

    def holding(self, cancel: threading.Event) -> MotionResult:
        return holding_verdict(self.world.finger_position(), self.config)


class DirectBase:
    """A base that Nav2 has already left where it stopped (the world's start pose): the
    drive is the executor's arrival check, one correction on cmd_vel when outside
    robot.yaml's tolerance."""

    description = "physics base (in-process)"

    def __init__(self, world: PhysicsWorld, robot: RobotConfig, *, correct: bool = True) -> None:
        self.world, self.config, self.correct = world, robot.base, correct

    def go_to(self, name: str, pose: Pose2D, cancel: threading.Event) -> MotionResult:
        tolerance = (self.config.position_tolerance_m, self.config.yaw_tolerance_rad)
        stopped = self.world.base_pose()
        if arrival.within(stopped, pose, *tolerance) or not self.correct:
            return MotionResult.success(f"reached {name}")
        started = self.world.time
        while self.world.time - started < CORRECTION_LIMIT_S and not cancel.is_set():
            now = self.world.base_pose()
            if arrival.within(now, pose, *tolerance, arrival.AIM_FRACTION):
                break
            self.world.command_base(*arrival.correction(now, pose))
            self.world.step(25)  # the ROS check renews its command every 50 ms
        self.world.command_base(0.0, 0.0, 0.0)
        self.world.settle(0.3)
        end = self.world.base_pose()
        if arrival.within(end, pose, *tolerance):
            return MotionResult.success(f"reached {name} (corrected)")
        return MotionResult.failure(
            f"the base stopped {end.distance_to(pose):.3f} m and "
            f"{end.yaw_error_to(pose):.3f} rad from {name} after one correction"
        )


class WorldPoses:
    """The base's pose as TF gives it; objects as a pose estimator on TF would give them
    (exact), or none (then a grasp falls back on the calibrated poses)."""

    description = "physics poses (in-process)"

    def __init__(self, world: PhysicsWorld, *, objects: bool = True) -> None:
        self.world, self.objects = world, objects

    def base_pose(self) -> Pose2D | None:
        return self.world.base_pose()

    def object_pose(self, name: str) -> ObjectPose | None:
        if not self.objects:
            return None
        position, quat = self.world.body_pose(name)
        w, x, y, z = (float(v) for v in quat)
        yaw = math.atan2(2 * (w * z + x * y), 1 - 2 * (y * y + z * z))
        tilt = math.acos(max(-1.0, min(1.0, 1 - 2 * (x * x + y * y))))
        return ObjectPose(float(position[0]), float(position[1]), float(position[2]), yaw, tilt)

    def known_objects(self) -> dict[str, ObjectPose]:
        if not self.objects:
            return {}
        found: dict[str, ObjectPose] = {}
        for name in self.world.free_bodies().values():
            pose = self.object_pose(name)
            if pose is not None:
                found[name] = pose
        return found


class DepthCamera:
    """The wrist camera's depth image, rendered offscreen, as a depth camera on the
    wrist would give it (optical frame, metres)."""

    def __init__(self, world: PhysicsWorld, size: tuple[int, int] = (160, 120)) -> None:
        import mujoco

        self.world = world
        width, height = size
        self.renderer = mujoco.Renderer(world.model, height=height, width=width)
        self.renderer.enable_depth_rendering()
        self.camera = world.model.camera("wrist_camera").id
        self.fovy = math.radians(float(world.model.cam_fovy[self.camera]))
        self.frames = 0

    def view(self) -> DepthView:
        data = self.world.data
        self.renderer.update_scene(data, camera=self.camera)
        depth = self.renderer.render().copy()
        self.frames += 1
        pose = np.eye(4)
        # MuJoCo's camera looks along its -z with y up; the optical frame along +z, y down
        pose[:3, :3] = data.cam_xmat[self.camera].reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
        pose[:3, 3] = data.cam_xpos[self.camera]
        return DepthView.pinhole(depth, self.fovy, pose)

    def close(self) -> None:
        self.renderer.close()


class DepthLocator:
    """Finds an object near where it is expected in one wrist depth image."""

    description = "wrist depth camera (in-process)"

    def __init__(self, camera: DepthCamera, surface_height: float) -> None:
        self.camera, self.surface_height = camera, surface_height

    def locate(
        self, name: str, kind: str, expected: ObjectPose, cancel: threading.Event
    ) -> ObjectPose | None:
        return locate(self.camera.view(), kind, expected, self.surface_height)


class BoxCamera:
    """The wrist colour camera with a detector that boxes every object exactly where its
    visible pixels are (MuJoCo's segmentation image): a stand-in for YOLO, which does not
    recognise the world's primitive shapes, so that the colour-only refinement is
    measured on its geometry (a real detector's boxes are looser). Each box is labelled
    with what `label` says of the object's body name (its kind, as a detector's class)."""

    def __init__(
        self,
        world: PhysicsWorld,
        label: Callable[[str], str],
        size: tuple[int, int] = (320, 240),
        min_pixels: int = 12,
    ) -> None:
        import mujoco

        self.world, self.label, self.min_pixels = world, label, min_pixels
        width, height = size
        self.renderer = mujoco.Renderer(world.model, height=height, width=width)
        self.renderer.enable_segmentation_rendering()
        self.camera = world.model.camera("wrist_camera").id
        self.fovy = math.radians(float(world.model.cam_fovy[self.camera]))
        self.geom_type = int(mujoco.mjtObj.mjOBJ_GEOM)
        self.free_bodies = set(world.free_bodies())
        self.frames = 0

    def view(self) -> BoxView:
        model, data = self.world.model, self.world.data
        self.renderer.update_scene(data, camera=self.camera)
        segmentation = self.renderer.render()
        self.frames += 1
        ids, types = segmentation[:, :, 0], segmentation[:, :, 1]
        bodies = np.where(types == self.geom_type, model.geom_bodyid[np.maximum(ids, 0)], -1)
        boxes = []
        for body in np.unique(bodies[bodies > 0]):
            name = model.body(int(body)).name
            if int(body) not in self.free_bodies:
                continue  # a part of the robot or of a fixture, not an object
            rows, cols = np.nonzero(bodies == body)
            if len(rows) < self.min_pixels:
                continue
            boxes.append(
                Box(
                    self.label(name),
                    1.0,
                    float(cols.min()),
                    float(rows.min()),
                    float(cols.max() + 1),
                    float(rows.max() + 1),
                )
            )
        height, width = ids.shape
        f = (height / 2) / math.tan(self.fovy / 2)
        pose = np.eye(4)
        pose[:3, :3] = data.cam_xmat[self.camera].reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
        pose[:3, 3] = data.cam_xpos[self.camera]
        return BoxView(boxes, f, f, (width - 1) / 2, (height - 1) / 2, pose)

    def close(self) -> None:
        self.renderer.close()


class BoxLocator:
    """Finds an object near where it is expected from the detector's boxes on one wrist
    colour image and the surface's known height (no depth)."""

    description = "wrist colour camera and detector boxes (in-process)"

    def __init__(
        self,
        camera: BoxCamera,
        surface_height: float,
        classes: Callable[[str], Sequence[str]] = lambda kind: (kind,),
    ) -> None:
        self.camera, self.surface_height, self.classes = camera, surface_height, classes

    def locate(
        self, name: str, kind: str, expected: ObjectPose, cancel: threading.Event
    ) -> ObjectPose | None:
        view = self.camera.view()
        return locate_from_boxes(view, kind, self.classes(kind), expected, self.surface_height)
