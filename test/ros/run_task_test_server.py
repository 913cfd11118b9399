"""A real RunTask action server in its own process, for the interface round-trip test.

It walks a fixed three-step plan, publishing feedback at every phase, and honours
cancel between steps: enough to prove goal, feedback, result and cancel cross a
process boundary with our generated interfaces.

    python run_task_test_server.py STEP_SECONDS
"""

from __future__ import annotations

import sys
import time

import rclpy
from rclpy.action import ActionServer, CancelResponse, GoalResponse
from rclpy.executors import ExternalShutdownException, MultiThreadedExecutor
from rclpy.node import Node

from cowp_interfaces.action import RunTask
from cowp_interfaces.msg import PlanStep

PLAN = [
    PlanStep(action="find_cup", arguments=["cup_1", "counter"]),
    PlanStep(action="fill_cup", arguments=["cup_1", "faucet_1"]),
    PlanStep(action="place_cup", arguments=["cup_1", "table"]),
]


class RunTaskTestServer(Node):
    def __init__(self, step_seconds: float) -> None:
        super().__init__("run_task_test_server")
        self.step_seconds = step_seconds
        self.server = ActionServer(
            self,
            RunTask,
            "run_task",
            execute_callback=self.execute,
            goal_callback=self.on_goal,
            cancel_callback=lambda _goal: CancelResponse.ACCEPT,
        )

    def on_goal(self, goal: RunTask.Goal) -> GoalResponse:
        return GoalResponse.ACCEPT if goal.task else GoalResponse.REJECT

    def execute(self, goal_handle) -> RunTask.Result:
        feedback = RunTask.Feedback(phase="planning", plan=PLAN, step_index=-1)
        feedback.last_event = f"planned {goal_handle.request.task}"
        goal_handle.publish_feedback(feedback)
        done: list[PlanStep] = []
        for index, step in enumerate(PLAN):
            if goal_handle.is_cancel_requested:
                goal_handle.canceled()
                return RunTask.Result(success=False, outcome="canceled", executed_steps=done)
            time.sleep(self.step_seconds)
            done.append(step)
            feedback = RunTask.Feedback(phase="executing", plan=PLAN, step_index=index)
            feedback.last_event = f"done {step.action}"
            goal_handle.publish_feedback(feedback)
        goal_handle.succeed()
        return RunTask.Result(
            success=True,
            outcome="completed",
            executed_steps=done,
            handled_situations=["the cup is dirty"],
            explanation=f"{goal_handle.request.task}: done",
        )


def main() -> None:
    rclpy.init()
    node = RunTaskTestServer(float(sys.argv[1]) if len(sys.argv) > 1 else 0.0)
    executor = MultiThreadedExecutor()
    executor.add_node(node)
    print("ready", flush=True)
    try:
        executor.spin()
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


if __name__ == "__main__":
    main()
