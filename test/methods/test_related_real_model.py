"""One smoke test with a real (tiny) model: guided search and a belief update end to end.

SmolLM2-135M answers near chance, so nothing about its choices is asserted: only that
its answers, whatever they are, go through the same checks (a verified plan; a belief
holding nothing but validated names and phrases).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from cowp_ros.llm.client import OpenAICompatibleModel
from cowp_ros.llm.model_store import SMOLLM2_135M, ResolvedModel
from cowp_ros.llm.settings import LLMSettings
from cowp_ros.methods.llm_guided.search import make_llm_guided_planner, verify_plan
from cowp_ros.methods.llm_state.belief import Belief, LLMStateTracker
from cowp_ros.methods.llm_state.calls import PHRASE
from cowp_ros.tasks import get_task

pytestmark = [pytest.mark.llm, pytest.mark.slow]


def test_tiny_model_guides_a_verified_plan_and_keeps_a_valid_belief(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp", reason="run scripts/setup.d/llm_model.sh (make setup)")
    if not SMOLLM2_135M.path.is_file():
        pytest.skip(f"{SMOLLM2_135M.path} missing: run 'cowp llm provision smollm2-135m'")
    from cowp_ros.llm.local_server import LocalServer

    resolved = ResolvedModel(path=SMOLLM2_135M.path, name=SMOLLM2_135M.name, spec=SMOLLM2_135M)
    with LocalServer(resolved, threads=2) as server:
        settings = LLMSettings(cache_path=tmp_path / "answers.sqlite3", timeout_s=120)
        model = OpenAICompatibleModel(settings.with_endpoint(server.base_url, server.model.name))
        task = get_task("battery_disassembly").build_problem(13)
        result = make_llm_guided_planner(model, beam=2, max_llm_calls=4).solve(task, 300)
        assert result.found, result.detail
        assert verify_plan(task, result.steps) == []
        assert 1 <= result.extra["llm_calls"] <= 4 and model.usage.calls >= 1

        tracker = LLMStateTracker(model, Belief.from_task(get_task("fill_cup").load()))
        update = tracker.observe_situation("the cup has coffee stains")
        assert update.reply == tracker.updates[0].reply
        for held in tracker.belief.objects.values():
            assert all(PHRASE.fullmatch(v) for v in held.attributes.values())
