"""Methods related to COWP, each on COWP's ports and driver: DKPROMPT (VLM checks of
preconditions and effects), LLM-State (an LLM-kept object belief) and LLM-guided PDDL
search. ROS-free."""
