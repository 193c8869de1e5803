"""Match times printed the way the input wrote them (``petricep.output.times``): ISO text with
its separator, fraction digits and zone style, a strptime format, Arrow/pandas date-times in
their own zone; numbers stay numbers."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from petricep.output.times import time_formatter


def test_time_formatter_follows_the_input() -> None:
    ts = 1406879430.25  # 2014-08-01 07:50:30.25 UTC
    assert time_formatter("2014-08-01T07:50:00")(ts) == "2014-08-01T07:50:30.25"
    assert time_formatter("2014-08-01 07:50:00.000")(ts) == "2014-08-01 07:50:30.250"
    assert time_formatter("2014-08-01T07:50:00Z")(1406879400) == "2014-08-01T07:50:00Z"
    assert time_formatter("2014-08-01T09:50:00+02:00")(ts) == "2014-08-01T09:50:30.25+02:00"
    assert time_formatter("2014-08-01")(1406851200) == "2014-08-01"
    assert time_formatter("2014-08-01")(ts) == "2014-08-01T07:50:30.25"
    assert time_formatter("201408010750", "%Y%m%d%H%M")(1406879400) == "201408010750"
    assert time_formatter("07:50:00.000001", "%H:%M:%S.%f")(28230.25) == "07:50:30.250000"
    aware = pd.Timestamp("2014-08-01 09:50", tz="Europe/Copenhagen")
    assert time_formatter(aware)(ts) == "2014-08-01T09:50:30.25+02:00"
    assert time_formatter(datetime(2014, 8, 1, tzinfo=timezone.utc))(ts) == "2014-08-01T07:50:30.25+00:00"
    assert time_formatter(datetime(2014, 8, 1))(ts) == "2014-08-01T07:50:30.25"
    assert time_formatter(17)(ts) == ts
    assert time_formatter("17")(42) == 42
    assert time_formatter("2014-08-01T07:50:00")(None) is None
