"""`cowp task send` hands Ctrl-C back to its caller whatever ends it."""

from __future__ import annotations

import argparse
import signal

import pytest

from cowp_ros.cli import task as task_cli
from cowp_ros.errors import CowpError
from cowp_ros.ros.clients import task_client


class ClientThatCannotStart:
    def __init__(self) -> None:
        # Ctrl-C while the node starts is already the command's: it sets the stop flag.
        handler = signal.getsignal(signal.SIGINT)
        assert callable(handler) and handler is not signal.default_int_handler
        raise CowpError("cannot start the task client: no DDS here")


def test_a_client_that_fails_to_start_leaves_the_callers_ctrl_c_handler(monkeypatch) -> None:
    monkeypatch.setattr(task_client, "TaskClient", ClientThatCannotStart)
    before = signal.getsignal(signal.SIGINT)
    args = argparse.Namespace(task="serve_water", wait_server=0.1, timeout=1.0)
    with pytest.raises(CowpError, match="cannot start the task client"):
        task_cli.send_task(args)
    assert signal.getsignal(signal.SIGINT) is before
