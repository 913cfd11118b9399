"""ROS 2 nodes: thin adapters from the ROS-free core to topics, services and actions."""
