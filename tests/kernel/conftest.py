"""The kernel tests need the compiled extension (``python setup.py build_ext --inplace``)."""

import pytest

from petricep.kernel import run as kernel_run

if kernel_run._kernel is None:  # pragma: no cover - depends on the build
    pytest.skip("the compiled kernel is not built", allow_module_level=True)
