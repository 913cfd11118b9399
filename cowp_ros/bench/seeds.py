"""Fresh draws for the test table: the seeds it is scored on, recorded before the run.

A method developed while its versions were scored on the same test draws is selected on
them: the best version on seed 0 is partly the luckiest on seed 0. The rule (the
"Fresh draws" section of docs/benchmark.md) is that the test table of a method version
is scored on a seed drawn at random and recorded before the run, and that every later
version is scored on a new one. This module keeps the record, `benchmarks/seeds.yaml`:
one entry per seed, with the methods it was drawn for, their code's version (a hash of
every method package's files, `code_version`), the commit, and the date.

`cowp bench` asks `check_test_run` before it runs the test tasks with a method that is
not a fixed reference (the controls, the oracle, CW): the seed must be registered for
those methods at this code version. A seed registered for another version of the code
is refused unless the run says it is a re-run (`--rerun`), and a re-run's table says so
in its header; an unregistered seed is refused with the command that draws one. The
seeds are large random numbers (`secrets`), so that no method could find a trial's
draw seed by trying small ones against the objects it sees.
"""

from __future__ import annotations

import datetime
import hashlib
import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError

PACKAGE = Path(__file__).resolve().parents[1]
REGISTRY = PACKAGE.parent / "benchmarks" / "seeds.yaml"
METHOD_PACKAGES = ("bench/methods", "methods", "cowp")
"""The code a method's process runs: a change to any file here is a new method version."""
REFERENCES = frozenset({"oracle", "cw", "retry", "same_kind", "noun_only"})
"""Fixed references, not developed against the test tasks: any seed scores them."""
SEED_BITS = 62


@dataclass(frozen=True)
class SeedEntry:
    """One registered seed: drawn for `methods` at code version `code`."""

    seed: int
    methods: tuple[str, ...]
    code: str
    commit: str
    registered: str
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "seed": self.seed,
            "methods": list(self.methods),
            "code": self.code,
            "commit": self.commit,
            "registered": self.registered,
        }
        if self.note:
            data["note"] = self.note
        return data


def code_version(root: Path = PACKAGE) -> str:
    """A hash of every file of the method packages (`METHOD_PACKAGES`), caches aside."""
    digest = hashlib.sha256()
    for folder in METHOD_PACKAGES:
        for path in sorted((root / folder).rglob("*")):
            if path.is_file() and "__pycache__" not in path.parts:
                digest.update(str(path.relative_to(root)).encode() + b"\0")
                digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def read_registry(path: Path = REGISTRY) -> list[SeedEntry]:
    """The registered seeds, or a CowpError naming the entry that is malformed."""
    if not path.is_file():
        return []
    try:
        raw = yaml.safe_load(path.read_text()) or {}
        entries = raw.get("seeds") or []
        return [
            SeedEntry(
                seed=int(e["seed"]),
                methods=tuple(str(m) for m in e["methods"]),
                code=str(e["code"]),
                commit=str(e.get("commit", "")),
                registered=str(e["registered"]),
                note=str(e.get("note", "")),
            )
            for e in entries
        ]
    except (yaml.YAMLError, KeyError, TypeError, ValueError, AttributeError) as err:
        raise CowpError(
            f"cannot read the seed registry {path}: {err!r}",
            hint="each entry under `seeds:` needs seed, methods, code and registered "
            "(see docs/benchmark.md, Fresh draws); fix it by hand or restore it from git",
        ) from err


HEADER = (
    "# The seeds the test tasks were scored on, each recorded before its run\n"
    "# (docs/benchmark.md, Fresh draws). Written by `cowp bench --new-test-seed`;\n"
    "# never edit an entry: a seed once used stays used.\n"
)


def register_seed(
    methods: Sequence[str], commit: str, note: str = "", path: Path = REGISTRY
) -> SeedEntry:
    """Draw a fresh seed for `methods` at this code version and record it (appended)."""
    entries = read_registry(path)
    used = {e.seed for e in entries}
    seed = secrets.randbits(SEED_BITS)
    while seed in used:
        seed = secrets.randbits(SEED_BITS)
    entry = SeedEntry(
        seed=seed,
        methods=tuple(methods),
        code=code_version(),
        commit=commit,
        registered=datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        note=note,
    )
    data = {"seeds": [e.to_dict() for e in [*entries, entry]]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + yaml.safe_dump(data, sort_keys=False, width=100))
    return entry


def developed(methods: Sequence[str]) -> list[str]:
    """The methods of a run that are developed against the test tasks (not references)."""
    return [m for m in methods if m not in REFERENCES]


def check_test_run(seed: int, methods: Sequence[str], *, rerun: bool, path: Path = REGISTRY) -> str:
    """Whether the test tasks may be scored with `methods` on `seed`: returns the seed's
    standing for the table's header ("fresh", "re-run", or "" for references only), or
    raises a CowpError saying why not and what to do."""
    mine = developed(methods)
    if not mine:
        return ""
    version = code_version()
    entries = [e for e in read_registry(path) if e.seed == seed]
    draw = (
        f"cowp bench --new-test-seed --methods {','.join(methods)} draws a fresh one and "
        f"records it in {path.name}; run with the seed it prints"
    )
    if not entries:
        raise CowpError(
            f"seed {seed} is not registered for scoring the test tasks: the test table is "
            "scored on a seed drawn and recorded before the run",
            hint=draw,
        )
    if any(e.code == version and set(mine) <= set(e.methods) for e in entries):
        return "fresh"
    if rerun:
        return "re-run"
    before = ", ".join(f"{e.code} ({e.registered}, {', '.join(e.methods)})" for e in entries)
    raise CowpError(
        f"seed {seed} was used for another version of the methods or for other methods "
        f"({before}); this code is {version}: a new version is scored on a new seed",
        hint=f"{draw}; or add --rerun to score it again on a used seed (its table then "
        "says re-run, never fresh)",
    )
