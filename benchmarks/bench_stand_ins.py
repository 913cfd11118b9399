"""How well the Knowledge Acquirer's role question tells acceptable stand-ins apart.

For every role the judge files (`benchmarks/annotations/`) list, every kind of object
the task's house could offer as a stand-in is put to the acquirer's role question
("Can a mug be used instead of the burger, in the task of ...?") through
`KnowledgeAcquirer.assess` with no action questions: exactly what COWP asks first. The
judge files say which answers should be yes: a kind accepted in every action of the
role (a broom, accepted to clean but not to be plugged in, cannot take the vacuum's
role). Tasks are split as the project splits them (`cowp_ros.tasks.split_tasks`): the
threshold is chosen on the dev tasks (`choose`: among the reported thresholds
`THRESHOLDS`, the largest share of acceptable minus share of unacceptable stand-ins
passed, ties to the higher), the test tasks only report. The candidates are that coarse
grid on purpose: the dev tasks have 7 acceptable stand-ins, and a 0.01 grid picks 0.87
for one of them (7/7 acceptable, but 35 of 204 unacceptable passed instead of 16): a
choice made by one item, not by the decision. Printed per split: AUC of P(yes), and
how many acceptable and unacceptable stand-ins pass at each threshold; a ROC plot goes
to `--plot`. The arithmetic is the monitor calibration's (`calibration.thresholds`),
with "acceptable" in the place of "blocking".

    .venv/bin/python benchmarks/bench_stand_ins.py [--llm-url URL --llm-model NAME]
    .venv/bin/python benchmarks/bench_stand_ins.py --smoke --plot /tmp/roc.png   # CI
"""

from __future__ import annotations

import argparse
import contextlib
import sys
from dataclasses import dataclass
from pathlib import Path

from cowp_ros.bench.annotations import TaskAnnotation, load_annotations
from cowp_ros.chaos.answers import SMOKE_HELP, answer_smoke_runs
from cowp_ros.cowp.roles import candidate_types, role_actions
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.methods.paper.acquirer import (
    ROLE_THRESHOLD,
    KnowledgeAcquirer,
)
from cowp_ros.methods.paper.calibration.thresholds import auc, curve, operating_point
from cowp_ros.tasks import TaskSpec, all_tasks, split_tasks
from cowp_ros.tasks.phrases import ActionPhrases

THRESHOLDS = (0.8, 0.85, 0.88, 0.9, 0.92, 0.94)
"""The thresholds reported, and the candidates `choose` picks among."""


@dataclass(frozen=True)
class Judged:
    task: str
    role: str
    candidate: str
    acceptable: bool
    p_yes: float | None
    accepted: bool


def judge_task(model: LanguageModel, spec: TaskSpec, annotation: TaskAnnotation) -> list[Judged]:
    """The role question for every (role, candidate kind) of one task."""
    task = spec.load_house()
    acquirer = KnowledgeAcquirer(model, ActionPhrases(spec.phrases))
    rows = []
    for role in sorted(annotation.stand_ins):
        if role not in task.types:
            continue
        acceptable = annotation.accepted_for_role(role, role_actions(task, role))
        for candidate, example in candidate_types(task, role):
            assessment = acquirer.assess(task, role, [], candidate, example, spec.description)
            (question,) = assessment.questions
            rows.append(
                Judged(
                    spec.name,
                    role,
                    candidate,
                    candidate in acceptable,
                    question.answer.p_yes,
                    assessment.accepted,
                )
            )
    return rows


def scored(rows: list[Judged]) -> tuple[list[float], list[bool]]:
    """(P(yes), acceptable) per stand-in, for `calibration.thresholds` (True = positive)."""
    return [r.p_yes or 0.0 for r in rows], [r.acceptable for r in rows]


def choose(rows: list[Judged]) -> float:
    """The threshold the dev rows call for: see the module docstring."""
    scores, labels = scored(rows)

    def youden(threshold: float) -> float:
        point = operating_point(scores, labels, threshold)
        return point.recall - point.false_alarm_rate

    return max(THRESHOLDS, key=lambda t: (round(youden(t), 9), t))


def summary(rows: list[Judged], name: str) -> list[str]:
    scores, labels = scored(rows)
    pos = [r for r in rows if r.acceptable]
    neg = [r for r in rows if not r.acceptable]
    lines = [
        f"{name}: {len(pos)} acceptable, {len(neg)} unacceptable stand-ins; "
        f"AUC {auc(scores, labels):.3f}; passed at the deployed threshold {ROLE_THRESHOLD}: "
        f"{sum(r.accepted for r in pos)}/{len(pos)} acceptable, "
        f"{sum(r.accepted for r in neg)}/{len(neg)} unacceptable"
    ]
    for t in THRESHOLDS:
        point = operating_point(scores, labels, t)
        kept = round(point.recall * len(pos))
        wrong = round(point.false_alarm_rate * len(neg))
        lines.append(f"  P(yes) >= {t:.2f}: {kept}/{len(pos)} acceptable, {wrong}/{len(neg)} not")
    return lines


def plot(splits: dict[str, list[Judged]], path: Path, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5, 5))
    for name, rows in splits.items():
        scores, labels = scored(rows)
        points = curve(scores, labels)
        ax.plot(
            [p.false_alarm_rate for p in points],
            [p.recall for p in points],
            marker=".",
            label=f"{name} (AUC {auc(scores, labels):.2f})",
        )
    ax.plot([0, 1], [0, 1], color="grey", linestyle=":")
    ax.set_xlabel("unacceptable stand-ins passed")
    ax.set_ylabel("acceptable stand-ins passed")
    ax.set_title(title, fontsize=9)
    ax.legend(loc="lower right")
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120)
    plt.close(fig)


def main() -> int:
    from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
    from cowp_ros.errors import CowpError
    from cowp_ros.llm.endpoint import open_model

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plot", type=Path, default=Path("build/stand_ins_roc.png"))
    parser.add_argument("--smoke", action="store_true", help=f"one task a split; {SMOKE_HELP}")
    add_llm_arguments(parser)
    args = parser.parse_args()
    tasks = list(split_tasks().items())
    try:
        annotations = load_annotations()
        if args.smoke:  # one task a split, among those whose judge accepts some stand-in
            tasks = [
                (split, [n for n in names if any(annotations[n].stand_ins.values())][:1])
                for split, names in tasks
            ]
        specs = all_tasks()
        splits: dict[str, list[Judged]] = {"dev": [], "test": []}
        with contextlib.ExitStack() as stack:
            if args.smoke:
                answer_smoke_runs(args, stack)
            model = stack.enter_context(open_model(settings_from_args(args)))
            for split, names in tasks:
                for name in names:
                    rows = judge_task(model, specs[name], annotations[name])
                    splits[split].extend(rows)
                    print(f"{split} {name}: {len(rows)} stand-ins judged", file=sys.stderr)
            label = model.name or "model"
    except CowpError as err:
        print(f"error: {err}", file=sys.stderr)
        return 1
    for name, rows in splits.items():
        print("\n".join(summary(rows, name)))
    chosen = choose(splits["dev"])
    print(f"chosen on the dev tasks: P(yes) >= {chosen:.2f} (deployed: {ROLE_THRESHOLD})")
    for name, rows in splits.items():
        point = operating_point(*scored(rows), chosen)
        pos, neg = point.n_blocking, point.n_benign
        print(
            f"  {name} at {chosen:.2f}: {round(point.recall * pos)}/{pos} acceptable, "
            f"{round(point.false_alarm_rate * neg)}/{neg} unacceptable passed"
        )
    plot(splits, args.plot, f"role question, {label}")
    print(f"plot: {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
