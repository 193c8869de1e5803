"""Ship petricep to a Spark cluster's executors: a ``--py-files`` archive.

    python -m petricep.spark.pack [OUT.zip]        # default: dist/petricep-<version>.zip

On a cluster the executors' Python must import petricep (its tasks unpickle petricep
objects). Installing it on every node works; without that, this archive does: pass it
to ``spark-submit --py-files OUT.zip app.py``, to the ``petricep`` command with
``PYSPARK_SUBMIT_ARGS="--py-files OUT.zip pyspark-shell"``, or set
``spark.submit.pyFiles``. Spark puts it first on the executors' ``sys.path``. The
archive holds petricep's Python sources and data files only (zip imports cannot load
compiled extensions; petricep's pure-Python paths are the reference), not its
dependencies (lark, pyarrow, numpy, pandas: the executors' Python needs them, as
PySpark's own Arrow functions do)."""

from __future__ import annotations

import argparse
import os
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".lark", ".typed")


def files(root: Path = PACKAGE) -> list[Path]:
    """The files of the archive: petricep's sources and data files, sorted."""
    out = []
    for dirpath, dirnames, names in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d != "__pycache__" and not d.startswith("."))
        out += [Path(dirpath) / n for n in sorted(names) if n.endswith(SUFFIXES)]
    return out


def pack(out: Path) -> int:
    """Write the archive (entries ``petricep/...``, fixed dates: the same sources give the
    same bytes); the number of files."""
    out.parent.mkdir(parents=True, exist_ok=True)
    entries = files()
    tmp = out.with_name(out.name + ".tmp")
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
        for path in entries:
            info = zipfile.ZipInfo(str(Path("petricep") / path.relative_to(PACKAGE)), (1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, path.read_bytes())
    os.replace(tmp, out)
    return len(entries)


def default_path() -> Path:
    try:
        v = version("petricep")
    except PackageNotFoundError:
        v = "dev"
    return Path("dist") / f"petricep-{v}.zip"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m petricep.spark.pack", description=__doc__.split("\n\n")[0])
    ap.add_argument("out", nargs="?", type=Path, help="the archive to write (default: dist/petricep-<version>.zip)")
    args = ap.parse_args(argv)
    out = args.out or default_path()
    n = pack(out)
    sys.stdout.write(f"{out}: {n} files; ship it with  spark-submit --py-files {out}  (or PYSPARK_SUBMIT_ARGS)\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
