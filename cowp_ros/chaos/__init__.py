"""Fault injection: a scripted LLM server, seeded fault schedules, and invariant checks.

`server` is an OpenAI-compatible server on 127.0.0.1 that answers, delays and fails as
scripted (the tests use it too). `faults` is the registry of fault kinds a run can
inject; `runner` runs the `cowp` command line against them; `invariants` are the checks
every run must pass, written over a run's outputs (`Run`) so that a runner for the ROS
graph can reuse them. `cowp chaos` is the command line.
"""
