"""The fault kinds: each builds, from a seeded random source, one `Scenario` to run.

A kind belongs to a family: `llm` (what the model server answers, how and when),
`cli` (what a user types and does: bad values, broken files, Ctrl-C). The ROS graph's
runner will add a `graph` family (nodes killed, the camera silent, floods, cancel) to
the same registry. Register a kind with `@fault("name", "family", "summary")` on a
function `(FaultContext) -> Scenario`.

Hostile text carries a canary: a token of non-ASCII letters that no legitimate path can
turn into PDDL (situation words and model answers become PDDL names only through the
identifier grammar, lower-case ASCII). Finding one in a planner's input is an injection.
"""

from __future__ import annotations

import math
import random
import signal
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.record import Scenario, Trigger
from cowp_ros.chaos.server import Reply, Request, completion, json_text, yes_no_logprobs
from cowp_ros.chaos.workspace import SLOW_TASK, write_slow_registry

CANARY_LETTERS = "БГДЖЗИЛПФЦЧШЩЫЭЮ"


@dataclass
class FaultContext:
    """What a kind may use: the seeded random source, this run's canary and key, and a
    folder for files it writes (registries, model files)."""

    rng: random.Random
    canary: str
    secret: str
    folder: Path

    def pick(self, options: list[Any]) -> Any:
        return options[self.rng.randrange(len(options))]


@dataclass(frozen=True)
class FaultKind:
    name: str
    family: str
    summary: str
    build: Callable[[FaultContext], Scenario]


REGISTRY: dict[str, FaultKind] = {}


def fault(name: str, family: str, summary: str) -> Callable[[Any], Any]:
    """Register a fault kind."""

    def register(build: Callable[[FaultContext], Scenario]) -> Callable[[FaultContext], Scenario]:
        REGISTRY[name] = FaultKind(name, family, summary, build)
        return build

    return register


def canary_for(tag: int) -> str:
    """A token of non-ASCII letters (16 of them encode `tag`'s hex digits)."""
    return "⟦" + "".join(CANARY_LETTERS[int(d, 16)] for d in f"{tag & 0xFFFFFFFF:08x}") + "⟧"


# --- what a run asks, and how the key travels ---------------------------------------------

RUN_CASES = [
    ("fill_cup", "the cup is dirty", "hold_cup"),
    ("set_table", "the plate is broken", "takeout_plate"),
    ("clean_area", "the vacuum is broken", "grasp_vacuum"),
    ("serve_water", "the cup is dirty", "1"),
    ("fill_cup", "there is a strange smell in the kitchen", "2"),
]
"""(task, situation, --at): the last names no object, so the model is asked for a
predicate (free text) as well as yes/no and choice questions."""


def llm_flags(ctx: FaultContext, timeout_s: float) -> tuple[list[str], dict[str, str], bool]:
    """(flags, env, key_in_url): the server flags, with the key sent one of three ways."""
    flags = ["--llm-url", "{url}", "--llm-model", "scripted", "--llm-timeout", f"{timeout_s:g}"]
    channel = ctx.pick(["flag", "env", "url"])
    env: dict[str, str] = {}
    if channel == "flag":
        flags += ["--llm-key", ctx.secret]
    elif channel == "env":
        env["OPENAI_API_KEY"] = ctx.secret
    return flags, env, channel == "url"


def llm_command(
    ctx: FaultContext, timeout_s: float, *, hostile_situation: bool = False, run: bool = False
) -> tuple[list[str | bytes], dict[str, str], bool, bool]:
    """(args, env, key_in_url, writes_report) for a command that asks the model."""
    flags, env, key_in_url = llm_flags(ctx, timeout_s)
    which = (
        "run" if run else ctx.pick(["run", "run", "run", "ask", "ask_options", "ask_free", "eval"])
    )
    if which == "run":
        task, situation, at = ctx.pick(RUN_CASES)
        if hostile_situation:
            situation = f"{situation} {ctx.canary}"
        args: list[str | bytes] = [
            "run", task, "--situation", situation, "--at", at, "--objects", "12",
            "--max-candidates", "3", "--no-cache", "--report", "{folder}/report.json",
        ]  # fmt: skip
        return [*args, *flags], env, key_in_url, True
    if which == "ask":
        args = ["llm", "ask", "Is it suitable to carry soup in a sieve?", "--no-cache"]
    elif which == "ask_options":
        args = ["llm", "ask", "Which stirs tea best?", "--options", "spoon,pillow,shoe"]
        args.append("--no-cache")
    elif which == "ask_free":
        args = ["llm", "ask", "Name a fruit.", "--free", "--max-tokens", "8", "--no-cache"]
    else:
        args = ["llm", "eval", "--no-gpt3", "--no-examples"]
    return [*args, *flags], env, key_in_url, False


@dataclass
class Faulty:
    """A responder: `SensibleModel` answers, except the requests `hit` selects (by their
    1-based number among chat requests), which get `reply(request)`."""

    reply: Callable[[Request], Reply]
    hit: Callable[[int], bool]
    sane: SensibleModel
    count: int = 0
    fired: int = 0
    """How many requests got the fault (a run the fault never reached says so)."""

    def __call__(self, request: Request) -> Reply | None:
        if not request.is_chat:
            return None
        self.count += 1
        if self.hit(self.count):
            self.fired += 1
            return self.reply(request)
        return self.sane(request)


def _hits(ctx: FaultContext, short: bool, few: bool = False) -> Callable[[int], bool]:
    """Which chat requests get the fault: all, one of the first few, or every k-th (a
    `short` command asks once or twice: then all, or the first). A command that may ask
    only once (`few`: `cowp run`, whose grounded method can settle a situation with one
    question) gets the fault on its first request, and then on every k-th or none: a
    target past its last question would leave the run unexercised."""
    how = ctx.pick(["all", "one"] if short else ["all", "one", "every"])
    if how == "all":
        return lambda n: True
    if how == "one":
        target = 1 if short or few else ctx.rng.randint(1, 5)
        return lambda n: n == target
    k = ctx.rng.randint(2, 4)
    if few:
        return lambda n: n % k == 1  # the 1st, (k+1)-th, ...
    return lambda n: n % k == 0


def _llm_scenario(
    ctx: FaultContext,
    reply: Callable[[Request], Reply],
    note: str,
    *,
    timeout_s: float | None = None,
    waits_s: float = 0.0,
    hostile_situation: bool = False,
    run: bool = False,
) -> Scenario:
    timeout = timeout_s if timeout_s is not None else ctx.pick([2.0, 3.0, 4.0])
    args, env, key_in_url, report = llm_command(
        ctx, timeout, hostile_situation=hostile_situation, run=run
    )
    hits = _hits(ctx, short=args[:2] == ["llm", "ask"], few=args[0] == "run")
    responder = Faulty(reply, hits, SensibleModel())
    return Scenario(
        args=args,
        responder=responder,
        env=env,
        timeout_s=timeout,
        waits_s=waits_s,
        report=report,
        key_in_url=key_in_url,
        note=note,
    )


# --- llm: what the answer says ------------------------------------------------------------

HOSTILE = [
    ") (:action pwn{c} :parameters () :precondition (and) :effect (and)) (",
    "is_dirty cup_1)) (:goal (and)) ; {c}",
    "yes $(touch /tmp/pwned) `reboot` ; rm -rf ~ {c}",
    "\x1b[2J\x1b[H\x1b]0;{c}\x07\x1b[31mYes\x1b[0m",
    "Ｙｅｓ \u202e{c}\u200b 🤖\ufeff \x00\x07",
    "Yes\r\n" * 20 + "{c}",
    '{{"answer": "yes", "p_yes": NaN}} {c}',
    "!!python/object/apply:os.system ['echo {c}']",
    "bowl (define (domain x)) {c}",
    "spoon\n(:init (served table_1)) {c}",
]


@fault("hostile_text", "llm", "answers holding PDDL, shell, ANSI escapes, odd unicode")
def hostile_text(ctx: FaultContext) -> Scenario:
    template = ctx.pick(HOSTILE)
    with_logprobs = ctx.rng.random() < 0.5

    def reply(request: Request) -> Reply:
        text = template.format(c=ctx.canary)
        top = yes_no_logprobs(0.5 + ctx.rng.random() / 2) if request.wants_logprobs else None
        return Reply(body=completion(text, top if with_logprobs else None))

    # always `cowp run`: the point is what reaches the planner's PDDL
    return _llm_scenario(ctx, reply, f"answer {template[:30]!r}", hostile_situation=True, run=True)


@fault("huge_answer", "llm", "an answer of 10 MB, or a body padded to 10 MB")
def huge_answer(ctx: FaultContext) -> Scenario:
    padded = ctx.rng.random() < 0.5

    def reply(request: Request) -> Reply:
        if padded:
            body = completion("Yes")
            body["padding"] = "x" * 10_000_000
            return Reply(body=body)
        return Reply(body=completion(f"Yes {ctx.canary} " * 800_000))

    return _llm_scenario(ctx, reply, "10 MB body" if padded else "10 MB answer")


ABSURD_LOGPROBS: list[Any] = [1000, 1e6, 1e308, -1e308, "very likely", None, True, [], {}]


@fault("logprobs_absurd", "llm", "log-probabilities of 1000, 1e308, a string, null, a bool")
def logprobs_absurd(ctx: FaultContext) -> Scenario:
    value = ctx.pick(ABSURD_LOGPROBS)

    def reply(request: Request) -> Reply:
        body = completion("Yes", [("Yes", value), ("No", -2.0)])
        return Reply(body=body)

    return _llm_scenario(ctx, reply, f"logprob {value!r}")


@fault("logprobs_malformed", "llm", "top_logprobs of the wrong shape")
def logprobs_malformed(ctx: FaultContext) -> Scenario:
    shapes: list[Any] = [
        {"Yes": -0.1, "No": -2.0},
        17,
        "Yes",
        ["Yes", "No"],
        [{"logprob": -0.1}],
        [{"token": 7, "logprob": -0.1}],
        [{"token": "Yes" * 100, "logprob": -0.1}],
        [{"token": "Yes", "logprob": -0.1}] * 5000,
    ]
    shape = ctx.pick(shapes)

    def reply(request: Request) -> Reply:
        body = completion("No")
        body["choices"][0]["logprobs"] = {
            "content": [{"token": "No", "logprob": -0.1, "top_logprobs": shape}]
        }
        return Reply(body=body)

    return _llm_scenario(ctx, reply, f"top_logprobs {str(shape)[:40]}")


@fault("logprobs_nan", "llm", "NaN and infinities in the JSON")
def logprobs_nan(ctx: FaultContext) -> Scenario:
    values = [math.nan, math.inf, -math.inf]
    yes_value, no_value = ctx.pick(values), ctx.pick(values)

    def reply(request: Request) -> Reply:
        body = completion("Yes", [("Yes", yes_value), ("No", no_value)])
        body["usage"]["prompt_tokens"] = math.nan
        return Reply(body=json_text(body))

    return _llm_scenario(ctx, reply, f"logprobs {yes_value}, {no_value}")


MALFORMED_BODIES: list[tuple[str, Any]] = [
    ("html", b"<html><body>502 Bad Gateway</body></html>"),
    ("not utf-8", b'{"choices": [{"message": {"content": "\xff\xfe"}}]}'),
    ("empty", b""),
    ("a list", b"[1, 2, 3]"),
    ("no choices", b'{"object": "chat.completion"}'),
    ("choices a string", b'{"choices": "Yes"}'),
    ("content a list", b'{"choices": [{"message": {"content": ["Yes"]}}]}'),
    ("deep json", b"[" * 100_000 + b"]" * 100_000),
    ("truncated", b'{"choices": [{"message": {"content": "Ye'),
]


@fault("body_malformed", "llm", "bodies that are not chat completions")
def body_malformed(ctx: FaultContext) -> Scenario:
    name, body = ctx.pick(MALFORMED_BODIES)
    lie = ctx.rng.random() < 0.3

    def reply(request: Request) -> Reply:
        return Reply(body=body, length=len(body) + 100 if lie else None)

    return _llm_scenario(ctx, reply, f"body {name}{' (length lies)' if lie else ''}")


@fault("http_error", "llm", "HTTP 400, 404, 413, 500, 502, 503 with odd bodies")
def http_error(ctx: FaultContext) -> Scenario:
    status = ctx.pick([400, 404, 413, 500, 502, 503])
    body = ctx.pick(
        [
            {"error": {"message": f"upstream failed \x1b[31m{ctx.canary}"}},
            b"<html>" + b"x" * 200_000 + b"</html>",
            {"error": "plain"},
            b"",
        ]
    )

    def reply(request: Request) -> Reply:
        return Reply(status=status, body=body)

    return _llm_scenario(ctx, reply, f"HTTP {status}")


@fault("auth_error", "llm", "HTTP 401 and 403: the key refused (it must not be printed)")
def auth_error(ctx: FaultContext) -> Scenario:
    status = ctx.pick([401, 403])

    def reply(request: Request) -> Reply:
        echo = request.headers.get("Authorization", "")
        return Reply(status=status, body={"error": {"message": f"bad key {echo}"}})

    return _llm_scenario(ctx, reply, f"HTTP {status} echoing the key")


@fault("rate_limited", "llm", "HTTP 429 with Retry-After: short, long, a date, garbage")
def rate_limited(ctx: FaultContext) -> Scenario:
    header = ctx.pick(
        [
            ("Retry-After", "0.2"),
            ("Retry-After", "120"),
            ("Retry-After", "Wed, 21 Oct 2099 07:28:00 GMT"),
            ("Retry-After", "soon"),
            ("retry-after-ms", "150"),
            ("Retry-After", "-5"),
        ]
    )

    def reply(request: Request) -> Reply:
        return Reply(status=429, body={"error": {"message": "slow down"}}, headers=(header,))

    return _llm_scenario(ctx, reply, f"429 {header[0]}: {header[1]}")


# --- llm: when the answer comes -----------------------------------------------------------


@fault("slow_answer", "llm", "answers slower than usual: within the timeout, or past it")
def slow_answer(ctx: FaultContext) -> Scenario:
    timeout = ctx.pick([2.0, 3.0])
    within = ctx.rng.random() < 0.5
    delay = timeout * (0.3 if within else 1.5)

    def reply(request: Request) -> Reply:
        answer = SensibleModel()(request) or Reply()
        return Reply(**{**answer.__dict__, "delay_s": delay})

    scenario = _llm_scenario(ctx, reply, f"{delay:.1f} s answer", timeout_s=timeout)
    asks_once = scenario.args[:2] == ["llm", "ask"] or scenario.args[0] == "run"
    target = 1 if asks_once else ctx.rng.randint(1, 3)
    scenario.responder.hit = lambda n: n == target  # type: ignore[union-attr]
    scenario.waits_s = delay
    return scenario


@fault("hung_answer", "llm", "an answer that never comes")
def hung_answer(ctx: FaultContext) -> Scenario:
    return _llm_scenario(ctx, lambda request: Reply(hang=True), "no answer ever")


@fault("dripping_answer", "llm", "an answer sent a few bytes at a time")
def dripping_answer(ctx: FaultContext) -> Scenario:
    gap = ctx.pick([0.05, 0.5, 2.0])

    def reply(request: Request) -> Reply:
        return Reply(body=completion("Yes", yes_no_logprobs(0.9)), drip_s=gap)

    return _llm_scenario(ctx, reply, f"64 bytes every {gap} s")


@fault("connection_reset", "llm", "the connection reset instead of an answer")
def connection_reset(ctx: FaultContext) -> Scenario:
    return _llm_scenario(ctx, lambda request: Reply(reset=True), "TCP reset")


@fault("server_killed", "llm", "the server dies mid-run, its connections reset")
def server_killed(ctx: FaultContext) -> Scenario:
    timeout = ctx.pick([2.0, 3.0])
    args, env, key_in_url, report = llm_command(ctx, timeout)
    asks_once = args[:2] == ["llm", "ask"] or args[0] == "run"  # `run` may ask only once
    after = 1 if asks_once else ctx.rng.randint(1, 6)
    return Scenario(
        args=args,
        responder=SensibleModel(),
        env=env,
        timeout_s=timeout,
        report=report,
        key_in_url=key_in_url,
        kill_server_after=after,
        note=f"killed at request {after}",
    )


@fault("server_absent", "llm", "no server at the URL (connection refused)")
def server_absent(ctx: FaultContext) -> Scenario:
    timeout = ctx.pick([2.0, 3.0])
    args, env, key_in_url, report = llm_command(ctx, timeout)
    return Scenario(
        args=args, env=env, timeout_s=timeout, report=report, key_in_url=key_in_url,
        note="connection refused",
    )  # fmt: skip


# --- cli: what a user types and does ------------------------------------------------------


@fault("hostile_situation", "cli", "situations with escapes, odd bytes, or too long")
def hostile_situation(ctx: FaultContext) -> Scenario:
    situation: str | bytes = ctx.pick(
        [
            f"the cup is \x1b[31mdirty\x1b[0m\x1b]0;{ctx.canary}\x07",
            b"the cup is \xff\xfe dirty",
            f"the cup is dirty) (:action pwn) ; {ctx.canary}",
            f"{ctx.canary} " * 2000,
            "\x01\x07",  # control characters (a NUL cannot be in any program's arguments)
            "the cup is dirty\nthe bowl is dirty\r\n" * 3,
        ]
    )
    timeout = 3.0
    flags, env, key_in_url = llm_flags(ctx, timeout)
    args: list[str | bytes] = [
        "run", "fill_cup", "--situation", situation, "--objects", "12", "--max-candidates",
        "3", "--no-cache", "--report", "{folder}/report.json", *flags,
    ]  # fmt: skip
    return Scenario(
        args=args, responder=SensibleModel(), env=env, timeout_s=timeout, report=True,
        key_in_url=key_in_url, note=f"situation {str(situation)[:30]!r}",
    )  # fmt: skip


@fault("bad_values", "cli", "timeouts of inf, nan, -1, 0, 1e12 or words; bad URLs")
def bad_values(ctx: FaultContext) -> Scenario:
    value = ctx.pick(["inf", "nan", "-1", "0", "1e12", "soon", "-inf"])
    args: list[str | bytes] = ctx.pick(
        [
            ["plan", "fill_cup", "--timeout", value],
            ["run", "fill_cup", "--llm-timeout", value, "--llm-url", "{url}"],
            ["llm", "ask", "q", "--llm-timeout", value, "--llm-url", "{url}"],
            ["run", "fill_cup", "--llm-url", ctx.pick(["ftp://x/v1", "http://", "nonsense"]),
             "--report", "{folder}/report.json"],
        ]
    )  # fmt: skip
    report = args[0] == "run" and "--report" in args
    return Scenario(
        args=args, responder=SensibleModel(), report=report, note=" ".join(map(str, args[2:4]))
    )


def _write_registry(folder: Path, tasks_yaml: bytes, domain: bytes, problem: bytes) -> Path:
    (folder / "t").mkdir(parents=True, exist_ok=True)
    (folder / "tasks.yaml").write_bytes(tasks_yaml)
    (folder / "t" / "domain.pddl").write_bytes(domain)
    (folder / "t" / "problem.pddl").write_bytes(problem)
    return folder


GOOD_ENTRY = (
    b"t:\n  description: a test\n  domain: t/domain.pddl\n  problem: t/problem.pddl\n"
    b"  task_objects: []\n"
)
GOOD_DOMAIN = b"(define (domain d) (:requirements :strips) (:predicates (p)) " + (
    b"(:action a :parameters () :precondition (and) :effect (p)))"
)
GOOD_PROBLEM = b"(define (problem q) (:domain d) (:init) (:goal (p)))"


@fault("broken_files", "cli", "a broken tasks.yaml or PDDL: not UTF-8, nested, garbage")
def broken_files(ctx: FaultContext) -> Scenario:
    registry, domain, problem, what = ctx.pick(
        [
            (b"t: [unclosed\n", GOOD_DOMAIN, GOOD_PROBLEM, "YAML syntax"),
            (b"- t\n", GOOD_DOMAIN, GOOD_PROBLEM, "a list"),
            (b"t:\n  description: x\n", GOOD_DOMAIN, GOOD_PROBLEM, "missing fields"),
            (b"t: \xff\xfe\n", GOOD_DOMAIN, GOOD_PROBLEM, "not UTF-8 YAML"),
            (b"[" * 5000 + b"]" * 5000, GOOD_DOMAIN, GOOD_PROBLEM, "nested YAML"),
            (GOOD_ENTRY, GOOD_DOMAIN.replace(b"(p)", b"(\xff)"), GOOD_PROBLEM, "not UTF-8 PDDL"),
            (GOOD_ENTRY, b"(and " * 3000 + b")" * 3000, GOOD_PROBLEM, "nested PDDL"),
            (GOOD_ENTRY, GOOD_DOMAIN, b"(define (problem", "truncated PDDL"),
            (GOOD_ENTRY, b"\x00" * 1000, GOOD_PROBLEM, "binary PDDL"),
        ]
    )
    folder = _write_registry(
        ctx.folder.parent / f"{ctx.folder.name}-registry", registry, domain, problem
    )
    command = ctx.pick(
        [
            ["--version"],
            ["plan", "t"],
            ["plan", "--help"],
            ["run", "t", "--report", "{folder}/report.json", "--llm-url", "{url}"],
        ]
    )
    return Scenario(
        args=command, responder=SensibleModel(), env={"COWP_PDDL_DIR": str(folder)},
        report=command[0] == "run", note=what,
    )  # fmt: skip


@fault("bad_model_file", "cli", "a GGUF model file with nested arrays or absurd counts")
def bad_model_file(ctx: FaultContext) -> Scenario:
    import struct

    path = ctx.folder.parent / f"{ctx.folder.name}-model.gguf"
    body = b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", 4) + b"evil"
    if ctx.rng.random() < 0.5:
        body += struct.pack("<I", 9) + struct.pack("<IQ", 9, 1) * 5000 + struct.pack("<IQ", 4, 0)
        what = "arrays nested 5000 deep"
    else:
        body += struct.pack("<IIQ", 9, 8, 2**62)
        what = "an array of 2^62 strings"
    path.write_bytes(body + b"\0" * 64)
    return Scenario(args=["llm", "ask", "q", "--model-path", str(path)], note=what)


@fault("interrupted_plan", "cli", "Ctrl-C or SIGTERM to `cowp plan` mid-search")
def interrupted_plan(ctx: FaultContext) -> Scenario:
    registry = write_slow_registry(ctx.folder.parent / f"{ctx.folder.name}-slow")
    sig = ctx.pick([signal.SIGINT, signal.SIGTERM])
    planner = ctx.pick(["pyperplan", "fast_downward"])
    # the planner's own process: `cowp plan ... --planner fast_downward` holds "downward"
    # too; Fast Downward's guard names its translator for the whole translate-and-search
    marker = "pyperplan_worker.py" if planner == "pyperplan" else "fast_downward.translate"
    return Scenario(
        args=["plan", SLOW_TASK, "--planner", planner, "--timeout", "300"],
        env={"COWP_PDDL_DIR": str(registry)},
        trigger=Trigger(sig, after_process=marker, delay_s=ctx.rng.uniform(0.1, 1.0)),
        note=f"{signal.Signals(sig).name} to {planner}",
    )


@fault("interrupted_run", "cli", "Ctrl-C or SIGTERM to `cowp run` while the model is silent")
def interrupted_run(ctx: FaultContext) -> Scenario:
    sig = ctx.pick([signal.SIGINT, signal.SIGTERM])
    timeout = 30.0
    flags, env, key_in_url = llm_flags(ctx, timeout)
    task, situation, at = ctx.pick(RUN_CASES)
    after = 1  # the grounded method may ask one question only
    responder = Faulty(lambda request: Reply(hang=True), lambda n: n >= after, SensibleModel())
    return Scenario(
        args=["run", task, "--situation", situation, "--at", at, "--objects", "12",
              "--no-cache", "--report", "{folder}/report.json", *flags],
        responder=responder, env=env, timeout_s=2.0, report=True, key_in_url=key_in_url,
        trigger=Trigger(sig, after_requests=after, delay_s=0.5),
        note=f"{signal.Signals(sig).name} at request {after}",
    )  # fmt: skip


def kinds(family: str | None = None) -> list[FaultKind]:
    """The registered kinds (of one family), in registration order."""
    return [k for k in REGISTRY.values() if family is None or k.family == family]
