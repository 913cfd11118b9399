"""Language models, the ground floor: one way to open a model (the embedded llama.cpp
server or any OpenAI-compatible one), the client, its answer cache, and the scripted
double the tests use. Nothing here knows about COWP, PDDL or ROS."""
