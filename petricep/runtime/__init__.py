"""Runtime: the token-firing loop over per-key markings."""

from petricep.runtime.engine import Engine, Match, RunStats

__all__ = ["Engine", "Match", "RunStats"]
