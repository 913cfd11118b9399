"""Same records before and after a change: fixed `cowp run` and `cowp bench` inputs run
on two checkouts, and what they wrote compared, timings aside.

    .venv/bin/python scripts/same_records.py BEFORE AFTER [--out DIR]

BEFORE and AFTER are checkouts (e.g. `git worktree add ../base COMMIT`). Both run with
this venv's interpreter and its installed dependencies, each with its own folder first
on PYTHONPATH (so its own `cowp_ros`, its own config and PDDL), in its own folder,
against one scripted OpenAI-compatible model server on 127.0.0.1 (rule-based answers,
`cowp_ros.chaos.answers.SensibleModel`: the same answer to the same question, whoever
asks), each command with a fresh answer cache. No embedded model starts.

Compared: every `cowp run` report (`SCENARIOS`, each run with `--report`) and every JSON
file `cowp bench` wrote (`BENCH`: the controls, the methods without a model and the
registry's methods on the scripted model). Left out, because they measure the machine
and the clock, not the run (`TIMING_KEYS`, `TIMING_TEXT`): the keys `at_s`, `seconds`,
`wall_s`, `started`, `finished`, `elapsed_s`, `created`, the benchmark's
`wall_seconds`, `llm_seconds`, `load_before` and `load_after`, the methods' `code`
version and `commit` (they name the checkout), a planner's time in a narrative line
("[0.06 s]"), and the output folder's own path. Not compared: the benchmark's tables
and figures (results.md, *.png), which are drawn from results.json.
Exit status 0 when every record is the same, 1 with the differences otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from cowp_ros.chaos.answers import SensibleModel
from cowp_ros.chaos.server import ScriptedLLMServer

RUN_CLI = "import sys; from cowp_ros.cli import main; sys.exit(main())"

SCENARIOS: dict[str, list[str]] = {
    "grounded_dirty_cup": ["fill_cup", "--situation", "the cup is dirty", "--at", "hold_cup"],
    "cowp_dirty_cup": [
        "fill_cup", "--method", "cowp", "--situation", "the cup is dirty", "--at", "hold_cup",
    ],
    "grounded_cutlery": [
        "serve_water", "--situation", "a fork and a knife are in the cup", "--at", "2",
    ],
    "cowp_broken_plate": [
        "set_table", "--method", "cowp", "--situation", "the plate is broken", "--at", "1",
    ],
    "grounded_no_situation": ["clean_area"],
    "cowp_llm_state_flag": [
        "fill_cup", "--method", "cowp", "--llm-state", "--situation", "the cup is dirty",
        "--at", "hold_cup",
    ],
    "grounded_llm_state_flag": [
        "fill_cup", "--llm-state", "--situation", "the cup is dirty", "--at", "hold_cup",
    ],
    "cowp_llm_guided_flag": ["battery", "--method", "cowp", "--planner", "llm_guided"],
    "grounded_llm_guided_flag": [
        "fill_cup", "--planner", "llm_guided", "--beam", "2", "--situation", "the cup is dirty",
    ],
    "dkprompt_images": [
        "fill_cup", "--dkprompt", "pre", "--images", "{images}", "--vlm-url", "{url}",
        "--vlm-model", "scripted", "--planner", "pyperplan",
    ],
    "unknown_task": ["no_such_task"],
}  # fmt: skip
"""`cowp run` arguments by scenario name (the model flags are added; `{images}` is a
folder of camera pictures, `{url}` the scripted server, which answers as a vision model
too)."""

BENCH = [
    "--methods",
    "cw,retry,same_kind,noun_only,oracle,ek,grounded,cowp,dkprompt,cowp_llm_state,cowp_llm_guided",
    "--tasks", "fill_cup", "--trials", "2", "--jobs", "1", "--seed", "0",
]  # fmt: skip
"""`cowp bench` arguments (the model flags and --out are added)."""

TIMING_KEYS = frozenset(
    {"at_s", "seconds", "wall_s", "started", "finished", "elapsed_s", "created"}
    | {"wall_seconds", "llm_seconds", "load_before", "load_after", "code", "commit"}
)
TIMING_TEXT = re.compile(r"\[\d+(?:\.\d+)? s\]")
PIXEL = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000100e221bc330000000049454e44ae426082"
)


def cowp(checkout: Path, arguments: list[str], cache: Path, reports: Path) -> str:
    """Run `cowp ARGUMENTS` on `checkout`; its output (stdout and stderr)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(checkout)
    env["COWP_CACHE_DIR"] = str(cache)  # a fresh answer cache: every question asked
    env["COWP_REPORTS_DIR"] = str(reports)
    env.pop("COWP_TASKS", None)
    env.pop("COWP_METHODS", None)
    done = subprocess.run(
        [sys.executable, "-c", RUN_CLI, *arguments],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    return f"exit {done.returncode}\n{done.stdout}{done.stderr}"


def run_side(checkout: Path, out: Path, url: str) -> None:
    """Every scenario and the benchmark on one checkout, into `out`."""
    model = ["--llm-url", url, "--llm-model", "scripted"]
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 15):  # one picture a check: a 1x1 PNG, the same each time
        (images / f"{attempt:02d}.png").write_bytes(PIXEL)
    for index, (name, template) in enumerate(SCENARIOS.items()):
        arguments = [a.format(images=images, url=url) for a in template]
        report = out / "run" / f"{name}.json"
        report.parent.mkdir(parents=True, exist_ok=True)
        told = cowp(
            checkout,
            ["run", *arguments, "--report", str(report), *model],
            out / "cache" / str(index),
            out / "reports",
        )
        (out / "run" / f"{name}.out").write_text(told)
    told = cowp(
        checkout,
        ["bench", *BENCH, "--out", str(out / "bench"), *model],
        out / "cache" / "bench",
        out / "reports",
    )
    (out / "bench.out").write_text(told)


def normalised(value: Any, root: str) -> Any:
    """`value` with what measures the machine left out (see the module docstring)."""
    if isinstance(value, dict):
        return {k: normalised(v, root) for k, v in value.items() if k not in TIMING_KEYS}
    if isinstance(value, list):
        return [normalised(item, root) for item in value]
    if isinstance(value, str):
        return TIMING_TEXT.sub("[t]", value.replace(root, "OUT"))
    return value


def records(side: Path) -> dict[str, Any]:
    """Every JSON file under `side`'s run/ and bench/, by its path there, normalised."""
    found: dict[str, Any] = {}
    for path in sorted(side.rglob("*.json")):
        relative = path.relative_to(side)
        if relative.parts[0] not in ("run", "bench"):
            continue
        found[str(relative)] = normalised(json.loads(path.read_text()), str(side))
    return found


def differences(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    lines = [f"only before: {name}" for name in sorted(set(before) - set(after))]
    lines += [f"only after: {name}" for name in sorted(set(after) - set(before))]
    for name in sorted(set(before) & set(after)):
        if before[name] != after[name]:
            lines.append(f"differs: {name}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--out", type=Path, default=None, help="where both sides write")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="same_records_"))
    with ScriptedLLMServer(
        SensibleModel(no=[r"can an? (?!mug\b|bowl\b)\w+ be used instead"])
    ) as server:
        for side, checkout in (("before", args.before), ("after", args.after)):
            run_side(checkout.resolve(), out / side, server.url)
    before, after = records(out / "before"), records(out / "after")
    found = differences(before, after)
    print(f"{len(before)} records before, {len(after)} after, in {out}")
    for line in found:
        print(line)
    print("the same records" if not found else f"{len(found)} difference(s)")
    return 0 if not found else 1


if __name__ == "__main__":
    sys.exit(main())
