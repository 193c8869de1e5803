"""Compiler: pattern AST -> CEP-PN basic structures."""

from petricep.compile.compiler import compile_pattern
from petricep.compile.net import Net, PatternNet

__all__ = ["compile_pattern", "Net", "PatternNet"]
