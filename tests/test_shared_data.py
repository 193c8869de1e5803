"""Full runs over the real data sets in ../shared/data (skipped when it is absent)."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from petricep.cli import main

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data"
AARHUS = SHARED / "aarhus_traffic" / "aarhus_traffic_2014-08-01_to_14.csv.gz"
NASDAQ = SHARED / "opencep_events" / "NASDAQ_MEDIUM.txt"


@pytest.mark.skipif(not AARHUS.exists(), reason="../shared/data is not here")
def test_aarhus_traffic_all_events(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "congestion.jsonl"
    rc = main(
        [
            "run", str(ROOT / "nets/aarhus_congestion.pcep"), "--events", str(AARHUS),
            "--type", "traffic", "--time-field", "TIMESTAMP", "--id-field", "_id", "-o", str(out), "--progress",
        ]
    )
    err = capsys.readouterr().err
    assert rc == 0
    assert "summary: 1508886 events read = 1508886 processed + 0 rejected + 0 late; 19108 matches" in err
    assert "  congestion: 15703 matches" in err
    assert "  lasting_jam: 3405 matches" in err
    assert "events: 1.51M ev" in err  # the progress bar reached the end
    first = json.loads(out.open().readline())
    assert first == {
        "pattern": "congestion",
        "ids": {"a": 20746186, "b": 20746358, "c": 20746689},
        "start": "2014-08-01T07:50:00",  # (JSON Lines write date-times as the input does)
        "end": "2014-08-01T08:00:00",
        "attrs": {"REPORT_ID": 158595, "speed_drop": 8, "vehicles": 34},
    }


@pytest.mark.skipif(not NASDAQ.exists(), reason="../shared/data is not here")
def test_opencep_nasdaq_rising_peaks(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "m.jsonl"
    rc = main(
        [
            "run", str(ROOT / "nets/nasdaq_rising_peaks.pcep"), "--events", str(NASDAQ),
            "--columns", "ticker,ts,open,peak,low,close,volume", "--type-field", "ticker",
            "--time-field", "ts", "--time-format", "%Y%m%d%H%M", "-o", str(out),
        ]
    )
    assert rc == 0
    matches = [json.loads(line) for line in out.read_text().splitlines()]
    err = capsys.readouterr().err
    assert f"summary: 1652 events read = 1652 processed + 0 rejected + 0 late; {len(matches)} matches" in err
    assert len(matches) == 237
    for m in matches:  # (start and end as the input writes its times: --time-format's text)
        start, end = (datetime.strptime(m[k], "%Y%m%d%H%M") for k in ("start", "end"))
        assert (end - start).total_seconds() <= 120


@pytest.mark.skipif(not NASDAQ.exists(), reason="../shared/data is not here")
@pytest.mark.parametrize("tie,count", [("arrival", 237), ("strict", 237), ("either", 1425)])
def test_nasdaq_engine_equals_reference_under_every_tie_rule(tie: str, count: int) -> None:
    from petricep.io.readers import InputSpec, open_events
    from petricep.lang.parser import parse_file
    from tests.engines import run_embedded
    from tests.reference import reference_run

    spec = InputSpec(
        path=str(NASDAQ), columns=("ticker", "ts", "open", "peak", "low", "close", "volume"),
        type_field="ticker", time_field="ts", time_format="%Y%m%d%H%M",
    )
    events = list(open_events(spec))
    patterns = list(parse_file(ROOT / "nets/nasdaq_rising_peaks.pcep").patterns)
    got = sorted(json.dumps(m, sort_keys=True) for m in run_embedded(patterns, events, tie))
    want = sorted(json.dumps(m, sort_keys=True) for m in reference_run(patterns, events, tie))
    assert got == want
    assert len(got) == count
