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

The questions themselves are COWP's acquirer's (`acquirer.KnowledgeAcquirer`: role
question, then Prompt 2 per action until the first "no"): `FrugalAcquirer` wraps any
`Acquirer` (in this process, or the commonsense node's client) and only decides which
kinds are asked, in which order, and when to stop.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from cowp_ros.cowp.ports import Acquirer
from cowp_ros.llm.embeddings import Embedder
from cowp_ros.methods.paper.acquirer import CandidateAssessment, Selection
from cowp_ros.pddl import PlanningTask
from cowp_ros.tasks.phrases import noun


class FrugalAcquirer:
    """The `Acquirer` port: `inner`'s questions, asked frugally (see the module docstring).

    `embedder`: None keeps the given (alphabetical) order, so the acquirer still works
    where the embedding model is not installed, only less frugally.
    """

    def __init__(
        self,
        inner: Acquirer,
        *,
        embedder: Embedder | None,
        max_candidates: int = 3,
        min_similarity: float = 0.0,
    ) -> None:
        if max_candidates < 1:
            raise ValueError(f"max_candidates must be at least 1, not {max_candidates}")
        self.inner = inner
        self.embedder = embedder
        self.max_candidates = max_candidates
        self.min_similarity = min_similarity
        self.last_ranking: list[tuple[str, float]] = []
        """The kinds of the last `rank` and their similarity, for the report."""

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
        `min_similarity` (ties keep the given order)."""
        scores = self.similarities(role_type, [kind for kind, _ in candidates])
        order = sorted(range(len(candidates)), key=lambda i: -scores[i])
        kept = [i for i in order if scores[i] >= self.min_similarity][: self.max_candidates]
        self.last_ranking = [(candidates[i][0], round(scores[i], 3)) for i in order]
        return [candidates[i] for i in kept]

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
        """`inner`'s questions: the role question, then per action until the first no."""
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
