"""The ROS 2 layer: every module that imports rclpy or cowp_interfaces lives here. Nodes
(`nodes/`), the clients of their services and actions (`clients/`), the message
conversions, the graph's names, the skill backends and bags. Each is a thin adapter
over the ROS-free core."""
