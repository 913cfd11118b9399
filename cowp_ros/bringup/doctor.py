"""Health checks behind `cowp doctor`: is this workspace able to run the stack?

Required checks fail the command (exit 1); optional parts only report whether they are
installed, because a user may run the stack without, say, YOLO or Fast Downward.
Every failing check says what to do about it.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str
    required: bool = True


def check_import(name: str, module: str, hint: str, required: bool = True) -> Check:
    """Import `module` for real (a broken native library only shows on import)."""
    try:
        imported = importlib.import_module(module)
    except Exception as err:  # any import failure is the finding, whatever its type
        return Check(name, False, f"cannot import {module}: {err}; {hint}", required)
    where = getattr(imported, "__file__", None) or "built in"
    return Check(name, True, f"{module} ({where})", required)


def check_installed(name: str, module: str, hint: str) -> Check:
    """An optional part: present or not, without paying for its import."""
    if importlib.util.find_spec(module) is None:
        return Check(name, False, f"not installed; {hint}", required=False)
    return Check(name, True, f"{module} installed", required=False)


def check_environment() -> Check:
    """DDS settings that make tests and demos stay on this machine."""
    scope = os.environ.get("ROS_AUTOMATIC_DISCOVERY_RANGE", "(unset: SUBNET)")
    domain = os.environ.get("ROS_DOMAIN_ID", "(unset: 0)")
    return Check(
        "DDS settings",
        True,
        f"ROS_DOMAIN_ID={domain}, ROS_AUTOMATIC_DISCOVERY_RANGE={scope}",
        required=False,
    )


def check_llm_model() -> Check:
    """The embedded model's file, verified (sha256 once, then its stamp) as before use."""
    name = "embedded LLM weights (optional)"
    try:
        from cowp_ros.llm.model_store import resolve_model, verify_resolved

        model = resolve_model()
        info = verify_resolved(model)
    except Exception as err:  # missing, corrupt or not provisioned: the finding
        return Check(name, False, f"{err}; run `make setup` (step llm_model)", required=False)
    return Check(name, True, f"{model.name}: {info.general_name} ({model.path})", required=False)


def check_detector_model() -> Check:
    name = "YOLO detector model (optional)"
    try:
        from cowp_ros.perception.models import resolve_model

        path = resolve_model()
    except Exception as err:  # missing: the finding
        return Check(name, False, f"{err}", required=False)
    return Check(name, True, str(path), required=False)


def check_dds_roundtrip() -> Check:
    from cowp_ros.bringup.dds_selftest import run_selftest

    result = run_selftest()
    return Check("DDS pub/sub across two processes", result.ok, result.detail)


SETUP_HINT = "run `make setup`"


def all_checks() -> list[Callable[[], Check]]:
    """The checks in the order a person would debug them: imports, then the network."""
    return [
        lambda: check_import("rclpy", "rclpy", SETUP_HINT),
        lambda: check_import(
            "cowp_interfaces", "cowp_interfaces.action", f"{SETUP_HINT} (builds it)"
        ),
        lambda: check_import("PDDL parser", "pddl", SETUP_HINT),
        lambda: check_import("pyperplan planner", "pyperplan", SETUP_HINT),
        lambda: check_import("openai client", "openai", SETUP_HINT),
        lambda: check_import("rosbags", "rosbags.rosbag2", SETUP_HINT),
        check_environment,
        check_dds_roundtrip,
        lambda: check_installed(
            "Fast Downward (optional planner)", "up_fast_downward", "pip install up-fast-downward"
        ),
        lambda: check_installed(
            "embedded LLM runtime (xllamacpp)", "xllamacpp", "run `make setup` (step llm_model)"
        ),
        check_llm_model,
        lambda: check_installed(
            "YOLO via ultralytics (optional)", "ultralytics", "run `make setup` (step perception)"
        ),
        lambda: check_installed(
            "onnxruntime detector backend (optional)",
            "onnxruntime",
            "run `make setup` (step perception)",
        ),
        check_detector_model,
    ]
