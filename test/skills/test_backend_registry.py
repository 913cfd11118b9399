"""Robot backends are declared once (`cowp_ros.skills.backends`) and built by name
(`ros/skill_backends/factory.py`): the executor's choices, the doctor's checks and the
builders all read the same declarations."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from cowp_ros.bringup.doctor import _executor_needs
from cowp_ros.errors import CowpError
from cowp_ros.skills import backends
from cowp_ros.skills.backends import BackendInfo, Requirement, choices, resolve_choice

pytestmark = pytest.mark.ros


@pytest.fixture
def scratch_registry(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Declarations made by a test vanish with it."""
    monkeypatch.setattr(backends, "_REGISTRY", dict(backends._REGISTRY))
    monkeypatch.setattr(backends, "_AUTO", dict(backends._AUTO))
    yield


def test_every_declared_backend_has_a_builder_and_no_builder_is_undeclared() -> None:
    from cowp_ros.ros.skill_backends.factory import BUILDERS

    declared = {(info.part, info.name) for info in backends.all_backends()}
    assert declared == set(BUILDERS)
    assert len(declared) == 7


def test_the_parameters_choices_come_from_the_declarations() -> None:
    from cowp_ros.ros.nodes.executor import PARAMETERS

    help_of = {param.name: param.description for param in PARAMETERS}
    for part in backends.PARTS:
        assert f"({', '.join(choices(part))})" in help_of[f"{part}_backend"]
    assert choices("gripper") == ("auto", "topic", "action", "gripper_command")


def test_a_new_backend_is_one_declaration_the_doctor_and_executor_read(
    scratch_registry: None,
) -> None:
    """A declared backend is a valid parameter value at once, `auto` can pick it, and
    the doctor names what it needs with the apt package (here: a module nobody has)."""
    gadget = Requirement("cowp_test_gadget_msgs", "ros-kilted-cowp-test-gadget-msgs", "gadget")
    backends.register(
        BackendInfo("gripper", "gadget", "a test gripper", title="gripper", requires=(gadget,))
    )
    assert "gadget" in choices("gripper")
    choice = resolve_choice("robot", "nav2", "topic", "gadget")
    assert choice.gripper == "gadget"
    needs = {n.what: n for n in _executor_needs("executor", {"gripper_backend": "gadget"})}
    need = needs["cowp_test_gadget_msgs (the gripper gadget backend)"]
    assert not need.ok and need.install == "sudo apt install ros-kilted-cowp-test-gadget-msgs"
    backends.set_auto("robot", "gripper", "gadget", "topic")
    assert resolve_choice("robot", "auto", "auto", "auto").gripper == "topic"  # not installed
    with pytest.raises(ValueError, match="declared twice"):
        backends.register(BackendInfo("gripper", "gadget", "again"))


def test_an_unknown_backend_name_is_refused_with_the_choices() -> None:
    with pytest.raises(CowpError, match="arm_backend is 'hydraulic'; allowed values: auto, "):
        resolve_choice("robot", "auto", "hydraulic", "auto")
    needs = _executor_needs("executor", {"arm_backend": "hydraulic"})
    assert [(n.what, n.ok) for n in needs] == [("valid backend parameters", False)]
