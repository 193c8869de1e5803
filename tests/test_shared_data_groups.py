"""nets/stop_and_go.pcep (a repeated group, issue 42) over a morning of the real Aarhus traffic
data (../shared/data; skipped when it is absent): its matches, exactly, on the kernel (which
covers the net) and on the Python engine, and the same waves found by a plain scan of each
sensor's consecutive readings (no petricep code)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyarrow import csv

import petricep
from petricep.api import compile_files
from petricep.cli.main import main
from petricep.kernel import supports

ROOT = Path(__file__).resolve().parents[1]
AARHUS = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NET = ROOT / "nets" / "stop_and_go.pcep"


def _morning() -> pa.Table:
    table = csv.read_csv(AARHUS, convert_options=csv.ConvertOptions(column_types={"TIMESTAMP": pa.string()}))
    return table.filter(pc.starts_with(table["TIMESTAMP"], "2014-08-04T0"))  # 00:00 to 09:59


def _scan(events: pa.Table) -> list[tuple[Any, ...]]:
    """Every run of a sensor's consecutive readings crawl, moving, crawl, moving[, ...],
    moving that fits in an hour: (wave ids, last id, sensor), by the pattern's words."""
    rows: dict[int, list[dict[str, Any]]] = {}
    for r in events.to_pylist():
        rows.setdefault(r["REPORT_ID"], []).append(r)
    out = []
    for sensor, rs in rows.items():
        for i in range(len(rs)):
            for waves in range(2, (len(rs) - i - 1) // 2 + 1):
                part = rs[i : i + 2 * waves + 1]
                crawl = all(part[2 * q]["avgSpeed"] < 30 and part[2 * q]["vehicleCount"] > 0 for q in range(waves))
                moving = all(part[2 * q + 1]["avgSpeed"] > 40 for q in range(waves)) and part[-1]["avgSpeed"] > 40
                if crawl and moving and _minutes(part[-1]) - _minutes(part[0]) <= 60:
                    out.append((tuple((part[2 * q]["_id"], part[2 * q + 1]["_id"]) for q in range(waves)), part[-1]["_id"], sensor))
    return sorted(out)


def _minutes(r: dict[str, Any]) -> int:
    hh, mm = r["TIMESTAMP"][11:16].split(":")
    return int(hh) * 60 + int(mm)


@pytest.fixture(scope="module")
def morning() -> tuple[pa.Table, list[tuple[Any, ...]]]:
    """The morning's readings and their scan, once for both engines (the scan is the slow part)."""
    events = _morning()
    return events, _scan(events)


def test_the_kernel_covers_the_net(capsys: pytest.CaptureFixture[str]) -> None:
    assert supports(compile_files([str(NET)])) == (True, "covered")
    assert main(["check", str(NET)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == "kernel: covers this net (run fires it on the kernel)"


@pytest.mark.skipif(not AARHUS.exists(), reason="../shared/data is not here")
@pytest.mark.parametrize("engine", ["kernel", "python"])
@pytest.mark.xdist_group("stop_and_go")  # (one worker: the morning and its scan once)
def test_stop_and_go_waves_on_a_morning_of_aarhus_traffic(engine: str, morning: tuple[pa.Table, list[tuple[Any, ...]]]) -> None:
    events, scan = morning
    got = petricep.match(events, str(NET), type="traffic", time_field="TIMESTAMP", id_field="_id", engine=engine).to_pylist()
    rows = [(m["g"], m["e"], str(m["start"]), str(m["end"]), m["REPORT_ID"], m["waves"], m["slowest"]) for m in got]
    # four sensors, two waves each (20 minutes of readings), the slowest crawl 15 to 29 km/h
    assert rows == [
        ([{"s": 21097970, "m": 21098419}, {"s": 21098868, "m": 21099317}], 21099766, "2014-08-04 04:00:00", "2014-08-04 04:20:00", 182712, 2, 15),
        ([{"s": 21102426, "m": 21102875}, {"s": 21103324, "m": 21103773}], 21104222, "2014-08-04 04:50:00", "2014-08-04 05:10:00", 180790, 2, 25),
        ([{"s": 21107757, "m": 21108206}, {"s": 21108655, "m": 21109104}], 21109553, "2014-08-04 05:50:00", "2014-08-04 06:10:00", 184621, 2, 29),
        ([{"s": 21118426, "m": 21118875}, {"s": 21119324, "m": 21119773}], 21120222, "2014-08-04 07:50:00", "2014-08-04 08:10:00", 179202, 2, 26),
    ]
    scanned = [(tuple((w["s"], w["m"]) for w in m["g"]), m["e"], m["REPORT_ID"]) for m in got]
    assert sorted(scanned) == scan
