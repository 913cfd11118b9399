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

Bench v3 adds, per method: handling split by how (`same_kind` swap, cross-kind
`stand_in`, `plan_change`) and the situations it rightly gave up on (declared
unsolvable, stopped with no failed step after the sentence); handling of silent and
visible harms apart, and the visible harms handled with no step failed on them (a method
that ignores "the faucet is broken", fails to turn it on and only then replans is
handled, but did not understand the sentence); the oracle's handling where an
acceptable object was present
(situations without one counted apart); and each method's handling beyond the best
no-model control (`retry`, `same_kind`, `noun_only`: the one that handled most on the
same draws), with a paired interval.

Every percentage comes with its 95 % interval and the counts behind it. Several
situations may share a trial, so the interval is clustered by trial: a Wilson interval
over the effective number of situations, the count divided by the design effect (the
cluster-robust variance of the per-trial counts over the binomial one, at least 1;
`design_effect`). A rate with one unit a trial (completion) gets Wilson's interval.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from cowp_ros.bench.understanding import balanced_rows, understanding

PAPER = {  # the journal paper's table (12 tasks, GPT-3, 150 trials a task)
    "cowp": (67.8, 36.9),
    "progprompt": (61.8, 30.1),
    "inner_monologue": (54.0, 22.1),
    "ek": (55.1, 17.3),
    "cw": (44.3, 0.0),
    "lmzsp": (10.2, 0.0),
}
PAPER_MODEL = re.compile(r"gpt-3|davinci", re.IGNORECASE)
"""The models whose runs stand beside the paper's figures: the paper asked GPT-3
(text-davinci); a run with another model (the embedded Qwen2.5-Coder-1.5B) or with none
measures something else, so its table leaves the paper's column out and says why."""
Z95 = 1.959963984540054
ORACLE = "oracle"
CONTROLS = ("retry", "same_kind", "noun_only")
"""The no-model controls: every method's handling is also read beyond the best one (the
one that handled most on the same draws; a run without one of them reads the others; a
control is read beyond the best of the others, never against itself)."""


def wilson(successes: int, trials: int, z: float = Z95) -> tuple[float, float] | None:
    """The Wilson score interval of a proportion, in percent (None without trials)."""
    if trials <= 0:
        return None
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials)) / denominator
    return round(100 * max(0.0, centre - half), 1), round(100 * min(1.0, centre + half), 1)


def wilson_p(p: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson's interval for a proportion `p` over an effective sample of `n` (> 0)."""
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return round(100 * max(0.0, centre - half), 1), round(100 * min(1.0, centre + half), 1)


def design_effect(units: Sequence[tuple[int, int]]) -> float:
    """The variance of a ratio of per-trial counts (k_i, n_i) over the binomial one.

    The cluster-robust variance of k/n, m/(m-1) * sum (k_i - p n_i)^2 / n^2 over the m
    trials with n_i > 0, divided by p(1-p)/n; 1 when either is 0 or every trial has one
    unit, never below 1.
    """
    units = [(k, n) for k, n in units if n > 0]
    total = sum(n for _, n in units)
    m = len(units)
    if m < 2 or total <= 0 or total == m:
        return 1.0  # one unit a trial: nothing is clustered (Wilson's interval exactly)
    p = sum(k for k, _ in units) / total
    if p <= 0.0 or p >= 1.0:
        return 1.0
    cluster = m / (m - 1) * sum((k - p * n) ** 2 for k, n in units) / total**2
    return max(1.0, cluster / (p * (1 - p) / total))


def rate(
    successes: int, trials: int, units: Sequence[tuple[int, int]] | None = None
) -> dict[str, Any]:
    """A proportion with its counts and interval: what every figure of the table is.

    `units`: the (successes, count) of each trial behind it; the interval is then
    clustered by trial (see the module docstring). Without them, Wilson's."""
    if not trials:
        return {"k": successes, "n": trials, "pct": None, "ci95": None}
    deff = design_effect(units) if units is not None else 1.0
    data: dict[str, Any] = {
        "k": successes,
        "n": trials,
        "pct": round(100.0 * successes / trials, 1),
        "ci95": wilson_p(successes / trials, trials / deff)
        if units is not None
        else wilson(successes, trials),
    }
    if units is not None:
        data["design_effect"] = round(deff, 3)
    return data


def per_trial(records: Iterable[dict[str, Any]], pick: Any, hit: Any) -> dict[str, Any]:
    """A rate over the items `pick(record)` of each trial, `hit(item)` counting as a
    success, with its interval clustered by trial."""
    units = []
    for r in records:
        items = list(pick(r))
        units.append((sum(bool(hit(x)) for x in items), len(items)))
    return rate(sum(k for k, _ in units), sum(n for _, n in units), units)


def paired_difference(
    pairs: Sequence[tuple[int, int, int]], z: float = Z95
) -> dict[str, Any] | None:
    """(a_i, b_i, n_i) per trial, the same draws: (sum a - sum b) / sum n in points,
    with its 95 % interval clustered by trial (normal, cluster-robust variance)."""
    units = [(a - b, n) for a, b, n in pairs if n > 0]
    total = sum(n for _, n in units)
    if not units or total <= 0:
        return None
    diff = sum(d for d, _ in units) / total
    m = len(units)
    var = (m / (m - 1) * sum((d - diff * n) ** 2 for d, n in units) / total**2) if m > 1 else 0.0
    half = z * math.sqrt(var)
    return {
        "points": round(100 * diff, 1),
        "ci95": (round(100 * (diff - half), 1), round(100 * (diff + half), 1)),
        "n": total,
        "trials": m,
    }


def _harmless_events(record: dict[str, Any]) -> list[dict[str, Any]]:
    raised = [s for s in record["situations"] if s["fired"] and not s.get("blocking")]
    return raised + [d for d in record.get("distractors", []) if d["fired"]]


def _blocking(r: dict[str, Any]) -> list[dict[str, Any]]:
    return [s for s in r["situations"] if s.get("blocking")]


def _solvable_trial(r: dict[str, Any]) -> bool:
    return not any(x.get("unsolvable") for x in _blocking(r))


HOWS = ("same_kind", "stand_in", "plan_change")
"""How a handled situation was handled (`TrialWorld.how_handled`)."""


def _summary(records: Iterable[dict[str, Any]]) -> dict[str, Any]:
    records = list(records)
    situations = [s for r in records for s in r["situations"]]
    blocking = [s for s in situations if s.get("blocking")]
    quiet = [r for r in records if not r["situations"] and not r.get("distractors")]
    with_harmless = [r for r in records if _harmless_events(r)]
    dataset_harmless = [s for s in situations if s["fired"] and not s.get("blocking")]
    handled = sum(s["handled"] for s in blocking)
    calls = sum(r["usage"]["calls"] for r in records)
    questions = calls + sum(r["usage"]["cache_hits"] for r in records)

    def harmless_changed(r: dict[str, Any]) -> list[bool]:
        return [any(e["changed"] for e in _harmless_events(r))] if _harmless_events(r) else []

    def handled_with(r: dict[str, Any], keep: Any) -> list[dict[str, Any]]:
        return [s for s in _blocking(r) if keep(s)]

    def visible(r: dict[str, Any]) -> list[dict[str, Any]]:
        return handled_with(r, lambda s: s.get("harm") != "silent")

    def with_alternative(s: dict[str, Any]) -> bool:
        return s.get("alternative_present", True) and not s.get("unsolvable")

    handled_how = {
        how: rate(
            sum(s.get("how") == how for s in blocking if s["handled"]),
            handled,
            [
                (
                    sum(s.get("how") == how for s in _blocking(r) if s["handled"]),
                    sum(s["handled"] for s in _blocking(r)),
                )
                for r in records
            ],
        )
        for how in HOWS
    }
    return {
        "trials": len(records),
        "completion": per_trial(records, lambda r: [r], lambda r: r["completed"]),
        "completion_without_situation": per_trial(quiet, lambda r: [r], lambda r: r["completed"]),
        "handling": per_trial(records, _blocking, lambda s: s["handled"]),
        "handling_solvable": per_trial(
            [r for r in records if _solvable_trial(r)], _blocking, lambda s: s["handled"]
        ),
        "handling_silent": per_trial(
            records,
            lambda r: handled_with(r, lambda s: s.get("harm") == "silent"),
            lambda s: s["handled"],
        ),
        "handling_visible": per_trial(records, visible, lambda s: s["handled"]),
        "handling_visible_unfailed": (
            per_trial(records, visible, lambda s: s["handled"] and not s["ran_into"])
            if all("ran_into" in s for s in blocking)
            else None
        ),
        "handling_with_alternative": per_trial(
            records, lambda r: handled_with(r, with_alternative), lambda s: s["handled"]
        ),
        "blocking_without_alternative": sum(
            not s.get("alternative_present", True) and not s.get("unsolvable") for s in blocking
        ),
        "handled_how": handled_how,
        "gave_up_rightly": per_trial(
            records,
            lambda r: handled_with(r, lambda s: s.get("unsolvable")),
            lambda s: s.get("gave_up_rightly"),
        ),
        "silent_harm_trials": sum(bool(r["episode"].get("silent_harms")) for r in records),
        "blocking_raised": sum(s["fired"] for s in blocking),
        "blocking_passed": sum(bool(s.get("passed")) for s in blocking),
        "harmless_changed": per_trial(with_harmless, harmless_changed, bool),
        "harmless_situations_changed": per_trial(
            records,
            lambda r: [s for s in r["situations"] if s["fired"] and not s.get("blocking")],
            lambda s: s["changed"],
        ),
        "distractors_changed": per_trial(
            records,
            lambda r: [d for d in r.get("distractors", []) if d["fired"]],
            lambda d: d["changed"],
        ),
        "distractors_changed_by_file": {
            source: per_trial(
                records,
                lambda r, source=source: [
                    d for d in r.get("distractors", []) if d["fired"] and d["object"] == source
                ],
                lambda d: d["changed"],
            )
            for source in sorted(
                {d.get("object", "") for r in records for d in r.get("distractors", [])} - {""}
            )
        },
        "situations_drawn": len(situations),
        "harmless_dataset_raised": len(dataset_harmless),
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
            summary["beyond_control"] = beyond_control(
                [r for r in rs if r["task"] in members],
                {
                    c: [r for r in by_method.get(c, []) if r["task"] in members]
                    for c in CONTROLS
                    if c != name  # a control is read beyond the best of the others
                },
            )
            summary["understanding"] = understanding([r for r in rs if r["task"] in members])
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
        result["oracle_misses"] = oracle_misses(by_method[ORACLE])
    return result


def beyond_control(
    records: Sequence[dict[str, Any]], controls: dict[str, list[dict[str, Any]]]
) -> dict[str, Any] | None:
    """Handling beyond the best no-model control (the one that handled most) on the same
    trials, in points, with an interval paired and clustered by trial; None without a
    control's records."""
    mine = {(r["task"], r["index"]): r for r in records}
    best: tuple[int, str, dict[Any, dict[str, Any]]] | None = None
    for name, rs in controls.items():
        theirs = {(r["task"], r["index"]): r for r in rs if (r["task"], r["index"]) in mine}
        if not theirs:
            continue
        handled = sum(s["handled"] for r in theirs.values() for s in _blocking(r))
        if best is None or handled > best[0]:
            best = (handled, name, theirs)
    if best is None:
        return None
    _, name, theirs = best
    pairs = [
        (
            sum(s["handled"] for s in _blocking(mine[key])),
            sum(s["handled"] for s in _blocking(r)),
            len(_blocking(r)),
        )
        for key, r in theirs.items()
    ]
    found = paired_difference(pairs)
    return None if found is None else {"control": name, **found}


def oracle_failures(records: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Why the oracle left blocking situations of solvable pairs unhandled, counted."""
    reasons: Counter[str] = Counter()
    for r in records:
        missed = [s for s in r["situations"] if s["blocking"] and not s["handled"]]
        if not [s for s in missed if not s.get("unsolvable")]:
            continue
        if any(s.get("unsolvable") for s in r["situations"] if s["blocking"]):
            reasons["an unsolvable situation in the same trial"] += 1
        elif any(not s.get("alternative_present", True) for s in missed):
            reasons["no acceptable object among the present half"] += 1
        elif any(not s["fired"] for s in missed):
            reasons["gave up before it was raised (an earlier situation left no plan)"] += 1
        else:
            reasons["no plan with the objects present in the trial"] += 1
    return dict(reasons.most_common())


def oracle_misses(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each blocking situation the oracle left unhandled although it is solvable and an
    acceptable object was present, with the reason (for a reviewer to weigh)."""
    misses = []
    for r in records:
        blocking = _blocking(r)
        for s in blocking:
            if s["handled"] or s.get("unsolvable") or not s.get("alternative_present", True):
                continue
            others = [x for x in blocking if x is not s]
            if any(x.get("unsolvable") for x in others):
                reason = "another situation of the trial is unsolvable"
            elif any(not x.get("alternative_present", True) for x in others):
                reason = "another situation of the trial had no acceptable object present"
            elif not s["fired"]:
                reason = "not raised: the oracle had stopped at an earlier situation"
            else:
                reason = f"no plan over the objects present ({r['episode'].get('gave_up', '')})"
            misses.append(
                {
                    "trial": f"{r['task']}-{r['index']:04d}",
                    "situation": s["text"],
                    "at": s["action"],
                    "alternatives": s.get("alternatives", []),
                    "reason": reason,
                }
            )
    return misses


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
                harm = f"/{s['harm']}" if s.get("harm") else ""
                effects[r["task"]][f"{s['rule']} -> {s['effect']}{harm}"] += 1
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
    "LLM questions (server calls) | questions / handled situation |"
)
PAPER_HEAD = " paper (completion / handling) |"


def paper_comparable(model: str) -> bool:
    """Whether a run's model is the paper's (GPT-3): only then is its column shown."""
    return bool(PAPER_MODEL.search(model or ""))


def paper_note(model: str) -> str:
    """The sentence a table without the paper's column carries instead."""
    why = (
        f"this run's model, {model}, is not the paper's GPT-3"
        if model
        else "this run asked no language model"
    )
    return (
        f"The paper's figures (GPT-3, 12 tasks, 150 trials a task) are not shown: {why}, "
        "and its world and judge are this benchmark's, so no row here is comparable with "
        "them."
    )


def table_rows(result: dict[str, Any], scope: str) -> list[str]:
    comparable = paper_comparable(result.get("settings", {}).get("model", ""))
    head = TABLE_HEAD + (PAPER_HEAD if comparable else "")
    lines = [head, "|" + "---|" * (11 if comparable else 10)]
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
            f"{o['llm_questions']} ({o['llm_calls']}) | {_f(o['questions_per_handled'])} |"
            + (f" {f'{paper[0]} / {paper[1]}' if paper else '-'} |" if comparable else "")
        )
    return lines


UNDERSTANDING_HEAD = (
    "| method | blocking handled % | same-kind swap | cross-kind stand-in | plan change | "
    "rightly gave up (of unsolvable) | silent harms handled % | visible harms handled % | "
    "visible harms handled with no step failed on them % | "
    "handled, an acceptable object present % | beyond the best control (points, paired "
    "95 % CI) | trials with a silent harm done |"
)


def _beyond(value: dict[str, Any] | None) -> str:
    if not value:
        return "-"
    low, high = value["ci95"]
    return f"{value['points']:+g} [{low:g}, {high:g}] vs {value['control']}"


def _unfailed(scope: dict[str, Any]) -> str:
    """The visible harms handled before any step failed on them ("-" for records from
    before the bench kept which situations a step failed on)."""
    value = scope.get("handling_visible_unfailed")
    return "-" if value is None else fmt_rate(value)


def understanding_rows(result: dict[str, Any], scope: str) -> list[str]:
    """Bench v3's second table: how situations were handled, silent harms apart, and
    handling beyond the best no-model control."""
    lines = [UNDERSTANDING_HEAD, "|" + "---|" * 12]
    for m in result["methods"].values():
        o = m["scopes"].get(scope)
        if o is None or not o["trials"]:
            continue
        how = o["handled_how"]
        lines.append(
            f"| {m['label']} | {fmt_rate(o['handling'])} | "
            + " | ".join(f"{how[h]['k']}" for h in HOWS)
            + f" | {fmt_rate(o['gave_up_rightly'])} | {fmt_rate(o['handling_silent'])} | "
            f"{fmt_rate(o['handling_visible'])} | {_unfailed(o)} | "
            f"{fmt_rate(o['handling_with_alternative'])} | "
            f"{_beyond(o.get('beyond_control'))} | {o['silent_harm_trials']} |"
        )
    return lines


def _bench_v3(result: dict[str, Any]) -> bool:
    return any("handled_how" in m["overall"] for m in result["methods"].values()) and any(
        m["overall"]["handling_silent"]["n"] or m["overall"]["handling_visible"]["n"]
        for m in result["methods"].values()
    )


def markdown(result: dict[str, Any], header: str) -> str:
    lines = [header, ""]
    model = result.get("settings", {}).get("model", "")
    if not paper_comparable(model):
        lines += [paper_note(model), ""]
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
        if result.get("bench_version", 3) >= 3 and _bench_v3(result):
            lines += [
                "How blocking situations were handled (counts of the handled), silent and "
                "visible harms apart, and beyond the best no-model control:",
                "",
                *understanding_rows(result, scope),
                "",
            ]
        if any("understanding" in m["scopes"].get(scope, {}) for m in result["methods"].values()):
            lines += [
                "Blocking situations by what they need (successes/occurred: handled, or rightly "
                "gave up where declared unsolvable); the balanced score weighs silent harms, "
                "cross-kind needs and no-solution situations at least half, the per-situation "
                "score each distinct situation once:",
                "",
                *balanced_rows(result["methods"], scope),
                "",
            ]
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
        if o.get("blocking_passed"):
            notes.append(
                f"{o['blocking_passed']} blocking situation(s) passed by as moot (about objects "
                "an earlier situation had made unusable)"
            )
        if o["distractors_changed"]["n"]:
            notes.append(f"distractors: changed {fmt_rate(o['distractors_changed'])}")
        for source, changed in o.get("distractors_changed_by_file", {}).items():
            notes.append(f"distractors of {source}: changed {fmt_rate(changed)}")
        if o["harmless_situations_changed"]["n"]:
            notes.append(
                f"harmless dataset situations: changed {fmt_rate(o['harmless_situations_changed'])}"
            )
        if notes:
            lines.append(f"\n{m['label']}: " + "; ".join(notes) + ".")
    if result.get("oracle_failures"):
        failures = "; ".join(f"{k}: {v}" for k, v in result["oracle_failures"].items())
        lines += ["", f"Oracle trials with a solvable blocking situation unhandled: {failures}."]
    if result.get("oracle_misses"):
        lines += [
            "",
            "The oracle's misses where an acceptable object was present, each with its reason:",
            "",
        ]
        for miss in result["oracle_misses"]:
            alternatives = ", ".join(miss["alternatives"]) or "-"
            lines.append(
                f"- {miss['trial']}: {miss['situation']!r} at {miss['at']} (present: "
                f"{alternatives}): {miss['reason']}"
            )
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
