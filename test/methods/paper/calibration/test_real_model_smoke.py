"""One real-model round trip of the calibrated monitor (SmolLM2-135M, small and fast).

SmolLM2 answers near chance, so only the structure is asserted: every variant yields a
finite score from first-token log-probabilities and a verdict consistent with its
threshold. The benchmark (`cowp monitor eval`) measures the quality.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.model_store import SMOLLM2_135M, ResolvedModel
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.paper.calibration.config import MonitorCalibration
from cowp_ros.methods.paper.calibration.scoring import get_variant
from cowp_ros.methods.paper.monitor import PlanMonitor
from cowp_ros.planning.result import PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def test_calibrated_monitor_scores_with_a_real_model(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp", reason="run scripts/setup.d/llm_model.sh (make setup)")
    if not SMOLLM2_135M.path.is_file():
        pytest.skip(f"{SMOLLM2_135M.path} missing: run 'cowp llm provision smollm2-135m'")
    from cowp_ros.llm.local_server import LocalServer

    spec = get_task("fill_cup")
    task, phrases = spec.load(), ActionPhrases(spec.phrases)
    step = PlanStep("fill_cup", ("cup_1", "faucet_1"))
    resolved = ResolvedModel(path=SMOLLM2_135M.path, name=SMOLLM2_135M.name, spec=SMOLLM2_135M)
    with LocalServer(resolved, threads=2) as server:
        settings = LLMSettings(cache_path=tmp_path / "answers.sqlite3", timeout_s=120)
        model = OpenAICompatibleModel(settings.with_endpoint(server.base_url, server.model.name))
        for name in ("plain-contrast", "prevents"):
            calibration = MonitorCalibration(model.name, get_variant(name), 0.0)
            monitor = PlanMonitor(model, phrases, calibration=calibration)
            verdict = monitor.check_step(step, "the cup is dirty", task)
            assert verdict.variant == name and verdict.score is not None
            assert math.isfinite(verdict.score)
            assert verdict.suitable == (verdict.score < 0.0)
