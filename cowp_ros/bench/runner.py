"""Trials: drawn once per (seed, task, index), run for every method, saved one by one.

The protocol (the COWP paper's): pick a task; the task's objects plus a random half of
the other objects are present; walk the closed-world plan, and at each step a situation
occurs with probability `p`, drawn from the dataset for that task and step, weighted by
the crowd's counts. The draw happens before any method runs, so every method faces the
same objects and situations in a trial. Optional distractors (benign sentences) are drawn
the same way with their own probability and random stream, so adding them does not
change which situations a trial has. A distractor tied to a task is raised only in that
task's trials, preferably at its own step ("the cup is blue" while filling the cup): a
sentence about a cup in a vacuuming task would be too easy to dismiss.

Each finished (method, trial) is written to `<out>/trials/<method>/<task>-<index>.json`
at once; a rerun with the same settings skips what is there, so a run can be stopped,
resumed, or extended to more trials.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cowp_ros.bench.annotations import TaskAnnotation
from cowp_ros.bench.dataset import SituationDataset, draw_situation
from cowp_ros.bench.metering import MeteredModel
from cowp_ros.bench.methods import BenchMethod, MethodContext
from cowp_ros.bench.simulator import Episode, ScheduledEvent
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.tasks import TaskSpec

POOL_FRACTION = 0.5


@dataclass(frozen=True)
class Distractor:
    """A benign sentence; `task` / `step` ("" = any) say where it may be raised."""

    text: str
    task: str = ""
    step: str = ""

    def to_dict(self) -> dict[str, str] | str:
        return (
            {"text": self.text, "task": self.task, "step": self.step}
            if (self.task or self.step)
            else self.text
        )


def pick_distractor(
    distractors: Sequence[Distractor], task: str, action: str, rng: random.Random
) -> Distractor | None:
    """One of the task's distractors, tied to `action` when any is; None if none fits."""
    fitting = [d for d in distractors if d.task in ("", task)]
    at_step = [d for d in fitting if d.step == action]
    pool = at_step or [d for d in fitting if not d.step or d.task == task]
    return rng.choice(pool) if pool else None


@dataclass(frozen=True)
class BenchSettings:
    """What makes two runs comparable; saved as `<out>/config.json`."""

    dataset: str
    p: float
    seed: int
    pool_fraction: float = POOL_FRACTION
    distractor_p: float = 0.0
    distractors: tuple[Distractor, ...] = ()
    model: str = ""

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["distractors"] = [d.to_dict() for d in self.distractors]
        return data


@dataclass(frozen=True)
class Trial:
    task: str
    index: int
    seed: int
    problem: PlanningTask
    reference: tuple[PlanStep, ...]
    events: tuple[ScheduledEvent, ...]

    @property
    def name(self) -> str:
        return f"{self.task}-{self.index:04d}"


def trial_seed(seed: int, task: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}/{task}/{index}".encode()).hexdigest()
    return int(digest[:12], 16)


def draw_trial(
    spec: TaskSpec,
    index: int,
    settings: BenchSettings,
    dataset: SituationDataset,
    annotation: TaskAnnotation,
    planner: Planner,
    base: PlanningTask | None = None,
) -> Trial:
    """The objects present, the reference plan, and the situations of one trial."""
    if spec.dataset_id is None:
        raise CowpError(f"task {spec.name} has no dataset situations")
    seed = trial_seed(settings.seed, spec.name, index)
    problem = spec.build_problem(pool_fraction=settings.pool_fraction, seed=seed, task=base)
    result = planner.solve(problem, 60.0)
    if not result.found:
        raise CowpError(f"task {spec.name} has no closed-world plan in trial {index}")
    situations_rng = random.Random(f"situations-{seed}")
    distractor_rng = random.Random(f"distractors-{seed}")
    events = []
    for at, step in enumerate(result.steps):
        action = base_action_name(step.action)
        occurs = situations_rng.random() < settings.p
        drawn = draw_situation(dataset.at_step(spec.dataset_id, action), action, situations_rng)
        if occurs and drawn is not None:
            effect = annotation.effect_of(drawn, spec)
            events.append(
                ScheduledEvent(
                    "situation",
                    drawn.key,
                    drawn.text,
                    action,
                    at,
                    effect,
                    drawn.object,
                    tuple(step.args),
                )
            )
        if settings.distractors and distractor_rng.random() < settings.distractor_p:
            picked = pick_distractor(settings.distractors, spec.name, action, distractor_rng)
            if picked is not None:
                events.append(ScheduledEvent("distractor", f"d/{at}", picked.text, action, at))
    return Trial(spec.name, index, seed, problem, tuple(result.steps), tuple(events))


def max_attempts(trial: Trial) -> int:
    """A budget every method gets: room to recover, never an endless retry."""
    return 4 * len(trial.reference) + 10


def run_one(
    method_cls: type[BenchMethod],
    spec: TaskSpec,
    trial: Trial,
    annotation: TaskAnnotation,
    planner: Planner,
    model: LanguageModel | None,
) -> dict[str, Any]:
    """Run one method on one trial and return its record (never raises on method bugs)."""
    metered = MeteredModel(model) if (model is not None and method_cls.uses_llm) else None
    context = MethodContext(
        spec=spec,
        planner=planner,
        model=metered,
        seed=trial.seed,
        annotation=annotation if method_cls.name == "ek" else None,
    )
    episode = Episode(
        spec, trial.problem, trial.events, annotation, max_attempts=max_attempts(trial)
    )
    started = time.monotonic()
    error = ""
    method: BenchMethod | None = None
    try:
        method = method_cls(context)
        method.run(episode)
        if not episode.finished:
            episode.give_up("the method returned before the goal was reached")
    except Exception as err:  # a method's bug must not stop a long run; it is recorded
        error = "".join(traceback.format_exception_only(type(err), err)).strip()
        episode.give_up(f"error: {error}")
        print(f"\n{method_cls.name} {trial.name}: {error}", file=sys.stderr)
    trace = method_trace(method)
    record = episode.record
    fired_keys = {f["key"] for f in record.fired}
    situations = []
    for event in trial.events:
        if event.kind != "situation":
            continue
        situations.append(
            {
                **event.to_dict(),
                "fired": event.key in fired_keys,
            }
        )
    distractors = [e.to_dict() | {"fired": e.key in fired_keys} for e in trial.events]
    distractors = [d for d in distractors if d["kind"] == "distractor"]
    completed = record.completed and not record.distractor_failures
    usage = metered.usage if metered is not None else None
    return {
        "method": method_cls.name,
        "task": trial.task,
        "index": trial.index,
        "seed": trial.seed,
        "completed": completed,
        "goal_reached": record.goal_reached,
        "error": error,
        "seconds": round(time.monotonic() - started, 3),
        "reference_plan": [str(s) for s in trial.reference],
        "objects_present": len(trial.problem.problem_object_names),
        "situations": [s | {"handled": bool(s["fired"] and completed)} for s in situations],
        "distractors": [
            d | {"failed": any(repr(d["text"]) in f for f in record.distractor_failures)}
            for d in distractors
        ],
        "usage": {
            "calls": usage.calls if usage else 0,
            "prompt_tokens": usage.prompt_tokens if usage else 0,
            "completion_tokens": usage.completion_tokens if usage else 0,
            "cache_hits": usage.cache_hits if usage else 0,
            "seconds": round(usage.seconds, 3) if usage else 0.0,
        },
        "episode": record.to_dict(),
        "trace": trace,
    }


def method_trace(method: BenchMethod | None) -> list[str]:
    """The method's own account of the trial (see the methods' protocol), if it keeps one."""
    trace = getattr(method, "trace", None)
    if not callable(trace):
        return []
    try:
        return [str(line) for line in trace()]
    except Exception as err:  # the account is a diagnostic: never lose the record for it
        return [f"(no trace: {type(err).__name__}: {err})"]


def trial_path(out: Path, method: str, trial_name: str) -> Path:
    return out / "trials" / method / f"{trial_name}.json"


def check_config(out: Path, settings: BenchSettings) -> None:
    """Refuse to mix trials of different settings in one folder."""
    path = out / "config.json"
    wanted = settings.to_dict()
    if path.is_file():
        saved = json.loads(path.read_text())
        if saved != wanted:
            differ = sorted(k for k in wanted if saved.get(k) != wanted[k])
            raise CowpError(
                f"{out} holds trials run with other settings ({', '.join(differ)})",
                hint="use another --out folder, or --fresh to delete the old trials",
            )
    else:
        out.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(wanted, indent=1) + "\n")


@dataclass
class Progress:
    """A plain progress bar on stderr (no dependency): done/total, rate, ETA."""

    total: int
    done: int = 0
    skipped: int = 0
    started: float = field(default_factory=time.monotonic)
    stream: Any = None  # None: sys.stderr at the time of writing
    width: int = 30

    def update(self, label: str, *, skipped: bool = False) -> None:
        self.done += 1
        self.skipped += int(skipped)
        ran = self.done - self.skipped
        elapsed = time.monotonic() - self.started
        eta = ""
        if ran and self.total > self.done:
            eta = f" eta {elapsed / ran * (self.total - self.done) / 60:.1f} min"
        filled = int(self.width * self.done / max(self.total, 1))
        bar = "#" * filled + "." * (self.width - filled)
        stream = self.stream or sys.stderr
        stream.write(
            f"\r[{bar}] {self.done}/{self.total} ({self.skipped} resumed){eta}  {label[:40]:<40}"
        )
        stream.flush()

    def close(self) -> None:
        stream = self.stream or sys.stderr
        stream.write("\n")
        stream.flush()


def run_trials(
    out: Path,
    specs: Sequence[TaskSpec],
    methods: Sequence[type[BenchMethod]],
    trials: int,
    settings: BenchSettings,
    dataset: SituationDataset,
    annotations: dict[str, TaskAnnotation],
    planner: Planner,
    model_factory: Callable[[], LanguageModel | None],
    *,
    progress: Progress | None = None,
) -> int:
    """Run what is missing under `out`; returns how many (method, trial) pairs ran."""
    ran = 0
    model: LanguageModel | None = None
    model_ready = False
    bases = {spec.name: spec.load() for spec in specs}
    # Trial index outermost: a run stopped early has (nearly) as many trials of each task.
    for index in range(trials):
        for spec in specs:
            trial_name = f"{spec.name}-{index:04d}"
            missing = [m for m in methods if not trial_path(out, m.name, trial_name).is_file()]
            for method in methods:
                if method not in missing and progress:
                    progress.update(f"{method.name} {trial_name}", skipped=True)
            if not missing:
                continue
            annotation = annotations[spec.name]
            trial = draw_trial(
                spec, index, settings, dataset, annotation, planner, bases[spec.name]
            )
            for method in missing:
                if method.uses_llm and not model_ready:
                    model, model_ready = model_factory(), True
                record = run_one(method, spec, trial, annotation, planner, model)
                path = trial_path(out, method.name, trial.name)
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = path.with_suffix(".tmp")
                tmp.write_text(json.dumps(record, indent=1) + "\n")
                tmp.replace(path)
                ran += 1
                if progress:
                    progress.update(f"{method.name} {trial.name}")
    return ran


def load_records(
    out: Path, methods: Sequence[str], tasks: Sequence[str], trials: int
) -> list[dict[str, Any]]:
    """The saved records of this selection (trial indices below `trials`)."""
    records = []
    for method in methods:
        for task in tasks:
            for index in range(trials):
                path = trial_path(out, method, f"{task}-{index:04d}")
                if path.is_file():
                    records.append(json.loads(path.read_text()))
    return records
