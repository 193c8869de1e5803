"""``petricep check`` reports every error of every file (issue 41): three mistakes, one run."""

from __future__ import annotations

from pathlib import Path

import pytest

from petricep.cli import main


def test_check_reports_every_error_of_every_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    a = tmp_path / "a.pcep"
    a.write_text(
        "PATTERN one: SEQ(A a, B b) WHERE a.x > c.x WITHIN 1 s\n"
        "PATTERN two: SEQ(A a, B b WITHIN 1 s\n"
        "PATTERN three: SEQ(A a, B b) WITHIN 1 wk\n"
    )
    b = tmp_path / "b.sql"
    b.write_text("SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B) DEFINE C AS C.x > 2)\n")
    rc = main(["check", str(a), str(b)])
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")
    assert err == (
        f"{a}:1:40: error: unknown variable 'c'\n"
        "    PATTERN one: SEQ(A a, B b) WHERE a.x > c.x WITHIN 1 s\n"
        "                                           ^\n"
        f"{a}:2:27: error: unexpected 'WITHIN'; expected ')', ','\n"
        "    PATTERN two: SEQ(A a, B b WITHIN 1 s\n"
        "                              ^\n"
        f"{a}:3:39: error: unknown window unit 'wk' (use EVENTS, ms, s, min, h, d)\n"
        "    PATTERN three: SEQ(A a, B b) WITHIN 1 wk\n"
        "                                          ^\n"
        f"{b}:1:55: error: DEFINE names 'C', which PATTERN does not use\n"
        "    SELECT * FROM t MATCH_RECOGNIZE (PATTERN (A B) DEFINE C AS C.x > 2)\n"
        "                                                          ^\n"
    )


def test_check_of_a_good_file_and_a_bad_one_reports_the_bad_one(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = tmp_path / "good.pcep"
    good.write_text("PATTERN p: SEQ(A a, B b) WITHIN 1 s\n")
    bad = tmp_path / "bad.pcep"
    bad.write_text("PATTERN q: SEQ(A a, B b) WITHIN -1 s\n")
    rc = main(["check", str(good), str(bad)])
    out, err = capsys.readouterr()
    assert (rc, out) == (2, "")
    assert err == f"{bad}:1:34: error: window must be positive, got -1\n    PATTERN q: SEQ(A a, B b) WITHIN -1 s\n                                     ^\n"
