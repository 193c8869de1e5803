"""A self-contained Spark bundle for a machine with no package index and no Java (the 16-core
machine some sessions are lent; issue 16's ``local[2]``/``local[1]`` target needs more cores
than this 2-core machine has):

    python -m bench.spark_bundle [--out .dev] [--python /path/to/python3.12]

then, on that machine, from the repository root with ``.dev`` carried along:

    bash .dev/run.sh          # results under $OUT: spark_csv.txt, spark_x8.txt, spark_gz.txt

The bundle must fit the machine's 64 MiB transfer with the working tree, so it holds:

* a JRE made by ``jlink`` from this machine's JDK (the modules Spark loads, English locales);
* Spark's jars slimmed to what a run of :mod:`bench.spark_aarhus` loads: this builder first
  runs the worker here (``.gz`` and plain CSV input) with the JVM's class-load log on, then
  keeps, per jar, every non-class resource and the classes of every package a class was
  loaded from (only the loaded classes themselves for the largest jars, listed in
  :data:`CLASS_LEVEL`), plus the class-less native jars (Netty's epoll: without it Netty
  falls back to classes the run never loaded); the ICU data Spark never reads is left out;
* pyspark's Python side, py4j and lark (the machine has pyarrow, pandas and numpy);
* the compiled extensions built for ``--python`` (the machine's Python is 3.12);
* the Aarhus file as xz (the script gzips it again where the bench expects it, and writes
  ``aarhus_x8.csv``: each row eight times, sensor and id made distinct per copy, so that
  the work per core outgrows Spark's fixed costs at 16 cores).

A jar left out shows up as ``NoClassDefFoundError`` when the session starts: the bench
prints the failed worker's stderr (:func:`bench.spark_aarhus.spark_runs`), so the trace comes back.
"""

from __future__ import annotations

import argparse
import collections
import gzip
import lzma
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import zipfile
from pathlib import Path

from bench.spark_aarhus import DATA, ROOT, spark_runs

MODULES = (
    "java.base,java.management,jdk.jfr,jdk.management,java.xml,java.logging,jdk.security.auth,"
    "jdk.management.jfr,jdk.net,java.naming,java.sql,java.security.jgss,java.desktop,jdk.localedata,"
    "jdk.unsupported,jdk.zipfs,java.scripting,jdk.crypto.ec,java.instrument,jdk.charsets,"
    "jdk.incubator.vector"  # (Spark's launcher adds --add-modules=jdk.incubator.vector)
)
CLASS_LEVEL = (
    "spark-catalyst",
    "spark-sql_",
    "spark-core",
    "scala-library",
    "scala-reflect",
    "spark-sql-api",
    "icu4j",
    "hadoop-client-api",
    "hadoop-client-runtime",
)
EXTENSIONS = ("kernel/_kernel", "kernel/_rowmatch", "io/_textparse")  # under petricep/
NATIVE_JARS = ("netty-transport-native-epoll-*-linux-x86_64.jar",)
ICU_UNREAD = re.compile(
    r"com/ibm/icu/impl/data/icudata/(brkitr|translit|rbnf|curr|lang|region|unit|zone)/(?!res_index\.res$|pool\.res$)"
)
LOADED = re.compile(r"\] (\S+) source: (?:jar:)?file:(\S+?\.jar)")
LIMIT = 63 * 2**20  # the bundle and the working tree: under the machine's 64 MiB, with room for untracked files


def trace(logs: Path, csv: Path) -> None:
    """Runs the bench's Spark worker on the .gz and on plain CSV with class loading logged:
    the option goes after petricep's ``-Xlog:disable`` (a ``JAVA_TOOL_OPTIONS`` one comes
    before it and logs nothing), and without the class archive (classes mapped from it name
    no jar)."""
    java = {"BENCH_DRIVER_JAVA_OPTIONS": f"-Xlog:class+load=info:file={logs}/cl.%p.txt", "PETRICEP_SPARK_CDS": "0"}
    for data in (str(DATA), str(csv)):
        spark_runs("local[2]", data, 2, env=java)


def slim_jars(logs: Path, jars: Path, out: Path) -> None:
    """Writes each jar a run loaded from, slimmed (stored, so that xz packs the classes)."""
    packages: dict[str, set[str]] = collections.defaultdict(set)
    classes: dict[str, set[str]] = collections.defaultdict(set)
    for log in logs.glob("cl.*.txt"):
        for line in log.read_text(errors="replace").splitlines():
            m = LOADED.search(line)
            if m:
                jar, name = os.path.basename(m.group(2)), m.group(1).replace(".", "/")
                packages[jar].add(name.rsplit("/", 1)[0])
                classes[jar].add(name + ".class")
    natives = {p.name for pattern in NATIVE_JARS for p in jars.glob(pattern)}
    out.mkdir(parents=True)
    for jar in sorted(set(packages) | natives):
        fine = jar.startswith(CLASS_LEVEL)
        with zipfile.ZipFile(jars / jar) as zin, zipfile.ZipFile(out / jar, "w", zipfile.ZIP_STORED) as zout:
            for info in zin.infolist():
                name = info.filename
                if ICU_UNREAD.match(name):
                    continue
                if name.endswith(".class") and jar not in natives and not name.endswith("module-info.class"):
                    base = re.sub(r"^META-INF/versions/\d+/", "", name)
                    if base not in classes[jar] if fine else base.rsplit("/", 1)[0] not in packages[jar]:
                        continue
                zout.writestr(info, zin.read(name), compress_type=zipfile.ZIP_STORED)


def python_side(site: Path) -> None:
    """pyspark without its jars, ML, pandas-on-Spark, examples and tests; py4j; lark."""
    import lark
    import py4j
    import pyspark

    for module in (pyspark, py4j, lark):
        root = Path(str(module.__file__)).parent

        def skip(folder: str, names: list[str], root: Path = root) -> set[str]:
            top = {"jars", "examples", "ml", "mllib", "pandas", "licenses", "data"} if Path(folder) == root else set()
            lib = {"lib"} if Path(folder) == root / "python" else set()
            return {n for n in names if n in top | lib or n in ("tests", "__pycache__")}

        shutil.copytree(root, site / root.name, ignore=skip)


def kernel(python: str, out: Path) -> None:
    """The compiled extensions (the kernel, the row matcher, the text parsers) for ``python``
    (another minor version than this one, usually), flat under ``out``: ``run.sh`` puts each
    back in its package by name."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [python, "setup.py", "build_ext", "--build-lib", tmp, "--build-temp", f"{tmp}/t"]
        done = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        built = list(Path(tmp).rglob("_*.so"))
        if done.returncode or len(built) < len(EXTENSIONS):  # (setup.py leaves one out, quietly, without Cython)
            raise SystemExit(f"extensions not built for {python} (is Cython installed there?):\n{done.stderr[-2000:]}")
        for so in built:
            shutil.copy(so, out / so.name)
            subprocess.run(["strip", str(out / so.name)], check=False)


def pack(src: Path, name: str, out: Path) -> None:
    with tarfile.open(out / f"{name}.tar.xz", "w:xz", preset=9) as t:
        t.add(src, arcname=name)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.spark_bundle", description=__doc__)
    ap.add_argument("--out", default=str(ROOT / ".dev"))
    ap.add_argument("--python", default="/root/.pyenv/versions/3.12.1/bin/python", help="the target's Python, to build the kernel (Cython installed in it)")
    args = ap.parse_args(argv)
    import pyspark

    out = Path(args.out)
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        csv = work / "aarhus.csv"
        with gzip.open(DATA, "rb") as src, open(csv, "wb") as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
        (work / "logs").mkdir()
        print("tracing the classes a run loads ...", flush=True)
        trace(work / "logs", csv)
        java = os.environ.get("JAVA_HOME")
        java_home = Path(java) if java else Path(shutil.which("java") or "java").resolve().parents[1]
        subprocess.run(
            [str(java_home / "bin" / "jlink"), "--add-modules", MODULES, "--include-locales=en,en-US", "--strip-debug",
             "--no-header-files", "--no-man-pages", "--compress=0", "--output", str(work / "jre")],
            check=True,
        )  # fmt: skip
        python_side(work / "site")
        slim_jars(work / "logs", Path(str(pyspark.__file__)).parent / "jars", work / "site" / "pyspark" / "jars")
        print("packing ...", flush=True)
        pack(work / "jre", "jre", out)
        pack(work / "site", "site", out)
        with open(csv, "rb") as src, lzma.open(out / "aarhus.csv.xz", "wb", preset=9) as dst:
            shutil.copyfileobj(src, dst, 1 << 22)
    kernel(args.python, out)
    (out / "run.sh").write_text(RUN)
    total = sum(p.stat().st_size for p in out.iterdir())
    tracked = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    tree = sum((ROOT / f).stat().st_size for f in tracked.decode().split("\0") if f and (ROOT / f).is_file())
    fits = total + tree < LIMIT
    print(f"{out}: {total / 2**20:.1f} MiB, with the tree {(total + tree) / 2**20:.1f} MiB" + ("" if fits else " (too big)"))
    return 0 if fits else 1


RUN = r"""#!/bin/bash
# Written by bench/spark_bundle.py. Unpacks the JRE, Spark and the data, then runs the benches.
set -u -o pipefail
T0=$(date +%s)
PY=${PY:-python3}
D=/tmp/d
mkdir -p $D ../shared/data/aarhus_traffic
$PY - <<'EOF'
import gzip, lzma, shutil, tarfile
for name in ("jre", "site"):
    with tarfile.open(f".dev/{name}.tar.xz", "r:xz") as t:
        t.extractall("/tmp/d")
with lzma.open(".dev/aarhus.csv.xz") as src, open("/tmp/d/aarhus.csv", "wb") as dst:
    shutil.copyfileobj(src, dst, 1 << 22)
with open("/tmp/d/aarhus.csv", "rb") as src, gzip.open("../shared/data/aarhus_traffic/aarhus_traffic_2014-08-01_to_14.csv.gz", "wb", 6) as dst:
    shutil.copyfileobj(src, dst, 1 << 22)
EOF
for so in .dev/_kernel.*.so .dev/_rowmatch.*.so; do cp $so petricep/kernel/; done
cp .dev/_textparse.*.so petricep/io/
export JAVA_HOME=$D/jre SPARK_HOME=$D/site/pyspark PYTHONPATH=$D/site:$PWD PATH=$D/jre/bin:$PATH
export PYSPARK_PYTHON=$(command -v $PY) PYTHONUNBUFFERED=1
echo "setup $(( $(date +%s) - T0 )) s; $(nproc) cores; $($PY -V); $(java -version 2>&1 | head -1); load $(cat /proc/loadavg)"
$PY -c "import pyarrow, pandas, numpy, petricep.kernel as k; print('pyarrow', pyarrow.__version__, 'pandas', pandas.__version__, 'numpy', numpy.__version__, 'kernel', k.available())"
# three parts, each left out where its variable is set empty: the plain CSV, the x8 file, the .gz
CSV=${CSV_MASTERS-local[1],local[2],local[4],local[8],local[16]}
X8=${X8_MASTERS-local[1],local[2],local[16]}
GZ=${GZ_MASTERS-local[1],local[16]}
if [ -n "$CSV" ]; then
  $PY -m bench.spark_aarhus --data $D/aarhus.csv --masters "$CSV" --repeat "${REPEAT:-2}" --no-breakdown 2>&1 | tee $OUT/spark_csv.txt
  echo "elapsed $(( $(date +%s) - T0 )) s; load $(cat /proc/loadavg)"
fi
if [ -n "$X8" ]; then
$PY - <<'EOF'
import numpy as np, pyarrow as pa, pyarrow.compute as pc, pyarrow.csv as csv
text = {name: pa.string() for name in ("REPORT_ID", "_id", "TIMESTAMP")}
t = csv.read_csv("/tmp/d/aarhus.csv", convert_options=csv.ConvertOptions(column_types=text))
copies = []
for k in range(8):
    tag = pa.scalar(f"{k:02d}")
    copies.append(t.set_column(t.schema.get_field_index("REPORT_ID"), "REPORT_ID", pc.binary_join_element_wise(t["REPORT_ID"], tag, ""))
                   .set_column(t.schema.get_field_index("_id"), "_id", pc.binary_join_element_wise(t["_id"], tag, "")))
x8 = pa.concat_tables(copies).take(np.arange(8 * t.num_rows).reshape(8, t.num_rows).T.ravel())  # row by row: time order kept
csv.write_csv(x8, "/tmp/d/aarhus_x8.csv", csv.WriteOptions(quoting_style="none"))
print(f"aarhus_x8.csv: {x8.num_rows:,} rows")
EOF
  $PY -m bench.spark_aarhus --data $D/aarhus_x8.csv --masters "$X8" --repeat "${REPEAT:-2}" --no-breakdown 2>&1 | tee $OUT/spark_x8.txt
  echo "elapsed $(( $(date +%s) - T0 )) s; load $(cat /proc/loadavg)"
fi
if [ -n "$GZ" ]; then
  $PY -m bench.spark_aarhus --masters "$GZ" --repeat "${REPEAT:-2}" 2>&1 | tee $OUT/spark_gz.txt
  echo "elapsed $(( $(date +%s) - T0 )) s; load $(cat /proc/loadavg)"
fi
"""


if __name__ == "__main__":
    raise SystemExit(main())
