"""The Knowledge Acquirer: which present objects can take a failed object's role?

When no plan exists, COWP looks at the objects present, asks for each kind of object
whether the robot could do each action of the failed object's role with it (Prompt 2),
and lets the model pick the most suitable of those accepted (Prompt 3). The loop then
adds the chosen kind's action variants to the domain and replans.

A candidate kind is accepted only if every role action is judged suitable; questions
stop at the first "no" (the failing step's action is asked first, because it is the one
most likely to rule a candidate out). An unclear answer counts as "no" unless P(yes)
says otherwise: adding knowledge on no evidence could send the robot to fill a sponge.

Before the action questions, when the task is described, one role question: "Can a mug
be used instead of the burger, in the task of getting a table ready to eat a burger?".
Prompt 2 alone asks about actions ("find a mug", "put a mug on the plate"), and a mug
can do those; only the task says what the burger is for. With the embedded 1.5B model,
25 of the 30 stand-ins COWP chose in a 20-trial bench run were ones the judge files
reject. The role question's P(yes) ranks acceptable stand-ins above rejected ones (AUC
0.82 on the test tasks; figures in `docs/monitor_calibration.md`), so a candidate needs
P(yes) >= `role_threshold` on it; a plain "no" without P(yes) rejects it too.
"""

from __future__ import annotations

from collections.abc import Sequence

from cowp_ros.cowp.answers import ROLE_ACTION, CandidateAssessment, RoleQuestion, Selection
from cowp_ros.llm.language_model import Example, LanguageModel
from cowp_ros.methods.paper.monitor import judged_yes
from cowp_ros.methods.paper.prompts import (
    ACQUIRER_EXAMPLES,
    ACQUIRER_SYSTEM,
    ROLE_EXAMPLES,
    SELECTION_SYSTEM,
    acquirer_question,
    role_question,
    selection_question,
)
from cowp_ros.pddl import PlanningTask
from cowp_ros.tasks.phrases import ActionPhrases, noun

SELECTION_SHORTLIST = 4
"""How many accepted kinds Prompt 3 chooses among (the most confident by Prompt 2)."""

ROLE_THRESHOLD = 0.9
"""P(yes) a stand-in needs on the role question, chosen on the dev tasks (fill_cup,
clean_area, set_table) by `benchmarks/bench_stand_ins.py` against the per-action judge
files: the largest share of acceptable minus share of unacceptable stand-ins passed
among the reported thresholds (6/7 and 16/204 at 0.9 with the embedded 1.5B model).
A confident model's answers sit near 0 or 1, far from it."""


class KnowledgeAcquirer:
    """Asks Prompts 2 and 3; the loop owns the PDDL changes and the replanning."""

    def __init__(
        self,
        model: LanguageModel,
        phrases: ActionPhrases,
        *,
        examples: tuple[Example, ...] = ACQUIRER_EXAMPLES,
        threshold: float = 0.5,
        shortlist: int = SELECTION_SHORTLIST,
        role_threshold: float = ROLE_THRESHOLD,
    ) -> None:
        if shortlist < 1:
            raise ValueError(f"shortlist must be at least 1, not {shortlist}")
        self.model = model
        self.phrases = phrases
        self.examples = examples
        self.threshold = threshold
        self.shortlist = shortlist
        self.role_threshold = role_threshold

    def rank(
        self,
        task: PlanningTask,
        role_type: str,
        candidates: Sequence[tuple[str, str]],
        task_description: str,
    ) -> list[tuple[str, str]]:
        """COWP asks about every kind present, in the order given."""
        return list(candidates)

    def enough(self, accepted: Sequence[CandidateAssessment]) -> bool:
        """COWP assesses every candidate, then Prompt 3 chooses among the accepted."""
        return False

    def assess(
        self,
        task: PlanningTask,
        role_type: str,
        actions: Sequence[str],
        candidate_type: str,
        example_object: str,
        task_description: str = "",
    ) -> CandidateAssessment:
        """The role question (when the task is described), then Prompt 2 for each role
        action in turn, stopping at the first "no"."""
        assessment = CandidateAssessment(candidate_type, example_object)
        if task_description:
            question = role_question(noun(candidate_type, "a"), noun(role_type), task_description)
            answer = self.model.ask_yes_no(question, examples=ROLE_EXAMPLES)
            cut_off: float | None = None
            if answer.p_yes is not None:
                suitable, unclear = answer.p_yes >= self.role_threshold, answer.answer is None
                cut_off = self.role_threshold
            else:
                suitable, unclear = judged_yes(answer, self.threshold, default=False)
            assessment.questions.append(
                RoleQuestion(ROLE_ACTION, question, answer, suitable, unclear, cut_off)
            )
            if not suitable:
                return assessment
        for action in actions:
            arg_types = task.parameter_types(action)
            replaced = arg_types.index(role_type)
            text = self.phrases.describe_with(action, arg_types, replaced, candidate_type)
            question = acquirer_question(text)
            answer = self.model.ask_yes_no(question, system=ACQUIRER_SYSTEM, examples=self.examples)
            suitable, unclear = judged_yes(answer, self.threshold, default=False)
            by_p = unclear and answer.p_yes is not None  # neither word: P(yes) decided
            assessment.questions.append(
                RoleQuestion(
                    action, question, answer, suitable, unclear, self.threshold if by_p else None
                )
            )
            if not suitable:
                break
        return assessment

    def select(
        self,
        accepted: Sequence[CandidateAssessment],
        role_type: str,
        task_description: str,
        situation: str,
    ) -> Selection:
        """Prompt 3 among the most confident accepted kinds (none asked for only one).

        Only the `shortlist` kinds with the highest Prompt 2 confidence are offered
        (ties keep their order): offered thirty accepted kinds, the 1.5B model picked a
        broom to hold drinking water, although its P(yes) ranked mug, glass and bowl
        first. A strong model loses nothing by choosing among the best few.
        """
        if not accepted:
            raise ValueError("select() needs at least one accepted candidate")
        if len(accepted) == 1:
            return Selection(accepted[0].candidate_type, None, None, "only candidate")
        offered = len(accepted)
        accepted = sorted(accepted, key=lambda a: -a.confidence)[: self.shortlist]
        if len(accepted) == 1:
            return Selection(accepted[0].candidate_type, None, None, "most confident")
        among = (
            f" (among the {len(accepted)} most confident of {offered})"
            if (offered > len(accepted))
            else ""
        )
        options = [noun(a.candidate_type, "") for a in accepted]
        question = selection_question(
            [noun(a.candidate_type, "a") for a in accepted],
            noun(role_type),
            task_description,
            situation,
        )
        answer = self.model.ask_choice(question, options, system=SELECTION_SYSTEM)
        if answer.index is not None and 0 <= answer.index < len(accepted):
            chosen = accepted[answer.index].candidate_type
            return Selection(chosen, question, answer, f"model{among}")
        best = max(accepted, key=lambda a: a.confidence)
        return Selection(
            best.candidate_type,
            question,
            answer,
            "fallback: the answer named no candidate; took the most confident",
        )
