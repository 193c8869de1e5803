"""The command line as a package: one module per command, the old names still importable,
the Spark commands imported only when used, no import of Spark from the shared helpers."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

import petricep.cli as cli
from petricep.cli import build_parser, main

ROOT = Path(__file__).resolve().parents[2]


def test_the_former_names_are_still_importable_from_petricep_cli() -> None:
    from petricep.api import sharing_lines, summary_lines, warnings_for
    from petricep.api.runner import check_columns
    from petricep.cli.inputs import input_spec, parse_duration

    assert cli.check_columns is check_columns and cli.warnings_for is warnings_for
    assert cli.sharing_lines is sharing_lines and cli.summary_lines is summary_lines
    assert cli.input_spec is input_spec and cli.parse_duration is parse_duration
    assert callable(cli.cmd_run) and callable(cli.cmd_check) and callable(cli.cmd_draw)


def test_no_cli_module_imports_spark_at_module_level() -> None:
    for path in sorted((ROOT / "petricep" / "cli").glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in tree.body:
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            assert not any("spark" in n for n in names), (path.name, names)


def test_an_embedded_run_imports_nothing_of_spark(tmp_path: Path) -> None:
    (tmp_path / "p.pcep").write_text("PATTERN rise: SEQ(A a, B b) WHERE [k] AND b.x > a.x WITHIN 10\n")
    (tmp_path / "ev.csv").write_text("type,ts,k,x\nA,1,1,5\nB,3,1,7\n")
    code = (
        "import sys\nfrom petricep.cli import main\n"
        f"rc = main(['run', {str(tmp_path / 'p.pcep')!r}, '--events', {str(tmp_path / 'ev.csv')!r}, "
        "'--type-field', 'type', '--time-field', 'ts', '-o', " + repr(str(tmp_path / "m.jsonl")) + "])\n"
        "spark = sorted(m for m in sys.modules if 'spark' in m)\n"
        "print(rc, spark)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env)
    assert proc.stdout == "0 []\n", proc.stderr
    assert (tmp_path / "m.jsonl").read_text().count("\n") == 1


def test_stream_is_parsed_by_the_spark_module_when_asked_for(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["stream", "p.pcep"])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.splitlines()[-1] == (
        "petricep stream: error: the following arguments are required: --input, --output, --checkpoint, "
        "--time-field, --pos-field"
    )
    args = build_parser().parse_args(["stream", "p.pcep", "--input", "i", "--output", "o", "--checkpoint", "c",
                                      "--type", "t", "--time-field", "ts", "--pos-field", "seq"])  # fmt: skip
    assert (args.command, args.input, args.pos_field) == ("stream", "i", "seq")


def test_an_unknown_command_lists_every_command(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["bogus"])
    assert capsys.readouterr().err.splitlines()[-1] == (
        "petricep: error: argument command: invalid choice: 'bogus' (choose from 'run', 'check', 'stream', 'archive', 'draw', 'plot')"
    )
