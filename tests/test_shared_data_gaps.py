"""nets/timed_stall_recovery.pcep (a timed sequence, issue 42) over a day of the real Aarhus
traffic data (../shared/data; skipped when it is absent): its matches, exactly, on the kernel
and on the Python engine, and the same matches from the pattern with its gaps written as WHERE
conditions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from pyarrow import csv

import petricep

ROOT = Path(__file__).resolve().parents[1]
AARHUS = ROOT.parent / "shared" / "data" / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NET = ROOT / "nets" / "timed_stall_recovery.pcep"

WHERE_FORM = """
PATTERN stall_recovery: SEQ(traffic a, traffic b, traffic c)
WHERE [REPORT_ID]
AND a.avgSpeed > 90
AND b.avgSpeed < 15 AND b.vehicleCount > 0
AND c.avgSpeed > 50
AND b.ts - a.ts >= 300 AND b.ts - a.ts <= 1800 AND c.ts - b.ts >= 0 AND c.ts - b.ts <= 1200
WITHIN 1 h
RETURN stall(REPORT_ID = a.REPORT_ID, stalled = b.ts - a.ts, recovered = c.ts - b.ts)
"""


def _day(day: str) -> pa.Table:
    table = csv.read_csv(AARHUS, convert_options=csv.ConvertOptions(column_types={"TIMESTAMP": pa.string()}))
    return table.filter(pc.starts_with(table["TIMESTAMP"], day))


@pytest.mark.skipif(not AARHUS.exists(), reason="../shared/data is not here")
def test_stall_recovery_on_a_day_of_aarhus_traffic() -> None:
    events = _day("2014-08-04")
    options: dict[str, Any] = {"type": "traffic", "time_field": "TIMESTAMP", "id_field": "_id"}
    gapped = petricep.match(events, str(NET), **options)
    where = petricep.match(events, WHERE_FORM, **options)
    got = [(m["a"], m["b"], m["c"], str(m["start"]), str(m["end"]), m["REPORT_ID"], m["stalled"], m["recovered"]) for m in gapped.to_pylist()]
    # one sensor (190338) at 13:20 above 90 km/h, stalled at 13:35 and 13:40, moving at 13:45 and 13:50
    assert got == [
        (21148285, 21149632, 21150530, "2014-08-04 13:20:00", "2014-08-04 13:45:00", 190338, 900, 600),
        (21148285, 21150081, 21150530, "2014-08-04 13:20:00", "2014-08-04 13:45:00", 190338, 1200, 300),
        (21148285, 21149632, 21150979, "2014-08-04 13:20:00", "2014-08-04 13:50:00", 190338, 900, 900),
        (21148285, 21150081, 21150979, "2014-08-04 13:20:00", "2014-08-04 13:50:00", 190338, 1200, 600),
    ]
    assert gapped.to_pylist() == where.to_pylist()
    assert petricep.match(events, str(NET), engine="python", **options).to_pylist() == gapped.to_pylist()
