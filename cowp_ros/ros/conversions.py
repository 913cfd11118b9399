"""Conversions between the core's plain types and cowp_interfaces messages.

Kept in one place so every node and client agrees on them (the core's `PlanStep` has
`args`, the message has `arguments`).
"""

from __future__ import annotations

from collections.abc import Iterable

from cowp_interfaces.msg import PlanStep as PlanStepMsg
from cowp_ros.planning import PlanStep


def step_to_msg(step: PlanStep) -> PlanStepMsg:
    return PlanStepMsg(action=step.action, arguments=list(step.args))


def steps_to_msgs(steps: Iterable[PlanStep]) -> list[PlanStepMsg]:
    return [step_to_msg(step) for step in steps]


def step_from_msg(message: PlanStepMsg) -> PlanStep:
    return PlanStep(message.action, tuple(message.arguments))


def steps_from_msgs(messages: Iterable[PlanStepMsg]) -> list[PlanStep]:
    return [step_from_msg(message) for message in messages]
