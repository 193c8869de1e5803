"""Spark batch (``local[2]``) against the embedded engine: identical match sets, the same
JSON Lines records, the same errors, from every kind of input."""

from __future__ import annotations

import gzip
import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from petricep.api import compile_text
from petricep.errors import EvaluationError, EventError, EventOrderError
from petricep.events import Event
from petricep.io.readers import InputSpec, open_events
from petricep.merge import build_net
from petricep.output.jsonl import match_json
from petricep.runtime.engine import Engine
from petricep.spark.batch import BatchRun, FiringError, match_events, match_file, ordered_json
from tests.budget import examples
from tests.features import scenario
from tests.spark.engines import run_spark_batch
from tests.spark.test_partition import fresh, random_case
from tests.strategies import pattern_text

pytestmark = pytest.mark.spark

# Every feature whose distribution needs care, in one net: an end negation whose
# composite events another pattern reads (the stream clock), a count window closing an
# end negation, Kleene, skip-till-next-match, partition contiguity, an unkeyed pattern and
# a strict-contiguity one (one partition), a pattern on another key, timeouts another pattern
# reads (they wait for the window to close, like end negations), and a limit on partial matches.
RICH = """
PATTERN dip: SEQ(A a, B b, !(C c)) WHERE [k] AND b.x < a.x AND c.x > 2 WITHIN 4 RETURN Dip(k = a.k, x = b.x)
PATTERN after_dip: SEQ(Dip d, A a) WHERE [k] AND a.x >= d.x WITHIN 6
PATTERN quiet: SEQ(A a, !(B b)) WHERE [k] WITHIN 5 EVENTS
PATTERN rise: SEQ(A+ a[], B b) WHERE skip-till-next-match AND [k] AND a[i].x > a[i-1].x AND b.x > a[last].x WITHIN 5
PATTERN pair: SEQ(C c, D d) WHERE partition-contiguity AND [k] AND d.x = c.x WITHIN 6
PATTERN any_key: SEQ(D a, D b) WHERE b.x > a.x + 3 WITHIN 3
PATTERN strict: SEQ(A a, B b) WHERE strict-contiguity AND a.x = b.x WITHIN 2
PATTERN by_x: SEQ(B a, C b) WHERE [x] AND b.k != a.k WITHIN 3
PATTERN lapse: SEQ(C a, D b) WHERE [k] AND b.x > a.x WITHIN 3 ON TIMEOUT RETURN Lapse(k = a.k, x = a.x)
PATTERN lapses: SEQ(Lapse l1, Lapse l2) WHERE [k] AND l2.x > l1.x WITHIN 10
PATTERN capped: SEQ(A a, C+ c[], D d) WHERE [k] AND d.x > a.x WITHIN 6 LIMIT 2 PARTIAL MATCHES
"""


def random_stream(n: int, seed: int, keys: int = 6) -> list[Event]:
    rnd = random.Random(seed)
    events, ts = [], 0
    for pos in range(n):
        ts += rnd.choice((0, 0, 1, 1, 2))
        events.append(
            Event(rnd.choice("ABCD"), ts, pos, pos, {"k": rnd.randrange(keys), "x": rnd.randrange(8)})
        )
    return events


def embedded(net: Any, events: list[Event], tie: str = "arrival") -> list[str]:
    return [match_json(m) for m in Engine(net, tie=tie).run(fresh(events))]


@pytest.mark.parametrize("tie", ["arrival", "strict"])
def test_a_rich_net_on_spark_equals_the_embedded_engine(spark: Any, tie: str) -> None:
    events = random_stream(600, seed=7 if tie == "arrival" else 9)
    pats = list(compile_text(RICH).patterns)
    got = run_spark_batch([p.source for p in pats], events, tie)
    want = embedded(build_net([p.source for p in pats]), events, tie)
    assert len(want) > 100
    assert sorted(json.dumps(m, sort_keys=True) for m in got) == sorted(
        json.dumps(json.loads(w), sort_keys=True) for w in want
    )
    assert {m["pattern"] for m in got} == {
        "dip",
        "after_dip",
        "quiet",
        "rise",
        "pair",
        "any_key",
        "strict",
        "by_x",
        "lapse",
        "lapses",
        "capped",
    }


def test_key_buckets_go_one_to_each_firing_partition(spark: Any) -> None:
    """A kernel group's bucket labels: the shuffle sends label ``p`` to firing partition
    ``p`` (Spark's own partitioning, checked), so its keys fill the partitions evenly."""
    from pyspark.sql import functions as F

    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 5\n")
    run = BatchRun(spark, net, partitions=3)
    labels = run.bucket_labels()
    typed = [g for g, mine in enumerate(labels) if mine]
    assert typed and all(len(labels[g]) == 3 for g in typed)
    rows = spark.createDataFrame([(g, label, p) for g in typed for p, label in enumerate(labels[g])], "g int, k string, p int")
    placed = rows.repartition(3, "g", "k").select(F.spark_partition_id().alias("at"), "p").collect()
    assert sorted((r.at, r.p) for r in placed) == sorted((p, p) for _ in typed for p in range(3))


def test_spark_partition_is_sparks_own_hash_partitioning(spark: Any) -> None:
    """The driver computes ``pmod(hash(g, k), n)`` itself (no Spark job for the bucket
    labels): equal to Spark's for keys of every length mod 4, non-ASCII, negative groups."""
    from pyspark.sql import functions as F

    from petricep.spark.shuffle import spark_partition

    keys = ["", "a", "ab", "abc", "abcd", "abcde", "é", "ü-ß", "日本語", "x" * 33, "-17", "9" * 12]
    rows = [(g, k) for g in (0, 1, 7, -3, 2**31 - 1) for k in keys]
    df = spark.createDataFrame(rows, "g int, k string")
    got = df.select("g", "k", *(F.pmod(F.hash("g", "k"), F.lit(n)).alias(f"p{n}") for n in (1, 2, 3, 7, 64))).collect()
    assert len(got) == len(rows)
    for r in got:
        assert [spark_partition(r.g, r.k, n) for n in (1, 2, 3, 7, 64)] == [r.p1, r.p2, r.p3, r.p7, r.p64], (r.g, r.k)


@settings(
    max_examples=examples(4, "PETRICEP_SPARK_EXAMPLES"),
    deadline=None,
    suppress_health_check=list(HealthCheck),
)
@given(st.data())
def test_random_nets_on_spark(spark: Any, data: st.DataObject) -> None:
    case = random_case(data, max_size=30)
    if case is None:
        return
    pats, net, tie, events = case
    for p in pats:
        note(pattern_text(p))
    got = sorted(json.dumps(m, sort_keys=True) for m in run_spark_batch(pats, events, tie))
    want = sorted(json.dumps(json.loads(w), sort_keys=True) for w in embedded(net, events, tie))
    assert got == want


# A sample of the hand cases of tests/features (all of them run on key partitions without
# Spark in test_partition.py; a Spark run takes a second or two).
HAND_CASES = [
    ("test_negation", "test_negation_at_end_with_count_window"),
    ("test_negation", "test_negation_with_partition_only_counts_same_partition"),
    ("test_composite", "test_end_negation_composite_is_emitted_when_the_window_closes"),
    ("test_composite", "test_composite_event_uses_pos_of_emitting_event_for_count_windows"),
    ("test_windows", "test_count_window_counts_positions_over_the_whole_input"),
    ("test_kleene", "test_kleene_iteration_condition_with_previous_element"),
    ("test_strategies", "test_skip_till_next_match_with_partition"),
    ("test_strategies", "test_partition_contiguity"),
]


@pytest.mark.parametrize("module,name", HAND_CASES)
def test_hand_cases_on_spark(spark: Any, module: str, name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    import importlib

    monkeypatch.setattr(scenario, "CURRENT", run_spark_batch)
    getattr(importlib.import_module(f"tests.features.{module}"), name)()


# ----------------------------------------------------------------------------- inputs

NET_K = """
PATTERN up: SEQ(T a, T b) WHERE [k] AND b.x > a.x WITHIN 3
PATTERN gap: SEQ(T a, !(U u), T b) WHERE [k] WITHIN 4 RETURN G(k = a.k, x = b.x)
PATTERN gaps: SEQ(G g1, G g2) WHERE [k] WITHIN 10
"""


def rows(n: int, seed: int) -> list[dict[str, Any]]:
    rnd = random.Random(seed)
    out, ts = [], 1000
    for i in range(n):
        ts += rnd.choice((0, 1, 1, 2))
        out.append(
            {
                "type": rnd.choice("TTU"),
                "ts": ts,
                "id": f"e{i}",
                "k": rnd.choice(["a", "b", 7, 7.0, "c"]),
                "x": rnd.randrange(9),
            }
        )
    return out


def write_csv(
    path: str,
    data: list[dict[str, Any]],
    *,
    header: bool = True,
    crlf: bool = False,
    bom: bool = False,
    blanks: bool = False,
) -> None:
    nl = "\r\n" if crlf else "\n"
    lines = [",".join(data[0])] if header else []
    for i, r in enumerate(data):
        lines.append(",".join(f'"{v}"' if isinstance(v, str) and i % 3 == 0 else str(v) for v in r.values()))
        if blanks and i % 50 == 7:
            lines.append("")
    text = nl.join(lines) + nl
    raw = (b"\xef\xbb\xbf" if bom else b"") + text.encode()
    if path.endswith(".gz"):
        with gzip.open(path, "wb") as fh:
            fh.write(raw)
    else:
        with open(path, "wb") as fh:
            fh.write(raw)


def spark_lines(spark: Any, spec: InputSpec, text: str, tie: str = "arrival") -> list[str]:
    run = BatchRun(spark, compile_text(text), tie)
    return list(ordered_json(run.fire(run.parse_file(spec), raise_errors=False)))


@pytest.mark.parametrize(
    "name,options",
    [
        ("plain.csv", {}),
        ("dos.csv", {"crlf": True, "bom": True, "blanks": True}),
        ("packed.csv.gz", {"blanks": True}),
        ("headerless.csv", {"header": False}),
    ],
)
def test_csv_files_read_as_the_local_reader_reads_them(
    spark: Any, tmp_path: Any, name: str, options: dict[str, Any]
) -> None:
    data = rows(700, seed=len(name))
    path = str(tmp_path / name)
    write_csv(path, data, **options)
    columns = None if options.get("header", True) else ("type", "ts", "id", "k", "x")
    spec = InputSpec(path=path, type_field="type", time_field="ts", id_field="id", columns=columns)
    want = [match_json(m) for m in Engine(compile_text(NET_K)).run(open_events(spec))]
    assert len(want) > 50
    assert spark_lines(spark, spec, NET_K) == want


@pytest.mark.parametrize("trailing", [True, False])
@pytest.mark.parametrize("fmt", ["csv", "dos.csv", "jsonl"])
def test_a_small_file_parsed_on_the_driver_as_spark_reads_it(
    spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, fmt: str, trailing: bool
) -> None:
    """A small local file is read and parsed on the driver (no parse job): the same
    matches, positions and ids as the parse stage's task reading it through Spark."""
    import petricep.spark.batch as batch

    data = rows(400, seed=5)
    path = str(tmp_path / f"small.{fmt}")
    if fmt == "jsonl":
        text = "".join(json.dumps(r) + ("\n\n" if i % 40 == 3 else "\n") for i, r in enumerate(data))
        Path(path).write_bytes(text.encode())
    else:
        write_csv(path, data, crlf=fmt == "dos.csv", bom=fmt == "dos.csv", blanks=True)
    if not trailing:
        Path(path).write_bytes(Path(path).read_bytes().rstrip(b"\r\n"))
    spec = InputSpec(path=path, type_field="type", time_field="ts", id_field="id" if trailing else None)
    assert batch.small_file(path) and batch._driver_lines(path) is not None
    here = spark_lines(spark, spec, NET_K)
    monkeypatch.setattr(batch, "_driver_lines", lambda _path: None)
    assert len(here) > 20
    assert spark_lines(spark, spec, NET_K) == here
    assert here == [match_json(m) for m in Engine(compile_text(NET_K)).run(open_events(spec))]


def test_a_file_split_in_many_partitions(spark: Any, tmp_path: Any) -> None:
    data = rows(3000, seed=3)
    path = str(tmp_path / "big.csv")
    write_csv(path, data, blanks=True)
    spec = InputSpec(path=path, type_field="type", time_field="ts")  # ids are positions
    want = [match_json(m) for m in Engine(compile_text(NET_K)).run(open_events(spec))]
    spark.conf.set("spark.sql.files.maxPartitionBytes", "8192")
    try:
        assert spark.read.text(path).rdd.getNumPartitions() > 4
        assert spark_lines(spark, spec, NET_K) == want
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")


def test_json_lines_and_parquet(spark: Any, tmp_path: Any) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = rows(500, seed=11)
    jl = str(tmp_path / "ev.jsonl")
    with open(jl, "w") as fh:
        for r in data:
            fh.write(json.dumps(r) + "\n")
    spec = InputSpec(path=jl, type_field="type", time_field="ts", id_field="id")
    want = [match_json(m) for m in Engine(compile_text(NET_K)).run(open_events(spec))]
    assert spark_lines(spark, spec, NET_K) == want

    pq_rows = [dict(r, k=str(r["k"])) for r in data]  # one type per Parquet column
    path = str(tmp_path / "ev.parquet")
    pq.write_table(pa.Table.from_pylist(pq_rows), path, row_group_size=100)
    spec = InputSpec(path=path, type_field="type", time_field="ts", id_field="id")
    want = [match_json(m) for m in Engine(compile_text(NET_K)).run(open_events(spec))]
    assert spark_lines(spark, spec, NET_K) == want


def test_a_dataframe_in_a_dataframe_out(spark: Any) -> None:
    import pandas as pd

    data = [dict(r, k=str(r["k"]), pos=i) for i, r in enumerate(rows(400, seed=5))]
    net = compile_text(NET_K)
    spec = InputSpec(path="<df>", type_field="type", time_field="ts", id_field="id")
    want = sorted(match_json(m) for m in Engine(net).run(open_events_from(data, spec)))
    df = spark.createDataFrame(pd.DataFrame(data))
    out = match_events(df, net, spec)
    assert out.columns == ["pattern", "ids", "start", "end", "attrs", "json", "emitted_at"]
    assert sorted(r.json for r in out.collect()) == want
    shuffled = spark.createDataFrame(pd.DataFrame(data)).repartition(3)  # arrival order is lost...
    got = match_events(shuffled, net, spec, pos_field="pos")  # ...a position column gives it back
    assert sorted(r.json for r in got.collect()) == want
    row = out.filter("pattern = 'up'").first()
    assert json.loads(row.json) == {
        "pattern": "up",
        "ids": {k: v for k, v in row.ids.asDict().items() if v is not None},  # typed: a struct
        "start": row.start,
        "end": row.end,
        "attrs": {},
    }


def open_events_from(data: list[dict[str, Any]], spec: InputSpec) -> Any:
    from petricep.io.readers import events_from_records

    return events_from_records(data, spec)


# ----------------------------------------------------------------------------- errors


def test_the_first_bad_row_is_reported_as_the_local_reader_does(spark: Any, tmp_path: Any) -> None:
    data = rows(900, seed=2)
    path = str(tmp_path / "bad.csv")
    write_csv(path, data)
    lines = Path(path).read_text().splitlines()
    lines[701] = lines[701].replace(lines[701].split(",")[1], "soon", 1)  # a timestamp that is no timestamp
    lines[805] = lines[805].replace(",", ",,", 1)  # and later a short row
    Path(path).write_text("\n".join(lines) + "\n")
    spec = InputSpec(
        path=path, type_field="type", time_field="ts", id_field="id", numeric={"T": frozenset({"x"})}
    )
    with pytest.raises(EventError) as local:
        list(open_events(spec))
    with pytest.raises(EventError) as remote:
        spark_lines(spark, spec, NET_K)
    assert (
        str(remote.value)
        == str(local.value)
        == f"{path}:702: field 'ts': error: cannot parse timestamp 'soon'"
    )


def test_timestamps_going_back_between_chunks(spark: Any, tmp_path: Any) -> None:
    data = rows(40_000, seed=4)
    data[20_000]["ts"] = 5  # the first row of a chunk: only the whole-stream clock sees it
    path = str(tmp_path / "back.csv")
    write_csv(path, data)
    spec = InputSpec(path=path, type_field="type", time_field="ts", id_field="id")
    with pytest.raises(EventOrderError) as local:
        list(open_events(spec))
    with pytest.raises(EventOrderError) as remote:
        spark_lines(spark, spec, NET_K)
    assert str(remote.value) == str(local.value)


def test_an_evaluation_error_names_the_event(spark: Any, tmp_path: Any) -> None:
    path = str(tmp_path / "mixed.jsonl")
    with open(path, "w") as fh:
        for i, x in enumerate([1, 2, 3, "text", 5]):
            fh.write(json.dumps({"type": "T", "ts": i, "k": 1, "x": x}) + "\n")
    text = "PATTERN p: SEQ(T a, T b) WHERE [k] AND b.x > a.x WITHIN 3"
    spec = InputSpec(path=path, type_field="type", time_field="ts")
    with pytest.raises(EvaluationError) as local:
        list(Engine(compile_text(text)).run(open_events(spec)))
    with pytest.raises(FiringError) as remote:
        spark_lines(spark, spec, text)
    assert str(remote.value) == f"event at position 3 (id 3): {local.value}"
    with pytest.raises(Exception, match=r"petricep-error: event at position 3 \(id 3\)"):
        match_file(spark, spec, compile_text(text)).collect()


def test_petriceps_session_leaves_the_packs_to_their_own_compression(spark: Any) -> None:
    """The session ``get_session`` starts does not compress shuffle blocks a second time
    (a kernel group's packs are compressed already)."""
    assert spark.sparkContext.getConf().get("spark.shuffle.compress") == "false"
