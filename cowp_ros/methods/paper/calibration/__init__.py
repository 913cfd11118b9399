"""Plan Monitor calibration: benign situations, scored decisions, thresholds.

See `situations` (the items and their fixed split), `scoring` (how a variant turns
answers into a score), `thresholds` (choosing where to cut), `evaluation` (scoring a
split) and `config` (the tuned thresholds per model, read by `PlanMonitor`).
"""
