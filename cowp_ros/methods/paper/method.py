"""COWP, the paper's method: Prompts 1-3 at the loop's ports.

- Monitor: `PlanMonitor`, one question per remaining step ("is it still suitable to
  fill the cup, given that the cup is dirty?"), calibrated when the model has an entry
  in `config/monitor_calibration.yaml`;
- FactMaker: `PredicateGenerator`, the situation as a fact (rules first, then the model);
- Acquirer: `KnowledgeAcquirer`, every present kind asked about in the failed role.

- policies: `cowp.policies.PAPER_POLICIES` (a failed step only replans).

    loop = build_loop("cowp", get_task("fill_cup"), model)      # an OpenWorldPlanner
    drive(loop, robot)

Its own options (`registry.build_loop(options=...)`; the commonsense node passes its
`monitor_threshold` and `monitor_calibration` parameters here): `THRESHOLD`, the P(yes)
fallback for an unclear answer (default 0.5), and `CALIBRATION`, the calibrated
decision (a `MonitorCalibration`, None for the plain yes/no answer, or "auto", the
default: the model's entry in `config/monitor_calibration.yaml`).
"""

from __future__ import annotations

from typing import Literal

from cowp_ros.cowp.loop import OpenWorldPlanner
from cowp_ros.cowp.policies import PAPER_POLICIES
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.paper.acquirer import KnowledgeAcquirer
from cowp_ros.methods.paper.calibration.config import MonitorCalibration
from cowp_ros.methods.paper.monitor import PlanMonitor
from cowp_ros.methods.paper.predicates import PredicateGenerator
from cowp_ros.methods.registry import (
    LoopParts,
    MethodEntry,
    Options,
    ReasonerContext,
    Reasoners,
    open_world_planner,
    register,
)

THRESHOLD = "cowp.threshold"
"""Option: the P(yes) fallback threshold of the paper's questions (a float)."""
CALIBRATION = "cowp.calibration"
"""Option: the monitor's calibrated decision (see the module docstring)."""
DEFAULT_THRESHOLD = 0.5


def threshold_of(options: Options) -> float:
    """The paper's P(yes) fallback threshold in `options` (the grounded method's
    acquirer asks the paper's questions, and reads it too)."""
    value = options.get(THRESHOLD, DEFAULT_THRESHOLD)
    if not isinstance(value, int | float):
        raise TypeError(f"{THRESHOLD} must be a number, not {value!r}")
    return float(value)


def calibration_of(options: Options) -> MonitorCalibration | Literal["auto"] | None:
    """The monitor's calibrated decision in `options` ("auto" when not given)."""
    value = options.get(CALIBRATION, "auto")
    if value is None or isinstance(value, MonitorCalibration):
        return value
    if value == "auto":
        return "auto"
    raise TypeError(f"{CALIBRATION} must be a MonitorCalibration, None or 'auto', not {value!r}")


def paper_reasoners(model: LanguageModel, context: ReasonerContext) -> Reasoners:
    """Prompt 1 (monitor), the fact maker and Prompts 2-3 (acquirer) over `model`."""
    threshold = threshold_of(context.options)
    return Reasoners(
        monitor=PlanMonitor(
            model,
            context.phrases,
            threshold=threshold,
            calibration=calibration_of(context.options),
        ),
        facts=PredicateGenerator(model, reserved=context.reserved),
        acquirer=KnowledgeAcquirer(model, context.phrases, threshold=threshold),
    )


def paper_loop_from(parts: LoopParts) -> OpenWorldPlanner:
    """COWP's loop with the ports as they are."""
    return open_world_planner(parts, policies=PAPER_POLICIES)


PAPER = register(
    MethodEntry(
        name="cowp",
        label="COWP",
        summary="COWP: Plan Monitor + Knowledge Acquirer over a classical planner",
        reasoners=paper_reasoners,
        loop=paper_loop_from,
    )
)
