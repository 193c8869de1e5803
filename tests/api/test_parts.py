"""Which engine runs which part of a net (``petricep.kernel.parts``), as ``Run``, ``petricep
run`` (its summary and ``--stats``) and ``petricep check`` say it; a split run's output is
``--engine python``'s, byte for byte, with the same accounting."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from petricep import kernel
from petricep.api import load_patterns, net_of
from petricep.api.runner import Run
from petricep.cli import main
from petricep.io import InputSpec
from tests.api.test_split import SQL

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

PATTERNS = (
    "PATTERN ab: SEQ(A a, B b) WHERE [k] AND b.x > a.x AND skip-till-next-match WITHIN 4\n"
    "PATTERN kn: SEQ(A a, B+ b[], !(C n), D d) WHERE [k] AND b[i].x >= a.x AND n.x > 3 AND a.x < 1152921504606846976 WITHIN 6\n"
    "PATTERN cd: SEQ(C c, D d, !(A n)) WHERE d.x != c.x WITHIN 3\n"
)
QUERY = SQL + "\n"
KN_WHY = "integer constant 1152921504606846976 beyond float64 precision"
ENGINE = {
    "name": "kernel+python",
    "why": f"kernel for 'ab', 'cd', 'q'; python for 'kn' ({KN_WHY})",
    "parts": [
        {"patterns": ["ab"], "engine": "kernel", "why": "covered"},
        {"patterns": ["kn"], "engine": "python", "why": KN_WHY},
        {"patterns": ["cd"], "engine": "kernel", "why": "covered"},
        {"patterns": ["q"], "engine": "kernel", "why": "covered"},
    ],
}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The patterns, the query and 6,000 events (text ids, int and float values)."""
    pcep, sql, csv = tmp_path / "mix.pcep", tmp_path / "q.sql", tmp_path / "ev.csv"
    pcep.write_text(PATTERNS)
    sql.write_text(QUERY)
    rnd = random.Random(5)
    rows, ts = ["id,ts,type,x,k"], 0
    for i in range(6000):
        ts += rnd.choice((0, 0, 1, 2))
        x = rnd.randint(0, 5) if i % 7 else rnd.randint(0, 5) + 0.5
        rows.append(f"e{i},{ts},{rnd.choice('ABCD')},{x},{rnd.randint(0, 2)}")
    csv.write_text("\n".join(rows) + "\n")
    return {"pcep": pcep, "sql": sql, "csv": csv}


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def test_check_says_which_engine_runs_each_part(capsys: pytest.CaptureFixture[str], files: dict[str, Path]) -> None:
    rc, out, _ = run_cli(capsys, "check", str(files["pcep"]), str(files["sql"]))
    assert rc == 0
    lines = out.splitlines()
    at = lines.index("kernel: covers part of this net (run fires each part on its engine)")
    assert lines[at : at + 5] == [
        "kernel: covers part of this net (run fires each part on its engine)",
        "  kernel: 'ab'",
        f"  python: 'kn' ({KN_WHY})",
        "  kernel: 'cd'",
        "  kernel: 'q'",
    ]


def test_a_split_run_writes_the_python_engines_file(capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path) -> None:
    """The default run splits the net: the same bytes and accounting as ``--engine python``;
    the summary's engine line and ``--stats`` say which engine ran which part and why."""
    opts = ("--events", str(files["csv"]), "--type-field", "type", "--time-field", "ts", "--id-field", "id")
    outs = {}
    for engine in ("kernel", "python"):
        o, stats = tmp_path / f"{engine}.jsonl", tmp_path / f"{engine}.json"
        rc, _, stderr = run_cli(
            capsys, "run", str(files["pcep"]), str(files["sql"]), *opts, "--engine", engine, "-o", str(o), "--stats", str(stats)
        )
        assert rc == 0
        outs[engine] = (o.read_bytes(), json.loads(stats.read_text()), stderr.splitlines())
    (out, stats, err), (out_py, stats_py, err_py) = outs["kernel"], outs["python"]
    assert out == out_py and out.count(b"\n") > 1000
    assert {json.loads(line)["pattern"] for line in out.splitlines()} == {"ab", "kn", "cd", "q"}
    assert err[-1] == f"  engine: kernel+python ({ENGINE['why']})"
    assert err_py[-1] == "  engine: python (asked for)"
    at, at_py = (next(i for i, line in enumerate(e) if line.startswith("summary:")) for e in (err, err_py))
    assert err[at].split(" in ")[0] == err_py[at_py].split(" in ")[0]  # events read = processed ...; matches
    assert err[at + 1 : at + 5] == err_py[at_py + 1 : at_py + 5] == ["  ab: 254 matches", "  kn: 238 matches", "  cd: 935 matches", "  q: 222 matches"]
    assert stats["engine"] == ENGINE
    assert stats["events"] == stats_py["events"]
    counts = ("matches", "timeouts", "dropped")
    assert {n: [p[k] for k in counts] for n, p in stats["patterns"].items()} == {
        n: [p[k] for k in counts] for n, p in stats_py["patterns"].items()
    }
    assert stats["partial_matches"]["alive"] == stats_py["partial_matches"]["alive"] == 0
    assert "net" not in stats  # (the kernel counts no marking)


def test_run_splits_and_iterates_matches_as_the_python_engine(files: dict[str, Path]) -> None:
    """``Run`` (the library): iterating and ``match_batches`` give ``engine="python"``'s matches
    in its order (lists of Match objects for a split run); the report names the parts."""
    net = net_of(load_patterns([files["pcep"], files["sql"]]))
    spec = InputSpec(str(files["csv"]), type_field="type", time_field="ts", id_field="id")
    python = Run(net, spec, engine="python")
    want = [m.to_dict() for m in python]
    run = Run(net, spec)
    assert [m.to_dict() for m in run] == want
    assert run.report()["engine"] == ENGINE
    batched = Run(net, spec)
    chunks = list(batched.match_batches())
    assert all(isinstance(c, list) for c in chunks)
    assert [m.to_dict() for c in chunks for m in c] == want
    assert batched.report()["events"] == run.report()["events"] == python.report()["events"]
    assert python.report()["events"]["read"] == 6000


def test_a_split_run_with_a_slack_is_the_python_engines(files: dict[str, Path]) -> None:
    """A slack puts the reorder stage in front of the split run (its kernel and Python
    parts): the matches and the accounting are ``engine="python"``'s."""
    net = net_of(load_patterns([files["pcep"], files["sql"]]))
    spec = InputSpec(str(files["csv"]), type_field="type", time_field="ts", id_field="id")
    python = Run(net, spec, engine="python", slack=2)
    run = Run(net, spec, slack=2)
    assert [m.to_dict() for m in run] == [m.to_dict() for m in python]
    assert run.report()["engine"] == ENGINE
    assert run.report()["events"] == python.report()["events"]


@pytest.mark.parametrize(
    ("options", "why"),
    [
        ({"engine": "python"}, "asked for"),
    ],
)
def test_what_only_the_python_engine_does_still_runs_the_whole_net_on_it(
    files: dict[str, Path], options: dict[str, Any], why: str
) -> None:
    net = net_of(load_patterns([files["pcep"], files["sql"]]))
    spec = InputSpec(str(files["csv"]), type_field="type", time_field="ts", id_field="id")
    assert Run(net, spec, **options).report()["engine"] == {"name": "python", "why": why}


def test_one_engine_keeps_its_wording(files: dict[str, Path], tmp_path: Path) -> None:
    """Where the kernel covers nothing (only an uncovered pattern and a query), the run is the
    Python engine's with the kernel's reason, as before the split."""
    lone = tmp_path / "lone.pcep"
    lone.write_text(PATTERNS.splitlines()[1] + "\n")
    spec = InputSpec(str(files["csv"]), type_field="type", time_field="ts", id_field="id")
    net = net_of(load_patterns([lone, files["sql"]]))
    assert Run(net, spec).report()["engine"] == {"name": "python", "why": KN_WHY}


@pytest.mark.parametrize("which", [("pcep", "sql"), ("sql",)])
def test_with_events_runs_a_net_with_sql_queries_on_the_kernel(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], which: tuple[str, ...]
) -> None:
    """``--with-events`` beside SQL queries: the split run's kernel part binds its events
    (``KernelEngine(with_events=True)``), the queries' events are looked up by id; the match
    file is ``--engine python``'s byte for byte, and the summary names the kernel."""
    opts = ["--events", str(files["csv"]), "--type-field", "type", "--time-field", "ts", "--id-field", "id", "--with-events"]
    paths = [str(files[w]) for w in which]
    rc, out, err = run_cli(capsys, "run", *paths, *opts)
    rc_py, out_py, _ = run_cli(capsys, "run", *paths, *opts, "--engine", "python")
    assert (rc, out) == (rc_py, out_py) and rc == 0 and '"events": {' in out
    engine = [line for line in err.splitlines() if line.startswith("  engine: ")]
    assert engine == (["  engine: kernel"] if which == ("sql",) else [f"  engine: kernel+python ({ENGINE['why']})"])
