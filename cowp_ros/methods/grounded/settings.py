"""The grounded method's settings: its thresholds per model, and the shared embedder.

The method itself (what sits at the loop's ports) is `cowp_ros.methods.grounded.method`; its
thresholds are per model, chosen on the dev tasks, in `config/grounded.yaml`
(`GroundedSettings.for_model`); `docs/grounded.md` says how it decides.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import yaml

from cowp_ros.errors import CowpError
from cowp_ros.llm.embeddings import Embedder
from cowp_ros.resources import share_path

CONFIG_ENV = "COWP_GROUNDED_CONFIG"
DEFAULT_ENTRY = "default"

SWITCHES = frozenset({"restate", "read_both"})
"""The settings that are true or false rather than numbers."""


@dataclass(frozen=True)
class GroundedSettings:
    """The method's knobs for one model (see `config/grounded.yaml` for their meaning)."""

    use_threshold: float = 0.0
    world_threshold: float = 2.0
    dirty_threshold: float = 0.0
    need_threshold: float = 0.0
    role_threshold: float = 0.9
    max_candidates: int = 3
    min_similarity: float = 0.0
    restate: bool = False
    read_both: bool = False
    model: str = DEFAULT_ENTRY

    @classmethod
    def for_model(cls, model: str, path: Path | None = None) -> GroundedSettings:
        """The entry for `model`, else the file's `default` entry."""
        path = path or default_config_path()
        try:
            data = yaml.safe_load(path.read_text()) or {}
        except OSError as err:
            raise CowpError(f"cannot read {path}: {err.strerror}") from err
        except yaml.YAMLError as err:
            raise CowpError(f"{path} is not valid YAML: {err}") from err
        models = data.get("models") if isinstance(data, Mapping) else None
        if not isinstance(models, Mapping):
            raise CowpError(f"{path}: expected 'models:' mapping model names to settings")
        name = model if model in models else DEFAULT_ENTRY
        if name not in models:
            raise CowpError(
                f"{path} has no entry for {model!r} and no {DEFAULT_ENTRY!r} entry",
                hint="add one (thresholds are chosen on the dev tasks: docs/grounded.md)",
            )
        return cls.parse(name, models[name], str(path))

    @classmethod
    def parse(cls, name: str, raw: Any, source: str) -> GroundedSettings:
        """One entry, checked: an unknown key or a non-number is an error, not a default."""
        if not isinstance(raw, Mapping):
            raise CowpError(f"{source}, model {name!r}: the entry must be a mapping")
        known = {f.name for f in fields(cls)} - {"model"}
        values: dict[str, Any] = {}
        for key, value in raw.items():
            if key == "tuned_on":
                continue
            if key not in known:
                raise CowpError(
                    f"{source}, model {name!r}: unknown setting {key!r}",
                    hint=f"known: {', '.join(sorted(known))}",
                )
            if key in SWITCHES:
                if not isinstance(value, bool):
                    raise CowpError(f"{source}, model {name!r}: {key} must be true or false")
                values[key] = value
                continue
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise CowpError(f"{source}, model {name!r}: {key} must be a number")
            values[key] = int(value) if key == "max_candidates" else float(value)
        if values.get("read_both") and not values.get("restate"):
            raise CowpError(
                f"{source}, model {name!r}: read_both reads the situation's restatement too",
                hint="set restate: true beside it, or leave read_both out",
            )
        return cls(model=name, **values)


def default_config_path() -> Path:
    """`$COWP_GROUNDED_CONFIG`, else `config/grounded.yaml` of the share."""
    configured = os.environ.get(CONFIG_ENV)
    return Path(configured) if configured else share_path("config", "grounded.yaml")


def default_embedder() -> Embedder | None:
    """all-MiniLM-L6-v2 when its package is installed, else None (no prior order)."""
    from cowp_ros.llm.embeddings import SentenceEmbedder

    try:
        return SentenceEmbedder()
    except CowpError:
        return None


_EMBEDDER: Embedder | None = None


def shared_embedder() -> Embedder | None:
    """One embedder per process (its weights load once; it caches vectors per text)."""
    global _EMBEDDER
    if _EMBEDDER is None:
        _EMBEDDER = default_embedder()
    return _EMBEDDER
