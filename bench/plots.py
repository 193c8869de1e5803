"""PNG plots for the benchmarks (``--plot FILE.png``); needs matplotlib (``pip install -e ".[bench]"``)."""

from __future__ import annotations

from collections.abc import Sequence


def panels(path: str, title: str, xlabel: str, charts: Sequence[tuple[str, dict[str, list[tuple[float, float]]], bool]]) -> None:
    """Side-by-side line charts: each ``(y label, {series: [(x, y)]}, log y)``."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:  # pragma: no cover - optional
        raise SystemExit('--plot needs matplotlib: pip install -e ".[bench]"') from None
    fig, axes = plt.subplots(1, len(charts), figsize=(5.2 * len(charts), 3.8))
    for ax, (ylabel, series, log) in zip(axes if len(charts) > 1 else [axes], charts):
        for name, points in series.items():
            ax.plot([x for x, _ in points], [y for _, y in points], marker="o", label=name)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if log:
            ax.set_yscale("log")
        ax.grid(True, alpha=0.3)
        ax.legend()
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
