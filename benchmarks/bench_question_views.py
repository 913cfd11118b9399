"""Which way of asking holds under rewording? Every view of an object's questions, scored.

    .venv/bin/python benchmarks/bench_question_views.py --split dev --json views_dev.json
    .venv/bin/python benchmarks/bench_question_views.py --prefix restated --json views_restated.json
    .venv/bin/python benchmarks/bench_question_views.py --from-json views_dev.json  # no model
    .venv/bin/python benchmarks/bench_question_views.py --smoke   # CI

`bench_paraphrases.py` measures the method as it is configured: one way of asking, its
thresholds. This script measures the ways of asking the method could take, on the same
paraphrase items (`benchmarks/paraphrases/<split>.yaml`) and on every scenario's
situations at its first step (`config/scenarios`: the demo must still block), so that
a way is chosen before thresholds are tuned for it. For each sentence grounded to an
object a remaining step uses, it asks, after one prefix of examples (`--prefix`):

- `use`: the use question on the sentence, as the method asks it;
- `use_step`: the same question worded with the plan's own step, the fullest one left
  that uses the object ("Can the robot still fill the cup with water from the faucet?");
- `use_restated`: the use question on the sentence and the model's restatement of it
  ("the cup has not been washed since breakfast: the cup is dirty");
- `dirty`, `dirty_restated`: the dirt question on the sentence, and on the restatement;

and what each role needs (the monitor's questions asked ahead). Each way of deciding
(`WAYS`: which use view, which dirt view) is then read off the scores, without the
model, at the thresholds that decide the most items of the split right (an upper bound
for the way, read off the items it is scored on: not a tuned method, and never read off
the test split to choose one), and the method's own way also at the configured
thresholds. Printed per way: the flip rate against the canonical sentence, the accuracy
on the rewordings and on their canonical sentences, and how many scenario situations
are decided as their file says.

Prefixes: `shipped` (the method's examples), `restated` (with the restatement's
examples after them, as a restating monitor reads), `forms` (the method's examples and
`FORM_EXAMPLES`: each form a spoiling hides in, shown both ways).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shlex
import sys
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from bench_decision_time import first_step_items
from bench_grounded_thresholds import NEAR_MISSES, closed_world_plan
from bench_paraphrases import CANONICAL, PARAPHRASES, commit, items_of, share

from cowp_ros.bench.dataset import SituationDataset
from cowp_ros.bench.paraphrases import CanonicalSources, load_paraphrases, read_near_misses
from cowp_ros.chaos.answers import SMOKE_HELP, answer_smoke_runs
from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
from cowp_ros.cowp.situation import Situation
from cowp_ros.errors import CowpError
from cowp_ros.llm.endpoint import open_model
from cowp_ros.llm.evaluation import default_dataset_dir
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.methods.grounded import questions
from cowp_ros.methods.grounded.grounding import ground
from cowp_ros.methods.grounded.questions import state_example, use_example
from cowp_ros.methods.grounded.settings import GroundedSettings
from cowp_ros.methods.grounded.situation_monitor import (
    STATE,
    USE,
    GroundedMonitor,
    Thresholds,
    needed_clean,
    uses,
)
from cowp_ros.methods.paper.calibration.situations import load_benign_situations
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases, noun

SCENARIO = "scenario"


FORM_EXAMPLES: tuple[Example, ...] = (
    use_example("storing the socks", "the drawer", "nobody can pull the drawer open", "No"),
    use_example(
        "boiling water for tea", "the kettle", "the power to the kitchen has been cut", "No"
    ),
    use_example("boiling water for tea", "the kettle", "the lights in the hallway are off", "Yes"),
    use_example("serving the soup", "the bowl", "the bowl holds three spoons and a lid", "No"),
    use_example("serving the soup", "the bowl", "the bowl has a small sticker on its base", "Yes"),
    use_example(
        "boiling water for tea",
        "the kettle",
        "the kettle stays cold however long it is switched on",
        "No",
    ),
    use_example(
        "boiling water for tea", "the kettle", "the lid of the kettle has a tiny scratch", "Yes"
    ),
    use_example(
        "storing the socks",
        "the drawer",
        "the drawer is stuffed with old papers, batteries and tape",
        "No",
    ),
    state_example("serving the soup", "the bowl", "nobody has rinsed the bowl since lunch", "Yes"),
    state_example("serving the soup", "the bowl", "the bowl was washed this morning", "No"),
    state_example(
        "drying the dishes", "the towel", "the towel was put back without being washed", "Yes"
    ),
    state_example("storing the jam", "the jar", "the jar has a faint scratch on its lid", "No"),
)
"""The `forms` prefix's examples beyond the method's: a failed action, a function that
fails, a cause elsewhere and a list of contents, beside remarks of those forms that
change nothing; dirt said as a washing that did not happen, and a mark that is not dirt."""


def forms_prefix() -> tuple[Example, ...]:
    """The method's examples with `FORM_EXAMPLES` among them, each beside its kind."""
    form_use = tuple(e for e in FORM_EXAMPLES if e.question.endswith("for the task?"))
    form_state = tuple(e for e in FORM_EXAMPLES if e not in form_use)
    return (
        *questions.USE_EXAMPLES,
        *form_use,
        *questions.STATE_EXAMPLES,
        *form_state,
        *questions.NEED_EXAMPLES,
        *questions.TASK_EXAMPLES,
    )


PREFIXES: dict[str, Callable[[], tuple[Example, ...]]] = {
    "shipped": lambda: questions.EXAMPLES,
    "restated": lambda: questions.RESTATED_EXAMPLES,
    "forms": forms_prefix,
}


@dataclass
class Viewed:
    """One sentence and every view's score (log-odds of the answer that blocks)."""

    task: str
    group: int
    kind: str  # "canonical", a kind of rewording, or "scenario"
    text: str
    step: str
    label: bool | None  # True: it blocks (None: a scenario that does not say)
    subject: str | None = None
    restated: str = ""
    scores: dict[str, float] = field(default_factory=dict)
    needed_clean: bool = False  # the role is open to dirt (task words and need say so)


@dataclass(frozen=True)
class Way:
    """A way of deciding: which use view, which dirt view (the mean of two where two)."""

    name: str
    use: tuple[str, ...]
    dirt: tuple[str, ...]
    combine: str = "mean"  # how two use views combine: "mean" | "max"

    def use_score(self, item: Viewed) -> float:
        values = [item.scores[v] for v in self.use]
        return max(values) if self.combine == "max" else float(np.mean(values))

    def dirt_score(self, item: Viewed) -> float:
        return float(np.mean([item.scores[v] for v in self.dirt]))


WAYS = (
    Way("as the method asks", ("use",), ("dirty",)),
    Way("step words too, either blocks", ("use", "use_step"), ("dirty",), combine="max"),
    Way("the restatement", ("use_restated",), ("dirty_restated",)),
    Way("sentence and restatement, mean", ("use", "use_restated"), ("dirty", "dirty_restated")),
)


def fullest_step(steps: Sequence[PlanStep], task: PlanningTask, obj: str) -> PlanStep:
    """The remaining step that uses `obj` with the most arguments (the first of those):
    "fill the cup with water from the faucet" says more of the cup's role than "hold the
    cup"."""
    using = [s for s in steps if uses(task, s, obj)]
    return max(using, key=lambda s: len(s.args))


class Asker:
    """The model's answers to every view, after one prefix, one monitor per task (its
    questions asked ahead give each role's clean need)."""

    def __init__(self, model: LanguageModel, prefix: tuple[Example, ...]) -> None:
        self.model = model
        self.prefix = prefix
        self.settings = GroundedSettings.for_model(model.name)
        self._monitors: dict[str, GroundedMonitor] = {}

    def monitor(self, task_name: str) -> GroundedMonitor:
        if task_name not in self._monitors:
            spec = get_task(task_name)
            problem, plan = closed_world_plan(task_name)
            questions.warm(self.model, spec.description, self.prefix)
            monitor = GroundedMonitor(
                self.model,
                spec.description,
                Thresholds(need=self.settings.need_threshold),
                examples=self.prefix,
            )
            monitor.prepare(plan, problem)
            self._monitors[task_name] = monitor
        return self._monitors[task_name]

    def score(self, monitor: GroundedMonitor, kind: str, question: str) -> float:
        """The question's score as the monitor asks it (log-odds of the blocking answer)."""
        asked = monitor.ask(kind, question, 0.0, ("", ""))
        if asked.score is None:
            raise CowpError("the model gave no probability of its answer; views need one")
        return round(asked.score, 3)

    def view(self, item: Viewed) -> None:
        """Every view's score of the item, where it is about an object a step uses."""
        spec = get_task(item.task)
        problem, plan = closed_world_plan(item.task)
        actions = [base_action_name(s.action) for s in plan]
        rest = list(plan[actions.index(item.step) :])
        usable = list(dict.fromkeys(o for s in rest for o in s.args if uses(problem, s, o)))
        grounding = ground(Situation(item.text), problem, usable)
        if grounding.subject is None or not grounding.in_plan or grounding.kind is None:
            return
        item.subject = grounding.subject
        monitor = self.monitor(item.task)
        what, task = noun(grounding.kind), spec.description
        said, item.restated, _ = monitor.restate_situation(what, item.text)
        step = ActionPhrases(spec.phrases).describe(
            fullest_step(rest, problem, grounding.subject), problem
        )
        clause = f"{questions.task_clause(task)} {questions.told(item.text)}."
        item.scores = {
            "use": self.score(monitor, USE, questions.use_question(what, task, item.text)),
            "dirty": self.score(monitor, STATE, questions.state_question(what, task, item.text)),
            "use_step": self.score(monitor, USE, f"{clause} Can the robot still {step}?"),
            "use_restated": self.score(monitor, USE, questions.use_question(what, task, said)),
            "dirty_restated": self.score(
                monitor, STATE, questions.state_question(what, task, said)
            ),
        }
        needs = monitor.needs.get((task, what))
        item.needed_clean = needs is not None and needed_clean(needs)


def scenario_items() -> list[Viewed]:
    """Every scenario's situations at its task's first step (where `cowp run` and the
    demo raise them), labelled as the scenario file says."""
    found = []
    for scenario, event in first_step_items(None):
        first = closed_world_plan(scenario.task)[1][0]
        found.append(
            Viewed(
                scenario.task,
                0,
                SCENARIO,
                event.situation,
                base_action_name(first.action),
                event.blocks,
            )
        )
    return found


def decisions(items: Sequence[Viewed], way: Way, use: float, dirt: float) -> list[bool | None]:
    """The way's decision per item (None where no object question was asked)."""
    return [
        None
        if not i.scores
        else way.use_score(i) >= use or (i.needed_clean and way.dirt_score(i) >= dirt)
        for i in items
    ]


def figures(items: Sequence[Viewed], decided: Sequence[bool | None]) -> dict[str, Any]:
    """Flips against the canonical sentence, accuracy on rewordings and canonical ones,
    scenario situations decided as their file says."""
    by_item = {id(i): d for i, d in zip(items, decided, strict=True)}
    canonical = {(i.task, i.group): i for i in items if i.kind == CANONICAL}
    flips = right = rewordings = canon_right = 0
    for item in items:
        if item.kind in (CANONICAL, SCENARIO):
            continue
        base = canonical[(item.task, item.group)]
        mine, theirs = by_item[id(item)], by_item[id(base)]
        if mine is None or theirs is None:
            continue
        rewordings += 1
        flips += mine != theirs
        right += mine == item.label
        canon_right += theirs == base.label
    scenarios = [
        (i, by_item[id(i)])
        for i in items
        if i.kind == SCENARIO and i.label is not None and by_item[id(i)] is not None
    ]
    missed = [i.text for i, d in scenarios if d != i.label]
    return {
        "flip_rate": share(flips, rewordings),
        "accuracy": share(right, rewordings),
        "canonical_accuracy": share(canon_right, rewordings),
        "scenarios_as_filed": f"{len(scenarios) - len(missed)}/{len(scenarios)}",
        "scenarios_missed": missed,
    }


def cuts(values: Sequence[float]) -> np.ndarray:
    """Every threshold that separates the values differently: midpoints, and both ends."""
    unique = np.unique(np.round(values, 3))
    if not len(unique):
        return np.array([0.0])
    middle = (unique[1:] + unique[:-1]) / 2
    return np.concatenate(([unique[0] - 1.0], middle, [unique[-1] + 1.0]))


def best_thresholds(items: Sequence[Viewed], way: Way) -> tuple[float, float]:
    """The (use, dirt) thresholds that decide the most paraphrase items right (canonical
    and rewordings; fewest flips among equals): an upper bound read off these items."""
    scored = [i for i in items if i.scores and i.kind != SCENARIO and i.label is not None]
    if not scored:
        return 0.0, 0.0
    use = np.array([way.use_score(i) for i in scored])
    dirt = np.array([way.dirt_score(i) for i in scored])
    open_to_dirt = np.array([i.needed_clean for i in scored])
    labels = np.array([bool(i.label) for i in scored])
    canonical_at = {(c.task, c.group): j for j, c in enumerate(scored) if c.kind == CANONICAL}
    canonical_of = [
        -1 if i.kind == CANONICAL else canonical_at.get((i.task, i.group), -1) for i in scored
    ]
    reworded = np.array([j >= 0 for j in canonical_of])
    base = np.array([max(j, 0) for j in canonical_of])
    use_cuts, dirt_cuts = cuts(use), cuts(dirt[open_to_dirt]) if open_to_dirt.any() else cuts(dirt)
    blocks_use = use[None, :] >= use_cuts[:, None]  # (use cut, item)
    blocks_dirt = open_to_dirt[None, :] & (dirt[None, :] >= dirt_cuts[:, None])  # (dirt cut, item)
    decided = blocks_use[:, None, :] | blocks_dirt[None, :, :]  # (use cut, dirt cut, item)
    right = (decided == labels).sum(axis=2)
    flips = ((decided != decided[:, :, base]) & reworded).sum(axis=2)
    order = right * (len(scored) + 1) - flips
    u, d = np.unravel_index(int(np.argmax(order)), order.shape)
    return round(float(use_cuts[u]), 3), round(float(dirt_cuts[d]), 3)


def report(
    items: Sequence[Viewed],
    settings: GroundedSettings,
    at: Sequence[tuple[float, float]] = (),
) -> list[dict[str, Any]]:
    """Each way at its best thresholds on these items; the method's way at its own
    thresholds and at each (use, dirt) pair of `at`."""
    rows = []
    method = WAYS[0]
    given = [
        (settings.use_threshold, settings.dirty_threshold, "configured"),
        *((use, dirt, "given") for use, dirt in at),
    ]
    for use, dirt, which in given:
        rows.append(
            {
                "way": f"{method.name}, at the {which} thresholds",
                "thresholds": [use, dirt],
                **figures(items, decisions(items, method, use, dirt)),
            }
        )
    for way in WAYS:
        use, dirt = best_thresholds(items, way)
        rows.append(
            {
                "way": f"{way.name}, thresholds read off these items",
                "thresholds": [use, dirt],
                **figures(items, decisions(items, way, use, dirt)),
            }
        )
    return rows


def table(rows: Sequence[dict[str, Any]]) -> str:
    lines = [
        "| way | use, dirt thresholds | flip rate % | accuracy % (rewordings) | "
        "accuracy % (their canonical) | scenarios as filed |",
        "|---|---|---|---|---|---|",
    ]

    def pct(value: dict[str, Any]) -> str:
        if not value.get("n"):
            return "-"
        return f"{value['pct']} [{value['interval_pct'][0]}, {value['interval_pct'][1]}]"

    for row in rows:
        use, dirt = row["thresholds"]
        lines.append(
            f"| {row['way']} | {use:g}, {dirt:g} | {pct(row['flip_rate'])} | "
            f"{pct(row['accuracy'])} | {pct(row['canonical_accuracy'])} | "
            f"{row['scenarios_as_filed']} |"
        )
    return "\n".join(lines)


def load_items(path: Path) -> tuple[list[Viewed], str, str, str]:
    """A kept run's items and what it was run with: (items, model, split, prefix)."""
    try:
        kept = json.loads(path.read_text())
        items = [Viewed(**raw) for raw in kept["items"]]
        model, split, prefix = kept["model"], kept["split"], kept["prefix"]
    except (OSError, ValueError, KeyError, TypeError) as err:
        raise CowpError(
            f"{path} is not a file bench_question_views.py --json wrote ({err!r})",
            hint="run the script with --json first",
        ) from err
    return items, str(model), str(split), str(prefix)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--prefix", choices=sorted(PREFIXES), default="shipped")
    parser.add_argument("--dataset", default=str(default_dataset_dir()))
    parser.add_argument("--limit", type=int, help="only the first N groups and N scenarios")
    parser.add_argument("--json", type=Path, help="write the items and the table here")
    parser.add_argument("--from-json", type=Path, help="read the items of a kept run; no model")
    parser.add_argument(
        "--at",
        nargs=2,
        type=float,
        action="append",
        default=[],
        metavar=("USE", "DIRT"),
        help="also the method's way at these thresholds (repeatable)",
    )
    parser.add_argument(
        "--smoke", action="store_true", help=f"two groups of the dev set; {SMOKE_HELP}"
    )
    add_llm_arguments(parser)
    args = parser.parse_args(argv)
    if args.smoke:
        args.split, args.limit = "dev", 2
    command = shlex.join([sys.executable, *sys.argv])
    try:
        if args.from_json:
            items, model_name, split, prefix = load_items(args.from_json)
            settings = GroundedSettings.for_model(model_name)
        else:
            items, model_name, settings = run(args)
            split, prefix = args.split, args.prefix
    except CowpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 2
    rows = report(items, settings, [(use, dirt) for use, dirt in args.at])
    print(table(rows))
    if args.json:
        args.json.write_text(
            json.dumps(
                {
                    "command": command,
                    "commit": commit(),
                    "split": split,
                    "prefix": prefix,
                    "model": model_name,
                    "rows": rows,
                    "items": [asdict(i) for i in items],
                },
                indent=1,
            )
        )
    method = rows[0]
    print(
        f"question views {split}, prefix {prefix}: the method's way at its thresholds flips "
        f"{method['flip_rate'].get('pct', '-')} %; the best way read off the items flips "
        f"{min(r['flip_rate'].get('pct', 100.0) for r in rows[1 + len(args.at) :])} %"
    )
    return 0


def run(args: argparse.Namespace) -> tuple[list[Viewed], str, GroundedSettings]:
    """Ask every view of every item (the split's paraphrases, then the scenarios)."""
    path = PARAPHRASES[args.split]
    paraphrases = load_paraphrases(path)
    groups = paraphrases.groups[: args.limit]
    sources = CanonicalSources(
        SituationDataset.load(args.dataset),
        load_benign_situations("all"),
        read_near_misses(NEAR_MISSES["dev"]),
    )
    items = [
        Viewed(i.task, i.group, i.kind, i.text, i.step, i.label)
        for i in items_of(groups, sources, paraphrases.source)
    ]
    items += scenario_items()[: args.limit]
    args.no_cache = True
    with contextlib.ExitStack() as stack:
        if args.smoke:
            answer_smoke_runs(args, stack)
        with open_model(settings_from_args(args)) as model:
            asker = Asker(model, PREFIXES[args.prefix]())
            for number, item in enumerate(items, 1):
                asker.view(item)
                shown = " ".join(f"{k} {v:+.2f}" for k, v in item.scores.items())
                print(f"[{number}/{len(items)}] {item.task:13} {item.kind:15} {shown}  {item.text}")
            return items, model.name, asker.settings


if __name__ == "__main__":
    sys.exit(main())
