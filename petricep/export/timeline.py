"""A match timeline: matches per pattern over time, and per key (matplotlib, optional).

``timeline(matches, "timeline.png", key="REPORT_ID")`` draws, from a JSON Lines file of
matches (what ``petricep run -o`` writes), a pandas DataFrame of matches (columns
``pattern``, ``end``, optionally ``start`` and the key column) or an iterable of
:class:`~petricep.runtime.Match` objects or their dicts:

* on top, per pattern, how many matches completed in each time bin (a step line in the
  pattern's colour: :func:`~petricep.export.colors.pattern_swatches` of the patterns, the
  diagrams' colours — the same as ``draw``'s when every pattern of the net matched, or
  always with ``patterns=`` naming the net's patterns — listed in the order patterns first
  appear or as ``patterns=`` gives them);
* below, with a ``key`` (a column, a match field, or a RETURN attribute such as the
  partition key), the ``top_keys`` keys with most matches, one row each, every match a
  bar from its start to its end (a tick at its end) in its pattern's colour — so bursts
  at one key and quiet keys show at a glance. Matches without the key are counted in the
  panel's title.

Timeout records (lines with ``"timeout"``) are partial matches, not matches: left out.
Times are drawn as UTC dates when they are (datetime columns, or numbers that read as
epoch seconds or milliseconds — ``dates=False`` keeps the numbers), else as numbers.

matplotlib is an optional dependency (``pip install 'petricep[plot]'``); it is imported
when a timeline is drawn, and its absence is a :class:`PlotUnavailable` error saying so.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from petricep.errors import EXIT_ERROR, ConfigError, DataError, OutputError
from petricep.export.colors import pattern_swatches

if TYPE_CHECKING:  # pandas is loaded by whoever hands in a DataFrame, not by petricep's start-up
    import pandas as pd

INSTALL = "pip install 'petricep[plot]'"
FORMATS = (".png", ".svg", ".pdf")
MAX_BINS = 150  # time bins across the plot, at most
# bin widths for dates (seconds): 1 s .. 4 weeks
DATE_BINS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800,
             604800, 1209600, 2419200)  # fmt: skip
EPOCH_S = (1e8, 1e10)  # numbers in this range read as epoch seconds (1973..2286)
EPOCH_MS = (1e11, 1e13)  # ... as epoch milliseconds


class PlotUnavailable(ConfigError):
    """matplotlib is not installed: the message says how to install the plotting extra.
    An installation's problem, not the command line's: exit status 1."""

    exit_code = EXIT_ERROR


@dataclass(frozen=True)
class Timeline:
    """The matches to draw, as columns: pattern, start and end (in seconds when ``dates``),
    and the key (None where a match has none)."""

    patterns: list[str]
    start: list[float]
    end: list[float]
    keys: list[Any]
    dates: bool


def timeline(
    matches: Any,
    out_path: str | Path,
    *,
    key: str | None = None,
    patterns: Sequence[str] | None = None,
    top_keys: int = 25,
    bin_width: float | None = None,
    dates: bool | None = None,
    title: str | None = None,
) -> Path:
    """Draw the timeline of ``matches`` into ``out_path`` (``.png``, ``.svg`` or ``.pdf``)
    and return the path; see the module docstring for what it shows and
    :func:`timeline_figure` for the options."""
    out = Path(out_path)
    if out.suffix.lower() not in FORMATS:
        raise ConfigError(f"cannot tell the image format from {str(out)!r}: end it in {', '.join(FORMATS)}")
    fig = timeline_figure(
        matches, key=key, patterns=patterns, top_keys=top_keys, bin_width=bin_width, dates=dates, title=title
    )
    try:
        fig.savefig(out, dpi=100)
    except OSError as exc:
        raise OutputError(f"cannot write {out}: {exc.strerror}") from None
    return out


def timeline_figure(
    matches: Any,
    *,
    key: str | None = None,
    patterns: Sequence[str] | None = None,
    top_keys: int = 25,
    bin_width: float | None = None,
    dates: bool | None = None,
    title: str | None = None,
) -> Any:
    """The timeline as a matplotlib ``Figure`` (a notebook shows it inline). ``key``: the
    field of the per-key panel (none without); ``patterns``: their order, and the names the
    colours are ranked among (the net's patterns give every pattern ``draw``'s colour);
    ``top_keys``: rows of that panel; ``bin_width``: in seconds for dates, else in the
    matches' time units (default: a round width giving at most 150 bins); ``dates``: draw
    times as dates (default: when they read as such)."""
    figure_cls = _require_matplotlib()
    data = load(matches, key, dates)
    order = list(patterns or [])
    order += [p for p in dict.fromkeys(data.patterns) if p not in order]
    colors = {p: sw.fill for p, sw in pattern_swatches(order).items()}
    rows = min(len({k for k in data.keys if k is not None}), top_keys) if key else 0
    fig = figure_cls(figsize=(12, 3.4 + (0.25 * rows + 1.2 if key else 0)), layout="constrained")
    heights = [3.0, 0.25 * rows + 0.9] if key else [1.0]
    axes = fig.subplots(len(heights), 1, sharex=True, squeeze=False, height_ratios=heights)[:, 0]
    fig.suptitle(title or _default_title(data, matches), fontsize=12)
    _per_pattern(axes[0], data, order, colors, bin_width)
    if key:
        _per_key(axes[1], data, key, colors, top_keys)
    if data.dates:
        _date_axis(axes[-1])
    return fig


def _require_matplotlib() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
    except ImportError:
        raise PlotUnavailable(
            f"the match timeline needs matplotlib, which is not installed: install it with  {INSTALL}"
        ) from None
    return Figure


# ----------------------------------------------------------------------------- reading


def load(matches: Any, key: str | None = None, dates: bool | None = None) -> Timeline:
    """The matches as a :class:`Timeline`: from a JSONL path, a DataFrame, or records."""
    if isinstance(matches, (str, Path)):
        records = list(_read_jsonl(Path(matches)))
        return _from_records(records, key, dates, str(matches))
    if _is_frame(matches):
        return _from_frame(matches, key, dates)
    records = [m.to_dict() if hasattr(m, "to_dict") else m for m in matches]
    return _from_records(records, key, dates, "matches")


def _is_frame(value: Any) -> bool:
    """Whether ``value`` is a pandas DataFrame (one exists only once pandas is imported, so
    ``petricep run`` and ``plot FILE`` never import it)."""
    pandas = sys.modules.get("pandas")
    return pandas is not None and isinstance(value, pandas.DataFrame)


def _read_jsonl(path: Path) -> Iterable[tuple[int, dict[str, Any]]]:
    try:
        fh = path.open(encoding="utf-8")
    except OSError as exc:
        raise DataError(f"cannot open {path}: {exc.strerror}") from None
    with fh:
        for line_no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                rec = json.loads(line)
            except json.JSONDecodeError as exc:
                raise DataError(f"{path}:{line_no}: not a match (invalid JSON: {exc.msg})") from None
            if not isinstance(rec, dict):
                raise DataError(f"{path}:{line_no}: not a match (a JSON object is expected)")
            yield line_no, rec


def _from_records(records: Iterable[Any], key: str | None, dates: bool | None, where: str) -> Timeline:
    pats: list[str] = []
    start: list[float] = []
    end: list[float] = []
    keys: list[Any] = []
    iso = False  # times written as ISO-8601 (a run over ISO input): dates
    seen_rows: set[tuple[Any, ...]] = set()
    for n, item in enumerate(records, 1):
        line_no, rec = item if isinstance(item, tuple) else (n, item)
        if not isinstance(rec, Mapping):
            raise DataError(f"{where}: match {line_no} is not a mapping but {type(rec).__name__}")
        if "timeout" in rec:
            continue
        if "pattern" not in rec or "end" not in rec:
            raise DataError(f"{where}:{line_no}: a match needs 'pattern' and 'end' (it has: {', '.join(rec)})")
        if "row" in rec:  # ALL ROWS PER MATCH: one line per row, one match
            ident = (rec["pattern"], rec.get("start"), rec["end"], json.dumps(rec.get("ids"), sort_keys=True))
            if ident in seen_rows:
                continue
            seen_rows.add(ident)
        e, e_iso = _time_value(rec["end"])
        s, s_iso = _time_value(rec.get("start", rec["end"]))
        if e is None or s is None:
            raise DataError(
                f"{where}:{line_no}: field 'end' or 'start' is neither a number nor an ISO-8601 date-time: "
                f"{rec.get('end')!r}"
            )
        iso = iso or e_iso or s_iso
        pats.append(str(rec["pattern"]))
        start.append(s)
        end.append(e)
        attrs = rec.get("attrs")
        keys.append(rec.get(key, attrs.get(key) if isinstance(attrs, Mapping) else None) if key else None)
    if iso and dates is not False:
        return Timeline(pats, start, end, keys, True)
    return _scaled(pats, start, end, keys, dates)


def _time_value(value: Any) -> tuple[float | None, bool]:
    """A match time as seconds, and whether it was an ISO-8601 date-time (``run`` writes
    start/end in the input's own format: numbers, or ISO text for ISO input; a naive
    date-time reads as UTC, as the readers take it). ``(None, False)``: neither."""
    if isinstance(value, bool):
        return None, False
    if isinstance(value, (int, float)):
        return float(value), False
    if isinstance(value, str):
        try:
            return float(value), False
        except ValueError:
            pass
        try:
            t = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError:
            return None, False
        if t.tzinfo is None:
            t = t.replace(tzinfo=timezone.utc)
        return t.timestamp(), True
    return None, False


def _from_frame(df: pd.DataFrame, key: str | None, dates: bool | None) -> Timeline:
    missing = [c for c in ("pattern", "end") if c not in df.columns]
    if missing:
        raise ConfigError(
            f"the matches DataFrame needs the column(s) {', '.join(missing)}; it has: {', '.join(map(str, df.columns))}"
        )
    if key is not None and key not in df.columns:
        raise ConfigError(f"no column {key!r} in the matches DataFrame; it has: {', '.join(map(str, df.columns))}")
    if "timeout" in df.columns:
        df = df[df["timeout"].isna()]
    start = df["start"] if "start" in df.columns else df["end"]
    keys = [None if _missing(k) else k for k in df[key]] if key else [None] * len(df)
    if sys.modules["pandas"].api.types.is_datetime64_any_dtype(df["end"]):
        s, e = _seconds(start), _seconds(df["end"])
        return Timeline([str(p) for p in df["pattern"]], s, e, keys, dates is not False)
    try:
        s, e = [float(x) for x in start], [float(x) for x in df["end"]]
    except (TypeError, ValueError):
        raise ConfigError("the matches DataFrame's 'start'/'end' columns hold neither numbers nor datetimes") from None
    return _scaled([str(p) for p in df["pattern"]], s, e, keys, dates)


def _missing(value: Any) -> bool:
    return value is None or (isinstance(value, float) and math.isnan(value))


def _seconds(col: pd.Series) -> list[float]:
    """Datetimes (naive ones read as UTC) as epoch seconds."""
    return [float(t.value) / 1e9 for t in sys.modules["pandas"].to_datetime(col, utc=True)]


def _scaled(pats: list[str], start: list[float], end: list[float], keys: list[Any], dates: bool | None) -> Timeline:
    """Numbers that read as epoch seconds or milliseconds become dates (in seconds)."""
    if dates is False or not end:
        return Timeline(pats, start, end, keys, False)
    lo, hi = min(end), max(end)
    if EPOCH_S[0] <= lo and hi < EPOCH_S[1]:
        return Timeline(pats, start, end, keys, True)
    if EPOCH_MS[0] <= lo and hi < EPOCH_MS[1]:
        return Timeline(pats, [s / 1e3 for s in start], [e / 1e3 for e in end], keys, True)
    if dates:
        raise ConfigError(f"the match times ({lo:g} .. {hi:g}) do not read as epoch seconds or milliseconds")
    return Timeline(pats, start, end, keys, False)


# ----------------------------------------------------------------------------- drawing


def choose_bin(span: float, dates: bool) -> float:
    """A round bin width giving at most :data:`MAX_BINS` bins over ``span``."""
    if span <= 0:
        return 1.0
    if dates:
        return float(next((w for w in DATE_BINS if span / w <= MAX_BINS), DATE_BINS[-1]))
    exp = 10 ** math.floor(math.log10(span / MAX_BINS))
    return float(next(m * exp for m in (1, 2, 5, 10) if span / (m * exp) <= MAX_BINS))


def bin_text(width: float, dates: bool) -> str:
    """``2 h``, ``15 min``, ``1 d`` (dates) or the number."""
    if not dates:
        return f"{width:g}"
    for unit, size in (("w", 604800), ("d", 86400), ("h", 3600), ("min", 60)):
        if width >= size and width % size == 0:
            return f"{width / size:g} {unit}"
    return f"{width:g} s"


def _x(values: Any, dates: bool) -> Any:
    arr = np.asarray(values, dtype=float)
    return (arr * 1e3).astype("datetime64[ms]") if dates else arr


def _per_pattern(ax: Any, data: Timeline, order: list[str], colors: dict[str, str], width: float | None) -> None:
    if not data.end:
        ax.text(0.5, 0.5, "no matches", ha="center", va="center", transform=ax.transAxes)
        ax.set_yticks([])
        return
    lo, hi = min(data.end), max(data.end)
    w = width or choose_bin(hi - lo, data.dates)
    first = math.floor(lo / w) * w
    edges = first + w * np.arange(int(math.floor((hi - first) / w)) + 2)
    counts = Counter(data.patterns)
    ends = np.asarray(data.end)
    pats = np.asarray(data.patterns)
    for p in order:
        if counts[p]:
            hist, _ = np.histogram(ends[pats == p], bins=edges)
            ax.stairs(hist, _x(edges, data.dates), color=colors[p], linewidth=1.6, label=f"{p} ({counts[p]:,})")
    ax.set_ylabel(f"matches per {bin_text(w, data.dates)}")
    ax.set_title("matches per pattern over time (by completion)", fontsize=10, loc="left")
    ax.legend(loc="upper right", fontsize=9, frameon=False)
    ax.grid(axis="y", alpha=0.3)


def _per_key(ax: Any, data: Timeline, key: str, colors: dict[str, str], top: int) -> None:
    counts = Counter(k for k in data.keys if k is not None)
    shown = [k for k, _ in counts.most_common(top)]
    row = {k: i for i, k in enumerate(shown)}
    without = sum(1 for k in data.keys if k is None)
    note = f"; {without:,} match{'es' if without != 1 else ''} without {key} not shown" if without else ""
    more = f", the {len(shown)} with most matches" if len(counts) > len(shown) else ""
    ax.set_title(f"matches per {key} ({len(counts):,} keys{more}{note})", fontsize=10, loc="left")
    for p, color in colors.items():
        idx = [i for i, (q, k) in enumerate(zip(data.patterns, data.keys)) if q == p and k in row]
        if not idx:
            continue
        ys = np.asarray([row[data.keys[i]] for i in idx])
        s = _x([data.start[i] for i in idx], data.dates)
        e = _x([data.end[i] for i in idx], data.dates)
        ax.hlines(ys, s, e, color=color, linewidth=5, alpha=0.8)
        ax.plot(e, ys, "|", color=color, markersize=9, alpha=0.9)
    ax.set_yticks(range(len(shown)), [str(k) for k in shown], fontsize=8)
    ax.set_ylim(len(shown) - 0.5, -0.5)
    ax.set_ylabel(key)
    ax.grid(axis="x", alpha=0.3)


def _date_axis(ax: Any) -> None:
    import matplotlib.dates as mdates

    locator = mdates.AutoDateLocator(minticks=6, maxticks=14)
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlabel("time (UTC)")


def _default_title(data: Timeline, source: Any) -> str:
    where = f" in {Path(source).name}" if isinstance(source, (str, Path)) else ""
    return f"{len(data.end):,} matches of {len(set(data.patterns))} pattern(s){where}"
