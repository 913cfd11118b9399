"""`--smoke`: every bench script runs in CI in a tiny configuration, so none can rot.

A smoke run takes the script's real path end to end (its planners, its model client, its
table, its plot) on the smallest input, with the scripted model server
(`cowp_ros.chaos.server`, rule-based sane answers) standing in for the language model.
Its figures mean nothing: they only show that the script still runs.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer

SMOKE_HELP = "a tiny run against the scripted model server (for CI; its figures mean nothing)"


@contextlib.contextmanager
def scripted_model_server() -> Iterator[str]:
    """Start the scripted server and point OPENAI_BASE_URL / OPENAI_MODEL at it."""
    keys = ("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY")
    saved = {key: os.environ.get(key) for key in keys}
    with ScriptedLLMServer(SensibleModel()) as server:
        os.environ.update(OPENAI_BASE_URL=server.url, OPENAI_MODEL="scripted")
        os.environ.pop("OPENAI_API_KEY", None)
        try:
            yield server.url
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value
