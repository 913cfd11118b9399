"""ROS 2 implementations of the skill backend protocols (base, arm, gripper, camera)."""
