"""From saved trial records to `results.json`, a markdown table and the plots.

The paper's measures, per method, over all tasks, the test tasks and the dev tasks apart
(`cowp_ros.tasks.split_tasks`), and per task and per situation object:

- task completion: trials whose goal was reached with no harmful step (a stand-in the
  judge rejects for that action, or one no situation called for) / trials;
- situation handling: blocking situations handled / blocking situations that occurred.
  A situation occurred if it was drawn for the trial (every method faces the same
  ones); it is blocking if it stops a step of the closed-world plan where that plan
  meets it (so the closed-world planner handles none, by construction); it was handled
  if it was raised and the trial completed. Also over solvable trials only (no blocking
  situation in them is one the judge files declare unsolvable: a trial with one cannot
  complete, whatever else it handled), and as a share of the oracle's handling on the
  same draws;
- harmless situations (the dataset's that block nothing, and distractors): the share
  of trials with one raised whose plan it changed or which gave up right after it;
- LLM usage: questions asked (answered by the server or the answer cache: a method's
  cost must not depend on the cache), server calls, tokens, questions per handled
  situation.

Every percentage comes with its 95 % Wilson interval and the counts behind it.
"""

from __future__ import annotations

import math
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
Z95 = 1.959963984540054
ORACLE = "oracle"


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion, in percent (None without trials)."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return round(100 * max(0.0, centre - half), 1), round(100 * min(1.0, centre + half), 1)


def rate(successes: int, trials: int) -> dict[str, Any]:
    """A proportion with its counts and interval: what every figure of the table is."""
    return {
        "k": successes,
        "n": trials,
        "pct": round(100.0 * successes / trials, 1) if trials else None,
        "ci95": wilson(successes, trials),
    }


def _harmless_events(record: dict[str, Any]) -> list[dict[str, Any]]:
    raised = [s for s in record["situations"] if s["fired"] and not s.get("blocking")]
    return raised + [d for d in record.get("distractors", []) if d["fired"]]


def _summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    records = list(records)
    situations = [s for r in records for s in r["situations"]]
    blocking = [s for s in situations if s.get("blocking")]
    solvable = [
        s
        for r in records
        if not any(x.get("unsolvable") for x in r["situations"] if x.get("blocking"))
        for s in r["situations"]
        if s.get("blocking")
    ]
    quiet = [r for r in records if not r["situations"] and not r.get("distractors")]
    with_harmless = [r for r in records if _harmless_events(r)]
    changed = [r for r in with_harmless if any(e["changed"] for e in _harmless_events(r))]
    dataset_harmless = [s for s in situations if s["fired"] and not s.get("blocking")]
    distractors = [d for r in records for d in r.get("distractors", []) if d["fired"]]
    handled = sum(s["handled"] for s in blocking)
    calls = sum(r["usage"]["calls"] for r in records)
    questions = calls + sum(r["usage"]["cache_hits"] for r in records)
    return {
        "trials": len(records),
        "completion": rate(sum(r["completed"] for r in records), len(records)),
        "completion_without_situation": rate(sum(r["completed"] for r in quiet), len(quiet)),
        "handling": rate(handled, len(blocking)),
        "handling_solvable": rate(sum(s["handled"] for s in solvable), len(solvable)),
        "blocking_raised": sum(s["fired"] for s in blocking),
        "harmless_changed": rate(len(changed), len(with_harmless)),
        "harmless_situations_changed": rate(
            sum(s["changed"] for s in dataset_harmless), len(dataset_harmless)
        ),
        "distractors_changed": rate(sum(d["changed"] for d in distractors), len(distractors)),
        "situations_drawn": len(situations),
        "harmful_trials": sum(bool(r["episode"]["harmful"]) for r in records),
        "errors": sum(bool(r["error"]) for r in records),
        "llm_questions": questions,
        "llm_calls": calls,
        "prompt_tokens": sum(r["usage"]["prompt_tokens"] for r in records),
        "completion_tokens": sum(r["usage"]["completion_tokens"] for r in records),
        "cache_hits": sum(r["usage"]["cache_hits"] for r in records),
        "llm_seconds": round(sum(r["usage"]["seconds"] for r in records), 1),
        "wall_seconds": round(sum(r["seconds"] for r in records), 1),
        "questions_per_handled": round(questions / handled, 1) if handled else None,
    }


def _share_of_oracle(summary: dict[str, Any], oracle: dict[str, Any] | None) -> float | None:
    if oracle is None or not oracle["handling"]["k"]:
        return None
    return round(100.0 * summary["handling"]["k"] / oracle["handling"]["k"], 1)


def aggregate(
    records: Sequence[dict[str, Any]],
    methods: Sequence[str],
    labels: dict[str, str],
    splits: dict[str, list[str]] | None = None,
) -> dict[str, Any]:
    """Summaries per method: overall, per split (`{"test": [...], "dev": [...]}`), per
    task and per situation object; the oracle's handling is every method's yardstick."""
    by_method: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in records:
        by_method[r["method"]].append(r)
    tasks = sorted({r["task"] for r in records})
    splits = {name: [t for t in members if t in tasks] for name, members in (splits or {}).items()}
    scopes: dict[str, list[str]] = {"all": tasks, **{k: v for k, v in splits.items() if v}}
    result: dict[str, Any] = {"methods": {}, "tasks": tasks, "splits": scopes}
    oracle_by_scope = {
        scope: _summary(r for r in by_method.get(ORACLE, []) if r["task"] in members)
        if ORACLE in by_method
        else None
        for scope, members in scopes.items()
    }
    for name in methods:
        rs = by_method.get(name, [])
        per_scope = {}
        for scope, members in scopes.items():
            summary = _summary(r for r in rs if r["task"] in members)
            summary["handling_share_of_oracle"] = _share_of_oracle(summary, oracle_by_scope[scope])
            per_scope[scope] = summary
        per_task = {t: _summary(r for r in rs if r["task"] == t) for t in tasks}
        per_object: dict[str, list[bool]] = defaultdict(list)
        for r in rs:
            for s in r["situations"]:
                if s.get("blocking"):
                    per_object[s["object"]].append(s["handled"])
        result["methods"][name] = {
            "label": labels.get(name, name),
            "overall": per_scope["all"],
            "scopes": per_scope,
            "per_task": per_task,
            "per_object": {o: rate(sum(v), len(v)) for o, v in sorted(per_object.items())},
            "paper": PAPER.get(name),
        }
    result["judge"] = judge_counts(records)
    if ORACLE in by_method:
        result["oracle_failures"] = oracle_failures(by_method[ORACLE])
    return result


def oracle_failures(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Why the oracle left blocking situations of solvable pairs unhandled, counted."""
    reasons: Counter[str] = Counter()
    for r in records:
        missed = [s for s in r["situations"] if s["blocking"] and not s["handled"]]
        if not [s for s in missed if not s.get("unsolvable")]:
            continue
        if any(s.get("unsolvable") for s in r["situations"] if s["blocking"]):
            reasons["an unsolvable situation in the same trial"] += 1
        elif any(not s["fired"] for s in missed):
            reasons["gave up before it was raised (an earlier situation left no plan)"] += 1
        else:
            reasons["no plan with the objects present in the trial"] += 1
    return dict(reasons.most_common())


def judge_counts(records: Sequence[dict[str, Any]]) -> dict[str, dict[str, dict[str, int]]]:
    """How many judgements each annotation rule made, per task.

    `effects`: drawn situations (once per trial, whatever the method) by the rule that
    decided their effect. `stand_ins`: (method, trial) pairs in which a stand-in was
    judged in an action, by verdict.
    """
    effects: dict[str, Counter[str]] = defaultdict(Counter)
    stand_ins: dict[str, Counter[str]] = defaultdict(Counter)
    seen: set[tuple[str, int, str]] = set()
    for r in records:
        for s in r["situations"]:
            key = (r["task"], r["index"], s["key"])
            if key not in seen:
                seen.add(key)
                effects[r["task"]][f"{s['rule']} -> {s['effect']}"] += 1
        for j in r["episode"].get("judgements", []):
            if " by stand_ins." in j:
                stand_ins[r["task"]][j.rsplit(" by ", 1)[0]] += 1
    tasks = sorted(set(effects) | set(stand_ins))
    return {
        t: {
            "effects": dict(sorted(effects[t].items())),
            "stand_ins": dict(sorted(stand_ins[t].items())),
        }
        for t in tasks
    }


def fmt_rate(value: dict[str, Any], *, counts: bool = True) -> str:
    """`58.3 [49.4, 66.8] (70/120)`; `-` without data."""
    if not value or value["pct"] is None:
        return "-"
    low, high = value["ci95"]
    text = f"{value['pct']:g} [{low:g}, {high:g}]"
    return f"{text} ({value['k']}/{value['n']})" if counts else text


def _f(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"


TABLE_HEAD = (
    "| method | trials | completion % [95% CI] | situation-free completion % | "
    "blocking situations handled % [95% CI] (handled/occurred) | of the oracle's | "
    "handled, solvable trials only % | harmless situations: trials changed % (changed/with one) | "
    "LLM questions (server calls) | questions / handled situation | paper (completion / handling) |"
)


def table_rows(result: dict[str, Any], scope: str) -> list[str]:
    lines = [TABLE_HEAD, "|" + "---|" * 11]
    for m in result["methods"].values():
        o = m["scopes"].get(scope)
        if o is None or not o["trials"]:
            continue
        paper = m["paper"]
        share = o["handling_share_of_oracle"]
        lines.append(
            f"| {m['label']} | {o['trials']} | {fmt_rate(o['completion'], counts=False)} | "
            f"{_f(o['completion_without_situation']['pct'])} "
            f"({o['completion_without_situation']['n']}) | {fmt_rate(o['handling'])} | "
            f"{'-' if share is None else f'{share:g} %'} | "
            f"{fmt_rate(o['handling_solvable'])} | {fmt_rate(o['harmless_changed'])} | "
            f"{o['llm_questions']} ({o['llm_calls']}) | {_f(o['questions_per_handled'])} | "
            f"{f'{paper[0]} / {paper[1]}' if paper else '-'} |"
        )
    return lines


def markdown(result: dict[str, Any], header: str) -> str:
    lines = [header, ""]
    scopes = result["splits"]
    order = [s for s in ("test", "dev") if s in scopes] + ["all"]
    titles = {
        "test": "Test tasks",
        "dev": "Dev tasks (thresholds and prompts were chosen on these)",
        "all": "All tasks",
    }
    for scope in order:
        members = ", ".join(scopes[scope])
        lines += [f"### {titles[scope]}: {members}", "", *table_rows(result, scope), ""]
    tasks = result["tasks"]
    lines += [
        "Per task: completion % / blocking situations handled % (handled/occurred):",
        "",
        "| method | " + " | ".join(tasks) + " |",
        "|---|" + "---|" * len(tasks),
    ]
    for m in result["methods"].values():
        cells = []
        for t in tasks:
            s = m["per_task"].get(t)
            if not s or not s["trials"]:
                cells.append("-")
                continue
            h = s["handling"]
            cells.append(f"{_f(s['completion']['pct'])} / {_f(h['pct'])} ({h['k']}/{h['n']})")
        lines.append(f"| {m['label']} | " + " | ".join(cells) + " |")
    for m in result["methods"].values():
        o = m["overall"]
        notes = []
        if o["errors"]:
            notes.append(f"{o['errors']} trial(s) ended in a method error")
        if o["harmful_trials"]:
            notes.append(f"{o['harmful_trials']} trial(s) had a harmful step")
        if o["distractors_changed"]["n"]:
            notes.append(f"distractors: changed {fmt_rate(o['distractors_changed'])}")
        if o["harmless_situations_changed"]["n"]:
            notes.append(
                f"harmless dataset situations: changed {fmt_rate(o['harmless_situations_changed'])}"
            )
        if notes:
            lines.append(f"\n{m['label']}: " + "; ".join(notes) + ".")
    if result.get("oracle_failures"):
        failures = "; ".join(f"{k}: {v}" for k, v in result["oracle_failures"].items())
        lines += ["", f"Oracle trials with a solvable blocking situation unhandled: {failures}."]
    lines += ["", "Judge decisions: situation effects (per drawn situation), by rule:", ""]
    for task, kinds in result["judge"].items():
        effects = "; ".join(f"{k}: {v}" for k, v in kinds["effects"].items()) or "none"
        lines.append(f"- {task}: {effects}.")
    return "\n".join(lines) + "\n"


def plot(result: dict[str, Any], out: Path, title: str) -> list[Path]:
    """overall.png, per_task.png, per_object.png (Agg backend, no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = list(result["methods"].values())
    labels = [m["label"] for m in methods]
    colours = plt.get_cmap("tab10").colors
    paths = []
    scopes = [s for s in ("test", "dev", "all") if s in result["splits"]]

    fig, axes = plt.subplots(1, len(scopes), figsize=(5.5 * len(scopes), 4.8), squeeze=False)
    series = [
        ("task completion", "completion"),
        ("blocking situations handled", "handling"),
        ("harmless: trials changed", "harmless_changed"),
    ]
    width = 0.27
    xs = list(range(len(methods)))
    for ax, scope in zip(axes[0], scopes, strict=True):
        for k, (name, key) in enumerate(series):
            values, low, high = [], [], []
            for m in methods:
                r = m["scopes"][scope][key]
                v = r["pct"] or 0.0
                lo, hi = r["ci95"] or (v, v)
                values.append(v)
                low.append(v - lo)
                high.append(hi - v)
            offs = [x + (k - 1) * width for x in xs]
            ax.bar(offs, values, width, yerr=[low, high], capsize=2, label=name, color=colours[k])
        ax.set_xticks(xs, labels, rotation=20, fontsize=8)
        ax.set_ylim(0, 105)
        ax.set_ylabel("% (95 % Wilson interval)")
        ax.set_title(f"{scope} tasks: " + ", ".join(result["splits"][scope]), fontsize=8)
    axes[0][0].legend(loc="upper right", fontsize=7)
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    paths.append(out / "overall.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    tasks = result["tasks"]
    fig, axes2 = plt.subplots(2, 1, figsize=(12, 7), sharex=True)
    width = 0.8 / max(len(methods), 1)
    for i, m in enumerate(methods):
        offs = [t + (i - (len(methods) - 1) / 2) * width for t in range(len(tasks))]
        comp = [m["per_task"][t]["completion"]["pct"] or 0 for t in tasks]
        hand = [m["per_task"][t]["handling"]["pct"] or 0 for t in tasks]
        axes2[0].bar(offs, comp, width, label=m["label"], color=colours[i % 10])
        axes2[1].bar(offs, hand, width, label=m["label"], color=colours[i % 10])
    axes2[0].set_ylabel("task completion %")
    axes2[1].set_ylabel("blocking situations handled %")
    axes2[1].set_xticks(range(len(tasks)), tasks)
    for ax in axes2:
        ax.set_ylim(0, 105)
    axes2[0].legend(ncol=len(methods), fontsize=8, loc="upper center", bbox_to_anchor=(0.5, 1.25))
    fig.suptitle(title, fontsize=9)
    fig.tight_layout()
    paths.append(out / "per_task.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)

    objects = sorted({o for m in methods for o in m["per_object"]})
    fig, ax = plt.subplots(figsize=(14, 5.5))
    for i, m in enumerate(methods):
        offs = [j + (i - (len(methods) - 1) / 2) * width for j in range(len(objects))]
        vals = [(m["per_object"].get(o) or {}).get("pct") or 0 for o in objects]
        ax.bar(offs, vals, width, label=m["label"], color=colours[i % 10])
    counts = [max((m["per_object"].get(o) or {}).get("n", 0) for m in methods) for o in objects]
    ax.set_xticks(
        range(len(objects)),
        [f"{o} (n={n})" for o, n in zip(objects, counts, strict=True)],
        fontsize=8,
        rotation=40,
        ha="right",
    )
    ax.set_ylabel("blocking situations handled %")
    ax.set_ylim(0, 105)
    ax.legend(ncol=len(methods), fontsize=8)
    ax.set_title(f"Blocking situations handled, per object they are about\n{title}", fontsize=9)
    fig.tight_layout()
    paths.append(out / "per_object.png")
    fig.savefig(paths[-1], dpi=110)
    plt.close(fig)
    return paths
