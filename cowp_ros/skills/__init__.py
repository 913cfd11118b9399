"""Robot skills: PDDL plan steps turned into base, arm, gripper and camera motions.

The mapping (`skill_map`), the world bookkeeping and the step runner (`runner`) are
plain Python, testable without ROS; only `cowp_ros/ros/skill_backends/` talks to ROS,
behind the small protocols of `interfaces` so the runner never knows whether Nav2, a
topic or a fake moves the robot.
"""
