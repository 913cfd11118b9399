"""Questions about the plan's steps, tried beside the grounded monitor's own.

    .venv/bin/python benchmarks/bench_step_questions.py --split dev --json steps.json
    .venv/bin/python benchmarks/bench_step_questions.py --smoke   # CI

The grounded monitor asks about the object ("Can the robot still use the vacuum for the
task?") or, for a situation about no object present, about the task. Two kinds of
situation it gets wrong are about steps: a state the next step puts right ("the vacuum
is switched off" before the robot turns it on, "the robot drops the vacuum" before it
grasps it: harmless, but the use question blocks), and a situation about the world that
stops one step ("there is a power outage": the task question lets it through). This
script asks, on the items of `bench_grounded_thresholds.py` (the same labels), what a
question about the steps would add:

- per object item: for each remaining step that uses the object, "Task: <task>.
  <Situation>. Can the robot still <step>?" (`step_use`, the highest block score of the
  steps), and about the next step only: "Will the robot's next step, to <step>, put that
  right?" (`next_fixes`), "Is that only because the robot has not yet done this:
  <step>?" (`not_yet`), "The robot will now <step>. Is anything still wrong after that?"
  (`wrong_after`);
- per world item: `step_use` over every remaining step but those that only let go;
- with `--narrow`, per object item: narrow questions about one function of the object
  each, in the same task-first form after the same examples ("Is the cup broken or
  damaged?", "Is the cup missing?", "Is the cup occupied?", "Does the cup still work?",
  "Can the robot get to the cup?", "Is the cup spoiled?"): the use question decomposed,
  to see whether the model names the function a situation takes away more reliably than
  it answers the use question;
- with `--pending`, per object item: what the domain says the remaining steps will
  bring about on the object and is not yet so (each such effect in words, "the vacuum
  is not switched on", from `PENDING_WORDS`): whether the situation only restates one
  of them (a state the plan's own steps put right), by the sentence similarity of the
  situation to the nearest one (`pending_sim`, all-MiniLM-L6-v2, no model question;
  its block score is minus the similarity) and by asking the model, after examples
  outside the benchmark, whether the situation tells the robot anything beyond that
  nearest one (`pending_news`);
- with `--anchors`, per object item: the use question's score rescaled per task and
  role between two generic remarks, asked once per role as they could be when the plan
  is made: what says nothing ("the robot looks around", "nothing has changed") as 0 and
  what takes the object away ("<object> has been smashed to pieces", "<object> is gone")
  as 1 (`anchored`, from the use question's score `first`), so that a task whose
  questions all lean one way is read on its own scale.

Every score is the log-odds of the answer that blocks. It prints the AUC of each score
against the labels, over all items of the kind and, for the object items, among those
the use question blocks at the configured threshold: a second question helps only if it
tells those apart. Choosing among these is for the dev split only.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench_grounded_thresholds import Item, closed_world_plan, split_items

from cowp_ros.chaos.answers import SMOKE_HELP, answer_smoke_runs
from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
from cowp_ros.cowp.situation import Situation
from cowp_ros.cowp.wording import sentence
from cowp_ros.llm.embeddings import Embedder, default_embedder, nearest
from cowp_ros.llm.endpoint import open_model
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.methods.dkprompt.questions import render_object, step_literals
from cowp_ros.methods.grounded.grounding import ground, plan_objects
from cowp_ros.methods.grounded.questions import EXAMPLES, task_clause, told, use_question
from cowp_ros.methods.grounded.settings import GroundedSettings
from cowp_ros.methods.grounded.situation_monitor import (
    GroundedMonitor,
    Thresholds,
    is_release,
    uses,
)
from cowp_ros.methods.paper.calibration.scoring import logit
from cowp_ros.methods.paper.calibration.thresholds import auc
from cowp_ros.pddl.edits import apply_action, base_action_name
from cowp_ros.pddl.model import PlanningTask
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases, noun

Form = Callable[[str, str, str], str]

NEXT_STEP_FORMS: dict[str, tuple[Form, bool]] = {
    "next_fixes": (
        lambda t, s, p: (
            f"{task_clause(t)} {told(s)}. Will the robot's next step, to {p}, put that right?"
        ),
        False,
    ),
    "not_yet": (
        lambda t, s, p: (
            f"{task_clause(t)} {told(s)}. "
            f"Is that only because the robot has not yet done this: {p}?"
        ),
        False,
    ),
    "wrong_after": (
        lambda t, s, p: (
            f"{task_clause(t)} {told(s)}. "
            f"The robot will now {p}. Is anything still wrong after that?"
        ),
        True,
    ),
}
"""Questions about the next step: (form, whether "yes" is the answer that blocks)."""

NARROW_FORMS: dict[str, tuple[str, bool]] = {
    "broken": ("Is {o} broken or damaged?", True),
    "missing": ("Is {o} missing?", True),
    "occupied": ("Is {o} occupied?", True),
    "works": ("Does {o} still work?", False),
    "reach": ("Can the robot get to {o}?", False),
    "spoiled": ("Is {o} spoiled?", True),
}
"""One function of the object each (`--narrow`): (form, whether "yes" blocks)."""

PENDING_WORDS: dict[str, str] = {
    "found": "{0} has not been found yet",
    "holding": "the robot is not holding {0}",
    "plugged": "{0} is not plugged in",
    "switched_on": "{0} is not switched on",
    "water_running": "no water is running from {0}",
    "filled_with_water": "{0} is not filled with water",
    "water_served": "no cup of water stands on {0}",
    "cleaned": "{0} is not clean yet",
    "opened": "{0} is not open",
    "plate_set": "no plate is on {0}",
    "fork_set": "no fork is on {0}",
}
"""A not-yet-true effect of the dev domains' predicates, in words (`--pending`); an
effect of a predicate not listed is left out."""


def _news_question(known: str, told_now: str) -> str:
    return (
        f"The robot knew: {known}. Now it is told: {told_now}. "
        "Does that tell the robot anything it did not know?"
    )


NEWS_EXAMPLES: tuple[Example, ...] = (
    Example(_news_question("the kettle is not switched on", "the kettle is switched off"), "No"),
    Example(
        _news_question("the kettle is not switched on", "the kettle's switch has snapped off"),
        "Yes",
    ),
    Example(_news_question("the drawer is not open", "the drawer is shut"), "No"),
    Example(_news_question("the drawer is not open", "the drawer is stuck"), "Yes"),
    Example(
        _news_question(
            "the robot is not holding the towel", "the towel slipped out of the robot's gripper"
        ),
        "No",
    ),
    Example(
        _news_question("the robot is not holding the towel", "the towel is torn in two"), "Yes"
    ),
)
"""`pending_news`: the same known state once restated and once with a lasting problem."""


ANCHORS_NOTHING = ("the robot looks around", "nothing has changed")
ANCHORS_LOST = ("{o} has been smashed to pieces", "{o} is gone")
Span = dict[tuple[str, str], tuple[float, float]]
"""`--anchors`: remarks that say nothing, and remarks that take the object away."""

MIN_SPAN = 0.3
"""The smallest anchor span divided by, so that a role whose anchors barely differ
does not blow its scores up."""


def anchor_span(
    model: LanguageModel,
    task: str,
    object_noun: str,
    kept: Span,
) -> tuple[float, float]:
    """The use question's mean score after the remarks that say nothing and after those
    that take the object away, asked once per (task, role)."""
    if (task, object_noun) not in kept:
        nothing = [
            blocks(model, use_question(object_noun, task, r), False) for r in ANCHORS_NOTHING
        ]
        lost = [
            blocks(model, use_question(object_noun, task, r.format(o=object_noun)), False)
            for r in ANCHORS_LOST
        ]
        kept[task, object_noun] = (sum(nothing) / len(nothing), sum(lost) / len(lost))
    return kept[task, object_noun]


def pending_effects(
    problem: PlanningTask, done: Sequence[PlanStep], rest: Sequence[PlanStep], about: str
) -> list[str]:
    """The effects on `about` that the remaining steps bring about and that do not hold
    after the steps done, each in words ("the vacuum is not switched on")."""
    state = problem
    for step in done:
        state = apply_action(state, step.action, step.args)
    holds = set(state.init_atoms)
    said: list[str] = []
    for step in rest:
        for literal in step_literals(problem, step, "post"):
            words = PENDING_WORDS.get(literal.atom.predicate)
            if not literal.positive or about not in literal.atom.args or words is None:
                continue
            if literal.atom in holds:
                continue
            text = words.format(*(render_object(a, problem) for a in literal.atom.args))
            if text not in said:
                said.append(text)
    return said


def step_use_question(task: str, situation: str, step: str) -> str:
    return f"{task_clause(task)} {told(situation)}. Can the robot still {step}?"


def blocks(
    model: LanguageModel,
    question: str,
    yes_blocks: bool,
    examples: Sequence[Example] = EXAMPLES,
) -> float:
    """The log-odds of the answer that blocks (0.0 when the server gives no P(yes))."""
    answer = model.ask_yes_no(question, examples=examples)
    if answer.p_yes is None:
        return 0.0
    return logit(answer.p_yes) if yes_blocks else -logit(answer.p_yes)


@dataclass
class Scored:
    """One item and its scores (`first`: the use question, or the task question)."""

    task: str
    text: str
    step: str
    blocking: bool
    kind: str  # object | world
    scores: dict[str, float] = field(default_factory=dict)


def score(
    item: Item,
    model: LanguageModel,
    narrow: bool = False,
    embedder: Embedder | None = None,
    anchors: Span | None = None,
) -> Scored | None:
    """Every form's score for one item (None for an item about an object no remaining
    step uses: grounding alone decides it, no question)."""
    spec = get_task(item.task)
    problem, plan = closed_world_plan(item.task)
    steps = list(plan)
    at = [base_action_name(s.action) for s in steps].index(item.action)
    rest = steps[at:]
    usable = [o for o in plan_objects(rest) if any(uses(problem, s, o) for s in rest)]
    situation = Situation(item.text)
    grounding = ground(situation, problem, usable)
    if grounding.subject is not None and not grounding.in_plan:
        return None
    everything = Thresholds(use=99.0, world=99.0, dirty=99.0, need=99.0)
    decision, _ = GroundedMonitor(model, spec.description, everything).decide(
        situation, grounding, problem
    )
    phrases = ActionPhrases(spec.phrases)
    about = grounding.subject
    asked = [
        phrases.describe(s, problem)
        for s in rest
        if (uses(problem, s, about) if about is not None else not is_release(problem, s.action))
    ]
    scored = Scored(
        item.task,
        item.text,
        phrases.describe(rest[0], problem),
        item.blocking,
        "object" if about is not None else "world",
    )
    scored.scores["first"] = decision.score or 0.0
    scored.scores["step_use"] = max(
        (blocks(model, step_use_question(spec.description, item.text, p), False) for p in asked),
        default=0.0,
    )
    if about is not None:
        for name, (form, yes_blocks) in NEXT_STEP_FORMS.items():
            question = form(spec.description, item.text, scored.step)
            scored.scores[name] = blocks(model, question, yes_blocks)
        if narrow:
            for name, (ending, yes_blocks) in NARROW_FORMS.items():
                question = f"{task_clause(spec.description)} {told(item.text)}. " + ending.format(
                    o=noun(grounding.kind)
                )
                scored.scores[name] = blocks(model, question, yes_blocks)
        if anchors is not None:
            # the use question's score is the monitor's own (`first`), asked above
            nothing, lost = anchor_span(model, spec.description, noun(grounding.kind), anchors)
            scored.scores["anchored"] = (scored.scores["first"] - nothing) / max(
                lost - nothing, MIN_SPAN
            )
        if embedder is not None:
            pending = pending_effects(problem, steps[:at], rest, about)
            closest = nearest(embedder, sentence(item.text), pending) if pending else None
            # no pending effect: nothing the plan puts right, so the lowest similarity
            scored.scores["pending_sim"] = -closest.similarity if closest else 0.0
            scored.scores["pending_news"] = (
                blocks(
                    model,
                    _news_question(closest.text, sentence(item.text)),
                    True,
                    examples=NEWS_EXAMPLES,
                )
                if closest
                else 9.0
            )
    return scored


def summary(scored: Sequence[Scored], use_threshold: float) -> list[str]:
    """The AUC of each score, per kind of item; for object items also among those the
    use question blocks."""
    lines = []
    for kind, first in (("object", "use question"), ("world", "task question")):
        group = [s for s in scored if s.kind == kind]
        subsets = [("all", group)]
        if kind == "object":
            blocked = [s for s in group if s.scores["first"] >= use_threshold]
            subsets.append(("use question blocks", blocked))
        for label, subset in subsets:
            labels = [s.blocking for s in subset]
            if len(set(labels)) < 2:
                lines.append(f"{kind} items, {label}: {len(subset)} (one label only: no AUC)")
                continue
            aucs = ", ".join(
                f"{first if name == 'first' else name} "
                f"{auc([s.scores[name] for s in subset], labels):.3f}"
                for name in subset[0].scores
            )
            lines.append(
                f"{kind} items, {label}: {len(subset)} ({sum(labels)} blocking); AUC {aucs}"
            )
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--dataset", default=str(default_dataset_dir()))
    parser.add_argument("--json", type=Path, help="write every item's scores here")
    parser.add_argument(
        "--narrow", action="store_true", help="also the narrow questions, one per function"
    )
    parser.add_argument(
        "--pending",
        action="store_true",
        help="also whether the situation restates an effect the remaining steps bring about",
    )
    parser.add_argument(
        "--anchors",
        action="store_true",
        help="also the use score rescaled per role between remarks that say nothing and "
        "remarks that take the object away",
    )
    parser.add_argument("--smoke", action="store_true", help=f"six items of one task; {SMOKE_HELP}")
    add_llm_arguments(parser)
    args = parser.parse_args(argv)
    _, items = split_items(args.split, args.dataset, tasks=1 if args.smoke else None)
    with contextlib.ExitStack() as stack:
        if args.smoke:
            items = items[:6]
            answer_smoke_runs(args, stack)
        embedder = default_embedder() if args.pending else None
        anchors: Span | None = {} if args.anchors else None
        with open_model(settings_from_args(args)) as model:
            use_threshold = GroundedSettings.for_model(model.name).use_threshold
            scored: list[Scored] = []
            for index, item in enumerate(items, 1):
                scores = score(
                    item,
                    model,
                    narrow=args.narrow,
                    embedder=embedder,
                    anchors=anchors,
                )
                print(f"[{index}/{len(items)}] {item.task} {item.text}", file=sys.stderr)
                if scores is not None:
                    scored.append(scores)
    for line in summary(scored, use_threshold):
        print(line)
    if args.json:
        args.json.write_text(json.dumps([dataclasses.asdict(s) for s in scored], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
