"""The graph's names, spelled once: every node, client, bag recorder and test reads them
here. (Launch files and `config/*.yaml` name them too, as data for people to edit; a
test checks that those agree with this module.)"""

from __future__ import annotations

# Services
PLAN_SERVICE = "/cowp/plan"
CHECK_PLAN_SERVICE = "/cowp/check_plan"
ACQUIRE_SERVICE = "/cowp/acquire_knowledge"

# Actions
RUN_TASK_ACTION = "/cowp/run_task"
EXECUTE_SKILL_ACTION = "/cowp/execute_skill"

# Topics
SITUATIONS_TOPIC = "/cowp/situations"
CURRENT_STEP_TOPIC = "/cowp/current_step"
TASK_OUTCOMES_TOPIC = "/cowp/task_outcomes"
COMMONSENSE_CANCEL_TOPIC = "/cowp/commonsense_cancel"
DETECTIONS_TOPIC = "/cowp/detections"
ANNOTATED_IMAGE_TOPIC = "/cowp/detections/image"
WRIST_IMAGE_TOPIC = "/wrist_camera/image_raw"
WRIST_CAMERA_INFO_TOPIC = "/wrist_camera/camera_info"
WRIST_DEPTH_TOPIC = "/wrist_camera/depth/image_raw"
WRIST_DEPTH_INFO_TOPIC = "/wrist_camera/depth/camera_info"

JOINT_STATES_TOPIC = "/joint_states"
ODOM_TOPIC = "/odom"

COWP_TOPICS = (SITUATIONS_TOPIC, CURRENT_STEP_TOPIC, TASK_OUTCOMES_TOPIC, DETECTIONS_TOPIC)
"""The topics the stack itself publishes (what `cowp record` takes by default)."""

TOPIC_TYPES = {
    SITUATIONS_TOPIC: "cowp_interfaces/msg/Situation",
    CURRENT_STEP_TOPIC: "cowp_interfaces/msg/PlanStep",
    TASK_OUTCOMES_TOPIC: "cowp_interfaces/msg/TaskOutcome",
    DETECTIONS_TOPIC: "cowp_interfaces/msg/DetectionArray",
    ANNOTATED_IMAGE_TOPIC: "sensor_msgs/msg/Image",
    WRIST_IMAGE_TOPIC: "sensor_msgs/msg/Image",
    WRIST_CAMERA_INFO_TOPIC: "sensor_msgs/msg/CameraInfo",
    JOINT_STATES_TOPIC: "sensor_msgs/msg/JointState",
    ODOM_TOPIC: "nav_msgs/msg/Odometry",
}
"""The message type of each topic the stack and its robot use by these names: a
recorder subscribes to them at once, without waiting for a publisher to say."""

GRAPH_MADE_TOPICS = (
    JOINT_STATES_TOPIC,
    ODOM_TOPIC,
    "/tf",
    "/tf_static",
    "/clock",
    CURRENT_STEP_TOPIC,
    TASK_OUTCOMES_TOPIC,
    DETECTIONS_TOPIC,
    ANNOTATED_IMAGE_TOPIC,
)
"""What a running graph makes itself (the robot's state, the executor's steps, the
outcomes, the detector's output): a replay into that graph leaves them out unless named,
or two publishers would fight over the robot and the decisions would be the bag's."""
