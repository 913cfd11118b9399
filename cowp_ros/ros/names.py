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

COWP_TOPICS = (SITUATIONS_TOPIC, CURRENT_STEP_TOPIC, TASK_OUTCOMES_TOPIC, DETECTIONS_TOPIC)
"""The topics the stack itself publishes (what `cowp record` takes by default)."""
