"""Bring-up: the node specification per profile, the process supervisor, self-tests.

This layer may import rclpy (it starts and checks ROS 2 processes); the core does not.
"""
