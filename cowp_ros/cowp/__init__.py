"""COWP itself: the open-world loop (Algorithm 1), the ports it depends on, the one
driver that runs it against a robot, and its reasoning (Plan Monitor, predicates,
Knowledge Acquirer, prompts, calibration). ROS-free."""
