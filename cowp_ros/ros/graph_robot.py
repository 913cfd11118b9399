"""The robot as the ROS graph offers it, for the task manager's runs (a `Robot` port).

A step is done by the executor node's `ExecuteSkill` action; what the robot noticed is
what arrived on `/cowp/situations` meanwhile, waiting in the task manager's bounded,
deduplicated inbox. A step on an object the world does not have is refused before
the robot is sent for it, and a step's goal goes only to an executor that has answered
the task manager (`cowp_ros.ros.handshake`).
"""

from __future__ import annotations

import time
from typing import Any

from rclpy.action import ActionClient

from cowp_interfaces.action import ExecuteSkill
from cowp_ros.cowp.cancel import CancelToken
from cowp_ros.cowp.inbox import SituationInbox
from cowp_ros.cowp.ports import StepOutcome
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.planning import PlanStep
from cowp_ros.ros.clients.phase_clock import PhaseClock
from cowp_ros.ros.conversions import step_to_msg
from cowp_ros.ros.handshake import reach_server, threaded_wait
from cowp_ros.ros.names import EXECUTE_SKILL_ACTION
from cowp_ros.ros.waiting import WaitEnd, run_action
from cowp_ros.tasks.presence import Presence

EXECUTOR_WAIT_S = 10.0
"""How long a run waits for the executor's action server to appear."""


class GraphRobot:
    """The robot as the graph offers it: the executor node's `ExecuteSkill` action, and
    the situations waiting in the task manager's inbox (a `Robot` port)."""

    def __init__(
        self,
        inbox: SituationInbox,
        skill_client: ActionClient[Any, Any, Any],
        step_timeout_s: float,
        clock: PhaseClock,
        presence: Presence,
    ) -> None:
        self.inbox = inbox
        self.skill_client = skill_client
        self.step_timeout_s = step_timeout_s
        self.clock = clock
        self.presence = presence
        self.step_started_at = time.monotonic()
        """When the last step was sent: a situation's wait is counted from there."""

    def perceive(self, next_step: PlanStep) -> list[Situation]:
        arrivals = self.inbox.take()
        for arrival in arrivals:
            self.clock.add("perceive", max(0.0, arrival.at - self.step_started_at))
        return [a.situation for a in arrivals]

    def execute(self, step: PlanStep, description: str, cancel: CancelToken) -> StepOutcome:
        refusal = self.presence.refusal(step)  # never send the robot for what is not there
        if refusal is not None:
            return StepOutcome(False, reason=refusal)
        client = self.skill_client
        # The executor must have found this node too, or the step's acceptance is lost.
        answered = reach_server(
            client, ExecuteSkill, threaded_wait(cancel), cancel, EXECUTOR_WAIT_S
        )
        if answered is WaitEnd.CANCELED:
            cancel.check()  # a run canceled while the executor is still starting stops now
        if answered is WaitEnd.GONE:
            raise CowpError(f"the executor went away before {step} (its node died?)")
        if answered is not WaitEnd.DONE and client.server_is_ready():
            raise CowpError(
                f"the executor serves {EXECUTE_SKILL_ACTION} but did not answer within "
                f"{EXECUTOR_WAIT_S:g} s",
                hint="the executor node is up but not serving requests: its log says why",
            )
        if answered is not WaitEnd.DONE:
            raise CowpError(
                f"the executor is not serving {EXECUTE_SKILL_ACTION}",
                hint="is the executor node running?",
            )
        self.step_started_at = started = time.monotonic()
        outcome, result = run_action(
            client,
            ExecuteSkill.Goal(step=step_to_msg(step)),  # the executor announces it
            server=EXECUTE_SKILL_ACTION,
            kind="skill",
            cancel=cancel,
            server_s=EXECUTOR_WAIT_S,
            motion_s=self.step_timeout_s,
            watch_server=True,
        )
        if not outcome.ok and not client.server_is_ready():
            raise CowpError(f"the executor went away while doing {step} (its node died?)")
        self.clock.add("execute", time.monotonic() - started)
        if result is not None and outcome.ok:
            return StepOutcome(bool(result.success), reason=result.message)
        if result is not None and result.message:
            return StepOutcome(False, reason=result.message)
        return StepOutcome(False, reason=outcome.message)
