"""The bounds on what a peer or a file may ask of this stack, in one place.

Every service of the graph can be called by any ROS peer, and every file a task names
can be anything a careless (or hostile) hand puts there. Each bound here is far above
what the project's own tasks need (the largest shipped domain is 3 KB and grounds a few
thousand actions) and far below what would hurt the robot's computer: a request past
one is refused at once with a message that names the bound, never served slowly.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from pathlib import Path

from cowp_ros.errors import CowpError

MAX_PDDL_BYTES = 128 * 1024
"""One domain or problem, as text: 40 times the largest shipped file (3 KB). Parsing
is linear in the text, about 14 s a megabyte of actions on a busy two-core machine
(1.8 s for 128 KB), so a 2 MB domain would hold a planner for half a minute."""
MAX_GROUND_ACTIONS = 200_000
"""Reachable ground actions a task may have (the relaxed problem's, counted as
`planning.budget` says, as Fast Downward's translator grounds them). The shipped tasks
have at most 1,514 (with the benchmark's 86-object houses), the first problems of the
IPC domains in benchmarks/bench_ipc.py a few hundred to 32,768; an action of 6
parameters over 30 objects, all reachable, has 729 million."""
MAX_COMPLEMENT_FACTS = 100_000
"""Facts the STRIPS copy of a task may list for its negated predicates (`pddl/negation.py`
lists `(not_p ...)` for every well-typed tuple where `p` is false: objects^arity per
negated predicate). The shipped tasks list a few hundred; a 6-ary predicate over 30
objects would list 729 million, in the planner node itself, before any worker's memory
cap or deadline applies. Counted before a single fact is made."""
MAX_TYPES = 1000
"""Types one domain may declare (the shipped domains declare at most a few dozen, IPC's a
few dozen more). The `pddl` library checks the type graph for cycles at a cost that grows
with the cube of a chain's depth, so the type graph is bounded before it sees the text."""
MAX_TYPE_DEPTH = 32
"""Ancestors one type may have (`a - b`, `b - c`, ...: a shipped domain has at most 3).
A chain of 600 types cost the library's cycle check 21 s, 1,000 types 123 s."""
PLANNER_MEMORY_MB = 1536
"""The address space each planner process may use (RLIMIT_AS): a search that needs
more ends with an error that says so, instead of growing until the OOM killer picks a
robot process."""
MAX_REGISTRY_FILE_BYTES = 4 * 2**20
"""A file a task registry names (tasks.yaml, a domain, a problem)."""
MAX_TASK_TEXT = 200
"""A RunTask goal's `task` field: a name, alias, dataset id or a short description."""
MAX_CANDIDATES = 32
"""Candidate kinds in one AcquireKnowledge request (the task manager asks about 3-10)."""
MAX_STEPS = 64
"""Plan steps in one CheckPlan request (the shipped plans have fewer than 15)."""
MAX_QUESTIONS_PER_REQUEST = 100
"""Questions to the model one commonsense request may cause (each candidate costs
about five, each step one or two; the task manager's requests cost at most about 20).
With the node answering one request at a time, this bounds how long one peer's request
can keep the task manager's waiting."""
MAX_NAMES = 256
"""Names (objects, actions, focus objects) in one commonsense request."""
MAX_SITUATION_TEXT = 2000
"""A situation's text in a request (longer ones are refused, not cut)."""
MAX_KEPT_ROLES = 512
"""Roles whose needs a method keeps between requests (per task's words and role; a
shipped task has two to five): past it the oldest is forgotten, so that peers sending
ever new task words cannot grow the commonsense node without end."""


class LimitError(CowpError):
    """A request or file past one of the bounds above."""


def check_size(text: str, limit: int, what: str) -> str:
    """`text` when it is at most `limit` bytes of UTF-8, else a LimitError naming both."""
    size = len(text.encode("utf-8", errors="surrogatepass"))
    if size > limit:
        raise LimitError(
            f"{what} is {size:,} bytes, over the limit of {limit:,}",
            hint="send less: the stack's own requests are far smaller",
        )
    return text


def check_count(count: int, limit: int, what: str) -> None:
    """Refuse `count` items of `what` when it is past `limit`."""
    if count > limit:
        raise LimitError(f"{count:,} {what} in one request, over the limit of {limit:,}")


def read_regular_file(path: Path, limit: int, what: str) -> bytes:
    """The bytes of `path` when it is a regular file of at most `limit` bytes.

    Opened without blocking and checked before reading: a named pipe would block the
    reader for ever, `/dev/zero` never ends, and a symlink to either is refused as
    what it points at. Raises LimitError (too big, not a regular file) or OSError.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags)
    with contextlib.ExitStack() as stack:
        stack.callback(os.close, descriptor)
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise LimitError(
                f"{what} {path} is not a regular file ({_kind(info.st_mode)})",
                hint="name a file, not a device, pipe or folder",
            )
        if info.st_size > limit:
            raise LimitError(
                f"{what} {path} is {info.st_size:,} bytes, over the limit of {limit:,}"
            )
        chunks: list[bytes] = []
        total = 0
        while True:
            try:
                chunk = os.read(descriptor, 65536)
            except BlockingIOError:  # a regular file never blocks; be safe all the same
                raise OSError(errno.EAGAIN, f"{path} would block") from None
            if not chunk:
                break
            total += len(chunk)
            if total > limit:  # the file grew while we read
                raise LimitError(f"{what} {path} is over the limit of {limit:,} bytes")
            chunks.append(chunk)
        return b"".join(chunks)


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a named pipe"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a plain file"
