"""Fixtures for graph tests: real node processes, and a probe node in the test process."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from graph_harness import Probe

from cowp_ros.bringup.spec import Profile
from cowp_ros.bringup.supervisor import Supervisor


@pytest.fixture
def start_graph(tmp_path: Path) -> Iterator[Callable[..., Supervisor]]:
    """Start a profile's nodes, wait until each serves; stop them all after the test."""
    started: list[Supervisor] = []

    def start(profile: Profile, ready_timeout_s: float = 90.0) -> Supervisor:
        supervisor = Supervisor(profile, tmp_path / "logs", say=lambda _m: None)
        started.append(supervisor)
        supervisor.start()
        supervisor.wait_ready(ready_timeout_s)
        return supervisor

    yield start
    for supervisor in started:
        supervisor.stop()


@pytest.fixture
def probe() -> Iterator[Probe]:
    made = Probe()
    yield made
    made.close()


@pytest.fixture(scope="session")
def local_llm() -> Iterator[tuple[str, str]]:
    """(base URL, model name) of the embedded model, started once for the session."""
    from cowp_ros.llm.endpoint import llm_endpoint
    from cowp_ros.llm.settings import LLMSettings

    with llm_endpoint(LLMSettings()) as settings:
        assert settings.base_url and settings.model
        yield settings.base_url, settings.model
