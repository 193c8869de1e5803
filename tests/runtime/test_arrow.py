"""petricep.runtime.arrow gives what the pyarrow calls it replaces give, without pandas."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from petricep.runtime.arrow import bool_values, number_array, number_view, scalar

ROOT = Path(__file__).resolve().parents[2]

NUMBER_TYPES = [pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(), pa.uint64(), pa.float32(), pa.float64()]


@pytest.mark.parametrize("t", NUMBER_TYPES, ids=str)
def test_number_view_is_to_numpy(t: pa.DataType) -> None:
    arr = pa.array([1, 2, 3, 4, 5, 6, 7], t)
    for a in (arr, arr.slice(3), arr.slice(2, 3), arr.slice(7)):
        got = number_view(a)
        want = a.to_numpy()
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
        assert not got.flags.writeable


def test_number_view_refuses_nulls_and_other_types() -> None:
    with pytest.raises(TypeError):
        number_view(pa.array([1, None], pa.int64()))
    with pytest.raises(TypeError):
        number_view(pa.array(["a"]))


def test_bool_values_is_to_numpy() -> None:
    arr = pa.array([i % 3 == 0 for i in range(21)])
    for a in (arr, arr.slice(5), arr.slice(3, 11), arr.slice(21)):
        got = bool_values(a)
        want = a.to_numpy(zero_copy_only=False)
        assert got.dtype == want.dtype and got.tolist() == want.tolist()
    with pytest.raises(TypeError):
        bool_values(pa.array([True, None]))


@pytest.mark.parametrize(
    ("value", "t"),
    [("", pa.string()), ("stock1", pa.string()), ("héllo", pa.large_string()), (7, pa.int32()),
     (-3, pa.int64()), (2.5, pa.float64()), (None, pa.string()), (None, pa.float32())],
)
def test_scalar_is_pa_scalar(value: object, t: pa.DataType) -> None:
    got = scalar(value, t)
    assert got.type == t and got.equals(pa.scalar(value, t))


def test_scalar_in_compute() -> None:
    arr = pa.array(["a", "", "b", ""])
    assert pc.equal(arr, scalar("", pa.string())).to_pylist() == [False, True, False, True]
    idx = pa.array([0, None, 1], pa.int32())
    assert pc.fill_null(idx, scalar(9, idx.type)).to_pylist() == [0, 9, 1]


def test_number_array_is_pa_array() -> None:
    for values, t in (([3, 1, 2], pa.int64()), (np.arange(5, dtype=np.int64), pa.int64()), ([0.5, 1.5], pa.float64()), ([], pa.int64())):
        got = number_array(values, t)
        assert got.equals(pa.array(values, t))


def test_none_of_them_imports_pandas() -> None:
    code = (
        "import sys, numpy as np, pyarrow as pa, pyarrow.compute as pc\n"
        "from petricep.runtime.arrow import bool_values, number_array, number_view, scalar\n"
        "a = number_array([1, 2, 3], pa.int64())\n"
        "number_view(a); bool_values(pc.equal(a, scalar(2, pa.int64()))); scalar('x', pa.string())\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
