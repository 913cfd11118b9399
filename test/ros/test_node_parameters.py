"""Every node declares its parameters from one table whose defaults are its config file's,
and a value of the wrong type or range stops the node with one clear line."""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import pytest
import rclpy
import yaml
from rclpy.node import Node
from rclpy.parameter import Parameter

import cowp_ros.ros.nodes
from cowp_ros.errors import CowpError
from cowp_ros.ros.parameters import Param, at_least, declare_parameters, positive

ROOT = Path(__file__).resolve().parents[2]
NODES = sorted(m.name for m in pkgutil.iter_modules(cowp_ros.ros.nodes.__path__))


def test_every_node_module_can_be_started() -> None:
    """Each node module has its entry point (setup.py) and a line in the node
    specification (config/bringup.yaml), so `ros2 run` and `cowp bringup` both find it."""
    setup = (ROOT / "setup.py").read_text()
    spec = yaml.safe_load((ROOT / "config" / "bringup.yaml").read_text())
    executables = {node.get("executable") for node in spec["nodes"].values()}
    assert len(NODES) >= 8 and "physics_world" in NODES
    for name in NODES:
        assert f'"{name} = cowp_ros.ros.nodes.{name}:main"' in setup, name
        assert name in executables, name


@pytest.mark.parametrize("name", NODES)
def test_the_table_defaults_are_the_config_files(name: str) -> None:
    module = importlib.import_module(f"cowp_ros.ros.nodes.{name}")
    table = module.PARAMETERS
    assert all(isinstance(p, Param) and p.description for p in table)
    declared = {p.name: p.default for p in table}
    config = next((ROOT / "config").glob(f"**/{name}.yaml"))  # base_controller: gazebo/
    in_file = yaml.safe_load(config.read_text())[name]["ros__parameters"]
    assert in_file == declared


@pytest.fixture
def context():
    context = rclpy.Context()
    rclpy.init(context=context)
    yield context
    rclpy.try_shutdown(context=context)


TABLE = (
    Param("timeout_s", 60.0, "a deadline", positive),
    Param("retries", 1, "how often", at_least(0)),
    Param("name", "x", "a name"),
    Param("objects", [""], "a list"),
    Param("cache", True, "a switch"),
)


def _node(context, **overrides) -> Node:
    return Node(
        "probe",
        context=context,
        parameter_overrides=[Parameter(k, value=v) for k, v in overrides.items()],
    )


def test_a_whole_number_where_a_float_is_declared_is_accepted(context) -> None:
    node = _node(context, timeout_s=5, name=False)  # YAML's unquoted off
    try:
        values = declare_parameters(node, TABLE)
    finally:
        node.destroy_node()
    assert values["timeout_s"] == 5.0 and isinstance(values["timeout_s"], float)
    assert values["objects"] == [""] and values["cache"] is True
    assert values["name"] == "false"


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"timeout_s": -1.0}, "parameter timeout_s must be a finite number > 0"),
        ({"timeout_s": float("inf")}, "parameter timeout_s must be a finite number > 0"),
        ({"timeout_s": "soon"}, "parameter timeout_s: expected a number"),
        ({"retries": -2}, "parameter retries must be >= 0"),
        ({"retries": 1.5}, "parameter retries: expected a whole number"),
        ({"cache": "yes"}, "parameter cache: expected true or false"),
    ],
)
def test_a_bad_value_names_the_parameter(context, overrides: dict, message: str) -> None:
    node = _node(context, **overrides)
    try:
        with pytest.raises(CowpError, match=message):
            declare_parameters(node, TABLE)
    finally:
        node.destroy_node()


def test_a_peer_cannot_change_a_parameter_the_node_read_at_start(context) -> None:
    """Nodes read their parameters once: a peer's SetParameters (one on the commonsense
    node's `method` made every later task refused) is refused with a reason."""
    node = _node(context)
    try:
        declare_parameters(node, TABLE)
        results = node.set_parameters([Parameter("name", value="other")])
        assert not results[0].successful
        assert "read-only" in results[0].reason
        assert node.get_parameter("name").value == "x"
    finally:
        node.destroy_node()
