"""Builds petricep's compiled kernel (petricep/kernel/_kernel.pyx), its SQL row matcher
(petricep/kernel/_rowmatch.pyx) and its text readers
(petricep/io/_textparse.pyx) with Cython and the system C compiler. The extensions are
optional: when Cython or a compiler is missing, or compilation fails, the install still
succeeds and petricep runs on the Python engine (petricep.kernel.available() is False and says
so once) and reads text columns with Arrow alone. Everything else about the package is in pyproject.toml."""

from __future__ import annotations

import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


class OptionalBuildExt(build_ext):
    """build_ext that never fails the install: a kernel that cannot be built is left out."""

    def run(self) -> None:
        try:
            super().run()
        except Exception as e:  # noqa: BLE001 - any build failure leaves the extension out
            print(f"petricep: the compiled kernel was not built ({e}); the Python engine will run", file=sys.stderr)

    def build_extension(self, ext: Extension) -> None:
        try:
            super().build_extension(ext)
        except Exception as e:  # noqa: BLE001
            print(f"petricep: building {ext.name} failed ({e}); the Python engine will run", file=sys.stderr)


def extensions() -> list[Extension]:
    try:
        from Cython.Build import cythonize
    except ImportError:
        print("petricep: Cython is not installed; the compiled kernel is left out", file=sys.stderr)
        return []
    exts = [
        Extension("petricep.kernel._kernel", ["petricep/kernel/_kernel.pyx"], extra_compile_args=["-O3"]),
        Extension("petricep.kernel._rowmatch", ["petricep/kernel/_rowmatch.pyx"], extra_compile_args=["-O3"]),
        Extension("petricep.io._textparse", ["petricep/io/_textparse.pyx"], extra_compile_args=["-O3"]),
    ]
    try:
        return list(cythonize(exts, compiler_directives={"language_level": "3"}, quiet=True))
    except Exception as e:  # noqa: BLE001 - a Cython error: install without the kernel
        print(f"petricep: cythonizing the kernel failed ({e}); the Python engine will run", file=sys.stderr)
        return []


setup(ext_modules=extensions(), cmdclass={"build_ext": OptionalBuildExt})
