"""A run's program: every kind of pattern survives building and extending a net, and errors
found over the whole program (after each file was checked) still point into the source."""

from __future__ import annotations

import pickle

import pytest

from petricep.errors import PatternError, PatternSemanticError
from petricep.events import Event
from petricep.lang.parser import parse_sql, parse_text
from petricep.merge import build_net, extend_net
from petricep.runtime.engine import Engine

LIVE = "PATTERN p: SEQ(A a, B b) WITHIN 10"
ARCHIVED = "PATTERN h: SEQ(ARCHIVED S s, B b) WHERE b.ts - s.ts <= 5"
SQL = "SELECT * FROM T MATCH_RECOGNIZE (ORDER BY ts MEASURES A.id AS a PATTERN (A B) DEFINE B AS B.x > A.x) AS q"


def _net():
    live = parse_text(LIVE + "\n" + ARCHIVED, "<p>").patterns
    return build_net(list(live), queries=list(parse_sql(SQL, "<q>").queries))


def test_extend_net_keeps_sql_queries_and_archived_patterns() -> None:
    net = _net()
    assert [r.name for r in net.rows] == ["q"] and [h.name for h in net.history] == ["h"]
    more = extend_net(net, list(parse_text("PATTERN r: SEQ(B b, C c) WITHIN 3", "<r>").patterns))
    assert [p.name for p in more.patterns] == ["p", "h", "r"]
    assert [r.name for r in more.rows] == ["q"]
    assert more.rows == net.rows and more.history == net.history
    # an added ARCHIVED pattern's split joins the running ones
    again = extend_net(more, list(parse_text("PATTERN g: SEQ(ARCHIVED S s, C c) WHERE c.ts - s.ts <= 2", "<g>").patterns))
    assert [h.name for h in again.history] == ["h", "g"]
    assert [p.name for p in again.patterns] == ["p", "h", "r", "g"] and [p.index for p in again.patterns] == [0, 1, 2, 3]


def test_a_running_engines_sql_query_survives_extend() -> None:
    engine = Engine(build_net(list(parse_text(LIVE, "<p>").patterns), queries=list(parse_sql(SQL, "<q>").queries)))
    engine.extend(extend_net(engine.net, list(parse_text("PATTERN r: SEQ(B b, C c) WITHIN 3", "<r>").patterns)))
    assert engine.pattern_names == ["p", "r", "q"]
    events = [Event("T", i, i, i, {"x": i}) for i in range(3)] + [Event("B", 3, 3, 3, {}), Event("C", 4, 4, 4, {})]
    got = [(m.pattern, m.ids) for e in events for m in engine.push(e)] + [(m.pattern, m.ids) for m in engine.flush()]
    # the query keeps matching after the extension, the new pattern matches what follows it
    assert got == [("q", {"A": 0, "B": 1}), ("r", {"b": 3, "c": 4})]


def test_extend_net_refuses_a_name_already_running_with_a_caret() -> None:
    net = _net()
    text = "PATTERN q: SEQ(B b, C c) WITHIN 3"
    with pytest.raises(PatternSemanticError) as err:
        extend_net(net, list(parse_text(text, "new.pcep").patterns))
    assert str(err.value) == (
        "new.pcep:1:1: error: a pattern named 'q' is already running\n    PATTERN q: SEQ(B b, C c) WITHIN 3\n    ^"
    )


def test_an_error_found_while_merging_files_shows_its_line_and_caret() -> None:
    # each file checks alone; only the program (both files together) has the cycle
    first = parse_text("PATTERN up: SEQ(A a, Y y)\n  RETURN X(v = a.v)", "one.pcep").patterns
    second = parse_text("# producer of Y\nPATTERN down: SEQ(X x, B b) RETURN Y(v = x.v)", "two.pcep").patterns
    with pytest.raises(PatternSemanticError) as err:
        build_net(list(first) + list(second))
    assert str(err.value) == (
        "one.pcep:1:1: error: patterns form a cycle through RETURN types: up -> down -> up\n"
        "    PATTERN up: SEQ(A a, Y y)\n"
        "    ^"
    )


def test_a_conflict_group_naming_a_pattern_of_no_file_points_at_the_group() -> None:
    f = parse_text("PATTERN p: SEQ(A a, B b)\n\nCONFLICT  grab: p, gone", "c.pcep")
    with pytest.raises(PatternSemanticError) as err:
        build_net(list(f.patterns), conflicts=list(f.conflicts))
    assert str(err.value) == (
        "c.pcep:3:11: error: conflict group 'grab' names unknown pattern 'gone'\n"
        "    CONFLICT  grab: p, gone\n"
        "              ^"
    )


def test_errors_pickle_and_draw_the_caret_after_the_round_trip() -> None:
    with pytest.raises(PatternError) as err:
        parse_text("PATTERN SEQ(A a, B b) WHERE c.x > 1", "e.pcep")
    back = pickle.loads(pickle.dumps(err.value))
    assert type(back) is type(err.value) and str(back) == str(err.value)
    assert str(back) == (
        "e.pcep:1:29: error: unknown variable 'c'\n    PATTERN SEQ(A a, B b) WHERE c.x > 1\n                                ^"
    )
    assert back.format() == str(back) and (back.file, back.line, back.column) == ("e.pcep", 1, 29)
