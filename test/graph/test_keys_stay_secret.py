"""A model server's key reaches the commonsense node, and nothing a ROS peer or a person
can read: no node's parameters, no log, no bag, no report, no output.

`cowp demo` runs for real against the scripted server with two canary keys: one in the
URL (`http://user:KEY@host`), one given with `--llm-key` (the one the server must then
receive). While the graph is up, every node's parameters are read the way any peer
would (`list_parameters`, `get_parameters`): the model's answer to the first question
is held until they have been read, so the graph cannot finish its task and go first.
"""

from __future__ import annotations

import base64
import subprocess
import sys
import threading
import uuid
from pathlib import Path
from typing import Any

import pytest
from graph_harness import Probe
from rcl_interfaces.srv import GetParameters, ListParameters

from cowp_ros.bringup.node_secrets import (
    keys_moved_out,
    split_key,
    split_query,
    with_query,
    with_userinfo,
)
from cowp_ros.bringup.spec import load_profile, with_parameter_overrides
from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import Reply, Request, ScriptedLLMServer
from cowp_ros.llm.client import WARM_QUESTION

RUN_CLI = "import sys; from cowp_ros.cli import main; sys.exit(main())"

EXPECTED_NODES = {"commonsense", "planner", "task_manager"}

READ_WITHIN_S = 30.0
"""How long the graph's own nodes and their parameter services may take to be found."""

HOLD_ANSWER_S = 90.0
"""At most this long the first question's answer waits for the parameters to be read
(below the commonsense node's `llm_timeout_s`, 120 s: the question must not fail)."""


def test_a_key_in_a_url_moves_out_of_the_parameters() -> None:
    assert split_key("http://user:sk-1234@host:8000/v1") == (
        "http://host:8000/v1",
        "user:sk-1234",
    )
    assert split_key("http://sk-1234@host/v1") == ("http://host/v1", "sk-1234")
    assert split_key("http://host/v1") == ("http://host/v1", None)
    assert with_userinfo("http://host:8000/v1", "user:sk-1234") == (
        "http://user:sk-1234@host:8000/v1"
    )
    profile = with_parameter_overrides(
        load_profile("sim"), ["commonsense.llm_url=http://user:sk-1234@host:8000/v1"]
    )
    clean, environments = keys_moved_out(profile)
    assert clean.node("commonsense").parameters["llm_url"] == "http://host:8000/v1"
    assert environments == {"commonsense": {"COWP_LLM_URL_USERINFO": "user:sk-1234"}}


def test_a_key_in_a_url_query_moves_out_of_the_parameters() -> None:
    url = "http://host:8000/v1?api_key=sk-1234"
    assert split_query(url) == ("http://host:8000/v1", "api_key=sk-1234")
    assert split_query("http://host/v1") == ("http://host/v1", None)
    assert with_query("http://host:8000/v1", "api_key=sk-1234") == url
    profile = with_parameter_overrides(
        load_profile("sim"), ["commonsense.llm_url=http://user:pw-99@host:8000/v1?api_key=sk-1234"]
    )
    clean, environments = keys_moved_out(profile)
    assert clean.node("commonsense").parameters["llm_url"] == "http://host:8000/v1"
    assert environments == {
        "commonsense": {
            "COWP_LLM_URL_USERINFO": "user:pw-99",
            "COWP_LLM_URL_QUERY": "api_key=sk-1234",
        }
    }


def _parameters_of_every_node(probe: Probe) -> dict[str, str]:
    """Each node's parameters as text, read as any ROS peer reads them: the graph's
    own nodes first, once the probe has found them, then every other node it sees."""

    def nodes() -> list[tuple[str, str]]:
        return [
            (name, namespace)
            for name, namespace in probe.node.get_node_names_and_namespaces()
            if name != probe.node.get_name()
        ]

    probe.spin_until(
        lambda: {name for name, _ in nodes()} >= EXPECTED_NODES, READ_WITHIN_S, "the graph"
    )
    seen: dict[str, str] = {}
    for name, namespace in sorted(nodes(), key=lambda node: node[0] not in EXPECTED_NODES):
        base = f"{namespace.rstrip('/')}/{name}"
        lister = probe.node.create_client(ListParameters, f"{base}/list_parameters")
        getter = probe.node.create_client(GetParameters, f"{base}/get_parameters")
        # A node of the graph is held up (its question unanswered): it must be found.
        # Any other (a command's passing node) may have gone meanwhile.
        wait_s = READ_WITHIN_S if name in EXPECTED_NODES else 5.0
        if not (
            lister.wait_for_service(timeout_sec=wait_s)
            and getter.wait_for_service(timeout_sec=wait_s)
        ):
            continue
        listed = probe.wait_future(lister.call_async(ListParameters.Request()), 20, base)
        names = list(listed.result.names)
        values = probe.wait_future(
            getter.call_async(GetParameters.Request(names=names)), 20, base
        ).values
        seen[name] = repr(list(zip(names, values, strict=True)))
    return seen


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("channel", ["url", "flag"])
def test_no_key_in_any_parameter_log_bag_or_report(
    channel: str, tmp_path: Path, probe: Probe
) -> None:
    key = f"sk-canary-{uuid.uuid4().hex}"
    sane = SensibleModel()
    authorizations: list[str] = []
    asked = threading.Event()
    read = threading.Event()

    def respond(request: Request) -> Reply | None:
        authorizations.append(request.headers.get("Authorization", ""))
        if request.is_chat and request.json["messages"][-1]["content"] != WARM_QUESTION:
            asked.set()  # a question (not the node reading its prompt prefix ahead)
            read.wait(HOLD_ANSWER_S)  # the graph stays up, waiting for this answer
        return sane(request)

    with ScriptedLLMServer(respond) as server:
        if channel == "url":
            flags = ["--llm-url", server.url.replace("http://", f"http://user:{key}@", 1)]
            expected = "Basic " + base64.b64encode(f"user:{key}".encode()).decode()
        else:
            flags = ["--llm-url", server.url, "--llm-key", key]
            expected = f"Bearer {key}"
        demo = subprocess.Popen(
            [sys.executable, "-c", RUN_CLI, "demo", *flags, "--llm-model", "scripted",
             "--no-cache", "--out", str(tmp_path / "demo"), "--timeout", "240"],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )  # fmt: skip
        output: list[bytes] = []
        reader = threading.Thread(target=lambda: output.append(demo.stdout.read()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        try:
            assert asked.wait(180), "the commonsense node never asked the model"
            try:
                parameters = _parameters_of_every_node(probe)
            finally:
                read.set()
            demo.wait(timeout=400)
        finally:
            if demo.poll() is None:
                demo.kill()
                demo.wait()
        reader.join(10)
    assert set(parameters) >= EXPECTED_NODES
    assert expected in authorizations, f"the key never reached the node ({channel})"
    places: dict[str, Any] = {"demo output": b"".join(output), **parameters}
    for path in (tmp_path / "demo").rglob("*"):
        if path.is_file():
            places[str(path.relative_to(tmp_path))] = path.read_bytes()
    assert any("bag" in place for place in places) and any(
        place.endswith(".log") for place in places
    )
    assert any(place.endswith(".json") for place in places), "no report"
    for place, content in places.items():
        text = content if isinstance(content, str) else content.decode("utf-8", "replace")
        assert key not in text, f"a key in {place}"
