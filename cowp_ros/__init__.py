"""cowp_ros: open-world task planning (COWP) for a ROS 2 mobile manipulator.

The package has two layers. The core (everything outside `cowp_ros.ros` and
`cowp_ros.bringup`) never imports ROS 2, so the whole method can be unit-tested with
plain pytest. The ROS layer holds thin adapters from that core to ROS 2 topics,
services and actions. The README's code map says which folder does what.
"""

__version__ = "0.1.0"
