"""From saved trial records to `results.json`, a markdown table and the plots.

Measures, per method (and per task, and per situation object):
- task completion: trials whose goal was reached with no step the judge rejected (and,
  with distractors, no plan change or give-up caused by one) / trials;
- situation handling: situations that occurred and were handled / situations that
  occurred, where a situation occurred if it was drawn for the trial (every method
  faces the same ones) and was handled if it was raised and the trial completed;
  `handleable` leaves out those the judge marks beyond the robot's skills;
- LLM usage: questions the method asked (answered by the server or from the answer
  cache: what the method costs, whatever the cache held), server calls and their tokens,
  and questions per handled situation.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

PAPER = {  # the journal paper's table (12 tasks, GPT-3, 150 trials a task)
    "cowp": (67.8, 36.9),
    "progprompt": (61.8, 30.1),
    "inner_monologue": (54.0, 22.1),
    "ek": (55.1, 17.3),
    "cw": (44.3, 0.0),
    "lmzsp": (10.2, 0.0),
}


def pct(part: float, whole: float) -> float | None:
    return round(100.0 * part / whole, 1) if whole else None


def _summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    records = list(records)
    trials = len(records)
    completed = sum(r["completed"] for r in records)
    situations = [s for r in records for s in r["situations"]]
    handled = sum(s["handled"] for s in situations)
    handleable = [s for s in situations if s.get("effect") != "beyond_skills"]
    handled_handleable = sum(s["handled"] for s in handleable)
    blocking = [s for s in situations if s.get("effect") != "no_effect"]
    handled_blocking = sum(s["handled"] for s in blocking)
    distractors = [d for r in records for d in r.get("distractors", []) if d["fired"]]
    calls = sum(r["usage"]["calls"] for r in records)
    questions = calls + sum(r["usage"]["cache_hits"] for r in records)
    with_situation = [r for r in records if r["situations"]]
    without = [r for r in records if not r["situations"]]
    return {
        "trials": trials,
        "completed": completed,
        "completion_pct": pct(completed, trials),
        "completion_without_situation_pct": pct(sum(r["completed"] for r in without), len(without)),
        "trials_with_situation": len(with_situation),
        "situations": len(situations),
        "situations_raised": sum(s["fired"] for s in situations),
        "handled": handled,
        "handling_pct": pct(handled, len(situations)),
        "handleable": len(handleable),
        "handling_handleable_pct": pct(handled_handleable, len(handleable)),
        "blocking": len(blocking),
        "handled_blocking": handled_blocking,
        "handling_blocking_pct": pct(handled_blocking, len(blocking)),
        "distractors_raised": len(distractors),
        "distractor_failures": sum(d["failed"] for d in distractors),
        "errors": sum(bool(r["error"]) for r in records),
        "unacceptable_trials": sum(bool(r["episode"]["unacceptable"]) for r in records),
        "llm_questions": questions,
        "llm_calls": calls,
        "prompt_tokens": sum(r["usage"]["prompt_tokens"] for r in records),
        "completion_tokens": sum(r["usage"]["completion_tokens"] for r in records),
        "cache_hits": sum(r["usage"]["cache_hits"] for r in records),
        "llm_seconds": round(sum(r["usage"]["seconds"] for r in records), 1),
        "wall_seconds": round(sum(r["seconds"] for r in records), 1),
        "calls_per_handled_situation": round(questions / handled, 1) if handled else None,
    }


def aggregate(
    records: Sequence[dict[str, Any]], methods: Sequence[str], labels: dict[str, str]
) -> dict[str, Any]:
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_method[r["method"]].append(r)
    tasks = sorted({r["task"] for r in records})
    result: dict[str, Any] = {"methods": {}, "tasks": tasks}
    for name in methods:
        rs = by_method.get(name, [])
        per_task = {t: _summary(r for r in rs if r["task"] == t) for t in tasks}
        per_object: dict[str, list[bool]] = defaultdict(list)
        for r in rs:
            for s in r["situations"]:
                per_object[s["object"]].append(s["handled"])
        result["methods"][name] = {
            "label": labels.get(name, name),
            "overall": _summary(rs),
            "per_task": per_task,
            "per_object": {
                o: {"situations": len(v), "handled": sum(v), "handling_pct": pct(sum(v), len(v))}
                for o, v in sorted(per_object.items())
            },
            "paper": PAPER.get(name),
        }
    result["judge"] = judge_counts(records)
    return result


def judge_counts(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """How many judgements each annotation rule made, per task.

    `effects`: drawn situations (once per trial, whatever the method) by the rule that
    decided their effect. `substitutions`: (method, trial) pairs in which a stand-in was
    judged, by role rule and verdict.
    """
    effects: dict[str, Counter[str]] = defaultdict(Counter)
    substitutions: dict[str, Counter[str]] = defaultdict(Counter)
    seen: set[tuple[str, int, str]] = set()
    for r in records:
        for s in r["situations"]:
            key = (r["task"], r["index"], s["key"])
            if key not in seen:
                seen.add(key)
                effects[r["task"]][f"{s['rule']} -> {s['effect']}"] += 1
        for j in r["episode"].get("judgements", []):
            if ": " in j and " by " in j:
                what, rule = j.rsplit(" by ", 1)
                substitutions[r["task"]][f"{rule}: {what}"] += 1
    tasks = sorted(set(effects) | set(substitutions))
    return {
        t: {
            "effects": dict(sorted(effects[t].items())),
            "substitutions": dict(sorted(substitutions[t].items())),
        }
        for t in tasks
    }


def markdown(result: dict[str, Any], header: str) -> str:
    lines = [header, ""]
    lines.append(
        "| method | trials | completion % | situation handling % (handled/occurred) | "
        "handling of blocking situations % | LLM questions (server calls) | "
        "questions / handled situation | server tokens (prompt+completion) | "
        "paper (completion / handling) |"
    )
    lines.append("|---|---|---|---|---|---|---|---|---|")
    for m in result["methods"].values():
        o = m["overall"]
        paper = m["paper"]
        lines.append(
            f"| {m['label']} | {o['trials']} | {_f(o['completion_pct'])} | "
            f"{_f(o['handling_pct'])} ({o['handled']}/{o['situations']}) | "
            f"{_f(o['handling_blocking_pct'])} ({o['handled_blocking']}/{o['blocking']}) | "
            f"{o['llm_questions']} ({o['llm_calls']}) | "
            f"{_f(o['calls_per_handled_situation'])} | "
            f"{o['prompt_tokens']}+{o['completion_tokens']} | "
            f"{f'{paper[0]} / {paper[1]}' if paper else '-'} |"
        )
    lines += ["", "Per task, completion % / handling % (situations):", ""]
    tasks = result["tasks"]
    lines.append("| method | " + " | ".join(tasks) + " |")
    lines.append("|---|" + "---|" * len(tasks))
    for m in result["methods"].values():
        cells = []
        for t in tasks:
            s = m["per_task"].get(t, {})
            cells.append(
                f"{_f(s.get('completion_pct'))} / {_f(s.get('handling_pct'))} "
                f"({s.get('situations', 0)})"
            )
        lines.append(f"| {m['label']} | " + " | ".join(cells) + " |")
    extra = [
        (m["label"], m["overall"])
        for m in result["methods"].values()
        if m["overall"]["errors"] or m["overall"]["distractors_raised"]
    ]
    for label, o in extra:
        lines.append(
            f"\n{label}: {o['errors']} trial(s) ended in a method error; distractors raised "
            f"{o['distractors_raised']}, failed {o['distractor_failures']}."
        )
    lines += [
        "",
        "Judge decisions: situation effects (per drawn situation) and stand-ins judged "
        "(per method trial), by annotation rule:",
        "",
    ]
    for task, kinds in result["judge"].items():
        effects = "; ".join(f"{k}: {v}" for k, v in kinds["effects"].items()) or "none"
        subs = "; ".join(f"{k}: {v}" for k, v in kinds["substitutions"].items()) or "none"
        lines.append(f"- {task}: effects: {effects}. Stand-ins: {subs}.")
    return "\n".join(lines) + "\n"


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


def plot(result: dict[str, Any], out: Path, title: str) -> list[Path]:
    """overall.png, per_task.png, per_object.png (Agg backend, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = list(result["methods"].values())
    labels = [m["label"] for m in methods]
    colours = plt.get_cmap("tab10").colors
    paths = []

    fig, axes = plt.subplots(1, 2, figsize=(13, 4.8), gridspec_kw={"width_ratios": [3, 2]})
    series = [
        ("task completion %", "completion_pct"),
        ("situation handling %", "handling_pct"),
        ("handling of blocking situations %", "handling_blocking_pct"),
    ]
    width = 0.27
    xs = list(range(len(methods)))
    for k, (name, key) in enumerate(series):
        values = [m["overall"][key] or 0 for m in methods]
        offs = [x + (k - 1) * width for x in xs]
        axes[0].bar(offs, values, width, label=name, color=colours[k])
        for x, v in zip(offs, values, strict=True):
            axes[0].text(x, v + 1, f"{v:.0f}", ha="center", fontsize=7)
    axes[0].set_xticks(xs, labels, rotation=15)
    axes[0].set_ylim(0, 110)
    axes[0].set_ylabel("%")
    axes[0].legend(loc="upper right", fontsize=8)
    axes[0].set_title("Completion and situation handling")
    cph = [m["overall"]["calls_per_handled_situation"] for m in methods]
    llm = [
        (lab, v)
        for lab, v, m in zip(labels, cph, methods, strict=True)
        if m["overall"]["llm_calls"] or m["overall"]["cache_hits"]
    ]
    if llm:
        axes[1].bar([lab for lab, _ in llm], [v or 0 for _, v in llm], color=colours[3])
        for x, (_, v) in enumerate(llm):
            text = "none handled" if v is None else f"{v:.1f}"
            axes[1].text(x, (v or 0) + 0.3, text, ha="center", fontsize=8)
    else:
        axes[1].text(
            0.5, 0.5, "no LLM method in this run", ha="center", transform=axes[1].transAxes
        )
        axes[1].set_xticks([])
        axes[1].set_yticks([])
    axes[1].set_title("LLM questions per handled situation (lower is better)")
    axes[1].tick_params(axis="x", rotation=20)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    paths.append(out / "overall.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    tasks = result["tasks"]
    fig, axes = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        offs = [t + (i - (len(methods) - 1) / 2) * width for t in range(len(tasks))]
        comp = [m["per_task"][t]["completion_pct"] or 0 for t in tasks]
        hand = [m["per_task"][t]["handling_pct"] or 0 for t in tasks]
        axes[0].bar(offs, comp, width, label=m["label"], color=colours[i % 10])
        axes[1].bar(offs, hand, width, label=m["label"], color=colours[i % 10])
    axes[0].set_ylabel("task completion %")
    axes[1].set_ylabel("situation handling %")
    axes[1].set_xticks(range(len(tasks)), tasks)
    for ax in axes:
        ax.set_ylim(0, 105)
    axes[0].legend(ncol=len(methods), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 1.25))
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    paths.append(out / "per_task.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    objects = sorted({o for m in methods for o in m["per_object"]})
    fig, ax = plt.subplots(figsize=(14, 5.5))
    for i, m in enumerate(methods):
        offs = [j + (i - (len(methods) - 1) / 2) * width for j in range(len(objects))]
        vals = [(m["per_object"].get(o) or {}).get("handling_pct") or 0 for o in objects]
        ax.bar(offs, vals, width, label=m["label"], color=colours[i % 10])
    counts = [
        max((m["per_object"].get(o) or {}).get("situations", 0) for m in methods) for o in objects
    ]
    ax.set_xticks(
        range(len(objects)),
        [f"{o} (n={n})" for o, n in zip(objects, counts, strict=True)],
        fontsize=8,
        rotation=40,
        ha="right",
    )
    ax.set_ylabel("situation handling %")
    ax.set_ylim(0, 105)
    ax.legend(ncol=len(methods), fontsize=8)
    ax.set_title(f"Situation handling per object the situation is about\n{title}", fontsize=9)
    fig.tight_layout()
    paths.append(out / "per_object.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths
