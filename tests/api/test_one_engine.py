"""A run fires wholly on one engine (``petricep.kernel.choice.choose``): on the compiled kernel
where it covers the whole net, else on the Python engine, saying the kernel's reason once --
never a mix. As ``Run``, ``petricep run`` (its summary and ``--stats``) and ``petricep check``
say it; the kernel's output is ``--engine python``'s, byte for byte, with the same accounting."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from petricep import kernel
from petricep.api import load_patterns, net_of
from petricep.api.runner import Run
from petricep.cli import main
from petricep.io import InputSpec
from petricep.kernel.tableplan import to_matches

pytestmark = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built")

# Kleene with negation, a skip-till-next-match pattern and an end negation, beside a SQL query
PATTERNS = (
    "PATTERN ab: SEQ(A a, B b) WHERE [k] AND b.x > a.x AND skip-till-next-match WITHIN 4\n"
    "PATTERN kn: SEQ(A a, B+ b[], !(C n), D d) WHERE [k] AND b[i].x >= a.x AND n.x > 3 WITHIN 6\n"
    "PATTERN cd: SEQ(C c, D d, !(A n)) WHERE d.x != c.x WITHIN 3\n"
)
SQL = """SELECT * FROM A MATCH_RECOGNIZE (
    PARTITION BY k ORDER BY ts
    MEASURES FIRST(UP.x) AS lo, LAST(UP.x) AS hi
    ONE ROW PER MATCH
    AFTER MATCH SKIP PAST LAST ROW
    PATTERN (UP{2,})
    DEFINE UP AS UP.x >= PREV(UP.x)
) q;
"""
# a condition deeper than the kernel's value stack: the kernel refuses the pattern, so the whole net
BIG = "n.x < " + "(1 + " * 32 + "1" + ")" * 32
KN_WHY = "condition nests deeper than 32 values"
COVERED = {"name": "kernel", "why": "covered"}


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """The patterns (and the same with ``kn`` refused), the query and 6,000 events (text ids,
    int and float values)."""
    pcep, refused, sql, csv = tmp_path / "mix.pcep", tmp_path / "refused.pcep", tmp_path / "q.sql", tmp_path / "ev.csv"
    pcep.write_text(PATTERNS)
    refused.write_text(PATTERNS.replace("n.x > 3 WITHIN", f"n.x > 3 AND {BIG} WITHIN"))
    sql.write_text(SQL)
    rnd = random.Random(5)
    rows, ts = ["id,ts,type,x,k"], 0
    for i in range(6000):
        ts += rnd.choice((0, 0, 1, 2))
        x = rnd.randint(0, 5) if i % 7 else rnd.randint(0, 5) + 0.5
        rows.append(f"e{i},{ts},{rnd.choice('ABCD')},{x},{rnd.randint(0, 2)}")
    csv.write_text("\n".join(rows) + "\n")
    return {"pcep": pcep, "refused": refused, "sql": sql, "csv": csv}


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    return rc, out, err


def spec_of(files: dict[str, Path]) -> InputSpec:
    return InputSpec(str(files["csv"]), type_field="type", time_field="ts", id_field="id")


@pytest.mark.parametrize(
    ("which", "line"),
    [
        ("pcep", "kernel: covers this net (run fires it on the kernel)"),
        ("refused", f"kernel: not used, the Python engine runs ({KN_WHY})"),
    ],
)
def test_check_says_which_engine_runs_the_whole_net(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], which: str, line: str
) -> None:
    rc, out, _ = run_cli(capsys, "check", str(files[which]), str(files["sql"]))
    assert rc == 0
    assert [x for x in out.splitlines() if x.startswith("kernel: ")] == [line]


@pytest.mark.parametrize(("which", "engine"), [("pcep", COVERED), ("refused", {"name": "python", "why": KN_WHY})])
def test_a_run_writes_the_python_engines_file(
    capsys: pytest.CaptureFixture[str], files: dict[str, Path], tmp_path: Path, which: str, engine: dict[str, str]
) -> None:
    """The default run fires the whole net on one engine: the same bytes and accounting as
    ``--engine python``; the summary's engine line and ``--stats`` say which and why (once)."""
    opts = ("--events", str(files["csv"]), "--type-field", "type", "--time-field", "ts", "--id-field", "id")
    outs = {}
    for name in ("kernel", "python"):
        o, stats = tmp_path / f"{name}.jsonl", tmp_path / f"{name}.json"
        rc, _, stderr = run_cli(
            capsys, "run", str(files[which]), str(files["sql"]), *opts, "--engine", name, "-o", str(o), "--stats", str(stats)
        )
        assert rc == 0
        outs[name] = (o.read_bytes(), json.loads(stats.read_text()), stderr.splitlines())
    (out, stats, err), (out_py, stats_py, err_py) = outs["kernel"], outs["python"]
    assert out == out_py and out.count(b"\n") > 1000
    assert {json.loads(line)["pattern"] for line in out.splitlines()} == {"ab", "kn", "cd", "q"}
    assert err[-1] == ("  engine: kernel" if engine == COVERED else f"  engine: python ({KN_WHY})")
    assert sum(KN_WHY in line for line in err) == (engine != COVERED)  # the reason said once
    assert err_py[-1] == "  engine: python (asked for)"
    at, at_py = (next(i for i, line in enumerate(e) if line.startswith("summary:")) for e in (err, err_py))
    assert err[at].split(" in ")[0] == err_py[at_py].split(" in ")[0]  # events read = processed ...; matches
    assert err[at + 1 : at + 5] == err_py[at_py + 1 : at_py + 5] == ["  ab: 254 matches", "  kn: 238 matches", "  cd: 935 matches", "  q: 222 matches"]
    assert stats["engine"] == engine
    assert stats["events"] == stats_py["events"]
    counts = ("matches", "timeouts", "dropped")
    assert {n: [p[k] for k in counts] for n, p in stats["patterns"].items()} == {
        n: [p[k] for k in counts] for n, p in stats_py["patterns"].items()
    }
    assert stats["partial_matches"]["alive"] == stats_py["partial_matches"]["alive"] == 0


def test_run_iterates_the_python_engines_matches_on_the_kernel(files: dict[str, Path]) -> None:
    """``Run`` (the library): iterating and ``match_batches`` give ``engine="python"``'s matches
    in its order, and the same events accounting."""
    net = net_of(load_patterns([files["pcep"], files["sql"]]))
    spec = spec_of(files)
    python = Run(net, spec, engine="python")
    want = [m.to_dict() for m in python]
    run = Run(net, spec)
    assert [m.to_dict() for m in run] == want
    assert run.report()["engine"] == COVERED
    batched = Run(net, spec)
    # (a batch of matches as record batches where the kernel holds them exactly: to_matches)
    got = [m.to_dict() for c in batched.match_batches() for m in (c if isinstance(c, list) else to_matches(c, net))]
    assert got == want
    assert batched.report()["events"] == run.report()["events"] == python.report()["events"]
    assert python.report()["events"]["read"] == 6000


@pytest.mark.parametrize("which", ["pcep", "refused"])
def test_a_run_with_a_slack_is_the_python_engines(files: dict[str, Path], which: str) -> None:
    """A slack puts the reorder stage in front of the engine the chooser picked: the matches
    and the accounting are ``engine="python"``'s."""
    net = net_of(load_patterns([files[which], files["sql"]]))
    python = Run(net, spec_of(files), engine="python", slack=2)
    run = Run(net, spec_of(files), slack=2)
    assert [m.to_dict() for m in run] == [m.to_dict() for m in python]
    assert run.report()["engine"] == (COVERED if which == "pcep" else {"name": "python", "why": KN_WHY})
    assert run.report()["events"] == python.report()["events"]


def test_asked_for_python_runs_the_whole_net_on_it(files: dict[str, Path]) -> None:
    net = net_of(load_patterns([files["pcep"], files["sql"]]))
    assert Run(net, spec_of(files), engine="python").report()["engine"] == {"name": "python", "why": "asked for"}


@pytest.mark.parametrize("which", [("pcep", "sql"), ("sql",)])
def test_with_events_runs_a_net_with_sql_queries_on_the_kernel(
    files: dict[str, Path], capsys: pytest.CaptureFixture[str], which: tuple[str, ...]
) -> None:
    """``--with-events`` beside SQL queries: the kernel binds its events
    (``KernelEngine(with_events=True)``), the queries' events are looked up by id; the match
    file is ``--engine python``'s byte for byte, and the summary names the kernel."""
    opts = ["--events", str(files["csv"]), "--type-field", "type", "--time-field", "ts", "--id-field", "id", "--with-events"]
    paths = [str(files[w]) for w in which]
    rc, out, err = run_cli(capsys, "run", *paths, *opts)
    rc_py, out_py, _ = run_cli(capsys, "run", *paths, *opts, "--engine", "python")
    assert (rc, out) == (rc_py, out_py) and rc == 0 and '"events": {' in out
    assert [line for line in err.splitlines() if line.startswith("  engine: ")] == ["  engine: kernel"]



def test_check_of_an_archived_net_says_its_live_part_fires_on_the_kernel(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A pattern with ARCHIVED variables runs as its live part on the kernel, joined with the
    archive after it: ``check`` says so, and a ``run --archive`` fires there."""
    pattern = tmp_path / "p.pcep"
    pattern.write_text("PATTERN p: SEQ(ARCHIVED A old, B now) WHERE [k] AND now.ts - old.ts <= 10 AND now.x > old.x\n")
    events = tmp_path / "e.csv"
    events.write_text("type,ts,id,k,x\nA,0,1,7,1\nB,5,2,7,2\nB,20,3,7,3\n")
    rc, out, _ = run_cli(capsys, "check", str(pattern))
    assert rc == 0
    assert [x for x in out.splitlines() if x.startswith("kernel: ")] == [
        "kernel: covers the live part of this net (run --archive fires it on the kernel, then joins the archive)"
    ]
    o = tmp_path / "m.jsonl"
    opts = ("--type-field", "type", "--time-field", "ts", "--id-field", "id", "--archive", str(tmp_path / "arch"))
    rc, _, err = run_cli(capsys, "run", str(pattern), "--events", str(events), *opts, "-o", str(o))
    assert rc == 0, err
    assert "engine: kernel" in err
    assert [json.loads(x)["ids"] for x in o.read_text().splitlines()] == [{"old": 1, "now": 2}]
