"""A put-down goes to the first spot nothing stands on: objects a scenario or a person
left there (known from their frames on TF) are not put down on. TF's object frames are
the map frame's direct children, less the base's own chain."""

from __future__ import annotations

import math
from types import SimpleNamespace

from cowp_ros.skills.arm_motions import free_spot
from cowp_ros.skills.config import SurfaceConfig
from cowp_ros.skills.interfaces import ObjectPose, Pose2D

SURFACES = SurfaceConfig(spots=((0.804, 0.133), (0.804, -0.12), (0.804, 0.36), (0.804, -0.33)))
COUNTER = Pose2D(2.0, 0.5, 0.0)


def on_spot(index: int, where: Pose2D = COUNTER) -> ObjectPose:
    (dx, dy), height = SURFACES.put_down_spot("counter", index)
    c, s = math.cos(where.yaw), math.sin(where.yaw)
    return ObjectPose(where.x + c * dx - s * dy, where.y + s * dx + c * dy, height, 0.0)


def test_a_spot_taken_by_an_object_is_skipped() -> None:
    assert free_spot(SURFACES, "counter", COUNTER, 0, []) == 0
    assert free_spot(SURFACES, "counter", COUNTER, 0, [on_spot(0)]) == 1
    assert free_spot(SURFACES, "counter", COUNTER, 0, [on_spot(0), on_spot(1)]) == 2
    # the robot's own put-downs count from `first`: spot 1 is its, spot 2 is taken
    assert free_spot(SURFACES, "counter", COUNTER, 1, [on_spot(2)]) == 1
    assert free_spot(SURFACES, "counter", COUNTER, 2, [on_spot(2)]) == 3


def test_an_object_in_the_air_or_beside_the_spots_does_not_take_one() -> None:
    held = on_spot(0)
    lifted = ObjectPose(held.x, held.y, held.z + 0.3, 0.0)  # in the hand above the spot
    aside = ObjectPose(held.x + 0.2, held.y, held.z, 0.0)
    assert free_spot(SURFACES, "counter", COUNTER, 0, [lifted, aside]) == 0


def test_every_spot_taken_falls_back_on_the_first_asked() -> None:
    everything = [on_spot(i) for i in range(len(SURFACES.spots))]
    assert free_spot(SURFACES, "counter", COUNTER, 1, everything) == 1


def test_tf_object_frames_are_the_maps_children_less_the_base_chain() -> None:
    from cowp_ros.ros.skill_backends.tf_pose import TfPoses, TfTree

    def frame(parent: str, child: str, x: float, y: float, z: float) -> SimpleNamespace:
        translation = SimpleNamespace(x=x, y=y, z=z)
        rotation = SimpleNamespace(x=0.0, y=0.0, z=0.0, w=1.0)
        return SimpleNamespace(
            child_frame_id=child,
            header=SimpleNamespace(frame_id=parent),
            transform=SimpleNamespace(translation=translation, rotation=rotation),
        )

    node = SimpleNamespace(create_subscription=lambda *args, **kwargs: None)
    tree = TfTree(node, "map", None)  # type: ignore[arg-type]
    tree._on_tf(
        SimpleNamespace(
            transforms=[
                frame("map", "odom", 0.0, 0.0, 0.0),
                frame("odom", "base_footprint", 2.0, 0.5, 0.0),
                frame("map", "cup_1", 2.8, 0.6, 0.75),
                frame("map", "bowl_1", 2.8, 0.4, 0.75),
                frame("cup_1", "cup_handle", 0.03, 0.0, 0.05),
            ]
        )
    )
    known = TfPoses(tree, "base_footprint").known_objects()
    assert sorted(known) == ["bowl_1", "cup_1"]
    assert known["cup_1"].x == 2.8 and known["cup_1"].z == 0.75
