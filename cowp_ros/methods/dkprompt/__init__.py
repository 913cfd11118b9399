"""DKPROMPT: yes/no questions from an action's PDDL preconditions and effects, asked of a
vision-language model about the camera image; a mismatch updates the state and replans."""
