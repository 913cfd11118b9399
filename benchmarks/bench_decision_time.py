"""Model time to decide a situation, as a user meets it: `cowp run` and the commonsense node.

    .venv/bin/python benchmarks/bench_decision_time.py --split dev --limit 4
    .venv/bin/python benchmarks/bench_decision_time.py --split test --limit 4 --json out.json
    .venv/bin/python benchmarks/bench_decision_time.py --smoke          # CI
    .venv/bin/python benchmarks/bench_decision_time.py --first-step     # every scenario

Items: the dataset situations and distractors of the split's tasks at their step, and the
split's near misses (`bench_grounded_thresholds.py` builds them): per task, each sentence
once, the first `--limit` blocking and the first `--limit` harmless ones by the judge
files. One embedded model server is started for the whole bench (or `--llm-url`),
and every answer is asked anew (no answer cache), so the times are the model's own.

- **cowp run**: each item is one `cowp run TASK --situation TEXT --at STEP` in a process
  of its own, so each situation is the first of its run: the run warms the method's
  prompt prefix before its plan, and once the plan is made asks what the plan's objects
  will need (each role's clean need), as a user's run does. The decision's time is the
  sum of the monitor questions' `seconds` in the run's report, from the situation to the
  first stand-in question (stand-in questions are not part of deciding); the questions
  asked when the plan was made are printed apart (`asked_ahead`).
- **commonsense node**: the node started once (it warms the prefix when it starts); it
  is sent each task's plan first, with no situation, as the task manager does once it
  has planned (the node asks what the plan's objects will need and keeps the answers
  for its life; printed apart, as `asked_ahead`). Each item is then one CheckPlan call
  from a client, its wall time measured by the client (the model's time and ROS's; the
  model's part, as the node reports it in `model_seconds`, is kept beside it).

`--first-step` measures where the questions asked ahead bite: every scenario's situations
(config/scenarios), each raised at the first step, right after the plan, the first
situation of its run. On the graph a fresh commonsense node is sent the plan without
waiting, as the task manager sends it, and at once the situation (the client times the
wall time from sending it, "saw", to the answer, the decision); each item runs twice in
the same bench, with the node's decisions first (`decisions_first: true`, the default)
and in arrival order (`false`, the order before), in turn which goes first. In `cowp
run` the questions asked ahead are asked before the first step, so a situation there
never waits on them: its saw -> decision is the report's time from the situation to the
first event after its questions, and the time the robot waited before step 1 for the
questions asked ahead is printed beside it.

Printed per source: items, the share decided without a question, and p50 / p95 / max
seconds for harmless and blocking decisions apart, with the share within the target
(1.5 s harmless, 3 s blocking) and its 95 % Wilson interval. The machine's load and the server's
prompt speed are printed with them, the speed measured before the items on the
questions' own prompts: the shared prefix read cold (tokens a second), and a question's
own words read after it, as a situation's are (the median of five). A decision costs
about the tokens it reads over that speed, so figures from two days compare through
it: the same code and questions decide in a third more time on a machine a third slower.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import random
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from itertools import zip_longest
from pathlib import Path
from typing import Any

from bench_grounded_thresholds import NEAR_MISSES, Item, items_for, near_miss_items

from cowp_ros.bench.annotations import load_annotations
from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.results import wilson
from cowp_ros.chaos.answers import SMOKE_HELP, sensible_model_server
from cowp_ros.llm.client import SYSTEM_PROMPT
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.methods.grounded import questions
from cowp_ros.tasks import get_task, split_tasks

COWP = [sys.executable, "-c", "import sys; from cowp_ros.cli import main; sys.exit(main())"]


@dataclass
class Timed:
    """One item's decision as a source made it."""

    task: str
    text: str
    action: str
    source: str  # "cowp run" | "commonsense node"
    blocks: bool = False
    questions: int = 0
    seconds: float = 0.0
    model_seconds: float | None = None  # the node's: what of `seconds` the model took
    ahead: int = 0  # `cowp run`'s: questions asked when the plan was made
    ahead_seconds: float = 0.0
    error: str = ""


@dataclass
class Summary:
    source: str
    items: int = 0
    without_question: int = 0
    errors: int = 0
    harmless: dict[str, Any] = field(default_factory=dict)
    blocking: dict[str, Any] = field(default_factory=dict)
    asked_ahead: dict[str, float] = field(default_factory=dict)


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile (nearest rank): what q % of the decisions stay within."""
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, int(-(-q * len(ordered) // 100)) - 1))
    return ordered[rank]


TARGETS = {"harmless": 1.5, "blocking": 3.0}
"""Seconds of model time a decision should stay within, p95 (a harmless remark must not
stop the robot for long; a blocking decision may take longer, before any stand-in)."""


def spread(values: Sequence[float], target: float) -> dict[str, Any]:
    """p50 / p95 / max, and the share within `target` with its 95 % Wilson interval: with
    a few dozen decisions the p95 is nearly the max, the share says how sure that is."""
    if not values:
        return {}
    within = sum(1 for v in values if v <= target)
    low, high = wilson(within, len(values)) or (0.0, 100.0)
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 2),
        "p95": round(percentile(values, 95), 2),
        "max": round(max(values), 2),
        "target": target,
        "within_target": f"{within}/{len(values)}",
        "within_target_interval_pct": [low, high],
    }


def summarise(source: str, timed: Sequence[Timed]) -> Summary:
    done = [t for t in timed if not t.error]
    asked = [t for t in done if t.questions]
    return Summary(
        source,
        items=len(timed),
        without_question=len(done) - len(asked),
        errors=len(timed) - len(done),
        harmless=spread([t.seconds for t in asked if not t.blocks], TARGETS["harmless"]),
        blocking=spread([t.seconds for t in asked if t.blocks], TARGETS["blocking"]),
        asked_ahead=ahead_spread([t for t in done if t.ahead]),
    )


def ahead_spread(timed: Sequence[Timed]) -> dict[str, float]:
    """The questions asked when the plan was made, and their seconds, over the runs."""
    if not timed:
        return {}
    return {
        "runs": len(timed),
        "questions_p50": percentile([t.ahead for t in timed], 50),
        "seconds_p50": round(percentile([t.ahead_seconds for t in timed], 50), 2),
        "seconds_max": round(max(t.ahead_seconds for t in timed), 2),
    }


def asked_ahead(report: dict[str, Any]) -> tuple[int, float]:
    """(questions, seconds) a `cowp run` asked when its plan was made, before any
    situation: what the plan's objects will need (not part of any decision's time)."""
    ahead = [e for e in report.get("events", []) if e["kind"] == "monitor" and not e["situation"]]
    return len(ahead), sum(float(e.get("seconds") or 0.0) for e in ahead)


def decision_of(report: dict[str, Any], situation: str) -> tuple[bool, int, float]:
    """(blocks, questions, seconds) of the situation's decision in a `cowp run` report."""
    events = report.get("events", [])
    start = next(
        (i for i, e in enumerate(events) if e["kind"] == "situation" and e.get("situation")),
        None,
    )
    if start is None:
        return False, 0, 0.0
    questions, seconds, blocks = 0, 0.0, False
    for event in events[start + 1 :]:
        if event["kind"] in ("acquirer", "step", "outcome", "situation"):
            break
        if event["kind"] == "monitor":
            questions += 1
            seconds += float(event.get("seconds") or 0.0)
        if event["kind"] == "pddl_change" and "precondition" in event["text"]:
            blocks = True
    return blocks, questions, seconds


def time_cowp_run(item: Item, url: str, model: str, method: str, folder: Path) -> Timed:
    timed = Timed(item.task, item.text, item.action, "cowp run")
    report = folder / f"{abs(hash((item.task, item.text, item.action)))}.json"
    done = subprocess.run(
        [*COWP, "run", item.task, "--situation", item.text, "--at", item.action,
         "--method", method, "--no-cache", "--quiet", "--report", str(report),
         "--llm-url", url, "--llm-model", model],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if not report.is_file():
        timed.error = (done.stderr or done.stdout).strip()[-300:] or "no report"
        return timed
    record = json.loads(report.read_text())
    timed.blocks, timed.questions, timed.seconds = decision_of(record, item.text)
    timed.ahead, timed.ahead_seconds = asked_ahead(record)
    return timed


@contextlib.contextmanager
def commonsense_node(
    url: str, model: str, method: str, logs: Path, decisions_first: bool = True
) -> Iterator[None]:
    """The commonsense node alone, on the given server, until the block ends."""
    from dataclasses import replace

    from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
    from cowp_ros.bringup.supervisor import Supervisor

    profile = with_parameter_overrides(
        load_profile("sim"),
        [
            f"commonsense.llm_url={url}",
            f"commonsense.llm_model={model}",
            f"commonsense.method={method}",
            "commonsense.answer_cache=false",
            f"commonsense.decisions_first={str(decisions_first).lower()}",
        ],
    )
    profile = replace(profile, nodes=tuple(n for n in profile.nodes if n.name == "commonsense"))
    supervisor = Supervisor(profile, logs, say=lambda _m: None)
    supervisor.start()
    try:
        supervisor.wait_ready(180.0)
        yield
    finally:
        supervisor.stop()


def time_node(items: Sequence[Item], url: str, model: str, method: str, logs: Path) -> list[Timed]:
    """Each item as one CheckPlan call to the commonsense node, timed by the client."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from cowp_interfaces.srv import CheckPlan
    from cowp_ros.pddl.edits import base_action_name
    from cowp_ros.planning import make_planner
    from cowp_ros.ros.conversions import steps_to_msgs
    from cowp_ros.ros.names import CHECK_PLAN_SERVICE

    timed: list[Timed] = []
    with commonsense_node(url, model, method, logs):
        context = rclpy.Context()
        rclpy.init(context=context)
        node = Node("bench_decision_time", context=context)
        executor = SingleThreadedExecutor(context=context)
        executor.add_node(node)
        try:
            client = node.create_client(CheckPlan, CHECK_PLAN_SERVICE)
            if not client.wait_for_service(timeout_sec=120.0):
                raise SystemExit("the commonsense node's CheckPlan service never came up")
            _call(executor, client, ready_request(items[0].task))  # the prefix is read
            plans: dict[str, list[Any]] = {}
            for item in items:
                one = Timed(item.task, item.text, item.action, "commonsense node")
                if item.task not in plans:  # the closed-world plan, once per task
                    plan = make_planner("pyperplan").solve(get_task(item.task).load(), 60)
                    plans[item.task] = list(plan.steps)
                    whole = CheckPlan.Request(task=item.task, steps=steps_to_msgs(plan.steps))
                    one.ahead, one.ahead_seconds = _send_plan(executor, client, whole)
                steps = plans[item.task]
                actions = [base_action_name(s.action) for s in steps]
                rest = steps[actions.index(item.action) :]
                request = CheckPlan.Request(
                    task=item.task, steps=steps_to_msgs(rest), situation=item.text
                )
                started = time.monotonic()
                response = _call(executor, client, request)
                one.seconds = time.monotonic() - started
                if response is None or not response.success:
                    one.error = "no answer" if response is None else response.message
                else:
                    one.blocks = not response.feasible
                    one.questions = len(response.questions)
                    one.model_seconds = round(float(response.model_seconds), 3)
                timed.append(one)
                model_s = f"{one.model_seconds or 0.0:5.2f}"
                print(
                    f"node  {one.seconds:5.2f} s  {one.questions} q  (model {model_s} s)  "
                    f"{item.text}",
                    file=sys.stderr,
                )
        finally:
            executor.shutdown()
            node.destroy_node()
            rclpy.shutdown(context=context)
    return timed


def ready_request(task: str) -> Any:
    """A request that returns once the node has read its prompt prefix: a remark about
    nothing present, on the task's first step, asks the model one question about the
    task, and a question waits for the prefix reading in flight (a request that asks
    none, a fact alone, waits for nothing)."""
    from cowp_interfaces.srv import CheckPlan
    from cowp_ros.planning import make_planner
    from cowp_ros.ros.conversions import steps_to_msgs

    plan = make_planner("pyperplan").solve(get_task(task).load(), 60)
    return CheckPlan.Request(
        task=task, steps=steps_to_msgs(list(plan.steps)[:1]), situation="the robot is ready"
    )


def _send_plan(executor: Any, client: Any, request: Any) -> tuple[int, float]:
    """(questions, seconds): a task's plan sent with no situation, as the task manager
    sends it once it has planned."""
    started = time.monotonic()
    response = _call(executor, client, request)
    seconds = time.monotonic() - started
    if response is None or not response.success:
        why = response.message if response is not None else "no answer"
        raise SystemExit(f"the node did not take {request.task}'s plan: {why}")
    questions = len(response.questions)
    print(f"node  plan of {request.task}: {questions} q ahead, {seconds:.2f} s", file=sys.stderr)
    return questions, seconds


def _call(executor: Any, client: Any, request: Any) -> Any:
    future = client.call_async(request)
    deadline = time.monotonic() + 300.0
    while not future.done() and time.monotonic() < deadline:
        executor.spin_once(timeout_sec=0.05)
    return future.result() if future.done() else None


SPEED_SITUATIONS = (
    "the robot looks around",
    "a bird sings outside the window",
    "the light in the hall is on",
    "the clock on the wall shows noon",
    "someone closes a door upstairs",
)
"""Remarks about nothing a task uses: the speed probe's questions (their answers unread)."""


def _read(url: str, model: str, system: str, question: str) -> tuple[int, float] | None:
    """(prompt tokens the server read, seconds) for one question after the shared
    examples; None when the server does not say how many it took from its cache."""
    messages = [{"role": "system", "content": system}]
    for example in questions.EXAMPLES:
        messages.append({"role": "user", "content": example.question})
        messages.append({"role": "assistant", "content": example.answer})
    messages.append({"role": "user", "content": question})
    payload = {"model": model, "messages": messages, "max_tokens": 1, "temperature": 0.0}
    request = urllib.request.Request(
        url.rstrip("/") + "/chat/completions",
        json.dumps(payload).encode(),
        {"Content-Type": "application/json"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=300) as reply:
        usage = json.load(reply).get("usage") or {}
    seconds = time.monotonic() - started
    details = usage.get("prompt_tokens_details")
    if not isinstance(details, dict) or not isinstance(details.get("cached_tokens"), int):
        return None
    return int(usage.get("prompt_tokens", 0)) - details["cached_tokens"], seconds


def prompt_speed(url: str, model: str, task_description: str) -> dict[str, float]:
    """The server's prompt reading speed on the questions' own prompts (tokens a second):
    `prefix`, the instructions, examples and task words read cold (a fresh word first,
    so nothing is cached); `question`, the median over five use questions read after it
    (a situation and the question's words: what a decision reads). Empty where the
    server does not report its cached tokens."""
    fresh = f"({uuid.uuid4().hex[:8]}) {SYSTEM_PROMPT}"
    cold = _read(url, model, fresh, f"{questions.task_clause(task_description)} Ready?")
    if cold is None or cold[0] <= 0:
        return {}
    rates = []
    for situation in SPEED_SITUATIONS:
        asked = questions.use_question("the cup", task_description, situation)
        read = _read(url, model, fresh, asked)
        if read is not None and read[0] > 0:
            rates.append(read[0] / read[1])
    rates.sort()
    speed = {"prefix": round(cold[0] / cold[1], 1), "prefix_tokens": cold[0]}
    if rates:
        speed["question"] = round(rates[len(rates) // 2], 1)
    return speed


def bench_items(split: str, limit: int | None) -> list[Item]:
    """Per task, each sentence once (at its first step), the first `limit` the judge
    files call blocking and the first `limit` harmless ones, in turn."""
    dataset = SituationDataset.load(default_dataset_dir())
    annotations = load_annotations()
    chosen: list[Item] = []
    for task in split_tasks()[split]:
        items = [*items_for(task, dataset, annotations), *near_miss_items(task, NEAR_MISSES[split])]
        unique = list({i.text: i for i in reversed(items)}.values())[::-1]
        blocking = [i for i in unique if i.blocking][:limit]
        harmless = [i for i in unique if not i.blocking][:limit]
        for pair in zip_longest(blocking, harmless):
            chosen += [i for i in pair if i is not None]
    return chosen


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--limit", type=int, default=None, help="items per task (default all)")
    parser.add_argument("--method", default="grounded")
    parser.add_argument("--no-node", action="store_true", help="time `cowp run` only")
    parser.add_argument("--json", type=Path, help="write every item's time here")
    parser.add_argument("--llm-url", default=None, help="a running server (default: embedded)")
    parser.add_argument("--llm-model", default=None)
    parser.add_argument("--smoke", action="store_true", help=f"two items; {SMOKE_HELP}")
    parser.add_argument(
        "--first-step",
        action="store_true",
        help="every scenario's situations at the first step, right after the plan: the "
        "node with decisions first and in arrival order, and cowp run (see above)",
    )
    parser.add_argument("--scenarios", nargs="*", help="--first-step: these scenarios only")
    args = parser.parse_args(argv)
    # A domain of its own: another program's commonsense node on this machine (a test, a
    # demo) would otherwise answer the bench's requests too, and the first answer wins.
    os.environ["ROS_DOMAIN_ID"] = os.environ.get(
        "COWP_BENCH_ROS_DOMAIN_ID", str(random.SystemRandom().randint(1, 100))
    )
    if args.first_step:
        return first_step_main(args)
    items = bench_items(args.split, 1 if args.smoke else args.limit)[: 2 if args.smoke else None]
    with contextlib.ExitStack() as stack:
        url, model = args.llm_url, args.llm_model
        if args.smoke:
            url, model = stack.enter_context(sensible_model_server()), "scripted"
        elif url is None:
            from cowp_ros.llm.endpoint import llm_endpoint
            from cowp_ros.llm.settings import LLMSettings

            settings = stack.enter_context(llm_endpoint(LLMSettings()))
            url, model = settings.base_url, settings.model
        speed = prompt_speed(url, model or "", get_task(items[0].task).description)
        print(f"prompt speed (tokens/s): {speed or 'not reported by the server'}", file=sys.stderr)
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        timed: list[Timed] = []
        for item in items:
            one = time_cowp_run(item, url, model or "", args.method, folder)
            ahead = f"  ({one.ahead} q ahead, {one.ahead_seconds:.2f} s)" if one.ahead else ""
            print(
                f"run   {one.seconds:5.2f} s  {one.questions} q  {item.text}{ahead}",
                file=sys.stderr,
            )
            timed.append(one)
        if not args.no_node:
            timed += time_node(items, url, model or "", args.method, folder / "logs")
    sources = dict.fromkeys(t.source for t in timed)
    summaries = [summarise(source, [t for t in timed if t.source == source]) for source in sources]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(json.dumps({"split": args.split, "model": model, "load": load, "prompt_speed": speed,
                      "sources": [asdict(s) for s in summaries]}, indent=1))  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps([asdict(t) for t in timed], indent=1))
    return 1 if any(s.errors for s in summaries) else 0


# ---- --first-step: a situation right after the plan --------------------------------

FIRST = "graph, decisions first"
ARRIVAL = "graph, arrival order"
RUN = "cowp run"


@dataclass
class FirstStep:
    """One situation raised at the first step, as a source decided it."""

    scenario: str
    text: str
    source: str  # FIRST | ARRIVAL | RUN
    expected_blocks: bool | None = None  # the scenario file's `blocks:`
    blocks: bool = False
    questions: int = 0
    seconds: float = 0.0  # saw -> decision, wall time
    ahead: int = 0  # questions asked ahead of the situation
    ahead_seconds: float = 0.0  # graph: plan sent -> its answer; cowp run: plan -> step 1
    error: str = ""


def first_step_items(names: Sequence[str] | None) -> list[tuple[Any, Any]]:
    """(scenario, event) for every event of every scenario (or of `names`)."""
    from cowp_ros.sim.scenario import available_scenarios, load_scenario

    chosen = []
    for name in names or available_scenarios():
        scenario = load_scenario(name)
        chosen += [(scenario, event) for event in scenario.events]
    return chosen


def time_first_step_graph(
    items: Sequence[tuple[Any, Any]], url: str, model: str, method: str, folder: Path
) -> list[FirstStep]:
    """Each item twice (decisions first, arrival order), each time on a fresh node: the
    plan sent without waiting, the situation at once, timed by the client."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.node import Node

    from cowp_interfaces.srv import CheckPlan
    from cowp_ros.planning import make_planner
    from cowp_ros.ros.conversions import steps_to_msgs
    from cowp_ros.ros.names import CHECK_PLAN_SERVICE

    timed: list[FirstStep] = []
    context = rclpy.Context()
    rclpy.init(context=context)
    node = Node("bench_first_step", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    plans: dict[str, list[Any]] = {}
    try:
        client = node.create_client(CheckPlan, CHECK_PLAN_SERVICE)
        for index, (scenario, event) in enumerate(items):
            if scenario.task not in plans:
                plan = make_planner("pyperplan").solve(get_task(scenario.task).load(), 60)
                plans[scenario.task] = list(plan.steps)
            steps = steps_to_msgs(plans[scenario.task])
            orders = (True, False) if index % 2 == 0 else (False, True)
            for first in orders:
                one = FirstStep(
                    scenario.name, event.situation, FIRST if first else ARRIVAL, event.blocks
                )
                logs = folder / f"logs_{index}_{int(first)}"
                with commonsense_node(url, model, method, logs, decisions_first=first):
                    if not client.wait_for_service(timeout_sec=120.0):
                        raise SystemExit("the commonsense node's CheckPlan service never came up")
                    # As in a run: the node has read its prefix before the task comes.
                    _call(executor, client, ready_request(scenario.task))
                    plan_request = CheckPlan.Request(task=scenario.task, steps=steps)
                    situation = CheckPlan.Request(
                        task=scenario.task,
                        steps=steps,
                        situation=event.situation,
                        situation_object=event.about,
                    )
                    sent = time.monotonic()
                    ahead = client.call_async(plan_request)
                    started = time.monotonic()
                    response = _call(executor, client, situation)
                    one.seconds = time.monotonic() - started
                    deadline = time.monotonic() + 300.0
                    while not ahead.done() and time.monotonic() < deadline:
                        executor.spin_once(timeout_sec=0.05)
                    one.ahead_seconds = time.monotonic() - sent
                    answered = ahead.result() if ahead.done() else None
                    if answered is None or not answered.success:
                        why = answered.message if answered is not None else "no answer"
                        print(f"the plan's questions asked ahead: {why}", file=sys.stderr)
                    else:
                        one.ahead = len(answered.questions)
                if response is None or not response.success:
                    one.error = "no answer" if response is None else response.message
                else:
                    one.blocks = not response.feasible
                    one.questions = len(response.questions)
                timed.append(one)
                print(
                    f"{one.source:24} {one.seconds:6.2f} s  {one.questions} q  "
                    f"(ahead {one.ahead} q, {one.ahead_seconds:.1f} s)  {scenario.name}: "
                    f"{event.situation}",
                    file=sys.stderr,
                )
    finally:
        executor.shutdown()
        node.destroy_node()
        rclpy.shutdown(context=context)
    return timed


def time_first_step_run(scenario: Any, event: Any, url: str, model: str, method: str,
                        folder: Path) -> FirstStep:  # fmt: skip
    """`cowp run` with the situation before step 1: saw -> decision from its report."""
    one = FirstStep(scenario.name, event.situation, RUN, event.blocks)
    report = folder / f"{abs(hash((scenario.name, event.situation)))}.json"
    done = subprocess.run(
        [*COWP, "run", scenario.task, "--situation", event.situation, "--at", "1",
         "--method", method, "--no-cache", "--quiet", "--report", str(report),
         "--llm-url", url, "--llm-model", model],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    if not report.is_file():
        one.error = (done.stderr or done.stdout).strip()[-300:] or "no report"
        return one
    record = json.loads(report.read_text())
    one.blocks, one.questions, _ = decision_of(record, event.situation)
    one.ahead, _ = asked_ahead(record)
    one.seconds, one.ahead_seconds = first_step_times(record)
    return one


def first_step_times(report: dict[str, Any]) -> tuple[float, float]:
    """(saw -> decision, plan -> the situation) in a `cowp run` report, from its events'
    times: the decision ends at the first event after the situation that is not one of
    its questions."""
    events = report.get("events", [])
    saw = next((i for i, e in enumerate(events) if e["kind"] == "situation"), None)
    if saw is None:
        return 0.0, 0.0
    after = next((e for e in events[saw + 1 :] if e["kind"] != "monitor"), events[-1])
    planned = next((e for e in events if e["kind"] == "plan"), events[0])
    seen = float(events[saw]["at_s"])
    return float(after["at_s"]) - seen, seen - float(planned["at_s"])


def first_step_summary(source: str, timed: Sequence[FirstStep]) -> dict[str, Any]:
    done = [t for t in timed if not t.error]
    return {
        "source": source,
        "items": len(timed),
        "errors": len(timed) - len(done),
        "harmless": spread([t.seconds for t in done if not t.blocks], TARGETS["harmless"]),
        "blocking": spread([t.seconds for t in done if t.blocks], TARGETS["blocking"]),
        "asked_ahead_seconds_p50": round(percentile([t.ahead_seconds for t in done], 50), 2)
        if done
        else None,
    }


def first_step_main(args: argparse.Namespace) -> int:
    items = first_step_items(args.scenarios)[: 2 if args.smoke else None]
    with contextlib.ExitStack() as stack:
        url, model = args.llm_url, args.llm_model
        if args.smoke:
            url, model = stack.enter_context(sensible_model_server()), "scripted"
        elif url is None:
            from cowp_ros.llm.endpoint import llm_endpoint
            from cowp_ros.llm.settings import LLMSettings

            settings = stack.enter_context(llm_endpoint(LLMSettings()))
            url, model = settings.base_url, settings.model
        speed = prompt_speed(url, model or "", get_task(items[0][0].task).description)
        print(f"prompt speed (tokens/s): {speed or 'not reported by the server'}", file=sys.stderr)
        folder = Path(stack.enter_context(tempfile.TemporaryDirectory()))
        os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
        load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        timed: list[FirstStep] = []
        if not args.no_node:
            timed += time_first_step_graph(items, url, model or "", args.method, folder)
        for scenario, event in items:
            one = time_first_step_run(scenario, event, url, model or "", args.method, folder)
            print(
                f"{one.source:24} {one.seconds:6.2f} s  {one.questions} q  "
                f"(ahead {one.ahead} q, {one.ahead_seconds:.1f} s before step 1)  "
                f"{scenario.name}: {event.situation}",
                file=sys.stderr,
            )
            timed.append(one)
    sources = dict.fromkeys(t.source for t in timed)
    summaries = [first_step_summary(s, [t for t in timed if t.source == s]) for s in sources]
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    print(json.dumps({"mode": "first step", "model": model, "load_before": load_before,
                      "load_after": load, "prompt_speed": speed,
                      "sources": summaries}, indent=1))  # fmt: skip
    if args.json:
        args.json.write_text(json.dumps([asdict(t) for t in timed], indent=1))
    return 1 if any(s["errors"] for s in summaries) else 0


if __name__ == "__main__":
    sys.exit(main())
