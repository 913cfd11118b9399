"""COWP itself: the open-world loop (Algorithm 1: the state machine in `loop`, with its
policies, PDDL repairs and narration beside it), the ports it depends on, the one driver
that runs it against a robot, and the paper's reasoning (Plan Monitor, predicates,
Knowledge Acquirer, prompts, calibration) and the grounded method's. ROS-free."""
