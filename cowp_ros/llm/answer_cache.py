"""A persistent answer cache, so a rerun of the same questions costs no model call.

COWP asks the same questions again and again: every benchmark trial replays the same
situations, and a demo rerun asks what the last run asked. Answers are kept in one
sqlite file keyed by a sha256 over *everything that shapes the answer*: the scope (which
server and model answered: the base URL and model name of a configured server, the
verified model file of the embedded one, whose port changes on every start), the kind
of question, the system prompt, the few-shot examples, the question, the options and the
request parameters. Change any of them and the key changes, so a stale answer can never
be served for a different prompt, nor one server's answers for another's.

Records are strict JSON: an answer holding NaN or Infinity is not stored, and a record
that is not strict JSON (written by an older client) reads as a miss.

Several processes (ROS nodes, a benchmark and a CLI) may share the file: sqlite's WAL
journal lets readers and a writer work at once, and a busy timeout makes writers wait
for each other instead of failing. A cache that cannot be opened or written is a
performance problem, not a failure: the client then simply asks the model.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

_SCHEMA = """
CREATE TABLE IF NOT EXISTS answers (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    kind TEXT NOT NULL,
    prompt TEXT NOT NULL,
    answer TEXT NOT NULL,
    created REAL NOT NULL
)
"""


def cache_key(scope: str, kind: str, prompt: Mapping[str, Any]) -> str:
    """A stable key over the scope (server and model), the question kind and the prompt."""
    canonical = json.dumps(
        {"model": scope, "kind": kind, "prompt": prompt},
        sort_keys=True,
        ensure_ascii=False,
        separators=(",", ":"),
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


class AnswerCache:
    """Answers by prompt, in a sqlite file shared safely between processes."""

    def __init__(self, path: Path, *, busy_timeout_s: float = 30.0) -> None:
        self.path = path
        self._lock = threading.Lock()
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(
            str(path), timeout=busy_timeout_s, check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(_SCHEMA)

    def get(self, scope: str, kind: str, prompt: Mapping[str, Any]) -> dict[str, Any] | None:
        """The stored answer for exactly this prompt, or None (also for a record that is
        not strict JSON)."""
        key = cache_key(scope, kind, prompt)
        with self._lock:
            row = self._db.execute("SELECT answer FROM answers WHERE key = ?", (key,)).fetchone()
        if not row:
            return None
        try:
            answer = json.loads(row[0], parse_constant=_refuse_constant)
        except ValueError:
            return None
        return dict(answer) if isinstance(answer, dict) else None

    def put(
        self,
        scope: str,
        kind: str,
        prompt: Mapping[str, Any],
        answer: Mapping[str, Any],
        *,
        model: str | None = None,
    ) -> None:
        """Store (or replace) the answer for this prompt; `model` names the model for
        `clear(model)` (default: the scope). Raises ValueError for NaN or Infinity."""
        key = cache_key(scope, kind, prompt)
        record = (
            key,
            model or scope,
            kind,
            json.dumps(prompt, sort_keys=True, ensure_ascii=False),
            json.dumps(answer, ensure_ascii=False, allow_nan=False),
            time.time(),
        )
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO answers VALUES (?, ?, ?, ?, ?, ?)", record)

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM answers").fetchone()[0])

    def clear(self, model: str | None = None) -> int:
        """Forget all answers (or one model's); returns how many were removed."""
        with self._lock:
            if model is None:
                cursor = self._db.execute("DELETE FROM answers")
            else:
                cursor = self._db.execute("DELETE FROM answers WHERE model = ?", (model,))
        return int(cursor.rowcount)

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not strict JSON")
