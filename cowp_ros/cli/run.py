"""`cowp run TASK --situation TEXT`: the open-world loop on a simulated execution.

Every step is executed as succeeding; each situation is raised before the step `--at`
names (a 1-based step number or an action name; default: before the first step). The
narrative says what the robot planned, saw, asked, learned and did; `--report` writes
the whole run as JSON.

Situation handling (--method): `grounded` (default), the project's own: one grounded
decision per situation, a frugal acquirer, tidy plans (docs/grounded.md); `cowp`, the
paper's Plan Monitor and Knowledge Acquirer, faithful to its Prompts 1-3.

Related methods, each chosen by a flag:
  --planner llm_guided [--beam K]   the language model ranks next actions in a beam search
                                    (symbolically checked, plan verified; pyperplan takes
                                    over if the search gives up)
  --llm-state                       situations pass through an LLM-kept object belief
  --dkprompt pre|post|both --images DIR [--vlm-url URL --vlm-model NAME]
                                    check each step's preconditions and/or effects on
                                    camera images with a vision-language model; replan
                                    on a mismatch (DIR holds 01_pre.png, 01_post.png, ...)
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence

from cowp_ros.cli.plan import add_problem_arguments
from cowp_ros.cowp.grounded import grounded_loop
from cowp_ros.cowp.loop import CowpSettings, OpenWorldPlanner
from cowp_ros.cowp.report import Event
from cowp_ros.cowp.schedule import ScheduledSituation, run_scheduled
from cowp_ros.errors import CowpError
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.dkprompt.questions import VisualQuestioner
from cowp_ros.planning import Planner, make_planner
from cowp_ros.tasks import TaskSpec, get_task, task_names
from cowp_ros.tasks.phrases import ActionPhrases

METHODS = ("grounded", "cowp")
DEFAULT_METHOD = "grounded"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a task under open-world planning with situations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=f"tasks: {', '.join(task_names())}",
    )
    parser.add_argument("task", help="task name, alias or dataset id (e.g. fill_cup, 4)")
    parser.add_argument(
        "--situation",
        action="append",
        default=[],
        metavar="TEXT",
        help='a situation, e.g. "the cup is dirty" (repeatable)',
    )
    parser.add_argument(
        "--at",
        action="append",
        default=[],
        metavar="STEP",
        help="when the matching --situation arises: a step number or an action name",
    )
    parser.add_argument(
        "--method",
        choices=METHODS,
        default=DEFAULT_METHOD,
        help=f"situation handling: {' or '.join(METHODS)} (default {DEFAULT_METHOD})",
    )
    parser.add_argument("--llm-url", default=None, help="OpenAI-compatible server URL")
    parser.add_argument("--llm-model", default=None, help="model name on that server")
    parser.add_argument("--llm-api-key", default=None, help="API key (any for a local one)")
    parser.add_argument(
        "--llm-timeout", type=float, default=None, metavar="S", help="seconds per LLM request"
    )
    parser.add_argument(
        "--max-candidates",
        type=int,
        default=None,
        metavar="N",
        help="ask about at most N kinds of stand-in object per failed role",
    )
    parser.add_argument("--report", default=None, metavar="FILE", help="write the JSON report")
    related = parser.add_argument_group("related methods")
    related.add_argument(
        "--beam", type=int, default=3, metavar="K", help="beam width of --planner llm_guided"
    )
    related.add_argument(
        "--llm-state", action="store_true", help="keep an LLM belief in front of the monitor"
    )
    related.add_argument(
        "--dkprompt",
        choices=("pre", "post", "both"),
        default=None,
        help="check preconditions (pre), effects (post) or both on images with a VLM",
    )
    related.add_argument("--images", default=None, metavar="DIR", help="images for --dkprompt")
    related.add_argument("--vlm-url", default=None, help="OpenAI-compatible vision server URL")
    related.add_argument("--vlm-model", default=None, help="vision model name on that server")
    related.add_argument("--vlm-api-key", default=None, help="API key of the vision server")
    parser.add_argument("--quiet", action="store_true", help="print only the outcome")
    add_problem_arguments(parser)
    parser.set_defaults(func=run_task)


def schedule_from(situations: Sequence[str], at: Sequence[str]) -> list[ScheduledSituation]:
    """Pair each --situation with its --at (in order); a missing --at means step 1."""
    if len(at) > len(situations):
        raise CowpError("more --at than --situation", hint="give one --at per --situation")
    schedule = []
    for index, text in enumerate(situations):
        when = at[index].strip() if index < len(at) else ""
        if not when:
            schedule.append(ScheduledSituation(text))
        elif when.isdigit():
            if int(when) < 1:
                raise CowpError(f"--at {when}: steps are numbered from 1")
            schedule.append(ScheduledSituation(text, at_step=int(when)))
        else:
            schedule.append(ScheduledSituation(text, at_action=when.lower()))
    return schedule


@contextlib.contextmanager
def open_model(args: argparse.Namespace) -> Iterator[LanguageModel]:
    """The language model the flags (or OPENAI_* variables) name, or the embedded one."""
    settings = LLMSettings.resolve(
        base_url=args.llm_url,
        model=args.llm_model,
        api_key=args.llm_api_key,
        timeout_s=getattr(args, "llm_timeout", None),
    )
    try:
        from cowp_ros.llm.endpoint import open_model
    except ImportError as err:
        raise CowpError(
            f"the language model client is not available in this build ({err})",
            hint="install cowp_ros with its LLM client, or update your checkout",
        ) from err
    with open_model(settings, on_start=_say_started) as model:
        yield model


def _say_started(server: object) -> None:
    """Tell the user that the embedded model was started (and where), on stderr."""
    model = getattr(getattr(server, "model", None), "name", "the local model")
    where = getattr(server, "base_url", "")
    print(f"started {model} at {where} (no --llm-url given)", file=sys.stderr, flush=True)


def print_event(event: Event) -> None:
    """One narrative line per event."""
    print(f"{event.kind.label:5s} {event.text}", flush=True)


def build_planner(args: argparse.Namespace, model: LanguageModel | None) -> Planner:
    """The planner --planner names; llm_guided gets the run's model and a fallback."""
    if args.planner.lower().replace("-", "_") != "llm_guided":
        return make_planner(args.planner)
    if model is None:
        raise CowpError("--planner llm_guided needs a language model")
    from cowp_ros.methods.llm_guided import make_llm_guided_planner

    return make_llm_guided_planner(model, beam=args.beam, fallback=make_planner("pyperplan"))


def uses_text_model(args: argparse.Namespace) -> bool:
    """DKPROMPT alone asks only the vision model; everything else asks the text model."""
    return not args.dkprompt or args.planner.lower().replace("-", "_") == "llm_guided"


def check_related_flags(args: argparse.Namespace) -> None:
    """Refuse flag combinations that mean nothing, before any model starts."""
    if args.beam < 1:
        raise CowpError(f"--beam {args.beam}: the beam width is at least 1")
    if args.dkprompt:
        if not args.images:
            raise CowpError("--dkprompt needs --images DIR (01_pre.png, 01_post.png, ...)")
        if args.situation or args.llm_state:
            raise CowpError(
                "--dkprompt reads the world from images; --situation and --llm-state belong "
                "to the COWP loop",
                hint="run them separately",
            )
    elif args.images:
        raise CowpError("--images is for --dkprompt", hint="add --dkprompt pre|post|both")


def open_vision(args: argparse.Namespace) -> VisualQuestioner:
    """The vision-language model --vlm-url names (tests hand in a recorded one)."""
    from cowp_ros.methods.dkprompt.vision import OpenAIVisionQuestioner

    settings = LLMSettings.resolve(
        base_url=args.vlm_url, model=args.vlm_model, api_key=args.vlm_api_key
    )
    return OpenAIVisionQuestioner(settings)


def run_dkprompt(args: argparse.Namespace, spec: TaskSpec, model: LanguageModel | None) -> int:
    """The task under DKPROMPT checks on the images in --images."""
    from pathlib import Path

    from cowp_ros.methods.dkprompt.loop import DKPromptLoop, DKPromptMode, ImageDirectory
    from cowp_ros.methods.dkprompt.questions import DKPromptChecker

    problem = spec.build_problem(args.objects, seed=args.seed)
    planner = build_planner(args, model)
    questioner = open_vision(args)
    loop = DKPromptLoop(
        problem,
        planner=planner,
        checker=DKPromptChecker(questioner),
        images=ImageDirectory(Path(args.images)),
        mode=DKPromptMode.parse(args.dkprompt),
        phrases=ActionPhrases(spec.phrases),
        planner_timeout_s=args.timeout,
    )
    loop.report.task = spec.name
    loop.report.description = spec.description
    if not args.quiet:
        print(f"task: {spec.name} ({spec.description}); {len(problem.objects)} objects present")
        print(f"DKPROMPT ({args.dkprompt}) with {questioner.name}; planner: {planner.name}")
        loop.report.listeners.append(print_event)
    run = loop.run()
    print(f"outcome: {run.outcome}: {run.report.explanation}")
    if args.report:
        print(f"report: {run.report.write(args.report)}")
    return 0 if run.outcome == "completed" else 3


def run_with_model(args: argparse.Namespace, spec: TaskSpec, model: LanguageModel) -> int:
    """The run itself, given a model (tests hand in a scripted one)."""
    schedule = schedule_from(args.situation, args.at)
    problem = spec.build_problem(args.objects, seed=args.seed)
    settings = CowpSettings(planner_timeout_s=args.timeout, max_candidates=args.max_candidates)
    if getattr(args, "method", DEFAULT_METHOD) == "grounded":
        loop = grounded_loop(
            spec, model, build_planner(args, model), problem=problem, loop_settings=settings
        )
    else:
        loop = OpenWorldPlanner.for_task(
            spec, model, build_planner(args, model), problem=problem, settings=settings
        )
    if not args.quiet:
        print(f"task: {spec.name} ({spec.description}); {len(problem.objects)} objects present")
        method = getattr(args, "method", DEFAULT_METHOD)
        print(f"model: {loop.report.model}; planner: {loop.planner.name}; method: {method}")
        loop.report.listeners.append(print_event)
    if args.llm_state:
        from cowp_ros.methods.llm_state.loop import BeliefLoop

        report = run_scheduled(BeliefLoop(loop), schedule)
        if not args.quiet:
            belief = report.usage.get("belief", {})
            described = {
                name: held["attributes"]
                for name, held in belief.get("objects", {}).items()
                if held["attributes"]
            }
            print(f"belief: {json.dumps(described)[:2000]}; failures: {belief.get('failures')}")
    else:
        report = run_scheduled(loop, schedule)
    print(f"outcome: {report.outcome}: {report.explanation}")
    if args.report:
        path = report.write(args.report)
        print(f"report: {path}")
    return 0 if report.outcome == "completed" else 3


def run_task(args: argparse.Namespace) -> int:
    spec = get_task(args.task)
    schedule_from(args.situation, args.at)  # bad flags fail before a model starts
    check_related_flags(args)
    try:
        if args.dkprompt and not uses_text_model(args):
            return run_dkprompt(args, spec, None)
        with open_model(args) as model:
            if args.dkprompt:
                return run_dkprompt(args, spec, model)
            return run_with_model(args, spec, model)
    except CowpError:
        raise
    except Exception as err:
        # The openai client's connection and timeout errors are the user's to fix
        # (a wrong URL, a server that is down); anything else is our bug.
        if type(err).__module__.split(".")[0] == "openai":
            where = args.llm_url or "the configured server"
            raise CowpError(
                f"cannot use the language model at {where}: {err}",
                hint="check --llm-url / OPENAI_BASE_URL and that the server is running",
            ) from err
        raise
