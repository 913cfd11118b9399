"""LLM-State: an open-ended, object-centric belief kept by the language model.

COWP's monitor reads situations as sentences. LLM-State sits in front of it: detections,
situations and action outcomes go to the model together with the current belief
(objects, their open-ended attributes such as `cleanliness: dirty`, and a running
summary of failures), and the model answers with function calls that edit the belief.
The calls are parsed against a whitelist (`llm_state_calls`), checked against the belief
(an attribute can only be set on an object the belief holds), and only then applied.

What the belief gives back:

- `situations()`: one sentence per attribute ("the cup is dirty"), the text the Plan
  Monitor asks about;
- `BeliefPredicates`: a `PredicateGenerator` that turns those sentences into facts about
  the exact object the belief means (`cup_2`, not the first cup), the candidate
  predicates COWP adds to the state and to the failing action.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from cowp_ros.cowp.situation import Situation
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.methods.llm_state.calls import RejectedCall, ToolCall, parse_tool_calls
from cowp_ros.methods.paper.predicates import PredicateGenerator, SituationFact
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks.phrases import noun

MAX_OBJECTS = 200
MAX_ATTRIBUTES = 12
MAX_FAILURES = 5
STATE_ATTRIBUTES = frozenset(
    {"state", "condition", "status", "cleanliness", "cleanness", "fill_level", "fullness",
     "temperature", "position", "location", "availability", "integrity", "usability"}
)  # fmt: skip
VERB_STARTS = ("is ", "are ", "has ", "have ", "was ", "looks ", "contains ", "holds ", "can ")

STATE_SYSTEM = (
    "You keep a household robot's belief about the objects around it. Given the belief "
    "and a new event, reply only with a JSON list of function calls that update the "
    "belief, or [] when nothing changes. Functions: add_object(name, kind), "
    "remove_object(name), set_attribute(object, attribute, value), "
    "clear_attribute(object, attribute), note_failure(summary). Use the object names "
    "in the belief; values are a few plain words."
)
STATE_EXAMPLES = (
    Example(
        "Objects: knife_1 (knife), board_1 (board)\nAttributes: none\n"
        "Event: the robot saw: the knife is rusty",
        '[{"name": "set_attribute", "arguments": {"object": "knife_1", '
        '"attribute": "condition", "value": "rusty"}}]',
    ),
    Example(
        "Objects: kettle_1 (kettle)\nAttributes: none\n"
        "Event: the robot failed to: boil water in the kettle",
        '[{"name": "note_failure", "arguments": {"summary": "boiling water in the kettle '
        'failed"}}]',
    ),
)


@dataclass
class ObjectBelief:
    """One object: its kind and whatever the model found worth saying about it."""

    name: str
    kind: str
    attributes: dict[str, str] = field(default_factory=dict)


@dataclass
class Belief:
    """Objects by name, plus the last few failures in a line each."""

    objects: dict[str, ObjectBelief] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @classmethod
    def from_task(cls, task: PlanningTask) -> Belief:
        """Start from the problem's objects (their PDDL types as kinds), no attributes."""
        return cls({name: ObjectBelief(name, kind) for name, kind in sorted(task.objects.items())})

    def apply(self, call: ToolCall) -> str | None:
        """Apply one whitelisted call; the reason when the belief cannot take it."""
        args = call.arguments
        if call.name == "add_object":
            if args["name"] in self.objects:
                return f"{args['name']} is already in the belief"
            if len(self.objects) >= MAX_OBJECTS:
                return f"the belief already holds {MAX_OBJECTS} objects"
            self.objects[args["name"]] = ObjectBelief(args["name"], args["kind"])
            return None
        if call.name == "note_failure":
            self.failures = [*self.failures, args["summary"]][-MAX_FAILURES:]
            return None
        key = self.resolve(args["name"] if call.name == "remove_object" else args["object"])
        held = self.objects.get(key)
        if held is None:
            return f"no object {key!r} in the belief"
        if call.name == "remove_object":
            del self.objects[key]
        elif call.name == "set_attribute":
            new = args["attribute"] not in held.attributes
            if new and len(held.attributes) >= MAX_ATTRIBUTES:
                return f"{key} already has {MAX_ATTRIBUTES} attributes"
            held.attributes[args["attribute"]] = args["value"]
        elif (
            call.name == "clear_attribute" and held.attributes.pop(args["attribute"], None) is None
        ):
            return f"{key} has no attribute {args['attribute']!r}"
        return None

    def resolve(self, name: str) -> str:
        """An object's name, or the one object of kind `name` ("cup" -> `cup_1`).

        Small models often name the kind instead of the instance; when exactly one
        object of that kind is held there is nothing to guess, so the call applies to it.
        With none or several the name stays as given, and the call is refused.
        """
        if name in self.objects:
            return name
        of_kind = [o.name for o in self.objects.values() if o.kind == name]
        return of_kind[0] if len(of_kind) == 1 else name

    def situations(self) -> dict[str, tuple[str, str, str]]:
        """Sentence -> (object, attribute, value), one per attribute, in name order."""
        found: dict[str, tuple[str, str, str]] = {}
        for name in sorted(self.objects):
            held = self.objects[name]
            for attribute, value in sorted(held.attributes.items()):
                found[situation_sentence(held.kind, attribute, value)] = (name, attribute, value)
        return found

    def to_prompt(self) -> str:
        listed = ", ".join(f"{o.name} ({o.kind})" for o in self.objects.values())
        attributes = [
            f"{o.name}.{k} = {v}" for o in self.objects.values() for k, v in o.attributes.items()
        ]
        lines = [f"Objects: {listed or 'none'}", f"Attributes: {'; '.join(attributes) or 'none'}"]
        if self.failures:
            lines.append(f"Failures so far: {'; '.join(self.failures)}")
        return "\n".join(lines)

    def to_dict(self) -> dict[str, object]:
        return {
            "objects": {
                o.name: {"kind": o.kind, "attributes": dict(o.attributes)}
                for o in self.objects.values()
            },
            "failures": list(self.failures),
        }


def situation_sentence(kind: str, attribute: str, value: str) -> str:
    """The attribute as a sentence the monitor can read.

    A state-like attribute says what the object is ("cleanliness: dirty" -> "the cup is
    dirty"); a value that starts with a verb is kept ("has a crack" -> "the cup has a
    crack"); any other attribute names what the object has ("stains: coffee" -> "the cup
    has coffee stains"), so the attribute's meaning is not lost.
    """
    subject = noun(kind)
    if value.startswith(VERB_STARTS):
        return f"{subject} {value}"
    if attribute in STATE_ATTRIBUTES:
        return f"{subject} is {value}"
    return f"{subject} has {value} {attribute.replace('_', ' ')}"


@dataclass(frozen=True)
class StateUpdate:
    """One event's effect on the belief: what the model said, what was applied, refused."""

    event: str
    reply: str
    applied: tuple[ToolCall, ...]
    rejected: tuple[RejectedCall, ...]

    @property
    def changed(self) -> bool:
        return bool(self.applied)

    def to_dict(self) -> dict[str, object]:
        return {
            "event": self.event,
            "reply": self.reply[:500],
            "applied": [str(c) for c in self.applied],
            "rejected": [str(r) for r in self.rejected],
        }


class LLMStateTracker:
    """Keeps a `Belief` up to date from events, through the model's whitelisted calls."""

    def __init__(self, model: LanguageModel, belief: Belief, *, max_tokens: int = 160) -> None:
        self.model = model
        self.belief = belief
        self.max_tokens = max_tokens
        self.updates: list[StateUpdate] = []

    def observe_detections(self, labels: Sequence[str]) -> StateUpdate:
        """Objects a detector reported (labels such as "cup", "bottle")."""
        shown = ", ".join(" ".join(label.split())[:40] for label in labels[:20]) or "nothing"
        return self._update(f"the camera detected: {shown}")

    def observe_situation(self, text: str) -> StateUpdate:
        """A situation in words (from a person, the simulator, the situation detector)."""
        return self._update(f"the robot saw: {' '.join(text.split())[:300]}")

    def observe_outcome(self, step: PlanStep, success: bool, description: str = "") -> StateUpdate:
        """An action finished (or failed): the model may update attributes or note it."""
        what = description or str(step)
        verb = "the robot did" if success else "the robot failed to"
        return self._update(f"{verb}: {what}")

    def situations(self) -> list[str]:
        """The sentences the Plan Monitor should consider, one per believed attribute."""
        return list(self.belief.situations())

    def situation_text(self) -> str:
        """All of it in one line (with recent failures), for a monitor that takes one text."""
        parts = [*self.situations(), *(f"earlier: {f}" for f in self.belief.failures)]
        return "; ".join(parts)

    def _update(self, event: str) -> StateUpdate:
        prompt = f"{self.belief.to_prompt()}\nEvent: {event}"
        reply = self.model.complete(
            prompt, system=STATE_SYSTEM, examples=STATE_EXAMPLES, max_tokens=self.max_tokens
        )
        parsed = parse_tool_calls(reply)
        applied: list[ToolCall] = []
        rejected = list(parsed.rejected)
        for call in parsed.accepted:
            reason = self.belief.apply(call)
            if reason is None:
                applied.append(call)
            else:
                rejected.append(RejectedCall(str(call), reason))
        update = StateUpdate(event, reply, tuple(applied), tuple(rejected))
        self.updates.append(update)
        return update


class BeliefPredicates(PredicateGenerator):
    """Facts for the belief's own sentences name the object the belief means.

    A sentence the belief produced ("the cup is dirty", about `cup_2`) gets the usual
    rule-made predicate with `cup_2` as its subject and source `llm_state`; any other
    situation is left to the ordinary generator.
    """

    def __init__(
        self, tracker: LLMStateTracker, model: LanguageModel | None, reserved: frozenset[str]
    ) -> None:
        super().__init__(model, reserved)
        self.tracker = tracker

    def generate(
        self, situation: Situation | str, task: PlanningTask, focus: Sequence[str] = ()
    ) -> SituationFact:
        meant = self.tracker.belief.situations().get(Situation.of(situation).text)
        if meant is None or meant[0] not in task.objects:
            return super().generate(situation, task, focus)
        fact = super().generate(situation, task, [meant[0], *focus])
        if fact.subject != meant[0]:
            return fact
        return replace(fact, source="llm_state", note=f"{meant[0]}.{meant[1]} = {meant[2]}")


def belief_json(tracker: LLMStateTracker) -> str:
    """The belief as indented JSON (for the report and `cowp run --llm-state`)."""
    return json.dumps(tracker.belief.to_dict(), indent=2)


__all__ = [
    "Belief",
    "BeliefPredicates",
    "LLMStateTracker",
    "ObjectBelief",
    "StateUpdate",
    "belief_json",
    "situation_sentence",
]
