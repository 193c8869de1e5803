"""The class archive of Spark's JVM (petricep/spark/session.py): recorded only on top of the
JRE's base archive. A JVM asked to record one without it does not start ("DynamicDumpShared
Spaces is unsupported when base CDS archive is not loaded"): a ``jlink`` image made without
``--generate-cds-archive`` could not run Spark at all. No JVM is started here."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from petricep.spark import session


def _jre(root: Path, base: str | None) -> str:
    java = root / "jre" / "bin" / "java"
    java.parent.mkdir(parents=True)
    java.write_text("#!/bin/sh\n")
    java.chmod(0o755)
    (root / "jre" / "lib" / "server").mkdir(parents=True)
    if base:
        (root / "jre" / "lib" / "server" / base).write_bytes(b"")
    return str(java)


def test_a_jre_without_a_base_archive_records_none(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    java = _jre(tmp_path, None)
    monkeypatch.setattr(session, "java_executable", lambda: java)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PETRICEP_SPARK_CDS", raising=False)
    assert session._class_archive() == (None, None)


@pytest.mark.parametrize("base", ["classes.jsa", "classes_nocoops.jsa"])
def test_a_jre_with_its_base_archive_records_spark_s_classes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, base: str
) -> None:
    pytest.importorskip("pyspark")
    java = _jre(tmp_path, base)
    monkeypatch.setattr(session, "java_executable", lambda: java)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("PETRICEP_SPARK_CDS", raising=False)
    archive, record = session._class_archive()
    assert archive is not None and os.path.dirname(archive) == str(tmp_path / "cache" / "petricep")
    assert os.path.basename(archive).startswith("spark-classes-") and archive.endswith(".jsa")
    assert record == f"{archive}.{os.getpid()}.tmp"
