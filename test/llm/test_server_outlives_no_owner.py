"""The embedded server never outlives a killed owner (no orphaned 1.8 GB servers)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest

pytestmark = [pytest.mark.llm, pytest.mark.slow]

OWNER = """
from cowp_ros.llm.local_server import LocalServer
from cowp_ros.llm.model_store import resolve_model
server = LocalServer(resolve_model(None, "smollm2-135m"))
server.start()
print(server._process.pid, flush=True)
import time
time.sleep(600)
"""


def test_server_dies_when_its_owner_is_killed() -> None:
    owner = subprocess.Popen([sys.executable, "-c", OWNER], stdout=subprocess.PIPE, text=True)
    assert owner.stdout is not None
    server_pid = int(owner.stdout.readline())
    os.kill(owner.pid, signal.SIGKILL)
    owner.wait(timeout=10)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    os.kill(server_pid, signal.SIGKILL)
    pytest.fail("the embedded server kept running after its owner was killed")
