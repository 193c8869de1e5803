"""KernelRun's input spec, text values, arithmetic, errors and the fallback when the
extension is not built: each against the Python engine or an exact text."""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import petricep.kernel as K
from petricep.api import compile_text
from petricep.errors import ConfigError, EvaluationError, EventOrderError
from petricep.events import Event
from petricep.runtime.engine import Engine
from tests.budget import examples
from tests.kernel.compare import both, table


def events(rows: Sequence[tuple[str, float, dict[str, Any]]]) -> list[Event]:
    return [Event(t, ts, i, i, attrs) for i, (t, ts, attrs) in enumerate(rows)]


def same(text: str, evs: list[Event], tie: str = "arrival", cut: int | None = None) -> list[dict]:
    out = both(compile_text(text), evs, tie, len(evs) // 2 if cut is None else cut, sweep_every=2)
    assert out["kernel"] == out["python"]
    return out["python"][0]


def test_text_equality_and_ordering_through_sorted_ranks() -> None:
    # the second batch brings strings that sort before the first batch's: ranks are recomputed
    rows = [("A", 0, {"s": "m"}), ("B", 1, {"s": "q"}), ("A", 2, {"s": "c"}), ("B", 3, {"s": "b"}), ("B", 4, {"s": "m"})]
    got = same("PATTERN p: SEQ(A a, B b) WHERE a.s < b.s", events(rows), cut=2)
    assert {(m["ids"]["a"], m["ids"]["b"]) for m in got} == {(0, 1), (2, 4)}
    eq = same("PATTERN p: SEQ(A a, B b) WHERE a.s = b.s AND b.s != 'zz'", events(rows))
    assert [m["ids"] for m in eq] == [{"a": 0, "b": 4}]
    lit = same("PATTERN p: SEQ(A a, B b) WHERE a.s = 'c' AND b.s >= 'm'", events(rows))
    assert [m["ids"] for m in lit] == [{"a": 2, "b": 4}]


def test_text_never_equals_a_number() -> None:
    rows = [("A", 0, {"s": "1", "x": 1}), ("B", 1, {"s": "1", "x": 1})]
    assert same("PATTERN p: SEQ(A a, B b) WHERE a.s = b.x", events(rows)) == []
    assert len(same("PATTERN p: SEQ(A a, B b) WHERE a.s != b.x", events(rows))) == 1


def test_division_by_zero_is_false_and_modulo_follows_python() -> None:
    rows: list[tuple[str, float, dict[str, Any]]] = [("A", 0, {"x": -7, "y": 0}), ("B", 1, {"x": 3, "y": 2.5}), ("B", 2, {"x": -3, "y": 0})]
    got = same("PATTERN p: SEQ(A a, B b) WHERE a.x % b.x = 2", events(rows))
    assert [m["ids"] for m in got] == [{"a": 0, "b": 1}]  # Python: -7 % 3 == 2
    got = same("PATTERN p: SEQ(A a, B b) WHERE NOT (b.x / a.y > 0)", events(rows))
    assert [m["ids"] for m in got] == [{"a": 0, "b": 1}, {"a": 0, "b": 2}]  # x / 0 > 0 is false
    got = same("PATTERN p: SEQ(A a, B b) WHERE b.y * 2 - a.x > 11.5 OR -a.x = b.x", events(rows))
    assert [m["ids"] for m in got] == [{"a": 0, "b": 1}]


def test_input_spec_constant_type_positions_and_two_key_attributes() -> None:
    net = compile_text("PATTERN p: SEQ(T a, T b) WHERE [k, j] AND a.x < b.x WITHIN 3")
    t = pa.table({"ts": [0, 1, 1, 2, 3], "k": [1, 1, 2, 1, 1], "j": ["u", "u", "u", "v", "u"], "x": [1, 2, 3, 4, 5]})
    run = K.KernelRun(net, type_field=None, event_type="T")
    got = [m.to_dict() for m in K.to_matches(pa.concat_tables([run.push(t), run.flush()]), net)]
    engine = Engine(net)
    rows = t.to_pylist()
    want = [m.to_dict() for m in engine.run(Event("T", r["ts"], i, None, {"k": r["k"], "j": r["j"], "x": r["x"]}) for i, r in enumerate(rows))]
    assert got == want == [
        {"pattern": "p", "ids": {"a": 0, "b": 1}, "start": 0, "end": 1, "attrs": {}},
        {"pattern": "p", "ids": {"a": 0, "b": 4}, "start": 0, "end": 3, "attrs": {}},
        {"pattern": "p", "ids": {"a": 1, "b": 4}, "start": 1, "end": 3, "attrs": {}},
    ]


@pytest.mark.parametrize("keys", [
    [7, -3, 7, 2**62, -3, 5, 2, 5],  # a span too wide for a table: Arrow's hashing
    [7, -3, 7, 9, -3, 5, 2, 5],
])
def test_integer_keys_code_in_first_seen_order_across_batches(keys: list[int]) -> None:
    # a key column coded by a table over its range or by hashing gives one dictionary, in
    # first-seen order (a later batch's float 5.0 is the key 5, as in the engine's dict)
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] AND a.x < b.x")
    types = ["A", "A", "B", "A", "B", "A", "B", "B"]
    first = pa.table({"type": types, "ts": list(range(8)), "k": pa.array(keys, pa.int64()), "x": list(range(8))})
    second = pa.table({"type": ["B", "B"], "ts": [8, 9], "k": pa.array([5.0, 7.0]), "x": [20, 21]})
    third = pa.table({"type": ["A", "B"], "ts": [10, 11], "k": pa.array([5, 11], pa.int32()), "x": [0, 30]})
    run = K.KernelRun(net)
    out = pa.concat_tables([run.push(first), run.push(second), run.push(third), run.flush()])
    assert run.key_dicts[0] == {k: i for i, k in enumerate(dict.fromkeys(keys + [11]))}
    evs = [Event(r["type"], r["ts"], i, i, {"k": r["k"], "x": r["x"]})
           for i, r in enumerate(pa.concat_tables([first, second.cast(first.schema), third.cast(first.schema)]).to_pylist())]
    evs[8].attrs["k"], evs[9].attrs["k"] = 5.0, 7.0
    want = [m.to_dict() for m in Engine(net).run(evs)]
    assert [m.to_dict() for m in K.to_matches(out, net)] == want and len(want) == 5


KEYS = st.one_of(st.integers(-4, 4), st.integers(-2**63, 2**63 - 1), st.integers(2**62, 2**62 + 9000),
                 st.sampled_from([-2**63, 2**63 - 1]))


@settings(max_examples=examples(60), deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from("ABC"), KEYS), min_size=1, max_size=40), cut=st.integers(0, 40))
def test_integer_keys_coded_as_read_match_the_engine(rows: list[tuple[str, int]], cut: int) -> None:
    # IntKeys widens its table toward the values read (both ends of int64 included) and
    # keeps the values beyond it in its hash; the codes are the dictionary's
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k] WITHIN 30")
    t = pa.table({"type": [r[0] for r in rows], "ts": list(range(len(rows))), "k": pa.array([r[1] for r in rows], pa.int64())})
    evs = [Event(r[0], i, i, i, {"k": r[1]}) for i, r in enumerate(rows)]
    want = [m.to_dict() for m in Engine(net).run(evs)]
    run = K.KernelRun(net)
    out = pa.concat_tables([run.push(t.slice(0, cut)), run.push(t.slice(cut)), run.flush()])
    assert [m.to_dict() for m in K.to_matches(out, net)] == want
    read = [r[1] for r in rows if r[0] in "AB"]
    assert list(run.key_dicts[0]) == list(dict.fromkeys(read))  # (first read, first coded)


def test_a_spread_integer_key_column_is_coded_through_the_hash() -> None:
    # 5,000 sensor-like ids 10^12 apart: beyond any table, each coded once, then found in
    # the hash (not the dictionary: ~20 ns a row read)
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k]")
    run = K.KernelRun(net)
    spread = [i * 10**12 for i in range(5000)]
    run.push(pa.table({"type": ["A"] * 5000, "ts": list(range(5000)), "k": spread}))
    ints = run._int_keys[id(run.key_dicts[0])]
    assert ints.outside == 4999 and len(run.key_dicts[0]) == 5000  # (the first value starts the table)
    out = run.push(pa.table({"type": ["B", "B", "B"], "ts": [5000, 5001, 5002], "k": [3 * 10**12, 7, 0]}))
    assert out.column("a").to_pylist() == [3, 0] and len(run.key_dicts[0]) == 5001


def test_sensor_ids_within_the_table_span_are_coded_through_the_table() -> None:
    # Aarhus' 449 sensor ids span 51,876 values: within the table's 65,536 (no hash probe a
    # row); a value beyond that span goes to the hash
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE [k]")
    run = K.KernelRun(net)
    ids = [158_324 + i * 51_875 // 448 for i in range(449)]
    run.push(pa.table({"type": ["A"] * 449, "ts": list(range(449)), "k": ids}))
    ints = run._int_keys[id(run.key_dicts[0])]
    assert ints.outside == 0 and len(run.key_dicts[0]) == 449
    out = run.push(pa.table({"type": ["B", "B"], "ts": [449, 450], "k": [158_324 + 70_000, ids[5]]}))
    assert ints.outside == 1 and out.column("a").to_pylist() == [5]


@pytest.mark.parametrize("kind", ["string", "large_string", "dictionary"])
def test_type_column_kinds_give_the_same_codes(kind: str) -> None:
    # a text type column's rows are hashed in C, a dictionary column's looked up: empty rows
    # and types no pattern reads are no event of the net, in a sliced column too
    net = compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x")
    types = pa.array(["Z", "A", None, "B", "", "A", "AA", "B", "Bé"])
    col = {"string": types, "large_string": types.cast(pa.large_string()), "dictionary": types.dictionary_encode()}[kind]
    t = pa.table({"type": col, "ts": list(range(9)), "x": [0, 5, 0, 6, 0, 1, 0, 2, 9]}).slice(1)
    run = K.KernelRun(net, id_field=None)
    out = pa.concat_tables([run.push(t.slice(0, 3)), run.push(t.slice(3)), run.flush()])
    assert [m.ids for m in K.to_matches(out, net)] == [{"a": 0, "b": 2}, {"a": 4, "b": 6}]


_NAME = st.text(alphabet="ABab\u00e9_", min_size=0, max_size=19)


@settings(max_examples=examples(150), deadline=None)
@given(names=st.lists(_NAME, min_size=1, max_size=12, unique=True), rows=st.lists(_NAME, max_size=60),
       start=st.integers(0, 3), nulls=st.booleans())
def test_type_codes_are_a_lookup_of_the_rows_text(names: list[str], rows: list[str], start: int, nulls: bool) -> None:
    # the C lookup by a value's first and last 8 bytes gives each row its name's index: names
    # of 0-19 bytes (one and two words, and longer: memcmp), prefixes of one another, values
    # at the end of the data buffer (fewer than 8 bytes after them), sliced columns
    from petricep.kernel.run import _kernel

    values = [v if not (nulls and i % 5 == 3) else None for i, v in enumerate(names[:3] + rows)]
    arr = pa.array(values, pa.string()).slice(min(start, len(values)))
    want = [names.index(v) if v in names else -1 for v in arr.to_pylist()]
    out = np.full(len(arr), -7, dtype=np.int32)
    _kernel.TypeNames(names).codes(arr.buffers(), arr.offset, len(arr), False, out)
    assert out.tolist() == want


def test_match_table_columns_and_unbound_or_variables() -> None:
    net = compile_text("PATTERN p: SEQ(A a, OR(B b, C c))")
    run = K.KernelRun(net, id_field="id")
    out = run.push(table(events([("A", 0, {}), ("C", 1, {}), ("B", 2, {})])))
    assert out.column_names == ["pattern", "start", "end", "a", "b", "c"]
    assert out.to_pylist() == [
        {"pattern": "p", "start": 0, "end": 1, "a": 0, "b": None, "c": 1},
        {"pattern": "p", "start": 0, "end": 2, "a": 0, "b": 2, "c": None},
    ]
    assert [m.ids for m in K.to_matches(out, net)] == [{"a": 0, "c": 1}, {"a": 0, "b": 2}]
    assert run.stats == {
        "events": 3, "created": 3, "completed": 2, "composite": 0, "matches": {"p": 2}, "timeouts": {"p": 0}, "dropped": {"p": 0},
        "values": {"dict_size": 0, "dict_slack": 0, "dict_limit": 4096, "bigs_size": 0, "bigs_slack": 0, "value_compactions": 0,
                   "keys_size": 0, "keys_slack": 0, "key_compactions": 0},
    }


def test_time_going_backwards_is_the_engines_error() -> None:
    run = K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b)"))
    run.push(pa.table({"type": ["A"], "ts": [5]}))
    with pytest.raises(EventOrderError) as err:
        run.push(pa.table({"type": ["A", "B"], "ts": [5, 3]}))
    assert str(err.value) == "<events>:2: error: timestamp 3 is before the previous event's 5 (input must be in time order)"
    # rows of a type no pattern reads are checked too (the kernel takes runs of them at once)
    run = K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b)"))
    with pytest.raises(EventOrderError) as err:
        run.push(pa.table({"type": ["C", "A", "C", "C", "C", "B"], "ts": [1, 2, 4, 6, 5, 7]}))
    assert str(err.value) == "<events>:4: error: timestamp 5 is before the previous event's 6 (input must be in time order)"


def test_comparing_text_with_a_number_is_the_engines_error() -> None:
    run = K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b) WHERE a.s < b.x"))
    with pytest.raises(EvaluationError) as err:
        run.push(pa.table({"type": ["A", "B"], "ts": [5, 6], "s": ["u", "v"], "x": [3, 3]}))
    assert str(err.value) == "cannot compare 'u' < 3"


def test_missing_column_and_bad_ids() -> None:
    run = K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x"))
    with pytest.raises(ConfigError) as err:
        run.push(pa.table({"type": ["A"], "ts": [0]}))
    assert str(err.value) == "the input has no column 'x' (the kernel needs it)"
    run = K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b)"), id_field="id")
    with pytest.raises(ConfigError) as err:
        run.push(pa.table({"type": ["A"], "ts": [0], "id": ["e1"]}))
    assert str(err.value) == "the kernel needs integer ids in column 'id' (got string)"


@pytest.mark.parametrize(
    ("text", "tie", "reason"),
    [
        ("PATTERN p: SEQ(A a, B b) RETURN T(x = a.x)", "either", "covered"),
        ("PATTERN p: SEQ(A a, B b) WITHIN 3\nON TIMEOUT RETURN T(x = a.x)", "either", "covered"),
        ("PATTERN p: SEQ(A a, B+ b[]) WITHIN 3", "either", "covered"),
        ("PATTERN p: SEQ(A a, B+ b[], !(C c), D d) WITHIN 3", "arrival", "covered"),
        ("PATTERN p: SEQ(A a, B+ b[]) WITHIN 3 RETURN T(n = count(b[]))", "arrival", "covered"),
        # (merging puts y past p's list slot: merge._placed)
        ("PATTERN p: SEQ(A a, B+ b[]) WITHIN 3\nPATTERN q: SEQ(A x, C y) WITHIN 3", "arrival", "covered"),
        ("PATTERN p: SEQ(A a, B+ b[]) WITHIN 3\nPATTERN q: SEQ(A b, C c)", "arrival", "covered"),
        ("PATTERN p: SEQ(A a, !(C c), B b)", "either", "covered"),
        ("PATTERN p: SEQ(A a, B b) WHERE skip-till-next-match", "either", "tie rule 'either' needs skip-till-any-match"),
        ("PATTERN p: SEQ(A a, B b)", "sometimes", "tie rule 'sometimes' (the kernel covers arrival, strict, either)"),
        ("PATTERN p: SEQ(A a, B b)", "arrival", "covered"),
    ],
)
def test_supports_says_why(text: str, tie: str, reason: str) -> None:
    net = compile_text(text)
    assert K.supports(net, tie) == (reason == "covered", reason)
    if reason != "covered":
        with pytest.raises(ConfigError) as err:
            K.KernelRun(net, tie=tie)
        assert str(err.value) == f"the kernel does not run this net: {reason}"


def test_lowering_uses_superinstructions_and_frozen_arrays() -> None:
    from petricep.kernel import bytecode as L

    low = K.lower(compile_text("PATTERN p: SEQ(A a, B b) WHERE a.x < b.x AND 3 > b.y"))
    g = low.groups[0]
    codes = [g.code[g.cond_start[c]] for c in range(len(g.cond_start) - 1)]
    assert sorted(codes) == [L.OP_CMP_AA, L.OP_CMP_AC]
    ac = list(g.code[g.cond_start[codes.index(L.OP_CMP_AC)] :][:5])
    assert ac == [L.OP_CMP_AC, L.CMP_CODES["<"], 1, low.attrs.index("y"), 0]  # 3 > b.y read as b.y < 3
    assert sorted(low.attrs) == ["x", "y"] and low.types == ("A", "B")
    assert not g.code.flags.writeable
    with pytest.raises(AttributeError):
        g.nslots = 3  # type: ignore[misc]


def test_without_the_extension_one_warning_and_a_clear_refusal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(K, "_kernel", None)
    monkeypatch.setattr(K, "_warned", False)
    monkeypatch.setattr(K.run, "_kernel", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert K.available() is False
        assert K.available() is False
    assert [str(w.message) for w in caught] == [
        "petricep: the compiled kernel is not built (no C compiler or Cython at install time); the Python engine runs"
    ]
    with pytest.raises(ConfigError) as err:
        K.KernelRun(compile_text("PATTERN p: SEQ(A a, B b)"))
    assert str(err.value) == "the compiled kernel is not built (petricep.kernel.available() is False)"


def test_without_the_row_matcher_the_kernel_is_not_available(monkeypatch: pytest.MonkeyPatch) -> None:
    """The SQL row matcher is an extension module of its own: a build that made the firing
    kernel but not it runs every net on the Python engine (never the patterns on one engine
    and the queries on the other), said once."""
    from petricep.kernel import rowengine

    monkeypatch.setattr(K, "_rowmatch", None)
    monkeypatch.setattr(K, "_warned", False)
    monkeypatch.setattr(rowengine, "_rowmatch", None)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert K.available() is False
    assert len(caught) == 1
    from petricep.api import compile_sql

    net = compile_sql("SELECT * FROM t MATCH_RECOGNIZE (ORDER BY ts MEASURES A.id AS a PATTERN (A B) DEFINE B AS B.x > A.x)")
    with pytest.raises(ConfigError) as err:
        rowengine.KernelRowRuntime(net.rows[0])
    assert str(err.value) == "the compiled row matcher is not built (petricep.kernel.available() is False)"
