"""A frugal Knowledge Acquirer: the likeliest stand-ins first, and stop at the first good one.

COWP's acquirer puts Prompt 2 to every kind of object present (30 kinds, 4 actions each,
then Prompt 3 to choose): with the embedded 1.5B model that was 15 questions for one dirty
cup, and it still said a plate can be filled with water. This one asks few questions and
asks them where they count:

1. **A free prior order** (`rank`): the kinds present, by how close their names are in
   meaning to the failed object's kind (all-MiniLM-L6-v2 sentence embeddings, no model
   call): a mug before a broom for a cup. Only the `max_candidates` closest above
   `min_similarity` are tried at all: a chair is never asked about as a faucet.
2. **The role question first** (`assess`): "Can a mug be used instead of the cup, in the
   task of ...?", accepted only when P(yes) reaches `role_threshold` (the threshold
   chosen on the dev tasks' judge labels).
3. **Per-action questions only for a candidate that passed it**, the failing step's
   action first, stopping at the first "no": a plate can be found and held, but not
   filled with water.
4. **Stop at the first accepted kind** (`enough`), so Prompt 3 is never needed.

Given a planner, the domain speaks first (`stand_in_plans`): a kind with no plan in the
role is never asked about, the per-action questions are only about the actions its plan
uses, and a kind the domain vouches for (its plan relies on a static fact about it,
`(manual broom_1)` for sweeping) goes before the others and skips the role question:
the domain's author has said it can do that job, so its name need not convince the
model. Only the `max_candidates` kinds that pass are asked about.

The questions themselves are COWP's acquirer's (`acquirer.KnowledgeAcquirer`: role
question, then Prompt 2 per action until the first "no"): `FrugalAcquirer` wraps any
`Acquirer` (in this process, or the commonsense node's client) and only decides which
kinds are asked, in which order, and when to stop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cowp_ros.cowp.answers import CandidateAssessment, Selection
from cowp_ros.cowp.ports import Acquirer
from cowp_ros.llm.embeddings import Embedder
from cowp_ros.methods.grounded.stand_in_plans import (
    StandInPlan,
    may_be_vouched,
    plan_with,
    vouching_predicates,
)
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner
from cowp_ros.tasks.phrases import noun


class FrugalAcquirer:
    """The `Acquirer` port: `inner`'s questions, asked frugally (see the module docstring).

    `embedder`: None keeps the given (alphabetical) order, so the acquirer still works
    where the embedding model is not installed, only less frugally. `planner`: None
    asks about the closest kinds by name alone (no plan is tried for them).
    """

    def __init__(
        self,
        inner: Acquirer,
        *,
        embedder: Embedder | None,
        max_candidates: int = 3,
        min_similarity: float = 0.0,
        planner: Planner | None = None,
        planner_timeout_s: float = 10.0,
    ) -> None:
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be at least 1, not {max_candidates}")
        self.inner = inner
        self.embedder = embedder
        self.max_candidates = max_candidates
        self.min_similarity = min_similarity
        self.planner = planner
        self.planner_timeout_s = planner_timeout_s
        self.last_ranking: list[tuple[str, float]] = []
        """The kinds of the last `rank` and their similarity, for the report."""
        self.plans: dict[tuple[str, str], StandInPlan | None] = {}
        """(role, kind) -> the plan the domain allows the kind in the role (None: none)."""
        self._ruled_out: dict[str, tuple[str, ...]] = {}

    def similarities(self, role_type: str, kinds: Sequence[str]) -> list[float]:
        """Cosine similarity of "a <kind>" to "a <role>" for each kind (1.0 each without
        an embedder, so the order stays as given)."""
        if self.embedder is None or not kinds:
            return [1.0] * len(kinds)
        vectors = self.embedder.embed([noun(role_type, "a"), *(noun(k, "a") for k in kinds)])
        return [float(x) for x in np.asarray(vectors[1:]) @ np.asarray(vectors[0])]

    def rank(
        self,
        task: PlanningTask,
        role_type: str,
        candidates: Sequence[tuple[str, str]],
        task_description: str,
    ) -> list[tuple[str, str]]:
        """The closest kinds in meaning first; only the `max_candidates` closest above
        `min_similarity` (ties keep the given order). With a planner, kinds with no plan
        in the role are left out and those the domain vouches for come first."""
        scores = self.similarities(role_type, [kind for kind, _ in candidates])
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        close = [i for i in order if scores[i] >= self.min_similarity]
        self.last_ranking = [(candidates[i][0], round(scores[i], 3)) for i in order]
        if self.planner is None:
            return [candidates[i] for i in close[: self.max_candidates]]
        vouching = vouching_predicates(task, role_type)
        self.plans = {}
        vouched = [
            i
            for i in order
            if may_be_vouched(task, candidates[i][0], vouching)
            and (plan := self._plan(task, role_type, candidates[i][0], vouching)) is not None
            and plan.vouched
        ]
        chosen = vouched[: self.max_candidates]
        ruled_out: list[str] = []
        for i in close:
            if len(chosen) >= self.max_candidates:
                break
            kind = candidates[i][0]
            if i in vouched:
                continue
            if self._plan(task, role_type, kind, vouching) is None:
                ruled_out.append(kind)
            else:
                chosen.append(i)
        self._ruled_out[role_type] = tuple(ruled_out[: self.max_candidates])
        return [candidates[i] for i in chosen]

    def ruled_out(self, role_type: str) -> tuple[str, ...]:
        """The `DomainRuling` port: the close kinds the last ranking for `role_type` left
        out because no plan has them in the role (at most `max_candidates`, closest
        first), so that "no stand-in" can say the domain gives them no way to do it."""
        return self._ruled_out.get(role_type, ())

    def _plan(
        self, task: PlanningTask, role_type: str, kind: str, vouching: frozenset[str]
    ) -> StandInPlan | None:
        """The plan `kind` allows in the role now (`stand_in_plans.plan_with`)."""
        assert self.planner is not None
        if (role_type, kind) in self.plans:
            return self.plans[(role_type, kind)]
        plan = plan_with(task, self.planner, role_type, kind, self.planner_timeout_s, vouching)
        self.plans[(role_type, kind)] = plan
        return plan

    def enough(self, accepted: Sequence[CandidateAssessment]) -> bool:
        """The first accepted kind is enough: the others are not asked about."""
        return len(accepted) >= 1

    def assess(
        self,
        task: PlanningTask,
        role_type: str,
        actions: Sequence[str],
        candidate_type: str,
        example_object: str,
        task_description: str = "",
    ) -> CandidateAssessment:
        """`inner`'s questions: the role question (not for a kind the domain vouches
        for), then per action until the first no (only the actions of the kind's plan,
        when one was tried)."""
        plan = self.plans.get((role_type, candidate_type))
        if plan is not None:
            actions = [a for a in actions if a in plan.actions] or list(plan.actions)
            if plan.vouched:
                task_description = ""  # no role question: the domain has answered it
        return self.inner.assess(
            task, role_type, actions, candidate_type, example_object, task_description
        )

    def select(
        self,
        accepted: Sequence[CandidateAssessment],
        role_type: str,
        task_description: str,
        situation: str,
    ) -> Selection:
        """The accepted kind, without a question when there is one."""
        if len(accepted) == 1:
            return Selection(accepted[0].candidate_type, None, None, "first accepted")
        return self.inner.select(accepted, role_type, task_description, situation)
