"""Trials: drawn once per (seed, task, index), run for every method, saved one by one.

Objects: the task's own objects plus a random draw of the others, so that half of the
house is present (`present_share`: 43 of the 86 objects of every dataset task's house,
`TaskSpec.load_house`). The closed-world plan over them is the reference plan.

Situations, by one of the two protocols of the COWP papers:

- `journal` (the journal paper's): at each step of the reference plan a situation
  occurs with a chance that follows the crowd: `p` times the reports at that step's
  action over the mean reports per action of the task (`step_chance`), so `p` is the
  chance at an average step and a step people reported once is rare (walking in
  set_table: 1 report against 9.2 at an average step, about 0.011). The situation is
  drawn among the dataset's situations for that action, weighted by the crowd's counts
  there. A trial may have none, or several.
- `conference` (the conference paper's): exactly one situation per trial, drawn among
  the (situation, step) pairs of the task whose step the reference plan has, weighted
  by the crowd's count of that pair; raised at the plan's first step of that action.

The draw happens before any method runs, so every method faces the same objects and
situations. Each situation is then classified once (`classify`): blocking if, raised
where the closed-world plan meets it, it blocks a step of that plan; harmless
otherwise. Optional distractors (benign sentences) are drawn with their own
probability and random stream, so adding them does not change which situations a trial
has. A distractor tied to a task is raised only in that task's trials, preferably at
its own step.

Methods run against a `TrialWorld` through its robot view only, in a process of their own
(`boundary`: the world, the schedule and the judge stay in the runner's process); the
oracle alone also gets its privileged access, by a token drawn for the trial.
`--jobs N` runs N trials at once (threads, each with its method process and its own
model client over the one server and answer cache); every record depends only on the
seed, so the results are those of `--jobs 1`.

Each finished (method, trial) is written to `<out>/trials/<method>/<task>-<index>.json`
at once; a rerun with the same settings skips what is there, so a run can be stopped,
resumed, or extended to more trials.
"""

from __future__ import annotations

import hashlib
import io
import json
import random
import re
import sys
import tarfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from cowp_ros.bench.annotations import Effect, TaskAnnotation
from cowp_ros.bench.boundary import BoundaryError, run_behind_boundary
from cowp_ros.bench.dataset import SituationDataset, draw_situation
from cowp_ros.bench.metering import MeteredModel
from cowp_ros.bench.methods import GPT3_ANSWERS, BenchMethod
from cowp_ros.bench.methods.oracle import is_oracle
from cowp_ros.bench.privileged import PrivilegedAccess
from cowp_ros.bench.schedule import ScheduledEvent
from cowp_ros.bench.seal import method_seed, sealed_roots
from cowp_ros.bench.simulator import TrialWorld, senses_only
from cowp_ros.bench.usable import alternatives
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.llm.settings import Sampling
from cowp_ros.pddl import PlanningTask
from cowp_ros.pddl.edits import base_action_name
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.tasks import TaskSpec

PRESENT_SHARE = 0.5
"""Half of the house is present in a trial (43 of 86 objects)."""
JOURNAL = "journal"
CONFERENCE = "conference"
PROTOCOLS = (JOURNAL, CONFERENCE)
ARCHIVE = "trials.tar.xz"
BENCH_VERSION = 5
"""The world's and the judge's semantics. 3: silent harms succeed and fail the trial,
`beyond_skills` stops its own action, the no-model controls, handling split by how.
4: a situation about objects an earlier situation already made unusable is passed by
where the robot does its action with others (`schedule.moot`).
5: the methods' side changed, not the world's: a method that ignores sentences tries a
step again after each one (two at one step were read as a failed step), a method's seed
is its own (`seal.method_seed`: EK's covered kinds are drawn anew), and the noun-only
control.
A run's config.json carries it (none: 2), so trials of two versions never mix and a
kept table says which version it measured."""


def saved_version(config: dict[str, Any]) -> int:
    """The bench version of a run's saved config.json (written before v3: 2)."""
    return int(config.get("bench_version", 2))


@dataclass(frozen=True)
class Distractor:
    """A benign sentence; `task` / `step` ("" = any) say where it may be raised."""

    text: str
    task: str = ""
    step: str = ""
    source: str = ""
    """The file it came from when a run reads several (each reported apart), else ""."""

    def to_dict(self) -> dict[str, str] | str:
        if self.source:
            return {"text": self.text, "task": self.task, "step": self.step, "source": self.source}
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
    protocol: str = JOURNAL
    present_share: float = PRESENT_SHARE
    distractor_p: float = 0.0
    distractors: tuple[Distractor, ...] = ()
    model: str = ""
    bench_version: int = BENCH_VERSION
    temperature: float = 0.0
    """0: the model answers greedily (one answer per question, read again each trial);
    above 0: sampled answers, each trial with its own seed (`sampling_for`)."""
    sample_seed: int = 0
    """With `temperature`: the seed the trials' sampling seeds are drawn from."""
    seed_standing: str = ""
    """For a run scoring the test tasks with a method under development: "fresh" (the
    seed was recorded for this code before the run) or "re-run" (`seeds.check_test_run`)."""

    def __post_init__(self) -> None:
        if self.protocol not in PROTOCOLS:
            raise CowpError(
                f"unknown protocol {self.protocol!r}", hint=f"use one of {', '.join(PROTOCOLS)}"
            )
        if self.temperature:
            Sampling(self.temperature, 0)  # refuses a temperature out of range

    def to_dict(self) -> dict[str, Any]:
        """What config.json records. The sampling settings are there only when answers
        are sampled, so a greedy run's config reads as it did before sampling existed."""
        data = dict(self.__dict__)
        data["distractors"] = [d.to_dict() for d in self.distractors]
        if not self.temperature:
            del data["temperature"], data["sample_seed"]
        if not self.seed_standing:
            del data["seed_standing"]
        return data

    def sampling_for(self, task: str, index: int) -> Sampling | None:
        """The sampling of one trial: its own seed, drawn from `sample_seed`, the task
        and the index (every method of the trial samples with it); None when greedy."""
        if not self.temperature:
            return None
        return Sampling(
            self.temperature, trial_seed(self.sample_seed, f"sample/{task}", index) % 2**31
        )


@dataclass(frozen=True)
class Trial:
    task: str
    index: int
    seed: int
    problem: PlanningTask
    reference: tuple[PlanStep, ...]
    events: tuple[ScheduledEvent, ...]
    cast: dict[str, str] = field(default_factory=dict)
    """Task object -> the object of its kind the reference plan uses (see `cast_of`)."""

    @property
    def name(self) -> str:
        return f"{self.task}-{self.index:04d}"


def trial_seed(seed: int, task: str, index: int) -> int:
    digest = hashlib.sha256(f"{seed}/{task}/{index}".encode()).hexdigest()
    return int(digest[:12], 16)


def objects_present(spec: TaskSpec, task: PlanningTask, share: float = PRESENT_SHARE) -> int:
    """How many objects a trial has: `share` of the problem's, the task's own at least."""
    total = len(task.problem_object_names)
    return max(len(spec.task_objects), round(total * share))


def draw_trial(
    spec: TaskSpec,
    index: int,
    settings: BenchSettings,
    dataset: SituationDataset,
    annotation: TaskAnnotation,
    planner: Planner,
    base: PlanningTask | None = None,
    *,
    draw_seed: int | None = None,
) -> Trial:
    """The objects present, the reference plan, and the situations of one trial.

    `draw_seed` replaces the trial's own (`trial_seed`): what a method that knew a seed
    would draw with it (the attack test re-draws with the seed a method gets)."""
    if spec.dataset_id is None:
        raise CowpError(f"task {spec.name} has no dataset situations")
    seed = trial_seed(settings.seed, spec.name, index) if draw_seed is None else draw_seed
    base = base or spec.load_house()
    present = objects_present(spec, base, settings.present_share)
    problem = spec.build_problem(present, seed=seed, task=base)
    result = planner.solve(problem, 60.0)
    if not result.found:
        raise CowpError(f"task {spec.name} has no closed-world plan in trial {index}")
    reference = tuple(result.steps)
    situations_rng = random.Random(f"situations-{seed}")
    distractor_rng = random.Random(f"distractors-{seed}")
    events: list[ScheduledEvent] = []
    if settings.protocol == CONFERENCE:
        events.extend(_one_situation(spec, reference, dataset, annotation, situations_rng))
    for at, step in enumerate(reference):
        action = base_action_name(step.action)
        if settings.protocol == JOURNAL:
            occurs = situations_rng.random() < step_chance(dataset, spec, action, settings.p)
            candidates = dataset.at_step(spec.dataset_id, action)
            drawn = draw_situation(candidates, action, situations_rng)
            if occurs and drawn is not None:
                effect = annotation.effect_of(drawn, spec)
                events.append(
                    ScheduledEvent(
                        "situation", drawn.key, drawn.text, action, at, effect, drawn.object
                    )
                )
        if settings.distractors and distractor_rng.random() < settings.distractor_p:
            picked = pick_distractor(settings.distractors, spec.name, action, distractor_rng)
            if picked is not None:
                events.append(
                    ScheduledEvent(
                        "distractor", f"d/{at}", picked.text, action, at, about=picked.source
                    )
                )
    cast = cast_of(spec, problem, reference)
    events = [_cast(e, cast, annotation) for e in events]
    classified = []
    for event in classify(events, reference, spec):
        found = alternatives(event, problem, reference, annotation, spec.release_actions)
        classified.append(replace(event, alternative=found is not None, alternatives=found or ()))
    return Trial(spec.name, index, seed, problem, reference, tuple(classified), cast)


def cast_of(spec: TaskSpec, problem: PlanningTask, reference: Sequence[PlanStep]) -> dict[str, str]:
    """Task object -> the object of its kind the reference plan uses in its role.

    With second objects in the house the closed-world plan may fill a cup's role with
    cup_2; "the cup is broken" is then about cup_2. The judge file names the task's own
    objects (cup_1), meaning "the task's cup": this is where that cup is cast.
    """
    cast = {}
    for name in spec.task_objects:
        kind = problem.objects.get(name)
        cast[name] = name
        for step in reference:
            types = problem.parameter_types(base_action_name(step.action))
            used = [a for t, a in zip(types, step.args, strict=True) if t == kind]
            if used:
                cast[name] = used[0]
                break
    return cast


def _cast(
    event: ScheduledEvent, cast: dict[str, str], annotation: TaskAnnotation | None = None
) -> ScheduledEvent:
    """The event with its targets cast, and the judge file's unsolvable reason if any."""
    if event.effect is None:
        return event
    targets = tuple(cast.get(t, t) for t in event.effect.targets_at(event.action))
    unsolvable = ""
    if annotation is not None:
        index = int(event.key.rsplit("/", 1)[1])
        declared = annotation.unsolvable.get(index)
        if declared is not None and declared.covers(event.action):
            unsolvable = declared.reason
    return replace(event, targets=targets, unsolvable=unsolvable)


def step_chance(dataset: SituationDataset, spec: TaskSpec, action: str, p: float) -> float:
    """The journal protocol's chance of a situation at a step of `action` (at most 1).

    `p` scaled by the crowd's reports at `action` over the mean reports per action the
    dataset names for the task: an often-reported step raises more, a step reported
    once rarely, and a step the crowd never named never.
    """
    reports: dict[str, int] = {}
    for situation in dataset.for_task(spec.dataset_id or 0):
        for name, count in situation.at_actions:
            reports[name] = reports.get(name, 0) + count
    if not reports or reports.get(action, 0) <= 0:
        return 0.0
    mean = sum(reports.values()) / len(reports)
    return min(1.0, p * reports[action] / mean)


def _one_situation(
    spec: TaskSpec,
    reference: Sequence[PlanStep],
    dataset: SituationDataset,
    annotation: TaskAnnotation,
    rng: random.Random,
) -> list[ScheduledEvent]:
    actions = [base_action_name(s.action) for s in reference]
    pairs = [
        (situation, action, count)
        for situation in dataset.for_task(spec.dataset_id or 0)
        for action, count in situation.at_actions
        if action in actions and count > 0
    ]
    if not pairs:
        return []
    situation, action, _ = rng.choices(pairs, weights=[c for _, _, c in pairs], k=1)[0]
    effect = annotation.effect_of(situation, spec)
    at = actions.index(action)
    key, text, about = situation.key, situation.text, situation.object
    return [ScheduledEvent("situation", key, text, action, at, effect, about)]


def classify(
    events: Sequence[ScheduledEvent], reference: Sequence[PlanStep], spec: TaskSpec
) -> tuple[ScheduledEvent, ...]:
    """Each situation marked blocking or not, as the closed-world plan would meet it.

    Events fire at the first attempt of a step of their action (in `at` order); walking
    the reference plan gives where the closed-world plan sees each. A situation is
    blocking when its effect stops or harms that step or a later one of the plan: it
    disables an object one of them uses (a release step aside, and a perception or
    navigation step where the harm is silent), or puts their action beyond the robot's
    skills. So the closed-world planner, which executes exactly this plan,
    handles no blocking situation by construction.
    """
    pending = sorted(events, key=lambda e: (e.at, e.kind != "distractor"))
    fires_at: dict[int, int] = {}
    for i, step in enumerate(reference):
        base = base_action_name(step.action)
        event = next((e for e in pending if e.action == base), None)
        if event is not None:
            pending.remove(event)
            fires_at[id(event)] = i
    classified = []
    for event in events:
        blocking = False
        if event.kind == "situation" and event.effect is not None:
            start = fires_at.get(id(event), event.at)
            rest = reference[start:]
            effect = event.effect
            if effect.effect is Effect.BEYOND_SKILLS:
                action = event.blocked_action
                harms = not (effect.silent and senses_only(action))
                blocking = harms and any(base_action_name(s.action) == action for s in rest)
            elif effect.effect is Effect.DISABLES:
                targets = set(event.targets)
                blocking = any(
                    base_action_name(s.action) not in spec.release_actions
                    and not (effect.silent and senses_only(base_action_name(s.action)))
                    and targets & set(s.args)
                    for s in rest
                )
        classified.append(replace(event, blocking=blocking))
    return tuple(sorted(classified, key=lambda e: (e.at, e.kind != "distractor")))


def max_attempts(trial: Trial) -> int:
    """A budget every method gets: room to recover, never an endless retry."""
    return 4 * len(trial.reference) + 10


def privileged_for(method_cls: type[BenchMethod], world: TrialWorld) -> PrivilegedAccess | None:
    """The oracle's access for the registered oracle class; None for every other method."""
    wants = bool(getattr(method_cls, "privileged", False))
    registered = is_oracle(method_cls)
    if wants and not registered:
        raise CowpError(
            f"benchmark method {method_cls.name!r} asks for privileged access",
            hint="only the oracle (cowp_ros.bench.methods.oracle) reads the judge; a method "
            "sees the robot's view",
        )
    return PrivilegedAccess(world) if registered else None


def outside_knowledge(method_cls: type, spec: TaskSpec, dataset: Path) -> dict[str, Any]:
    """The options a method gets: the outside knowledge it declares, read here as text,
    so that no method needs the dataset's path (its process cannot read the dataset)."""
    wanted = getattr(method_cls, "outside_knowledge", "")
    if not wanted:
        return {}
    if wanted != GPT3_ANSWERS:
        raise CowpError(
            f"benchmark method {getattr(method_cls, 'name', method_cls)!r} asks for outside "
            f"knowledge {wanted!r}, which the runner does not have",
            hint=f"the runner hands out {GPT3_ANSWERS!r} (the original system's answers)",
        )
    path = dataset / GPT3_ANSWERS / f"experience_task_{spec.dataset_id}.txt"
    if not path.is_file():
        raise CowpError(
            f"the external knowledge base {getattr(method_cls, 'name', '')} needs is missing: "
            f"no {path}",
            hint="give `cowp bench --dataset` the folder of the COWP situation dataset, "
            "which holds gpt3_answers/",
        )
    return {GPT3_ANSWERS: path.read_text(encoding="utf-8", errors="replace")}


def run_one(
    method_cls: type[BenchMethod],
    spec: TaskSpec,
    trial: Trial,
    annotation: TaskAnnotation,
    planner: Planner,
    model: LanguageModel | None,
    options: dict[str, Any] | None = None,
    sampling: Sampling | None = None,
    sealed: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """Run one method on one trial and return its record (never raises on method bugs).

    `options` reach the method as `context.options` (the runner puts outside knowledge
    a method declares there, `outside_knowledge`: EK's GPT-3 answers, as text, never a
    path). `sampling`: the model samples its answers with this temperature and seed
    during the trial (the record keeps both). `sealed`: folders the method's process
    may not read besides the judge files' own, the default dataset and the kept results
    (the run's dataset and output folder)."""
    metered = MeteredModel(model) if (model is not None and method_cls.uses_llm) else None
    sampled = sampling if metered is not None else None
    if sampled is not None:
        set_sampling = getattr(model, "set_sampling", None)
        if not callable(set_sampling):
            raise CowpError(
                f"the model client {type(model).__name__} cannot sample answers",
                hint="run without --temperature, or use the embedded model or an "
                "OpenAI-compatible server",
            )
        set_sampling(sampled)
    try:
        roots = sealed_roots([annotation.path.parent, *sealed])
        record = _run_one(method_cls, spec, trial, annotation, planner, metered, options, roots)
    finally:
        if sampled is not None:
            model.set_sampling(None)  # type: ignore[union-attr]
    if sampled is not None:
        record["sampling"] = sampled.to_dict()
    return record


def _run_one(
    method_cls: type[BenchMethod],
    spec: TaskSpec,
    trial: Trial,
    annotation: TaskAnnotation,
    planner: Planner,
    metered: MeteredModel | None,
    options: dict[str, Any] | None,
    roots: tuple[str, ...],
) -> dict[str, Any]:
    world = TrialWorld(
        spec,
        trial.problem,
        trial.events,
        annotation,
        max_attempts=max_attempts(trial),
        cast=trial.cast,
    )
    privileged = privileged_for(method_cls, world)
    started = time.monotonic()
    try:
        error, trace = run_behind_boundary(
            method_cls,
            spec,
            planner,
            world.view(),
            method_seed(trial.seed, method_cls.name),
            dict(options or {}),
            metered,
            privileged,
            roots,
        )
    except BoundaryError as err:
        error, trace = f"BoundaryError: {err}", []
    if error:
        world.give_up(f"error: {error}")
        print(f"\n{method_cls.name} {trial.name}: {error}", file=sys.stderr)
    elif not world.finished:
        world.give_up("the method returned before the goal was reached")
    record = world.record
    fired = {f["key"] for f in record.fired}
    changed = {c["key"] for c in record.changed_by_harmless}
    completed = record.completed
    situations = []
    distractors = []
    for event in trial.events:
        entry = event.to_dict() | {"fired": event.key in fired, "changed": event.key in changed}
        if event.kind == "situation":
            entry["passed"] = world.passed(event.key)
            entry["handled"] = bool(
                event.blocking and (entry["fired"] or entry["passed"]) and completed
            )
            entry["how"] = world.how_handled(event) if entry["handled"] else ""
            entry["ran_into"] = event.key in record.ran_into
            entry["gave_up_rightly"] = bool(event.blocking and world.gave_up_rightly(event))
            situations.append(entry)
        else:
            distractors.append(entry)
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
        "situations": situations,
        "distractors": distractors,
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


TIMING_KEYS = ("seconds",)
"""Record fields that depend on the machine, not the seed (left out when comparing runs)."""


_SECONDS = re.compile(r"\[\d+(?:\.\d+)? s\]")


def comparable(record: dict[str, Any]) -> dict[str, Any]:
    """A record without its timings and the cache's calls/hits split (compare two runs):
    what must be the same for the same seed, whatever --jobs and the machine."""
    data = {k: v for k, v in record.items() if k not in TIMING_KEYS}
    data["trace"] = [_SECONDS.sub("[t]", line) for line in data.get("trace", [])]
    usage = dict(data.get("usage") or {})
    questions = usage.pop("calls", 0) + usage.pop("cache_hits", 0)
    usage.pop("seconds", None)
    usage.pop("prompt_tokens", None)
    usage.pop("completion_tokens", None)
    data["usage"] = usage | {"questions": questions}
    return data


def trial_path(out: Path, method: str, trial_name: str) -> Path:
    return out / "trials" / method / f"{trial_name}.json"


def check_config(out: Path, settings: BenchSettings) -> None:
    """Refuse to mix trials of different settings in one folder."""
    path = out / "config.json"
    wanted = settings.to_dict()
    if path.is_file():
        saved = json.loads(path.read_text())
        saved["bench_version"] = saved_version(saved)
        if saved != wanted:
            differ = sorted(k for k in {*wanted, *saved} if saved.get(k) != wanted.get(k))
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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    _last: float = 0.0

    def update(self, label: str, *, skipped: bool = False) -> None:
        with self._lock:
            self.done += 1
            self.skipped += int(skipped)
            now = time.monotonic()
            if now - self._last < 1.0 and self.done < self.total:
                return  # a log file gets a line a second at most, not one per trial
            self._last = now
            ran = self.done - self.skipped
            elapsed = time.monotonic() - self.started
            eta = ""
            if ran and self.total > self.done:
                eta = f" eta {_duration(elapsed / ran * (self.total - self.done))}"
            filled = int(self.width * self.done / max(self.total, 1))
            bar = "#" * filled + "." * (self.width - filled)
            stream = self.stream or sys.stderr
            stream.write(
                f"\r[{bar}] {self.done}/{self.total} ({self.skipped} resumed) "
                f"{_duration(elapsed)}{eta}  {label[:40]:<40}"
            )
            stream.flush()

    def close(self) -> None:
        stream = self.stream or sys.stderr
        stream.write("\n")
        stream.flush()


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.1f} min"
    return f"{seconds / 3600:.1f} h"


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
    jobs: int = 1,
) -> int:
    """Run what is missing under `out`; returns how many (method, trial) pairs ran.

    `model_factory` is called once per worker (lazily, when a method needs a model): each
    worker's client counts its own usage, so a trial's usage is its own with `jobs` > 1.
    """
    if jobs < 1:
        raise CowpError("--jobs must be at least 1")
    bases = {spec.name: spec.load_house() for spec in specs}
    local = threading.local()
    ran = 0
    ran_lock = threading.Lock()

    def model() -> LanguageModel | None:
        if not hasattr(local, "model"):
            local.model = model_factory()
        return local.model

    def run_trial(index: int, spec: TaskSpec) -> None:
        nonlocal ran
        trial_name = f"{spec.name}-{index:04d}"
        missing = [m for m in methods if not trial_path(out, m.name, trial_name).is_file()]
        for method in methods:
            if method not in missing and progress:
                progress.update(f"{method.name} {trial_name}", skipped=True)
        if not missing:
            return
        annotation = annotations[spec.name]
        trial = draw_trial(spec, index, settings, dataset, annotation, planner, bases[spec.name])
        for method in missing:
            model_now = model() if method.uses_llm else None
            options = outside_knowledge(method, spec, Path(settings.dataset))
            sampling = settings.sampling_for(spec.name, index)
            sealed = (settings.dataset, out)
            record = run_one(
                method, spec, trial, annotation, planner, model_now, options, sampling, sealed
            )
            path = trial_path(out, method.name, trial.name)
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(record, indent=1) + "\n")
            tmp.replace(path)
            with ran_lock:
                ran += 1
            if progress:
                progress.update(f"{method.name} {trial.name}")

    # Trial index outermost: a run stopped early has (nearly) as many trials of each task.
    work = [(index, spec) for index in range(trials) for spec in specs]
    if jobs == 1:
        for index, spec in work:
            run_trial(index, spec)
        return ran
    with ThreadPoolExecutor(max_workers=jobs, thread_name_prefix="bench") as pool:
        futures = [pool.submit(run_trial, index, spec) for index, spec in work]
        done, _ = wait(futures, return_when=FIRST_EXCEPTION)
        for future in done:
            if future.exception() is not None:
                for other in futures:
                    other.cancel()
                raise future.exception()  # type: ignore[misc]
    return ran


def _archived(out: Path) -> Iterator[tuple[str, bytes]]:
    """(member name, bytes) of every trial record in `<out>/trials.tar.xz`."""
    with tarfile.open(out / ARCHIVE, "r:xz") as archive:
        for member in archive.getmembers():
            if member.isfile() and member.name.endswith(".json"):
                handle = archive.extractfile(member)
                if handle is not None:
                    yield member.name, handle.read()


def load_records(
    out: Path, methods: Sequence[str], tasks: Sequence[str], trials: int
) -> list[dict[str, Any]]:
    """The saved records of this selection (trial indices below `trials`).

    From `<out>/trials/` when it is there, else from the archive `<out>/trials.tar.xz`
    (the kept evidence under benchmarks/results/ holds only the archive).
    """
    wanted = {
        f"trials/{m}/{t}-{i:04d}.json": (m, t, i)
        for m in methods
        for t in tasks
        for i in range(trials)
    }
    found: dict[str, dict[str, Any]] = {}
    if (out / "trials").is_dir():
        for name in wanted:
            path = out / name
            if path.is_file():
                found[name] = json.loads(path.read_text())
    elif (out / ARCHIVE).is_file():
        for name, data in _archived(out):
            if name in wanted:
                found[name] = json.loads(data)
    return [found[name] for name in sorted(found, key=lambda n: wanted[n])]


def write_archive(out: Path) -> Path:
    """Pack `<out>/trials/` into `<out>/trials.tar.xz`, deterministic member order."""
    target = out / ARCHIVE
    with tarfile.open(target, "w:xz", preset=9) as archive:
        for path in sorted((out / "trials").rglob("*.json")):
            data = path.read_bytes()
            info = tarfile.TarInfo(str(path.relative_to(out)))
            info.size = len(data)
            info.mtime = 0
            archive.addfile(info, io.BytesIO(data))
    return target
