"""The boundary between a trial's world and the method under test: two processes.

A method runs in a worker process of its own, started fresh (`spawn`: it inherits none
of the runner's objects), and reaches the trial only through messages: the robot's
view (`RemoteView`: execute, give up, finished, the problem, the situations seen, the
history), the language model (`RemoteModel`: each call is answered by the runner's
metered client, so usage is counted where it always was) and, for the oracle only, its
privileged questions. The world, the schedule of situations, the judge file and the
trial stay in the runner's process: no attribute, frame or object of the worker's
leads to them (`episode._hooks()`, `sys._getframe(1).f_locals`, `gc.get_objects()`
find nothing there).

Privilege is a token, not a name: for a method class that is the oracle's own class
object (`methods.oracle.is_oracle`), the runner draws a random token per trial and
sends it with the job; the worker's privileged proxy sends it with every question, and
the runner answers only the current trial's token. A class that copies the oracle's
names is another object, gets no token, and every privileged question fails.

The worker is sealed (`seal.py`) before its first job: the seed it gets is the
method's own (`seal.method_seed`), never the trial's draw seed, and it cannot open the
judge files, the dataset, the run's records or the kept results.

One worker per runner thread serves trial after trial (starting one costs the imports,
a second or two); a worker that died, or one sealed against other folders, is started
again for the next trial, and workers are daemons: they end with the runner.
"""

from __future__ import annotations

import multiprocessing
import pickle
import secrets
import threading
import traceback
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, cast

from cowp_ros.bench.seal import sealed_roots
from cowp_ros.bench.view import ALLOWED, MethodLeakError, RobotView, StepObservation
from cowp_ros.errors import CowpError
from cowp_ros.pddl import PlanningTask
from cowp_ros.planning import Planner, PlanStep
from cowp_ros.tasks import TaskSpec

_SPAWN = multiprocessing.get_context("spawn")


class BoundaryError(CowpError):
    """The method's process could not be started, reached, or sent its method."""


@dataclass(frozen=True)
class Job:
    """All a worker gets for one trial: the robot's knowledge, never the world."""

    method: type
    spec: TaskSpec
    planner: Planner
    problem: PlanningTask
    seed: int
    """The method's own seed (`seal.method_seed`), not the trial's draw seed."""
    options: dict[str, Any]
    with_model: bool
    token: str | None


# ---- the worker's side ------------------------------------------------------------


def _ask(conn: Connection, request: tuple[Any, ...]) -> Any:
    conn.send(request)
    kind, value = conn.recv()
    if kind == "raise":
        raise value
    return value


class RemoteView(RobotView):
    """The robot's view in the worker: every question is a message to the runner."""

    __slots__ = ("_conn", "_problem")

    def __init__(self, conn: Connection, problem: PlanningTask) -> None:  # no hooks here
        object.__setattr__(self, "_conn", conn)
        object.__setattr__(self, "_problem", problem)

    def __del__(self) -> None:
        pass

    def _hooks(self) -> Any:
        raise MethodLeakError(
            "a benchmark method asked the robot's view for its hooks: the world is in "
            "another process, and the view holds only a channel of messages to it",
            hint=f"a method sees only: {', '.join(ALLOWED)}",
        )

    def execute(self, step: PlanStep) -> StepObservation:
        return cast(StepObservation, _ask(self._conn, ("view", "execute", (step,))))

    def give_up(self, reason: str) -> None:
        _ask(self._conn, ("view", "give_up", (reason,)))

    @property
    def finished(self) -> bool:
        return bool(_ask(self._conn, ("view", "finished", ())))

    @property
    def problem(self) -> PlanningTask:
        return cast(PlanningTask, self._problem)

    @property
    def situations(self) -> tuple[str, ...]:
        return cast(tuple[str, ...], _ask(self._conn, ("view", "situations", ())))

    @property
    def history(self) -> tuple[tuple[PlanStep, StepObservation], ...]:
        return cast(
            tuple[tuple[PlanStep, StepObservation], ...], _ask(self._conn, ("view", "history", ()))
        )


class RemoteModel:
    """The language model in the worker: attributes and calls answered by the runner's
    metered client (a missing attribute is an AttributeError, as on the client)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        kind, value = _ask(self._conn, ("model_attr", name, ()))
        if kind == "missing":
            raise AttributeError(name)
        if kind == "value":
            return value

        def call(*args: Any, **kwargs: Any) -> Any:
            return _ask(self._conn, ("model_call", name, (args, kwargs)))

        return call


class RemotePrivilege:
    """The oracle's privileged access in the worker: questions carrying the trial's token."""

    def __init__(self, conn: Connection, token: str) -> None:
        self._conn = conn
        self._token = token

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)

        def call(*args: Any) -> Any:
            return _ask(self._conn, ("privileged", name, (self._token, args)))

        return call


def _trace(method: Any) -> list[str]:
    trace = getattr(method, "trace", None)
    if not callable(trace):
        return []
    try:
        return [str(line) for line in trace()]
    except Exception as err:  # the account is a diagnostic: never lose the record for it
        return [f"(no trace: {type(err).__name__}: {err})"]


def _serve(conn: Connection) -> None:
    """The worker's loop: one job a trial until told to stop (None) or the pipe closes."""
    from cowp_ros.bench.methods import MethodContext

    while True:
        try:
            job = conn.recv()
        except (EOFError, OSError):
            return
        if job is None:
            return
        error = ""
        method = None
        try:
            context = MethodContext(
                spec=job.spec,
                planner=job.planner,
                model=cast(Any, RemoteModel(conn)) if job.with_model else None,
                seed=job.seed,
                options=job.options,
                privileged=cast(Any, RemotePrivilege(conn, job.token)) if job.token else None,
            )
            method = job.method(context)
            method.run(RemoteView(conn, job.problem))
        except Exception as err:  # a method's bug is recorded by the runner, not raised
            error = "".join(traceback.format_exception_only(type(err), err)).strip()
        conn.send(("done", "", (error, _trace(method))))
        del job, method


def _worker_main(conn: Connection, roots: tuple[str, ...]) -> None:  # the spawned entry point
    from cowp_ros.bench import seal

    seal.install(roots)  # before the first job: a method's module runs when it arrives
    _serve(conn)


# ---- the runner's side ------------------------------------------------------------


class _Worker:
    def __init__(self, roots: tuple[str, ...]) -> None:
        ours, theirs = _SPAWN.Pipe()
        self.conn = ours
        self.roots = roots
        self.process = _SPAWN.Process(
            target=_worker_main, args=(theirs, roots), name="cowp-bench-method", daemon=True
        )
        try:
            self.process.start()
        except OSError as err:
            raise BoundaryError(f"cannot start the method's process: {err}") from err
        theirs.close()

    def alive(self) -> bool:
        return self.process.is_alive()


_LOCAL = threading.local()


def _worker(roots: tuple[str, ...]) -> _Worker:
    worker = getattr(_LOCAL, "worker", None)
    if worker is not None and worker.alive() and worker.roots != roots:
        worker.conn.send(None)  # sealed against other folders: this one ends
        worker.conn.close()
        worker = None
    if worker is None or not worker.alive():
        worker = _Worker(roots)
        _LOCAL.worker = worker
    return cast(_Worker, worker)


def run_behind_boundary(
    method_cls: type,
    spec: TaskSpec,
    planner: Planner,
    view: RobotView,
    seed: int,
    options: dict[str, Any],
    model: Any,
    privileged: Any,
    sealed: tuple[str, ...] = (),
) -> tuple[str, list[str]]:
    """Run `method_cls` on one trial in the worker; serve its messages from `view`,
    `model` and `privileged` (the oracle's access, else None). `seed` is the method's
    own (`seal.method_seed`); `sealed`: the folders the worker may not read
    (`seal.sealed_roots`). Returns (the method's error or "", its trace)."""
    token = secrets.token_hex(16) if privileged is not None else None
    job = Job(method_cls, spec, planner, view.problem, seed, options, model is not None, token)
    try:
        pickle.dumps(job.method)
    except (pickle.PicklingError, AttributeError, TypeError) as err:
        raise BoundaryError(
            f"benchmark method {getattr(method_cls, 'name', method_cls)!r} cannot be sent to "
            f"its process: {err}",
            hint="a method is a class defined at the top level of an importable module "
            "(it runs in a process of its own)",
        ) from err
    worker = _worker(sealed or sealed_roots())
    try:
        worker.conn.send(job)
        while True:
            kind, name, args = worker.conn.recv()
            if kind == "done":
                error, trace = args
                return str(error), list(trace)
            try:
                answer = ("value", _answer(kind, name, args, view, model, privileged, token))
            except Exception as err:  # the method sees the error the world raised
                answer = ("raise", _portable(err))
            worker.conn.send(answer)
    except (EOFError, OSError) as err:
        _LOCAL.worker = None
        code = worker.process.exitcode
        return f"the method's process ended (exit code {code}): {err!r}", []


def _answer(
    kind: str, name: str, args: Any, view: RobotView, model: Any, privileged: Any, token: Any
) -> Any:
    if kind == "view":
        if name not in ("execute", "give_up", "finished", "situations", "history"):
            raise MethodLeakError(f"the robot's view has no {name!r}")
        found = getattr(view, name)
        return found(*args) if callable(found) else found
    if kind == "model_attr":
        if model is None:
            raise CowpError("this method runs without a language model")
        value = getattr(model, name, _MISSING)
        if value is _MISSING:
            return ("missing", None)
        return ("callable", None) if callable(value) else ("value", value)
    if kind == "model_call":
        call_args, call_kwargs = args
        return getattr(model, name)(*call_args, **call_kwargs)
    if kind == "privileged":
        given, call_args = args
        if privileged is None or token is None or not secrets.compare_digest(given, token):
            raise CowpError("no privileged access for this method in this trial")
        if name.startswith("_"):
            raise CowpError(f"the privileged access has no {name!r}")
        return getattr(privileged, name)(*call_args)
    raise BoundaryError(f"unknown request {kind!r} from the method's process")


_MISSING = object()


def _portable(err: Exception) -> Exception:
    """The error itself if it crosses a pipe, else a CowpError with its words."""
    try:
        pickle.loads(pickle.dumps(err))
        return err
    except Exception:
        return CowpError(f"{type(err).__name__}: {err}")
