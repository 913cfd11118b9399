"""The grounded method's loop policies: a failed step blames a situation judged harmless.

The paper's COWP only replans after a failed step (`cowp.policies.NoBlame`). The
grounded method takes the failure as the evidence its judgement lacked and blocks the
step with that situation's fact: at once for a situation about one of the step's
objects, and for one about the world once the step has failed twice in a row (a single
failure after "the doorbell is ringing" is more likely the robot's own). A situation
about the world may also find a stand-in (`world_stand_ins`).
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.answers import SituationFact
from cowp_ros.cowp.loop_state import KnownSituation
from cowp_ros.cowp.policies import FactFor, GuardByFact, LoopPolicies, SetAsideReplacedKinds
from cowp_ros.planning import PlanStep


class BlameHarmlessSituation:
    """The latest situation judged harmless whose fact is about an object of the failed
    step: "the plate is not found", seen while the robot looked for the cupboard, is
    blamed when taking the plate out fails. Failing that, once the step has failed
    `world_after` times in a row, the latest situation judged harmless that is about the
    world ("there is a power outage", then the vacuum cleans nothing, twice). Situations
    with a fact already (they block something) or set aside are not blamed."""

    def __init__(self, world_after: int = 2) -> None:
        self.world_after = world_after

    def blamed(
        self,
        step: PlanStep,
        situations: Sequence[KnownSituation],
        fact_for: FactFor,
        failures: int = 1,
    ) -> tuple[KnownSituation, SituationFact] | None:
        world: tuple[KnownSituation, SituationFact] | None = None
        for known in reversed(situations):
            if known.fact is not None or known.set_aside:
                continue
            fact = fact_for(known)
            if fact.subject is not None and fact.subject in step.args:
                return known, fact
            if fact.subject is None and world is None and failures >= self.world_after:
                world = (known, fact)
        return world


GROUNDED_POLICIES = LoopPolicies(
    blame=BlameHarmlessSituation(),
    moot=SetAsideReplacedKinds(),
    guard=GuardByFact(),
    world_stand_ins=True,
)
"""The grounded method: a failed step blames a situation judged harmless about it (or,
failing twice, one about the world), and a situation about the world may find a
stand-in (its acquirer tries a plan with each kind before asking about it)."""
