"""cowp_ros: open-world task planning (COWP) for a ROS 2 mobile manipulator.

The package has two layers. The core (everything outside `cowp_ros.ros.nodes` and
`cowp_ros.bringup`) never imports rclpy, so the whole method can be unit-tested with
plain pytest. The nodes are thin adapters from that core to ROS 2 topics, services and
actions.
"""

__version__ = "0.1.0"
