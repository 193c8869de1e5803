"""bench.spark_bundle's jar slimming: what a traced run loaded decides what a jar keeps."""

from __future__ import annotations

import zipfile
from pathlib import Path

from bench.spark_bundle import slim_jars


def _jar(path: Path, names: list[str]) -> None:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        for n in names:
            z.writestr(n, b"x" * 100)


def _names(path: Path) -> list[str]:
    with zipfile.ZipFile(path) as z:
        assert {i.compress_type for i in z.infolist()} <= {zipfile.ZIP_STORED}  # (stored: xz packs them)
        return sorted(z.namelist())


def test_a_jar_keeps_its_resources_and_the_loaded_classes_or_their_packages(tmp_path: Path) -> None:
    jars, logs = tmp_path / "jars", tmp_path / "logs"
    jars.mkdir()
    logs.mkdir()
    core = ["org/a/A.class", "org/a/B.class", "org/b/C.class", "META-INF/versions/11/org/a/A.class", "conf.properties"]
    _jar(jars / "spark-core_2.13-4.3.0.jar", core)
    _jar(jars / "netty-buffer-4.2.jar", ["io/n/A.class", "io/n/B.class", "io/m/C.class", "META-INF/x.txt"])
    _jar(jars / "netty-transport-native-epoll-4.2-linux-x86_64.jar", ["META-INF/native/libepoll.so"])
    _jar(jars / "unused.jar", ["u/U.class"])
    _jar(jars / "icu4j-78.3.jar", ["com/ibm/icu/impl/data/icudata/zone/a.res", "com/ibm/icu/impl/data/icudata/zone/res_index.res", "com/ibm/icu/impl/data/icudata/coll/a.res"])
    base = jars.resolve()
    (logs / "cl.1.txt").write_text(
        f"[0.1s][info][class,load] org.a.A source: jar:file:{base}/spark-core_2.13-4.3.0.jar!/\n"
        f"[0.2s][info][class,load] io.n.A source: file:{base}/netty-buffer-4.2.jar\n"
        f"[0.3s][info][class,load] com.ibm.icu.util.V source: file:{base}/icu4j-78.3.jar\n"
        "[0.4s][info][class,load] java.lang.Object source: shared objects file\n"
    )
    out = tmp_path / "out"
    slim_jars(logs, jars, out)
    assert sorted(p.name for p in out.iterdir()) == [
        "icu4j-78.3.jar",
        "netty-buffer-4.2.jar",
        "netty-transport-native-epoll-4.2-linux-x86_64.jar",
        "spark-core_2.13-4.3.0.jar",
    ]
    # a class-level jar: the loaded class (and its versioned copy), not its package's others
    assert _names(out / "spark-core_2.13-4.3.0.jar") == ["META-INF/versions/11/org/a/A.class", "conf.properties", "org/a/A.class"]
    # a package-level jar: the loaded class's whole package
    assert _names(out / "netty-buffer-4.2.jar") == ["META-INF/x.txt", "io/n/A.class", "io/n/B.class"]
    assert _names(out / "netty-transport-native-epoll-4.2-linux-x86_64.jar") == ["META-INF/native/libepoll.so"]
    assert _names(out / "icu4j-78.3.jar") == ["com/ibm/icu/impl/data/icudata/coll/a.res", "com/ibm/icu/impl/data/icudata/zone/res_index.res"]
