"""`cowp run TASK --situation TEXT`: the open-world loop on a simulated execution.

Every step is executed as succeeding; each situation is raised before the step `--at`
names (a 1-based step number or an action name; default: before the first step). The
narrative says what the robot planned, saw, asked, learned and did. The whole run is
written as JSON whatever its outcome (also when the model server fails, or on Ctrl-C):
to `--report FILE`, else to build/reports/TASK-YYYYMMDD-HHMMSS.mmm-PID.json (or
$COWP_REPORTS_DIR).

Your own task: `--tasks FILE` adds a tasks.yaml of yours to the shipped tasks
(`cowp run --tasks ~/my/tasks.yaml water_plant`), or `--domain D --problem P` runs a
domain and a problem with no registry entry at all.

Situation handling (--method NAME; `cowp bench --methods` and the commonsense node's
`method` parameter take the same names): `grounded` (default), the project's own: one
grounded decision per situation, a frugal acquirer, tidy plans (docs/grounded.md);
`cowp`, the paper's Plan Monitor and Knowledge Acquirer, faithful to its Prompts 1-3;
and the related methods:
  dkprompt          check each step's preconditions and/or effects (--dkprompt-mode) and
                    replan on a mismatch: asked of a vision-language model on camera
                    images with --images DIR [--vlm-url URL --vlm-model NAME] (DIR holds
                    01_pre.png, 01_post.png, ...), else of the text model about the
                    latest --situation, as the benchmark does
  cowp_llm_state    COWP whose situations pass through an LLM-kept object belief
  cowp_llm_guided   COWP whose planner is LLM-guided beam search [--beam K] (symbolically
                    checked, plan verified; the --planner takes over if the search gives
                    up)

Aliases (they map onto the names above): --dkprompt pre|post|both is --method dkprompt
--dkprompt-mode MODE (it needs --images); --llm-state puts LLM-State in front of the
--method's monitor (telling the belief every step done, too): with --method cowp it
is cowp_llm_state; --planner llm_guided makes the --method plan by guided search, with
pyperplan taking over: with --method cowp it is cowp_llm_guided --planner pyperplan.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cowp_ros.cli._arguments import list_tasks_in_help
from cowp_ros.cli._tasks import (
    add_adhoc_arguments,
    add_tasks_argument,
    check_schedule,
    task_from_args,
)
from cowp_ros.cli.llm import add_llm_arguments, settings_from_args
from cowp_ros.cli.plan import add_problem_arguments
from cowp_ros.cowp.driver import Outcome
from cowp_ros.cowp.loop import CowpSettings
from cowp_ros.cowp.report import REPORTS_DIR_ENV, Event, report_name, reports_folder
from cowp_ros.cowp.schedule import ScheduledRobot, ScheduledSituation
from cowp_ros.cowp.session import RunSession
from cowp_ros.errors import CowpError, Terminated
from cowp_ros.llm.language_model import LanguageModel
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.dkprompt.questions import VisualQuestioner
from cowp_ros.methods.registry import (
    DEFAULT_METHOD,
    METHODS_ENV,
    MethodEntry,
    build_loop,
    get_method,
    importable_method_names,
)
from cowp_ros.planning import make_planner
from cowp_ros.safe_text import clean, situation_text
from cowp_ros.tasks import TaskSpec

if TYPE_CHECKING:
    from cowp_ros.llm.endpoint import RunningServer


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "run",
        help="run a task under open-world planning with situations",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    list_tasks_in_help(parser)
    parser.add_argument("task", nargs="?", help="task name, alias or dataset id (e.g. fill_cup, 4)")
    add_tasks_argument(parser)
    add_adhoc_arguments(parser)
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
        metavar="METHOD",
        default=None,
        help=f"situation handling: {', '.join(importable_method_names())} "
        f"(default {DEFAULT_METHOD}; more with {METHODS_ENV}=module,...)",
    )
    parser.add_argument(
        "--max-candidates",
        type=int,
        default=None,
        metavar="N",
        help="ask about at most N kinds of stand-in object per failed role",
    )
    parser.add_argument(
        "--report",
        default=None,
        metavar="FILE",
        help=f"the JSON report (default: TASK-YYYYMMDD-HHMMSS.mmm-PID.json in ${REPORTS_DIR_ENV} "
        "or build/reports)",
    )
    related = parser.add_argument_group("related methods")
    related.add_argument(
        "--beam", type=int, default=3, metavar="K", help="beam width of the guided search"
    )
    related.add_argument(
        "--dkprompt-mode",
        choices=("pre", "post", "both"),
        default=None,
        help="what dkprompt checks: preconditions (pre), effects (post) or both (default)",
    )
    related.add_argument(
        "--images", default=None, metavar="DIR", help="camera images for --method dkprompt"
    )
    related.add_argument("--vlm-url", default=None, help="OpenAI-compatible vision server URL")
    related.add_argument("--vlm-model", default=None, help="vision model name on that server")
    related.add_argument("--vlm-api-key", default=None, help="API key of the vision server")
    aliases = parser.add_argument_group("aliases of --method names (see above)")
    aliases.add_argument(
        "--llm-state",
        action="store_true",
        help="LLM-State in front of the --method's monitor (with cowp: cowp_llm_state)",
    )
    aliases.add_argument(
        "--dkprompt",
        choices=("pre", "post", "both"),
        default=None,
        help="--method dkprompt --dkprompt-mode MODE, on --images with a vision model",
    )
    parser.add_argument("--quiet", action="store_true", help="print only the outcome")
    add_problem_arguments(parser)
    add_llm_arguments(parser)
    parser.set_defaults(func=run_task)


def schedule_from(situations: Sequence[str], at: Sequence[str]) -> list[ScheduledSituation]:
    """Pair each --situation with its --at (in order); a missing --at means step 1."""
    if len(at) > len(situations):
        raise CowpError("more --at than --situation", hint="give one --at per --situation")
    schedule = []
    for index, raw in enumerate(situations):
        text = situation_text(raw)
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
    settings = settings_from_args(args)
    try:
        from cowp_ros.llm.endpoint import open_model
    except ImportError as err:
        raise CowpError(
            f"the language model client is not available in this build ({err})",
            hint="install cowp_ros with its LLM client, or update your checkout",
        ) from err
    with open_model(settings, on_start=_say_started) as model:
        yield model


def _say_started(server: RunningServer) -> None:
    """Tell the user which embedded model answers (started now, or already loaded), on
    stderr."""
    from cowp_ros.llm.endpoint import describe_server

    print(f"{describe_server(server)} (no --llm-url given)", file=sys.stderr, flush=True)


def print_event(event: Event) -> None:
    """One narrative line per event (text from outside holds no escape sequences)."""
    text = clean(event.text, newlines=False)
    print(f"{event.kind.label:5s} {text}", flush=True)


DKPROMPT_NAME = "dkprompt"
"""The registry's entry `--dkprompt` stands for."""


def guided(args: argparse.Namespace) -> bool:
    """--planner llm_guided: an alias of the guided-search method (see the help)."""
    return bool(args.planner.lower().replace("-", "_") == "llm_guided")


def method_name(args: argparse.Namespace) -> str:
    """The method --method names, or --dkprompt's (an alias), else the default."""
    if args.dkprompt:
        return DKPROMPT_NAME
    return str(getattr(args, "method", None) or DEFAULT_METHOD)


def chosen_method(args: argparse.Namespace) -> tuple[MethodEntry, dict[str, object]]:
    """The registry's entry the flags name, with its options: the aliases compose the
    related methods around --method the way their registered entries do. (Their modules
    are imported here, when a run needs them, not with this module: the registry loads
    its entries first, in its own order.)"""
    from cowp_ros.methods.dkprompt.method import MODE
    from cowp_ros.methods.llm_guided.method import BEAM, with_llm_guided
    from cowp_ros.methods.llm_state.method import TELL_SUCCESSES, with_llm_state

    entry = get_method(method_name(args))
    options: dict[str, object] = {BEAM: args.beam}
    mode = args.dkprompt or args.dkprompt_mode
    if mode:
        options[MODE] = mode
    if guided(args):
        entry = with_llm_guided(entry)
    if args.llm_state:
        entry = with_llm_state(entry)
        options[TELL_SUCCESSES] = True
    return entry, options


def uses_text_model(args: argparse.Namespace) -> bool:
    """DKPROMPT on images asks only the vision model; everything else asks the text model."""
    return not args.images or guided(args)


def check_related_flags(args: argparse.Namespace) -> None:
    """Refuse flag combinations that mean nothing, before any model starts."""
    get_method(method_name(args))  # an unknown method, or a COWP_METHODS module that fails
    if args.beam < 1:
        raise CowpError(f"--beam {args.beam}: the beam width is at least 1")
    if args.dkprompt and args.method not in (None, DKPROMPT_NAME):
        raise CowpError(
            f"--dkprompt is --method {DKPROMPT_NAME}; it cannot go with --method {args.method}",
            hint="give one method",
        )
    if args.dkprompt and not args.images:
        raise CowpError("--dkprompt needs --images DIR (01_pre.png, 01_post.png, ...)")
    if args.images:
        if method_name(args) != DKPROMPT_NAME:
            raise CowpError(
                "--images is for --dkprompt",
                hint="add --dkprompt pre|post|both (or --method dkprompt)",
            )
        if args.situation or args.llm_state:
            raise CowpError(
                "--dkprompt reads the world from images; --situation and --llm-state belong "
                "to the COWP loop",
                hint="run them separately",
            )


def open_vision(args: argparse.Namespace) -> VisualQuestioner:
    """The vision-language model --vlm-url names (tests hand in a recorded one)."""
    from cowp_ros.methods.dkprompt.vision import OpenAIVisionQuestioner

    settings = LLMSettings.resolve(
        base_url=args.vlm_url, model=args.vlm_model, api_key=args.vlm_api_key
    )
    return OpenAIVisionQuestioner(settings)


def new_session(args: argparse.Namespace) -> RunSession:
    """`cowp run`'s run session: its report names the task and planner asked for even
    when the run ends before a loop exists."""
    return RunSession(args.task or "", planner=args.planner)


def report_path(args: argparse.Namespace, session: RunSession) -> Path:
    """--report, else a new file in $COWP_REPORTS_DIR or build/reports."""
    if args.report:
        return Path(args.report)
    name = session.report.task if session.report is not None else str(args.task or "run")
    return reports_folder() / report_name(name)


def run_dkprompt(
    args: argparse.Namespace,
    spec: TaskSpec,
    model: LanguageModel | None,
    record: RunSession | None = None,
) -> int:
    """The task under DKPROMPT checks on the images in --images."""
    from cowp_ros.methods.dkprompt.loop import DKPromptLoop, ImageDirectory
    from cowp_ros.methods.dkprompt.method import IMAGES, VISION

    entry, options = chosen_method(args)
    questioner = open_vision(args)
    options |= {IMAGES: ImageDirectory(Path(args.images)), VISION: questioner}
    problem = spec.build_problem(args.objects, seed=args.seed)
    loop = build_loop(
        entry,
        spec,
        model,
        make_planner("pyperplan" if guided(args) else args.planner),
        problem=problem,
        settings=CowpSettings(planner_timeout_s=args.timeout),
        options=options,
    )
    assert isinstance(loop, DKPromptLoop)
    if record is not None:
        record.track(loop.report)
    if not args.quiet:
        print(f"task: {spec.name} ({spec.description}); {len(problem.objects)} objects present")
        mode = args.dkprompt or args.dkprompt_mode or "both"
        print(f"DKPROMPT ({mode}) with {questioner.name}; planner: {loop.report.planner}")
        loop.report.listeners.append(print_event)
    run = loop.run()
    if record is not None:
        record.track(run.report)
    print(f"outcome: {run.outcome}: {clean(run.report.explanation, newlines=False)}")
    return 0 if run.outcome == "completed" else 3


def run_with_model(
    args: argparse.Namespace,
    spec: TaskSpec,
    model: LanguageModel,
    record: RunSession | None = None,
) -> int:
    """The run itself, given a model (tests hand in a scripted one)."""
    schedule = schedule_from(args.situation, args.at)
    problem = spec.build_problem(args.objects, seed=args.seed)
    # With a situation to come, the monitor asks what the plan's objects will need as
    # soon as the plan is made, so that the situation is decided sooner.
    settings = CowpSettings(
        planner_timeout_s=args.timeout,
        max_candidates=args.max_candidates,
        prepare_monitor=bool(schedule),
    )
    entry, options = chosen_method(args)
    planner = make_planner("pyperplan" if guided(args) else args.planner)
    loop = build_loop(
        entry, spec, model, planner, problem=problem, settings=settings, options=options
    )
    session = record if record is not None else new_session(args)
    session.track(loop.report, loop.finish_report)
    if not args.quiet:
        print(f"task: {spec.name} ({spec.description}); {len(problem.objects)} objects present")
        print(
            f"model: {loop.report.model}; planner: {loop.report.planner}; "
            f"method: {method_name(args)}"
        )
        loop.report.listeners.append(print_event)
    if schedule:  # a run without situations asks the monitor nothing: no prefix to read
        warm_prefix(entry, model, spec.description, quiet=args.quiet)
    robot = ScheduledRobot(schedule)
    end = session.drive(loop, robot)
    robot.report_never_raised(loop.report)
    report = session.finished_report()
    if args.llm_state and not args.quiet and report is not None:
        belief = report.usage.get("belief", {})
        described = {
            name: held["attributes"]
            for name, held in belief.get("objects", {}).items()
            if held["attributes"]
        }
        print(f"belief: {json.dumps(described)[:2000]}; failures: {belief.get('failures')}")
    print(f"outcome: {clean(end.told(), newlines=False)}")
    return 0 if end.outcome is Outcome.COMPLETED else 3


def warm_prefix(entry: MethodEntry, model: LanguageModel, description: str, *, quiet: bool) -> None:
    """Have the server read the method's shared prompt prefix (and the task's words,
    `description`) before the plan is made, so that the first situation of the run
    costs only its own words."""
    warm = entry.warm
    if warm is None:
        return
    before = getattr(model, "warm_seconds", 0.0)
    warm(model, description)
    seconds = getattr(model, "warm_seconds", 0.0) - before
    if not quiet and seconds > 0.0:
        print(f"read the questions' shared prefix ahead in {seconds:.1f} s", flush=True)


def run_task(args: argparse.Namespace) -> int:
    """`cowp run`: the run, and its report written whatever the outcome (also when a
    flag's value is refused: the report then says why nothing ran)."""
    record = new_session(args)
    try:
        schedule_from(args.situation, args.at)  # bad flags fail before a model starts
        check_related_flags(args)
        code = _run(args, record)
    except Terminated as err:
        record.failed("terminated", err)
        _report_where(args, record, sys.stderr)
        raise
    except KeyboardInterrupt as err:
        record.failed("interrupted", err)
        _report_where(args, record, sys.stderr)
        raise
    except CowpError as err:
        record.failed("error", err)
        _report_where(args, record, sys.stderr)
        raise
    except Exception as err:  # a bug: keep the traceback, but not lose the run
        record.failed("crashed", err)
        _report_where(args, record, sys.stderr)
        raise
    if not _report_where(args, record, sys.stderr if args.quiet else sys.stdout):
        return code or 1  # the run's record is lost: not a success
    return code


def _plan_length(args: argparse.Namespace, spec: TaskSpec) -> int | None:
    """The closed-world plan's length, when a numbered --at needs checking against it."""
    if not any(a.strip().isdigit() for a in args.at) or args.images or guided(args):
        return None
    result = make_planner(args.planner).solve(
        spec.build_problem(args.objects, seed=args.seed), args.timeout
    )
    return len(result.steps) if result.found else None


def _report_where(args: argparse.Namespace, record: RunSession, stream: Any) -> bool:
    """Write the report and say where; a report that cannot be written is said too."""
    try:
        path = record.write(report_path(args, record))
    except CowpError as err:
        print(f"cowp run: {err}", file=sys.stderr, flush=True)
        return False
    print(f"report: {Path(path).absolute()}", file=stream, flush=True)  # from any folder
    return True


def _run(args: argparse.Namespace, record: RunSession) -> int:
    spec, task = task_from_args(args)  # the task's files are read before a model starts
    check_schedule(schedule_from(args.situation, args.at), task, _plan_length(args, spec))
    if args.images and not uses_text_model(args):
        return run_dkprompt(args, spec, None, record)
    with open_model(args) as model:
        if args.images:
            return run_dkprompt(args, spec, model, record)
        return run_with_model(args, spec, model, record)
