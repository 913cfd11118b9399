"""LLM-guided search: the language model ranks next actions, the symbols keep it honest.

A beam search over states. At each depth, every state in the beam is expanded: the
symbolic side grounds the domain's actions and lists those whose preconditions hold in
that state (and that lead somewhere new); the language model is shown the goal, the
initial state, the steps so far and that numbered list, and names the best `beam` of
them, best first. Its proposals are parsed and checked: a number outside the list, an
action the domain does not have, or one whose preconditions do not hold is refused with
a reason (kept in `PlanResult.extra["refused"]`), never applied. The children of all
beam states are ranked by the sum of their ranks along the path and the best `beam`
form the next beam.

The model never writes the plan: every step is an applicable ground action by
construction, and the finished plan is verified once more, independently, by replaying
it through `cowp_ros.pddl.edits` (preconditions checked, effects applied, goal tested)
before it is returned. Beam search is incomplete: when the beam runs dry the result is
NO_PLAN ("not found", not "proven impossible") unless a `fallback` planner is given,
which then solves the task and is named in the result.

The prompt puts what does not change (initial state, goal) first and appends the steps
so far, so llama.cpp's prompt cache re-evaluates only the tail of each question.
"""

from __future__ import annotations

import heapq
import itertools
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.pddl import Atom, PlanningTask, edits
from cowp_ros.pddl.formulas import literals_of
from cowp_ros.pddl.model import atom_of
from cowp_ros.pddl.negation import check_strips
from cowp_ros.planning.planner import DEFAULT_TIMEOUT_S, Planner, PlannerError
from cowp_ros.planning.result import PlanResult, PlanStatus, PlanStep

NAME = "llm_guided"
DEFAULT_BEAM = 3
DEFAULT_MAX_DEPTH = 60
MAX_REFUSALS_KEPT = 50

GUIDE_SYSTEM = (
    "You guide a robot's task planner. You are given the initial state, the goal, the "
    "steps done so far and a numbered list of possible next actions in PDDL. Pick the "
    "actions that make the most progress towards the goal using common sense about the "
    "task. Answer only with option numbers, best first, separated by commas."
)


# ---- grounding ----------------------------------------------------------------------


@dataclass(frozen=True)
class GroundAction:
    """One action with its arguments bound, as sets of ground atoms."""

    step: PlanStep
    pre_pos: frozenset[Atom]
    pre_neg: frozenset[Atom]
    add: frozenset[Atom]
    delete: frozenset[Atom]

    def applicable(self, state: frozenset[Atom]) -> bool:
        return self.pre_pos <= state and not (self.pre_neg & state)

    def apply(self, state: frozenset[Atom]) -> frozenset[Atom]:
        """Deletes before adds, as PDDL says."""
        return (state - self.delete) | self.add


def ground_actions(task: PlanningTask) -> list[GroundAction]:
    """Every ground action whose static preconditions hold in the initial state.

    A predicate no action changes is static: a ground action needing a static atom the
    initial state lacks can never apply, so it is dropped here (that keeps
    `lift_cover cover_1 bolt_3 bolt_9` out of every list the model reads). A task
    beyond STRIPS (quantifiers, conditional effects...) is refused by name.
    """
    check_strips(task, planner="the llm_guided planner")
    changed = {
        atom_of(lit.predicate).predicate
        for action in task.domain.actions
        for lit in literals_of(action.effect)
    }
    init = task.init_atoms
    grounded: list[GroundAction] = []
    for name in sorted(task.actions):
        action = task.actions[name]
        params = [str(v) for v in action.parameters]
        domains = [task.objects_of_type(t) for t in task.parameter_types(name)]
        pre = [(atom_of(lit.predicate), lit.positive) for lit in literals_of(action.precondition)]
        eff = [(atom_of(lit.predicate), lit.positive) for lit in literals_of(action.effect)]
        for args in itertools.product(*domains):
            binding = dict(zip(params, args, strict=True))
            pre_pos, pre_neg = _bind(pre, binding)
            static_missing = any(a.predicate not in changed and a not in init for a in pre_pos)
            static_blocking = any(a.predicate not in changed and a in init for a in pre_neg)
            if static_missing or static_blocking:
                continue
            add, delete = _bind(eff, binding)
            grounded.append(
                GroundAction(PlanStep(name, tuple(args)), pre_pos, pre_neg, add, delete)
            )
    return grounded


def _bind(
    literals: Iterable[tuple[Atom, bool]], binding: dict[str, str]
) -> tuple[frozenset[Atom], frozenset[Atom]]:
    positive: set[Atom] = set()
    negative: set[Atom] = set()
    for atom, is_positive in literals:
        ground = Atom(atom.predicate, tuple(binding.get(a, a) for a in atom.args))
        (positive if is_positive else negative).add(ground)
    return frozenset(positive), frozenset(negative)


def goal_literals(task: PlanningTask) -> tuple[frozenset[Atom], frozenset[Atom]]:
    """The goal as (atoms that must hold, atoms that must not)."""
    literals = [(atom_of(lit.predicate), lit.positive) for lit in literals_of(task.problem.goal)]
    return _bind(literals, {})


# ---- verification -------------------------------------------------------------------


def verify_plan(task: PlanningTask, steps: Sequence[PlanStep]) -> list[str]:
    """Why `steps` is not a valid plan for `task` (an empty list when it is).

    Deliberately a second code path: it reads preconditions through
    `edits.precondition_literals` and applies effects with `edits.apply_action`, so a
    bug in this module's grounding cannot vouch for its own plans.
    """
    problems: list[str] = []
    current = task
    for index, step in enumerate(steps, start=1):
        if step.action not in current.actions:
            return [f"step {index} {step}: the domain has no action {step.action!r}"]
        params = [str(v) for v in current.action(step.action).parameters]
        if len(params) != len(step.args):
            return [f"step {index} {step}: {step.action} takes {len(params)} argument(s)"]
        unknown = [a for a in step.args if a not in current.objects]
        if unknown:
            return [f"step {index} {step}: unknown object(s) {', '.join(unknown)}"]
        binding = dict(zip(params, step.args, strict=True))
        state = current.init_atoms
        for literal in edits.precondition_literals(current, step.action):
            ground = Atom(
                literal.atom.predicate, tuple(binding.get(a, a) for a in literal.atom.args)
            )
            if (ground in state) != literal.positive:
                wanted = "true" if literal.positive else "false"
                problems.append(f"step {index} {step}: {ground} must be {wanted}")
        if problems:
            return problems
        current = edits.apply_action(current, step.action, step.args)
    must, must_not = goal_literals(task)
    final = current.init_atoms
    problems += [f"goal {atom} does not hold at the end" for atom in sorted(must - final)]
    problems += [f"goal (not {atom}) is violated at the end" for atom in sorted(must_not & final)]
    return problems


# ---- the model's proposals ----------------------------------------------------------


@dataclass(frozen=True)
class Refusal:
    """A proposal the symbolic check turned down, and why."""

    proposal: str
    reason: str

    def to_dict(self) -> dict[str, str]:
        return {"proposal": self.proposal, "reason": self.reason}


_PROPOSAL = re.compile(r"\(([^()]*)\)|(\d+)")


def parse_proposals(
    answer: str,
    options: Sequence[GroundAction],
    state: frozenset[Atom],
    all_actions: dict[PlanStep, GroundAction],
    limit: int,
) -> tuple[list[GroundAction], list[Refusal]]:
    """The options the model named (by number or as `(action args)`), in its order.

    Only members of `options` (applicable and new) are accepted; a duplicate is ignored;
    everything else is refused with the reason a person needs to see.
    """
    accepted: list[GroundAction] = []
    refused: list[Refusal] = []
    by_step = {option.step: option for option in options}
    for match in _PROPOSAL.finditer(answer[:2000]):
        if len(accepted) >= limit:
            break
        text, number = match.group(1), match.group(2)
        if number is not None:
            index = int(number)
            if not 1 <= index <= len(options):
                refused.append(Refusal(number, f"there is no option {index} (1..{len(options)})"))
                continue
            chosen = options[index - 1]
        else:
            shown = f"({text.strip()[:80]})"
            try:
                step = PlanStep.parse(text)
            except ValueError:
                refused.append(Refusal(shown, "an empty action"))
                continue
            chosen_or_none = by_step.get(step)
            if chosen_or_none is None:
                refused.append(Refusal(shown, _why_not(step, state, all_actions)))
                continue
            chosen = chosen_or_none
        if chosen not in accepted:
            accepted.append(chosen)
    return accepted, refused


def _why_not(
    step: PlanStep, state: frozenset[Atom], all_actions: dict[PlanStep, GroundAction]
) -> str:
    ground = all_actions.get(step)
    if ground is None:
        return "not a ground action of the domain (unknown action, objects or arity)"
    missing = sorted(ground.pre_pos - state)
    if missing:
        return f"its preconditions do not hold: {', '.join(map(str, missing[:3]))} false"
    blocking = sorted(ground.pre_neg & state)
    if blocking:
        return f"its preconditions do not hold: {', '.join(map(str, blocking[:3]))} true"
    return "it leads back to a state the search has already seen"


# ---- the planner --------------------------------------------------------------------


@dataclass
class SearchStats:
    """What the search cost: the benchmark's figures."""

    expanded: int = 0
    generated: int = 0
    llm_calls: int = 0
    single_option_nodes: int = 0
    unranked_fallbacks: int = 0
    backtracks: int = 0
    over_budget_nodes: int = 0
    depth_cut: bool = False
    refused: list[Refusal] = field(default_factory=list)
    refused_total: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "expanded": self.expanded,
            "generated": self.generated,
            "llm_calls": self.llm_calls,
            "single_option_nodes": self.single_option_nodes,
            "unranked_fallbacks": self.unranked_fallbacks,
            "backtracks": self.backtracks,
            "over_budget_nodes": self.over_budget_nodes,
            "refused_total": self.refused_total,
            "refused": [r.to_dict() for r in self.refused],
        }


@dataclass(frozen=True)
class _Node:
    state: frozenset[Atom]
    steps: tuple[PlanStep, ...]
    score: int


class LLMGuidedPlanner:
    """A `Planner` whose search order comes from a language model (see module docstring)."""

    def __init__(
        self,
        model: LanguageModel,
        *,
        beam: int = DEFAULT_BEAM,
        max_depth: int = DEFAULT_MAX_DEPTH,
        fallback: Planner | None = None,
        max_llm_calls: int | None = None,
    ) -> None:
        """`max_llm_calls` bounds the model calls of one `solve`; past it, nodes keep the
        symbolic order (the search goes on, complete, without commonsense)."""
        if beam < 1:
            raise PlannerError(f"the beam width must be at least 1, not {beam}")
        if max_depth < 1:
            raise PlannerError(f"the depth limit must be at least 1, not {max_depth}")
        self.model = model
        self.beam = beam
        self.max_depth = max_depth
        self.fallback = fallback
        self.max_llm_calls = max_llm_calls
        self.name = NAME if fallback is None else f"{NAME}+{fallback.name}"
        self.last_stats = SearchStats()

    def solve(self, task: PlanningTask, timeout_s: float = DEFAULT_TIMEOUT_S) -> PlanResult:
        started = time.monotonic()
        deadline = started + timeout_s
        stats = SearchStats()
        self.last_stats = stats
        actions = ground_actions(task)
        by_step = {a.step: a for a in actions}
        must, must_not = goal_literals(task)
        root = _Node(task.init_atoms, (), 0)
        beam = [root]
        seen = {root.state}
        reserve: list[tuple[int, int, int, _Node]] = []  # (score, depth, order, node)
        order = itertools.count()
        while beam:
            for node in beam:
                if must <= node.state and not (must_not & node.state):
                    return self._verified(task, node.steps, started, stats)
            children: dict[frozenset[Atom], _Node] = {}
            for node in beam:
                if time.monotonic() > deadline:
                    return self._result(PlanStatus.TIMEOUT, started, stats, "deadline passed")
                if len(node.steps) >= self.max_depth:  # a leaf at the bound: others go on
                    stats.depth_cut = True
                    continue
                stats.expanded += 1
                options = [
                    a
                    for a in actions
                    if a.applicable(node.state) and a.apply(node.state) not in seen
                ]
                ranked = self._rank(task, node, options, by_step, stats)
                # The model's picks first (rank 0..k-1), every other option after them:
                # those wait in the reserve, so the search stays complete.
                rest = [o for o in options if o not in ranked]
                for rank, chosen in enumerate([*ranked, *rest]):
                    penalty = rank if rank < len(ranked) else self.beam + rank
                    child = _Node(
                        chosen.apply(node.state), (*node.steps, chosen.step), node.score + penalty
                    )
                    stats.generated += 1
                    known = children.get(child.state)
                    if known is None or child.score < known.score:
                        children[child.state] = child
            ordered = sorted(children.values(), key=lambda n: (n.score, len(n.steps)))
            beam = ordered[: self.beam]
            for node in ordered[self.beam :]:
                heapq.heappush(reserve, (node.score, len(node.steps), next(order), node))
            while len(beam) < self.beam and reserve:  # refill from the best unexplored
                candidate = heapq.heappop(reserve)[3]
                if candidate.state not in seen and all(b.state != candidate.state for b in beam):
                    stats.backtracks += 1
                    beam.append(candidate)
            seen.update(n.state for n in beam)
        if stats.depth_cut:
            why = f"no plan of at most {self.max_depth} steps"
            return self._ran_dry(task, started, deadline, stats, why)
        return self._ran_dry(task, started, deadline, stats, "every reachable state was expanded")

    # ---- internals ------------------------------------------------------------------

    def _rank(
        self,
        task: PlanningTask,
        node: _Node,
        options: list[GroundAction],
        by_step: dict[PlanStep, GroundAction],
        stats: SearchStats,
    ) -> list[GroundAction]:
        """The model's best `beam` options for `node` (no call when there is one option)."""
        if len(options) <= 1:
            stats.single_option_nodes += len(options)
            return options
        if self.max_llm_calls is not None and stats.llm_calls >= self.max_llm_calls:
            stats.over_budget_nodes += 1
            return options[: self.beam]
        stats.llm_calls += 1
        answer = self.model.complete(
            guide_prompt(task, node.steps, options, self.beam), system=GUIDE_SYSTEM, max_tokens=16
        )
        accepted, refused = parse_proposals(answer, options, node.state, by_step, self.beam)
        stats.refused_total += len(refused)
        room = MAX_REFUSALS_KEPT - len(stats.refused)
        stats.refused.extend(refused[: max(room, 0)])
        if not accepted:  # nothing usable: keep searching in the symbolic order
            stats.unranked_fallbacks += 1
            return options[: self.beam]
        return accepted

    def _verified(
        self, task: PlanningTask, steps: tuple[PlanStep, ...], started: float, stats: SearchStats
    ) -> PlanResult:
        problems = verify_plan(task, steps)
        if problems:  # a bug in the grounding: never hand such a plan to a robot
            raise PlannerError(
                f"{NAME} built a plan that does not verify: {'; '.join(problems[:3])}",
                hint="please report this with the domain and problem",
            )
        return self._result(PlanStatus.FOUND, started, stats, "verified", steps)

    def _ran_dry(
        self, task: PlanningTask, started: float, deadline: float, stats: SearchStats, why: str
    ) -> PlanResult:
        if self.fallback is None:
            return self._result(PlanStatus.NO_PLAN, started, stats, why)
        left = max(deadline - time.monotonic(), 0.1)
        result = self.fallback.solve(task, left)
        detail = f"{why}; {self.fallback.name} took over: {result.detail or result.status.value}"
        extra = {**stats.to_dict(), "fallback": self.fallback.name}
        return PlanResult(
            result.status, self.name, time.monotonic() - started, result.steps, detail, extra
        )

    def _result(
        self,
        status: PlanStatus,
        started: float,
        stats: SearchStats,
        detail: str,
        steps: tuple[PlanStep, ...] = (),
    ) -> PlanResult:
        return PlanResult(
            status, self.name, time.monotonic() - started, steps, detail, stats.to_dict()
        )


def guide_prompt(
    task: PlanningTask, done: Sequence[PlanStep], options: Sequence[GroundAction], beam: int
) -> str:
    """The question for one state: fixed parts first so the server's prefix cache hits."""
    init = " ".join(str(a) for a in sorted(task.init_atoms))
    goal = " ".join(
        [str(a) for a in sorted(goal_literals(task)[0])]
        + [f"(not {a})" for a in sorted(goal_literals(task)[1])]
    )
    steps = " ".join(str(s) for s in done) or "nothing yet"
    listed = "\n".join(f"{i}. {option.step}" for i, option in enumerate(options, start=1))
    return (
        f"Initial state: {init}\nGoal: {goal}\nSteps done so far: {steps}\n"
        f"Possible next actions:\n{listed}\n"
        f"Which {min(beam, len(options))} of these actions should come next? "
        "Answer with their numbers, best first, separated by commas."
    )


def make_llm_guided_planner(
    model: LanguageModel,
    beam: int = DEFAULT_BEAM,
    *,
    max_depth: int = DEFAULT_MAX_DEPTH,
    fallback: Planner | None = None,
    max_llm_calls: int | None = None,
) -> LLMGuidedPlanner:
    """The LLM-guided planner over `model` (what `make_planner("llm_guided")` cannot build
    on its own: it has no model to ask)."""
    if model is None:
        raise CowpError("the llm_guided planner needs a language model")
    return LLMGuidedPlanner(
        model, beam=beam, max_depth=max_depth, fallback=fallback, max_llm_calls=max_llm_calls
    )


__all__ = [
    "GUIDE_SYSTEM",
    "GroundAction",
    "LLMGuidedPlanner",
    "Refusal",
    "SearchStats",
    "ground_actions",
    "guide_prompt",
    "make_llm_guided_planner",
    "parse_proposals",
    "verify_plan",
]
