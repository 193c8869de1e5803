"""bench.instructions counts what callgrind sees below one C function of the kernel: that
function must exist under the name it gives (a renamed or inlined one would count nothing)."""

from __future__ import annotations

import importlib

import pytest

import petricep.kernel as kernel
from bench.instructions import SYMBOL


def test_the_counted_function_is_a_symbol_of_the_built_kernel() -> None:
    if not kernel.available():
        pytest.skip("the compiled kernel is not built")
    with open(importlib.import_module("petricep.kernel._kernel").__file__ or "", "rb") as fh:
        data = fh.read()
    assert (SYMBOL.encode() + b"\0") in data
