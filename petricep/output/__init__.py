"""The output stage: how matches leave a run.

Why one package: a match leaves as JSON Lines text, as a table (Arrow; Parquet or CSV by the
file's extension) or as a file written whole or not at all, whichever engine found it and
whichever front end (command line, library, Spark) asked. Every one of those ways is here:

* :mod:`~petricep.output.table`: the match table's layout (fixed from the net before any match
  exists), matches as a table, and the table's files (Parquet, CSV, JSON Lines by extension);
* :mod:`~petricep.output.jsonl`: JSON Lines text, a match at a time or a record batch at a time;
* :mod:`~petricep.output.files`: output files written into a temporary file and renamed into
  place on commit, and the check that no output names an input;
* :mod:`~petricep.output.matchfile`: ``petricep run``'s match file, chosen by format or extension.

The kernel's matches arrive as record batches (:mod:`petricep.kernel.batches`, in the kernel's
stage: the layering lets no earlier stage import this one).
"""
