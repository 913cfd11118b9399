"""How well each text -> action mapping finds the action a free-text step meant.

    .venv/bin/python benchmarks/bench_step_mapping.py [--server URL MODEL]

LMZSP (and any method that lets a model write steps in its own words) translates each
step to the nearest admissible action. This script scores the candidate mappings on
hand-labelled phrasings of the DEV tasks' steps, the way a model words them ("grab the
cup", "walk over to the sink"), against every admissible action of the task over its
whole object pool (typed groundings plus one-argument swaps to objects the text
names). It prints accuracy and time per mapping, with a 95 % Wilson interval.
Test tasks are deliberately absent: the mapping is chosen here.
"""

from __future__ import annotations

import argparse
import difflib
import re
import time

from cowp_ros.bench.methods._common import Admissible, Translator, admissible_actions
from cowp_ros.llm.embeddings import Embedder, SentenceEmbedder, ServerEmbedder
from cowp_ros.planning import PlanStep
from cowp_ros.tasks import get_task
from cowp_ros.tasks.phrases import ActionPhrases

LABELLED: dict[str, list[tuple[str, PlanStep]]] = {
    "fill_cup": [
        ("go to the faucet", PlanStep("find_faucet", ("faucet_1",))),
        ("locate the kitchen tap", PlanStep("find_faucet", ("faucet_1",))),
        ("turn the tap on", PlanStep("turnon_faucet", ("faucet_1",))),
        ("open the faucet", PlanStep("turnon_faucet", ("faucet_1",))),
        ("look for a cup", PlanStep("find_cup", ("cup_1",))),
        ("pick up the cup", PlanStep("hold_cup", ("cup_1",))),
        ("grab a cup", PlanStep("hold_cup", ("cup_1",))),
        ("fill the cup with water", PlanStep("fill_cup", ("cup_1", "faucet_1"))),
        ("hold the cup under the running water", PlanStep("fill_cup", ("cup_1", "faucet_1"))),
        ("put the cup on the table", PlanStep("place_cup", ("cup_1", "table_1"))),
        ("set the full cup down on the table", PlanStep("place_cup", ("cup_1", "table_1"))),
        ("fill the mug with water from the tap", PlanStep("fill_cup", ("mug_1", "faucet_1"))),
        ("grab a mug instead", PlanStep("hold_cup", ("mug_1",))),
    ],
    "set_table": [
        ("locate the cupboard", PlanStep("find_cupboard", ("cupboard_1",))),
        ("walk to the cupboard", PlanStep("walk", ("cupboard_1",))),
        ("go over to the kitchen cupboard", PlanStep("walk", ("cupboard_1",))),
        ("open the cupboard door", PlanStep("open_cupboard", ("cupboard_1",))),
        ("look for a plate in the cupboard", PlanStep("find_plate", ("plate_1", "cupboard_1"))),
        ("take a plate out", PlanStep("takeout_plate", ("plate_1", "cupboard_1"))),
        ("get the plate from the cupboard", PlanStep("takeout_plate", ("plate_1", "cupboard_1"))),
        ("find the dining table", PlanStep("find_table", ("table_1",))),
        ("walk to the table", PlanStep("walk", ("table_1",))),
        ("put the plate on the table", PlanStep("place_plate", ("plate_1", "table_1"))),
        ("search the cupboard for a fork", PlanStep("find_fork", ("fork_1", "cupboard_1"))),
        ("take out a fork", PlanStep("takeout_fork", ("fork_1", "cupboard_1"))),
        ("lay the fork beside the plate", PlanStep("place_fork", ("fork_1", "table_1"))),
    ],
    "clean_area": [
        ("find the table", PlanStep("find_table", ("table_1",))),
        ("pick up the vacuum cleaner", PlanStep("grasp_vacuum", ("vacuum_1",))),
        ("grab the vacuum", PlanStep("grasp_vacuum", ("vacuum_1",))),
        ("plug the vacuum into the wall socket", PlanStep("plug_vacuum", ("vacuum_1", "outlet_1"))),
        ("plug it in", PlanStep("plug_vacuum", ("vacuum_1", "outlet_1"))),
        ("switch on the vacuum cleaner", PlanStep("turnon_vacuum", ("vacuum_1",))),
        ("turn the vacuum on", PlanStep("turnon_vacuum", ("vacuum_1",))),
        (
            "vacuum the dirty area beside the table",
            PlanStep("clean_area", ("vacuum_1", "area_1", "table_1")),
        ),
        (
            "clean the floor next to the table",
            PlanStep("clean_area", ("vacuum_1", "area_1", "table_1")),
        ),
    ],
}


def string_match(text: str, admissible: list[Admissible]) -> PlanStep:
    """String similarity without a model: the mean of difflib's ratio and the word
    overlap (the baselines' old mapping also weighted object nouns and penalised swaps;
    run before its removal on this same set, with duplicate texts removed, it found
    22/35)."""
    stop = {"the", "a", "an", "to", "of", "with", "from", "on", "in", "into", "it"}

    def content(t: str) -> set[str]:
        return {w for w in re.findall(r"[a-z]+", t.lower()) if w not in stop}

    def score(candidate: Admissible) -> float:
        a, b = content(text), content(candidate.text)
        ratio = difflib.SequenceMatcher(None, text.lower(), candidate.text.lower()).ratio()
        return (ratio + (len(a & b) / len(a | b) if a | b else 0.0)) / 2

    return max(admissible, key=score).step


def wilson(hits: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 0.0
    p = hits / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return centre - half, centre + half


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--server", nargs=2, metavar=("URL", "MODEL"), action="append")
    args = parser.parse_args()
    mappers: dict[str, Embedder | None] = {"string+words": None}
    started = time.monotonic()
    mappers["all-MiniLM-L6-v2"] = SentenceEmbedder()
    print(f"loaded all-MiniLM-L6-v2 in {time.monotonic() - started:.1f} s")
    for url, model in args.server or []:
        mappers[f"{model} (server)"] = ServerEmbedder(url, model)
    for label, embedder in mappers.items():
        hits = total = 0
        seconds = 0.0
        misses = []
        for task_name, pairs in LABELLED.items():
            spec = get_task(task_name)
            task = spec.load()
            admissible = admissible_actions(task, ActionPhrases(spec.phrases))
            translator = Translator(admissible, embedder) if embedder is not None else None
            for text, wanted in pairs:
                t = time.monotonic()
                if translator is None:
                    got = string_match(text, admissible)
                else:
                    got = translator.translate(text).action.step
                seconds += time.monotonic() - t
                total += 1
                hits += got == wanted
                if got != wanted:
                    misses.append(f"{text!r} -> {got} (wanted {wanted})")
        low, high = wilson(hits, total)
        print(
            f"{label:28s} {hits}/{total} = {100 * hits / total:5.1f} % "
            f"[{100 * low:.0f}, {100 * high:.0f}]  {1000 * seconds / total:.1f} ms a step"
        )
        for miss in misses:
            print(f"    miss: {miss}")


if __name__ == "__main__":
    main()
