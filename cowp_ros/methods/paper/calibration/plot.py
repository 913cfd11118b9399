"""The monitor's trade-off curves as a PNG: ROC and precision/recall, a line per variant.

One figure per model and split holds every variant so they can be compared at a glance;
the goal region (recall >= 90 %, false alarms <= 10 %) is shaded and each variant's
dev-chosen threshold is marked where it lands on the plotted split.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from cowp_ros.methods.paper.calibration.thresholds import (
    GOAL_FALSE_ALARM,
    GOAL_RECALL,
    OperatingPoint,
    curve,
)


def plot_curves(
    series: Mapping[str, tuple[Sequence[float], Sequence[bool]]],
    chosen: Mapping[str, OperatingPoint],
    path: Path,
    title: str,
) -> Path:
    """Write the figure; `series`: variant -> (scores, labels) on the plotted split,
    `chosen`: variant -> the operating point of its dev threshold on that split."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (roc, pr) = plt.subplots(1, 2, figsize=(11, 4.8))
    roc.add_patch(
        plt.Rectangle(
            (0, GOAL_RECALL), GOAL_FALSE_ALARM, 1 - GOAL_RECALL, color="tab:green", alpha=0.15
        )
    )
    roc.text(0.012, GOAL_RECALL + 0.02, "goal", color="tab:green", fontsize=9)
    roc.plot([0, 1], [0, 1], color="0.8", linestyle=":", linewidth=1)
    for index, (variant, (scores, labels)) in enumerate(series.items()):
        color = f"C{index}"
        points = sorted(curve(scores, labels), key=lambda p: (p.false_alarm_rate, p.recall))
        roc.plot(
            [p.false_alarm_rate for p in points],
            [p.recall for p in points],
            color=color,
            label=variant,
            drawstyle="steps-post",
        )
        by_recall = sorted(points, key=lambda p: (p.recall, -p.precision))
        pr.plot([p.recall for p in by_recall], [p.precision for p in by_recall], color=color)
        if variant in chosen:
            point = chosen[variant]
            roc.plot(point.false_alarm_rate, point.recall, "o", color=color, markersize=7)
            pr.plot(point.recall, point.precision, "o", color=color, markersize=7)
    roc.set(
        xlabel="false-alarm rate on benign situations",
        ylabel="recall on blocking situations",
        xlim=(-0.02, 1.02),
        ylim=(-0.02, 1.02),
        title="ROC (dot: threshold chosen on dev)",
    )
    pr.set(
        xlabel="recall on blocking situations",
        ylabel="precision of the monitor's blocks",
        xlim=(-0.02, 1.02),
        ylim=(0.0, 1.02),
        title="precision / recall",
    )
    roc.legend(loc="lower right", fontsize=8)
    for axes in (roc, pr):
        axes.grid(alpha=0.3)
    figure.suptitle(title)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)
    plt.close(figure)
    return path
