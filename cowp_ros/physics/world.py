"""The physics world stepped with the controllers the robot's drivers run.

`PhysicsWorld` owns the MuJoCo model and data and three controllers, each the physics
counterpart of a driver: the base takes a velocity in its own frame (what /cmd_vel
carries), the arm plays joint trajectories (joint_trajectory_controller), the gripper
drives both fingers to a position at the Hand-E's speed with a force limit
(parallel_gripper_action_controller with a max_effort interface). Everything else is
MuJoCo's: gravity, contacts, friction. Reads give what sensors would: joint positions,
the base pose, and, for checks and tests, where each object is.

Not thread-safe by itself: the ROS node steps it from one thread and takes its lock.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass

# Offscreen rendering (the wrist camera) without a display: EGL, chosen before MuJoCo
# is imported, since it picks its OpenGL platform then. A user's own choice wins.
os.environ.setdefault("MUJOCO_GL", "egl")

import mujoco
import numpy as np

from cowp_ros.physics.scene import ARM_PREFIX, BASE_JOINTS, FINGER_JOINTS, FINGER_STROKE
from cowp_ros.physics.trajectory import PlayingTrajectory, Verdict
from cowp_ros.skills import kinematics
from cowp_ros.skills.interfaces import Pose2D

ARM_JOINTS = tuple(ARM_PREFIX + j for j in kinematics.JOINTS)
# How far past its goal a closing finger's servo aims, in units of the force limit's
# travel (effort / kp).
SQUEEZE_MARGIN = 1.5
# The Hand-E: 150 mm/s closing, so 75 mm/s per finger; grip force 20 to 185 N.
FINGER_SPEED_M_S = 0.075
EFFORT_RANGE_N = (20.0, 185.0)


@dataclass(frozen=True)
class Contact:
    """A touch between two named bodies, with the normal force (N)."""

    body_a: str
    body_b: str
    force_n: float


class PhysicsWorld:
    def __init__(
        self, xml: str, *, arm: Sequence[float] | None = None, fingers: float | None = None
    ) -> None:
        """`arm` and `fingers`: where the joints start (the arm stretched out at zero,
        fingers closed, otherwise)."""
        self.model = mujoco.MjModel.from_xml_string(xml)
        self.data = mujoco.MjData(self.model)
        m = self.model
        self._arm_qpos = [m.joint(n).qposadr[0] for n in ARM_JOINTS]
        self._arm_dof = [m.joint(n).dofadr[0] for n in ARM_JOINTS]
        self._arm_act = [m.actuator(n).id for n in ARM_JOINTS]
        self._arm_gains = [
            (float(m.actuator_gainprm[a][0]), -float(m.actuator_biasprm[a][2]))
            for a in self._arm_act
        ]
        self._finger_qpos = [m.joint(n).qposadr[0] for n in FINGER_JOINTS]
        self._finger_dof = [m.joint(n).dofadr[0] for n in FINGER_JOINTS]
        self._finger_act = [m.actuator(n).id for n in FINGER_JOINTS]
        self._base_qpos = [m.joint(n).qposadr[0] for n in BASE_JOINTS]
        self._base_dof = [m.joint(n).dofadr[0] for n in BASE_JOINTS]
        self._base_act = [m.actuator(n).id for n in BASE_JOINTS]
        for address, value in zip(self._arm_qpos, arm or (), strict=False):
            self.data.qpos[address] = value
        for address in self._finger_qpos if fingers is not None else ():
            self.data.qpos[address] = fingers
        self._base_start = m.body("base_footprint").pos.copy()
        self._base_yaw0 = self._initial_yaw()
        self.base_command = (0.0, 0.0, 0.0)  # vx, vy (base frame), wz
        self.arm_target = self.arm_positions()
        self.trajectory: PlayingTrajectory | None = None
        self.trajectory_time = 0.0
        self.verdict: Verdict | None = None
        self.finger_goal = self.finger_position()
        self.finger_setpoint = self.finger_goal
        self.effort_n = float(m.actuator_forcerange[self._finger_act[0]][1])
        self._finger_kp = float(m.actuator_gainprm[self._finger_act[0]][0])
        mujoco.mj_forward(m, self.data)

    # ------------------------------------------------------------------ reads
    @property
    def time(self) -> float:
        return float(self.data.time)

    def _initial_yaw(self) -> float:
        q = self.model.body("base_link").quat
        return 2.0 * math.atan2(q[3], q[0])

    def arm_positions(self) -> tuple[float, ...]:
        return tuple(float(self.data.qpos[i]) for i in self._arm_qpos)

    def arm_velocities(self) -> tuple[float, ...]:
        return tuple(float(self.data.qvel[i]) for i in self._arm_dof)

    def finger_position(self) -> float:
        """The left finger joint (the one the Hand-E driver reports), metres."""
        return float(self.data.qpos[self._finger_qpos[0]])

    def finger_velocity(self) -> float:
        return float(self.data.qvel[self._finger_dof[0]])

    def finger_force(self) -> float:
        """The force the left finger's actuator applies now (N, closing positive)."""
        return float(-self.data.actuator_force[self._finger_act[0]])

    def base_pose(self) -> Pose2D:
        x, y, yaw = (float(self.data.qpos[i]) for i in self._base_qpos)
        return Pose2D(
            self._base_start[0] + x, self._base_start[1] + y, _wrap(self._base_yaw0 + yaw)
        )

    def base_velocity(self) -> tuple[float, float, float]:
        """vx, vy in the base frame and the yaw rate."""
        vx, vy, wz = (float(self.data.qvel[i]) for i in self._base_dof)
        yaw = self.base_pose().yaw
        c, s = math.cos(yaw), math.sin(yaw)
        return c * vx + s * vy, -s * vx + c * vy, wz

    def body_pose(self, name: str) -> tuple[np.ndarray, np.ndarray]:
        """(position, quaternion w x y z) of a body in the world."""
        body = self.data.body(name)
        return body.xpos.copy(), body.xquat.copy()

    def free_bodies(self) -> dict[int, str]:
        """The bodies that move freely (the objects), by id: their names."""
        m = self.model
        free = int(mujoco.mjtJoint.mjJNT_FREE)
        ids = {int(m.jnt_bodyid[j]) for j in range(m.njnt) if int(m.jnt_type[j]) == free}
        return {body: m.body(body).name for body in sorted(ids)}

    def optical_frame(self) -> tuple[np.ndarray, np.ndarray]:
        """(position, quaternion w x y z) of the wrist camera's optical frame (x right,
        y down, z along the view) in the world."""
        camera = self.model.camera("wrist_camera").id
        rotation = self.data.cam_xmat[camera].reshape(3, 3) @ np.diag([1.0, -1.0, -1.0])
        quat = np.zeros(4)
        mujoco.mju_mat2Quat(quat, rotation.flatten())
        return self.data.cam_xpos[camera].copy(), quat

    def slide_position(self, name: str) -> float:
        """How far a sliding front (`name`, a fixture) is open, metres."""
        return float(self.data.joint(f"{name}_slide").qpos[0])

    def site_position(self, name: str) -> np.ndarray:
        return self.data.site(name).xpos.copy()

    def contacts(self) -> list[Contact]:
        """Every active contact between bodies, with its normal force."""
        found = []
        force = np.zeros(6)
        for i in range(self.data.ncon):
            contact = self.data.contact[i]
            mujoco.mj_contactForce(self.model, self.data, i, force)
            a = self.model.body(self.model.geom_bodyid[contact.geom1]).name
            b = self.model.body(self.model.geom_bodyid[contact.geom2]).name
            found.append(Contact(a, b, float(force[0])))
        return found

    # --------------------------------------------------------------- commands
    def command_base(self, vx: float, vy: float, wz: float) -> None:
        self.base_command = (vx, vy, wz)

    def play(self, trajectory: PlayingTrajectory) -> None:
        """Start a trajectory now (a new one replaces the one playing, as the controller
        does)."""
        self.trajectory = trajectory
        self.trajectory_time = 0.0
        self.verdict = None

    def stop_arm(self) -> None:
        """Hold where the arm is (a canceled or aborted trajectory)."""
        self.trajectory = None
        self.arm_target = self.arm_positions()

    def command_gripper(self, position: float, effort_n: float | None = None) -> None:
        self.finger_goal = min(max(position, 0.0), FINGER_STROKE)
        if effort_n is not None and effort_n > 0:
            self.effort_n = min(max(effort_n, EFFORT_RANGE_N[0]), EFFORT_RANGE_N[1])
        for act in self._finger_act:
            self.model.actuator_forcerange[act] = (-self.effort_n, self.effort_n)

    # ------------------------------------------------------------------- step
    def step(self, count: int = 1) -> None:
        dt = self.model.opt.timestep
        for _ in range(count):
            self._control(dt)
            mujoco.mj_step(self.model, self.data)
            if self.trajectory is not None:
                self.trajectory_time += dt
                verdict = self.trajectory.check(self.trajectory_time, self.arm_positions())
                if verdict is not None:
                    self.verdict = verdict
                    if verdict.code != 0:
                        self.stop_arm()
                    else:
                        self.arm_target = self.trajectory.points[-1].positions
                        self.trajectory = None

    def _control(self, dt: float) -> None:
        ctrl = self.data.ctrl
        vx, vy, wz = self.base_command
        yaw = self.base_pose().yaw
        c, s = math.cos(yaw), math.sin(yaw)
        ctrl[self._base_act[0]] = c * vx - s * vy
        ctrl[self._base_act[1]] = s * vx + c * vy
        ctrl[self._base_act[2]] = wz
        velocity = (0.0,) * len(self._arm_act)
        if self.trajectory is not None:
            t = self.trajectory_time + dt
            self.arm_target = self.trajectory.sample(t)
            ahead = self.trajectory.sample(t + dt)
            velocity = tuple((b - a) / dt for a, b in zip(self.arm_target, ahead, strict=True))
        for i, act in enumerate(self._arm_act):
            # kp (q* - q) - kv qdot with q* = target + (kv/kp) v: a PD on the trajectory's
            # position and velocity, so the damping adds no lag.
            kp, kv = self._arm_gains[i]
            ctrl[act] = self.arm_target[i] + kv / kp * velocity[i]
        step = FINGER_SPEED_M_S * dt
        error = self.finger_goal - self.finger_setpoint
        self.finger_setpoint += math.copysign(min(abs(error), step), error)
        # Closing, the Hand-E presses with its set force once the fingers stall: the
        # position servo is aimed past the goal by more than the force limit's travel,
        # so fingers that rest on an object push with the force limit, not with what
        # is left of the position error.
        squeeze = 0.0
        if self.finger_goal < self.finger_position() - 0.001:
            squeeze = SQUEEZE_MARGIN * self.effort_n / self._finger_kp
        for act in self._finger_act:
            ctrl[act] = self.finger_setpoint - squeeze

    def settle(self, seconds: float) -> None:
        self.step(max(1, round(seconds / self.model.opt.timestep)))


def _wrap(angle: float) -> float:
    return math.atan2(math.sin(angle), math.cos(angle))
