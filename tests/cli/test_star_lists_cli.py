"""`check` and `draw` on a list of no event or more (issue 42): the Kleene warning for `T*`
(not for `T{0,m}`) and the net's places. Here, not in tests/features, because it takes pytest
fixtures and the features' hand cases also run on key partitions without them."""

from __future__ import annotations

from pathlib import Path

import pytest

ABC = "PATTERN p: SEQ(A a, B* b[], C c)"


def test_check_warns_and_draw_writes_the_net(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from petricep.cli import main

    src = tmp_path / "star.pcep"
    src.write_text(f"{ABC} WITHIN 5\nPATTERN q: SEQ(A a, B{{0,2}} b[], C c) WITHIN 5\n")
    assert main(["check", str(src)]) == 0
    said = capsys.readouterr()
    warned = [line for line in (said.out + said.err).splitlines() if line.startswith("warning:")]
    assert warned == [
        "warning: pattern 'p': Kleene variable b[] (B*) under skip-till-any-match keeps every subset of its B events "
        "in the window: partial matches can double with each one (add LIMIT n PARTIAL MATCHES, a shorter WITHIN, "
        "or skip-till-next-match)"
    ]
    out = tmp_path / "star.dot"
    assert main(["draw", str(src), "-o", str(out), "--separate"]) == 0
    dot = out.read_text()
    assert all(s in dot for s in ("a;b{1,}", "B+ b[i]", "B b[2]", "a;b{2};c"))
