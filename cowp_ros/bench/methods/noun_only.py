"""NOUN_ONLY, a no-model control: drop the object a sentence names, take another of its kind.

It understands no sentence, but reads its nouns: when a sentence names the kind of an
object the rest of its plan uses ("the cup is ..."), it stops using those objects of
that kind and plans again, so the next plan takes another cup if one is present (the
planner fills a cup's role with cups only), and gives up when none is. It does so
whatever the sentence says: "the cup is already clean" costs it the cup as "the cup is
broken" does. A step that fails with no sentence teaches it nothing (it tries again and
gives up after three failures in a row).

It bounds what a trivial reading of the words reaches: a sentence names the object it
is about in most situations, and a spare of the same kind is often present. A method's
handling beyond it, with its harmless trials unchanged, is what understanding adds.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from cowp_ros.bench.methods._common import names
from cowp_ros.bench.methods._control import ControlMethod
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import PlanStep
from cowp_ros.tasks.phrases import noun


def named_objects(
    task: PlanningTask, sentence: str, plan: Sequence[PlanStep], avoided: Collection[str]
) -> set[str]:
    """The objects of the remaining plan whose kind the sentence names."""
    used = {a for step in plan for a in step.args if a in task.objects and a not in avoided}
    return {o for o in used if names(sentence, noun(task.objects[o], ""))}


def nothing(task: PlanningTask, step: PlanStep, avoided: Collection[str]) -> set[str]:
    """A failed step with no sentence names nothing: nothing to drop."""
    return set()


class NounOnly(ControlMethod):
    name = "noun_only"
    label = "noun only (no model)"
    summary = (
        "control: drops the plan's objects of the kind a sentence names, whatever it says; "
        "replans with another of their kind"
    )
    distrust = staticmethod(nothing)
    reads = staticmethod(named_objects)


METHOD = NounOnly
