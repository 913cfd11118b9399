"""One plan step sent to the executor's `ExecuteSkill` action, for `cowp skill --run`.

A person trying a skill on a new robot watches it: the feedback is printed as it comes,
Ctrl-C cancels the goal on the executor (the robot stops), and the result says what
happened. The waiting is `cowp_ros.ros.waiting.run_action`, as for every other action;
before the goal, the executor must have answered this new client
(`cowp_ros.ros.handshake`), or the goal's acceptance can be lost while it is still
discovering the client, and the robot would move while the command waits for nothing.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Callable, Sequence
from typing import Any

from cowp_ros.errors import CowpError
from cowp_ros.ros.handshake import reach_server, threaded_wait
from cowp_ros.ros.waiting import WaitEnd, run_action


def run_step_on_executor(
    action_name: str,
    step_name: str,
    arguments: Sequence[str],
    *,
    server_timeout_s: float,
    step_timeout_s: float,
    say: Callable[[str], None],
) -> tuple[bool, str]:
    """(success, message) of one step on the running executor; Ctrl-C cancels it.

    The Ctrl-C handler goes in first, before the node starts (which can take a second
    on a busy machine): a Ctrl-C at any point cancels, never a traceback."""
    from rclpy.action import ActionClient

    from cowp_interfaces.action import ExecuteSkill
    from cowp_interfaces.msg import PlanStep
    from cowp_ros.ros.own_node import OwnNode

    cancel = threading.Event()

    def on_interrupt(signum: int, frame: object) -> None:
        say("canceling ...")
        cancel.set()

    with contextlib.ExitStack() as cleanup:  # undone in reverse: the handler goes last
        cleanup.callback(signal.signal, signal.SIGINT, signal.signal(signal.SIGINT, on_interrupt))
        own = cleanup.enter_context(OwnNode("cowp_skill"))
        # Made before the node spins (see OwnNode.spin_in_background).
        client: ActionClient[Any, Any, Any] = ActionClient(own.node, ExecuteSkill, action_name)
        own.spin_in_background()
        found = reach_server(client, ExecuteSkill, threaded_wait(cancel), cancel, server_timeout_s)
        if found is WaitEnd.CANCELED:  # Ctrl-C while the executor is still starting
            return False, f"canceled while waiting for {action_name}"
        if found is WaitEnd.GONE:
            raise CowpError(
                f"the executor at {action_name} went away before it answered",
                hint="its node died? its log says why",
            )
        if found is WaitEnd.TIMEOUT and client.server_is_ready():
            raise CowpError(
                f"the executor at {action_name} is there but did not answer within "
                f"{server_timeout_s:g} s",
                hint="the executor node is up but not serving requests: its log says why",
            )
        if found is not WaitEnd.DONE:
            raise CowpError(
                f"no executor serves {action_name} within {server_timeout_s:g} s",
                hint="start it first: cowp bringup --profile robot (or ros2 launch cowp_ros "
                "robot.launch.py); check ROS_DOMAIN_ID matches",
            )
        goal = ExecuteSkill.Goal(step=PlanStep(action=step_name, arguments=list(arguments)))

        def feedback(message: Any) -> None:
            say(f"  [{message.feedback.progress * 100:3.0f} %] {message.feedback.status}")

        say(f"running {step_name}({', '.join(arguments)}) on {action_name}; Ctrl-C cancels")
        outcome, result = run_action(
            client,
            goal,
            server=action_name,
            kind="skill",
            cancel=cancel,
            server_s=server_timeout_s,
            motion_s=step_timeout_s,
            feedback=feedback,
            watch_server=True,
        )
        if result is not None:
            return bool(result.success), result.message
        return False, outcome.message
