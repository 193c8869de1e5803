"""The event archive and history-aware patterns (paper 004): processed events are appended
in batches to a Parquet dataset; patterns with ``ARCHIVED`` variables look their history up
there, triggered by completed live matches (LLAA) or by groups of them (SLLAA)."""

from petricep.archive.store import Archive

__all__ = ["Archive"]
