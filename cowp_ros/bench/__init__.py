"""The benchmark: COWP against its baselines on the public situation dataset.

- `dataset`: the crowd-sourced situations (`situations.json`), per task and step.
- `annotations`: the human-acceptability judge, read from reviewable YAML files.
- `simulator`: a symbolic world that executes plan steps, raises situations and decides
  success by reaching the goal (never by trusting the method).
- `methods/`: one module per method, discovered automatically (see its docstring).
- `metering`: per-method LLM usage over one shared model and answer cache.
- `runner`: trials (drawn once, the same for every method), resumable persistence.
- `results`: aggregation, the markdown table and the plots.
"""
