"""The embedded simulation's ROS-free parts: scenarios and the fake robot's kinematics."""
