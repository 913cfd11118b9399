"""The related methods as `cowp bench` methods, through the bench's simulator."""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.bench import methods as registry
from cowp_ros.bench.annotations import Effect, SituationEffect, load_annotation
from cowp_ros.bench.metering import MeteredModel
from cowp_ros.bench.methods import MethodContext
from cowp_ros.bench.simulator import ScheduledEvent, TrialWorld
from cowp_ros.llm.scripted import ScriptedModel
from cowp_ros.methods.dkprompt.method import MODE
from cowp_ros.methods.registry import get_method, method_names
from cowp_ros.pddl.edits import keep_objects
from cowp_ros.planning import make_planner
from cowp_ros.tasks import get_task

REPO = Path(__file__).resolve().parents[2]
PRESENT = ["cup_1", "faucet_1", "table_1", "bowl_1", "pan_1", "fork_1"]


def episode(*events: ScheduledEvent) -> TrialWorld:
    """The world of a small fill_cup trial: methods get its `.view()`, tests its `.record`."""
    spec = get_task("fill_cup")
    world = keep_objects(spec.load(), PRESENT)
    annotation = load_annotation(REPO / "benchmarks" / "annotations" / "fill_cup.yaml")
    return TrialWorld(spec, world, tuple(events), annotation, max_attempts=40)


def dirty_cup() -> ScheduledEvent:
    effect = SituationEffect(Effect.DISABLES, ("cup_1",), "", "test")
    text = "the cup is dirty."
    return ScheduledEvent(
        "situation", f"4/{text}", text, "hold_cup", 0, effect, "cup", True, ("cup_1",)
    )


def context(model: ScriptedModel, **options: object) -> MethodContext:
    return MethodContext(
        spec=get_task("fill_cup"),
        planner=make_planner("pyperplan"),
        model=MeteredModel(model),
        seed=0,
        options=dict(options),
    )


def cowp_model(**extra: object) -> ScriptedModel:
    return ScriptedModel(
        yes_no=[
            (r"hold the cup, if the cup is dirty", False),
            (r"(hold|fill|place|find) a bowl", True),
            (r"if the cup is dirty", True),
            (r"a robot to \w+ an? ", False),
        ],
        **extra,  # type: ignore[arg-type]
    )


def test_every_registered_method_is_a_bench_method_of_the_same_name() -> None:
    """`cowp bench --methods` takes the names `cowp run --method` takes: each entry of
    the method registry is a benchmark method under its name, with its label."""
    found = registry.discover()
    for name in method_names():
        assert found[name].name == name
        assert found[name].label == get_method(name).label
        assert found[name].uses_llm


@pytest.mark.parametrize("name", ["cowp_llm_guided", "cowp_llm_state"])
def test_cowp_variants_replace_the_dirty_cup_with_a_bowl(name: str) -> None:
    model = cowp_model(completions=[("Possible next actions", "1, 2"), ("Event:", "[]")])
    ep = episode(dirty_cup())
    registry.discover()[name](context(model)).run(ep.view())
    assert ep.record.completed, ep.record
    assert ep.record.substitutions == ["bowl as cup"]
    kinds = {kind for kind, _, _ in model.log}
    assert "complete" in kinds  # the guide or the belief was asked


def test_dkprompt_notices_nothing_a_pddl_predicate_does_not_say() -> None:
    # "the cup is dirty" breaks none of hold_cup's predicates: the camera (here, the
    # text observation) still sees the cup and an empty gripper, so DKPROMPT goes on
    # with the dirty cup, and the judge counts that as not completed.
    model = ScriptedModel(default_yes_no=True)
    ep = episode(dirty_cup())
    registry.discover()["dkprompt"](context(model)).run(ep.view())
    assert not ep.record.completed
    asked = model.questions()
    assert "The robot sees: the cup is dirty. Is the robot's gripper empty?" in asked


def test_dkprompt_replans_when_the_observation_contradicts_a_precondition() -> None:
    model = ScriptedModel(yes_no=[(r"gripper empty", False)], default_yes_no=True)
    ep = episode(dirty_cup())
    registry.discover()["dkprompt"](context(model, **{MODE: "pre"})).run(ep.view())
    assert ep.record.gave_up.startswith("no plan from the observed state")
