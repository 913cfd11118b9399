"""What one monitor question costs the model server, and whether one question can do two's work.

    .venv/bin/python benchmarks/bench_question_cost.py --split dev --json cost.json
    .venv/bin/python benchmarks/bench_question_cost.py --split dev --forms shipped --busy 1
    .venv/bin/python benchmarks/bench_question_cost.py --smoke   # CI

A harmless remark about a role the task needs clean (the cup, the plate) is decided by
two questions: the use question, then the dirt question. On the object items of
`bench_grounded_thresholds.py` (the same labels), after the questions' shared prefix and
the task's words are read, as a run reads them before its first situation, this asks:

- **shipped**: the use question then the dirt question, as the grounded monitor words
  them, each with the prompt tokens the server read for it (its prompt tokens less
  those its prompt cache served) and its seconds. A least-squares line over every
  question, seconds = a + b * tokens, splits a question's cost into what it costs
  whatever its length (a) and what each token it reads costs (b); the two questions
  together are what a harmless decision pays;
- **joint**: one question asking both ("... Can the robot still use the cup for the task?
  Is it dirty?") after the same examples answering both ("Yes, No"), its answers read
  from the first and the third generated token.
- **plain**: the shipped two questions after the same instructions and examples written
  as plain text ("Q: ...\nA: Yes"), sent to `/completions` with no chat template: after
  its own words a chat question reads the template's end of turn and the start of the
  answer's turn, a plain one only "\nA:".

It prints, per form, the tokens and seconds (p50 / p95) of a decision that asks both,
the AUC of the use answer against the labels (every object item) and of the dirt
answer against the labels among the items the shipped use question lets through (where
the dirt answer must do the work), and the line's a and b. Each score is the log-odds of
the answer that blocks. Choosing among forms is for the dev split only.

`--forms` asks only the forms named (the shipped one always); `--busy N` keeps N other
processes spinning on the CPU while the questions are asked, as a detector or a planner
sharing a robot's computer with the model server would: the same tokens, read slower;
`--busy-nice K` runs them at a priority lowered by K, as the bringup runs the detector.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import math
import statistics
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from bench_decision_time import percentile
from bench_grounded_thresholds import Item, closed_world_plan, split_items

from cowp_ros.bringup.spec import MAX_NICE, nice_prefix
from cowp_ros.chaos.answers import SMOKE_HELP, answer_smoke_runs
from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.client import SYSTEM_PROMPT, WARM_QUESTION
from cowp_ros.llm.completion import parse_next_tokens_reply
from cowp_ros.llm.endpoint import llm_endpoint
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.llm.language_model import Example
from cowp_ros.methods.grounded import questions
from cowp_ros.methods.grounded.grounding import ground, plan_objects
from cowp_ros.methods.grounded.settings import GroundedSettings
from cowp_ros.methods.grounded.situation_monitor import uses
from cowp_ros.methods.paper.calibration.thresholds import auc
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import noun, object_type


def joint_question(object_noun: str, task_description: str, situation: str) -> str:
    """The use question with the dirt question after it, in one message."""
    return f"{questions.use_question(object_noun, task_description, situation)} Is it dirty?"


JOINT_CASES: tuple[tuple[str, str, str, str], ...] = (
    ("storing the socks", "the drawer", "the drawer is locked", "No, No"),
    ("storing the socks", "the drawer", "the drawer is blue", "Yes, No"),
    ("boiling water for tea", "the kettle", "the kettle is leaking", "No, No"),
    ("boiling water for tea", "the kettle", "the kettle is made of steel", "Yes, No"),
    ("drying the dishes", "the towel", "a cat is sleeping on the sofa", "Yes, No"),
    ("drying the dishes", "the towel", "the towel is soaking wet", "No, No"),
    ("serving the soup", "the bowl", "the bowl has mould in it", "Yes, Yes"),
    ("serving the soup", "the bowl", "the bowl has soup in it", "Yes, No"),
    ("drying the dishes", "the towel", "the towel has mud on it", "Yes, Yes"),
    ("drying the dishes", "the towel", "the towel has a stripe on it", "Yes, No"),
    ("storing the jam", "the jar", "the jar is cracked", "No, No"),
    ("stirring the tea", "the spoon", "the spoon is sticky with old jam", "Yes, Yes"),
)
"""The shipped use and dirt examples' sentences (methods/grounded/questions.py), each
answered both ways: the use answer as the use examples give it (yes where only the dirt
examples have it: dirt does not stop the use), the dirt answer as the dirt examples
give it (no where only the use examples have it)."""

JOINT_EXAMPLES: tuple[Example, ...] = (
    *(Example(joint_question(o, t, s), a) for t, o, s, a in JOINT_CASES),
    *questions.NEED_EXAMPLES,
    *questions.TASK_EXAMPLES,
)


@dataclass
class Asked:
    """One question as the server answered it."""

    tokens: int  # prompt tokens read (not served by the prompt cache)
    seconds: float
    text: str
    use: float | None = None  # log-odds of "no" to the use question
    dirty: float | None = None  # log-odds of "yes" to the dirt question


@dataclass
class Scored:
    task: str
    text: str
    step: str
    blocking: bool
    shipped: list[Asked] = field(default_factory=list)
    joint: list[Asked] = field(default_factory=list)
    plain: list[Asked] = field(default_factory=list)


FORMS = ("shipped", "joint", "plain")


def plain_prompt(question: str, examples: Sequence[Example]) -> str:
    """The chat form's instructions, examples and question as one plain text."""
    shots = "".join(f"Q: {e.question}\nA: {e.answer}\n\n" for e in examples)
    return f"{SYSTEM_PROMPT}\n\n{shots}Q: {question}\nA:"


class Server:
    """Raw chat requests to an OpenAI-compatible server: this bench needs each
    request's token counts and more than the first token's log-probabilities."""

    def __init__(self, base_url: str, model: str, api_key: str | None) -> None:
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.plain_url = base_url.rstrip("/") + "/completions"
        self.model = model
        self.headers = {"Content-Type": "application/json"}
        if api_key:
            self.headers["Authorization"] = f"Bearer {api_key}"

    def ask(self, question: str, examples: Sequence[Example], max_tokens: int = 1) -> Asked:
        messages = [{"role": "system", "content": SYSTEM_PROMPT}]
        for example in examples:
            messages += [
                {"role": "user", "content": example.question},
                {"role": "assistant", "content": example.answer},
            ]
        messages.append({"role": "user", "content": question})
        payload = {
            "model": self.model,
            "messages": messages,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "logprobs": True,
            "top_logprobs": 20,
        }
        _, body, seconds, read = self._post(self.url, payload)
        choice = body["choices"][0]
        tokens = (choice.get("logprobs") or {}).get("content") or []
        return Asked(
            tokens=read,
            seconds=seconds,
            text=str(choice["message"].get("content") or ""),
            use=log_odds(tokens, 0, "no"),
            dirty=log_odds(tokens, 2, "yes") if max_tokens > 1 else None,
        )

    def ask_plain(self, question: str, examples: Sequence[Example]) -> Asked:
        """The same question as plain text (`plain_prompt`), one token."""
        payload = {
            "model": self.model,
            "prompt": plain_prompt(question, examples),
            "max_tokens": 1,
            "temperature": 0.0,
            "logprobs": 20,
        }
        raw, body, seconds, read = self._post(self.plain_url, payload)
        top = parse_next_tokens_reply(raw).top
        alternatives = [{"token": a.token, "logprob": a.logprob} for a in top]
        return Asked(
            tokens=read,
            seconds=seconds,
            text=str(body["choices"][0].get("text") or ""),
            use=log_odds([{"top_logprobs": alternatives}], 0, "no"),
        )

    def _post(self, url: str, payload: dict[str, Any]) -> tuple[bytes, dict[str, Any], float, int]:
        """(reply as sent, reply parsed, seconds, prompt tokens read: not served by the
        prompt cache)"""
        request = urllib.request.Request(url, json.dumps(payload).encode(), self.headers)
        started = time.monotonic()
        with urllib.request.urlopen(request, timeout=120) as response:
            raw = response.read()
        seconds = time.monotonic() - started
        body = json.loads(raw)
        usage = body.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return raw, body, seconds, int(usage.get("prompt_tokens") or 0) - int(cached)


def as_dirt(asked: Asked) -> Asked:
    """A dirt question's answer, scored as the log-odds of its blocking "yes"."""
    dirty = None if asked.use is None else -asked.use
    return dataclasses.replace(asked, use=None, dirty=dirty)


def log_odds(tokens: Sequence[dict[str, Any]], position: int, blocking: str) -> float | None:
    """log P(blocking answer) - log P(the other) at one generated token (None when the
    server gave no such token or neither answer among its alternatives)."""
    if len(tokens) <= position:
        return None
    p = {"yes": 0.0, "no": 0.0}
    for alternative in tokens[position].get("top_logprobs") or []:
        word = str(alternative.get("token", "")).strip().lower()
        if word in p:
            p[word] += math.exp(float(alternative["logprob"]))
    other = "no" if blocking == "yes" else "yes"
    if p[blocking] + p[other] == 0.0:
        return None
    return math.log(max(p[blocking], 1e-9)) - math.log(max(p[other], 1e-9))


def object_noun_of(item: Item) -> str | None:
    """The plan object the item's sentence is about, as questions name it (None for a
    sentence about the world or about an object no remaining step uses)."""
    problem, plan = closed_world_plan(item.task)
    steps = list(plan)
    rest = steps[[base_action_name(s.action) for s in steps].index(item.action) :]
    usable = [o for o in plan_objects(rest) if any(uses(problem, s, o) for s in rest)]
    grounding = ground(Situation(item.text), problem, usable)
    if grounding.subject is None or not grounding.in_plan:
        return None
    return noun(object_type(grounding.subject, problem))


def score(server: Server, items: Sequence[tuple[Item, str]], form: str) -> list[Scored]:
    """Each item's questions in one form, the task's words read before a task's first item."""
    examples = JOINT_EXAMPLES if form == "joint" else questions.EXAMPLES
    ask = server.ask_plain if form == "plain" else server.ask
    scored, warmed = [], ""
    for index, (item, object_noun) in enumerate(items, 1):
        description = get_task(item.task).description
        if description != warmed:
            ask(f"{questions.task_clause(description)} {WARM_QUESTION}", examples)
            warmed = description
        one = Scored(item.task, item.text, item.action, item.blocking)
        if form == "joint":
            one.joint.append(
                server.ask(joint_question(object_noun, description, item.text), examples, 3)
            )
        else:
            asked = getattr(one, form)
            asked.append(ask(questions.use_question(object_noun, description, item.text), examples))
            dirt = ask(questions.state_question(object_noun, description, item.text), examples)
            asked.append(as_dirt(dirt))
        print(f"[{index}/{len(items)}] {form} {item.text}", file=sys.stderr)
        scored.append(one)
    return scored


def line_fit(points: Sequence[tuple[int, float]]) -> tuple[float, float] | None:
    """(a, b) of seconds = a + b * tokens by least squares (None without two lengths)."""
    if len({t for t, _ in points}) < 2:
        return None
    mean_t = statistics.fmean(t for t, _ in points)
    mean_s = statistics.fmean(s for _, s in points)
    b = sum((t - mean_t) * (s - mean_s) for t, s in points) / sum(
        (t - mean_t) ** 2 for t, _ in points
    )
    return mean_s - b * mean_t, b


def area(scores: Sequence[float | None], labels: Sequence[bool]) -> str:
    pairs = [(s, b) for s, b in zip(scores, labels, strict=True) if s is not None]
    if len({b for _, b in pairs}) < 2:
        return "-"
    return f"{auc([s for s, _ in pairs], [b for _, b in pairs]):.3f}"


def summary(scored: Sequence[Scored], use_threshold: float) -> dict[str, Any]:
    """Per form: the decision's tokens and seconds, the AUCs, and the cost line."""
    result: dict[str, Any] = {"items": len(scored)}
    let_through = [s for s in scored if s.shipped and (s.shipped[0].use or 0.0) < use_threshold]
    for form in FORMS:
        asked = [getattr(s, form) for s in scored if getattr(s, form)]
        if not asked:
            continue
        tokens = [sum(a.tokens for a in questions_of) for questions_of in asked]
        seconds = [sum(a.seconds for a in questions_of) for questions_of in asked]
        fit = line_fit([(a.tokens, a.seconds) for questions_of in asked for a in questions_of])
        dirt_items = [getattr(s, form) for s in let_through if getattr(s, form)]
        result[form] = {
            "questions": len(asked[0]),
            "tokens_p50": percentile(tokens, 50),
            "tokens_p95": percentile(tokens, 95),
            "seconds_p50": round(percentile(seconds, 50), 3),
            "seconds_p95": round(percentile(seconds, 95), 3),
            "auc_use": area(
                [q[0].use for q in asked], [s.blocking for s in scored if getattr(s, form)]
            ),
            "auc_dirt_let_through": area(
                [q[-1].dirty for q in dirt_items],
                [s.blocking for s in let_through if getattr(s, form)],
            ),
            "seconds_per_question": None if fit is None else round(fit[0], 3),
            "seconds_per_token": None if fit is None else round(fit[1], 4),
        }
    return result


@contextlib.contextmanager
def busy_cores(count: int, nice: int = 0) -> Iterator[None]:
    """`count` processes spinning on the CPU until the block ends (a stand-in for the
    other work of a robot's computer: a detector on the camera's frames, a planner),
    their priority lowered by `nice` (0: the usual one)."""
    spinners = [
        subprocess.Popen([*nice_prefix(nice), sys.executable, "-c", "while True: pass"])
        for _ in range(count)
    ]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--dataset", default=str(default_dataset_dir()))
    parser.add_argument(
        "--json", type=Path, help="write every item's questions and the summary here"
    )
    parser.add_argument(
        "--forms",
        default=",".join(FORMS),
        help=f"comma-separated forms to ask, of {', '.join(FORMS)} (default all)",
    )
    parser.add_argument(
        "--busy",
        type=int,
        default=0,
        help="processes that keep a core busy while the questions are asked (default 0): "
        "the model's time when other work shares its machine, as perception does on a robot",
    )
    parser.add_argument(
        "--busy-nice",
        type=int,
        default=0,
        help="the busy processes' CPU priority, lowered by this much (0..19, as `nice -n`; "
        "default 0), as the bringup runs the situation detector",
    )
    parser.add_argument("--smoke", action="store_true", help=f"six items of one task; {SMOKE_HELP}")
    add_llm_arguments(parser)
    args = parser.parse_args(argv)
    forms = [f for f in args.forms.split(",") if f]
    if not forms or any(f not in FORMS for f in forms) or "shipped" not in forms:
        parser.error(f"--forms takes shipped and any of {', '.join(FORMS[1:])}, not {args.forms!r}")
    if args.busy < 0:
        parser.error("--busy takes a count of processes, 0 or more")
    if not 0 <= args.busy_nice <= MAX_NICE:
        parser.error(f"--busy-nice takes 0 to {MAX_NICE}, not {args.busy_nice}")
    _, items = split_items(args.split, args.dataset, tasks=1 if args.smoke else None)
    about = [(item, noun_) for item in items if (noun_ := object_noun_of(item)) is not None]
    with contextlib.ExitStack() as stack:
        if args.smoke:
            about = about[:6]
            answer_smoke_runs(args, stack)
        settings = stack.enter_context(llm_endpoint(settings_from_args(args)))
        server = Server(str(settings.base_url), settings.model or "default", settings.api_key)
        stack.enter_context(busy_cores(args.busy, args.busy_nice))
        by_form = {form: score(server, about, form) for form in forms}
    shipped = by_form["shipped"]
    for form, scored in by_form.items():
        for one, other in zip(shipped, scored, strict=True):
            setattr(one, form, getattr(other, form))
    use_threshold = GroundedSettings.for_model(settings.model or "default").use_threshold
    result = {
        "split": args.split,
        "busy": args.busy,
        "busy_nice": args.busy_nice,
        **summary(shipped, use_threshold),
    }
    for one in shipped:
        cells = " ".join(
            f"{a.tokens:3d} t {a.seconds:5.2f} s {a.text!r:10}"
            for a in [*one.shipped, *one.joint, *one.plain]
        )
        print(f"{one.task:10} {'BLOCK' if one.blocking else 'fine '} {cells}  {one.text}")
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(
            json.dumps({"summary": result, "items": [asdict(s) for s in shipped]}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
