"""The kernel fires a batch without the interpreter lock (Kernel.lock_free, fixed per net), so
that the reader's threads (petricep.io.prefetch) run while it fires: every net whose step
needs no Python object, not those with LIMIT quotas or ON TIMEOUT deadlines (heaps), with
consumption (a dict of consumed events) or with cancellations under tie rule strict (a list).

The release is observed, not timed: a thread stamping the clock in a loop can run Python
only while no other thread holds the lock, so a stamp well inside a kernel call (past the
lock's hand-overs at its start and end, at a short switch interval) is one the call let
through. The control: the same net told to keep the lock (``lock_free`` set False) lets
none through (its step makes no Python object: no collection runs Python code inside it).
A net with quotas or deadlines holds the lock too, but may hand it over while its step runs
Python (a collection's callbacks), so it is no control."""

from __future__ import annotations

import sys
import threading
import time
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

import petricep.kernel as K
from petricep.api import compile_text

W1 = "PATTERN q: SEQ(stock1 a, stock2 b, stock3 c) WHERE skip-till-any-match AND [price] WITHIN 30"


@pytest.mark.parametrize(
    ("text", "tie", "free"),
    [
        (W1, "arrival", True),
        ("PATTERN p: SEQ(A a, !(C c), B b) WHERE [x] AND partition-contiguity WITHIN 10", "arrival", True),
        ("PATTERN p: SEQ(A a, B b) WITHIN 10 RETURN T(x = a.x)\nPATTERN q: SEQ(T t, C c) WITHIN 10", "arrival", True),
        ("PATTERN p: SEQ(A a, B+ b[], C c) WHERE b[i].x > b[i-1].x WITHIN 10", "arrival", True),
        ("PATTERN p: SEQ(A a, B b) WHERE skip-till-any-match WITHIN 10", "either", True),
        ("PATTERN p: SEQ(A a, B b) WITHIN 10", "strict", True),
        ("PATTERN p: SEQ(A a, !(C c), B b) WITHIN 10", "strict", False),  # cancellations at a group's end
        ("PATTERN p: SEQ(A a, B b) WITHIN 10 LIMIT 5 PARTIAL MATCHES", "arrival", False),  # quotas
        ("PATTERN p: SEQ(A a, B b) WITHIN 10 ON TIMEOUT RETURN Gone(x = a.x)", "arrival", False),  # deadlines
        ("PATTERN p: SEQ(A a, B b) WITHIN 10 CONSUME b\nPATTERN q: SEQ(A a, B b) WITHIN 10", "arrival", False),
    ],
)
def test_which_nets_fire_without_the_lock(text: str, tie: str, free: bool) -> None:
    run = K.KernelRun(compile_text(text), tie=tie)
    assert run.kernel.lock_free is free


class _Timed:
    """The run's kernel, its calls' start and end times recorded."""

    def __init__(self, kernel: Any) -> None:
        self.kernel = kernel
        self.calls: list[tuple[float, float]] = []

    def run(self, *args: Any) -> Any:
        start = time.perf_counter()
        try:
            return self.kernel.run(*args)
        finally:
            self.calls.append((start, time.perf_counter()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.kernel, name)


def stocks(n: int) -> pa.Table:
    """W1's stream (the bench's): types stock1..3, an integer price, ts = id = row."""
    rng = np.random.default_rng(7)
    names = np.array(["stock1", "stock2", "stock3"], dtype=object)
    ids = np.arange(n, dtype=np.int64)
    kinds = pa.array(names[rng.integers(0, 3, n)], pa.string())
    return pa.table({"id": ids, "ts": ids, "type": kinds, "price": rng.integers(1, 40, n)})


# partial matches pile up (a 3000-event window, no match): a kernel call of ~0.1 s
SLOW = "PATTERN q: SEQ(stock1 a, stock2 b, stock3 c) WHERE skip-till-any-match AND [price] AND c.price > 99 WITHIN 3000"
MARGIN = 0.01  # seconds at either end of a call: the lock handed over at the call (switch interval 0.1 ms)


def stamps_inside(text: str, calls: int, lock_free: bool = True) -> int:
    """How many of a stamping thread's stamps fall well inside ``calls`` kernel calls of
    ``text`` (``lock_free`` False: the kernel told to keep the lock)."""
    run = K.KernelRun(compile_text(text), id_field="id")
    assert run.kernel.lock_free
    run.kernel.lock_free = lock_free
    timed = _Timed(run.kernel)
    run.kernel = timed  # type: ignore[assignment]
    rows = 200_000
    table = stocks(rows * calls)
    stamps: list[float] = []
    done = threading.Event()

    def stamp() -> None:
        while not done.is_set():
            stamps.append(time.perf_counter())
            time.sleep(1e-4)  # (a few thousand stamps a second, not millions: the list stays small)

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-4)
    thread = threading.Thread(target=stamp)
    thread.start()
    try:
        for c in range(calls):
            run.push(table.slice(c * rows, rows))
    finally:
        done.set()
        thread.join()
        sys.setswitchinterval(interval)
    windows = [(a + MARGIN, b - MARGIN) for a, b in timed.calls]
    assert any(b - a > 0.02 for a, b in windows)  # (calls long enough to tell)
    return sum(1 for t in stamps for a, b in windows if a < t < b)


def test_a_lock_free_net_lets_other_threads_run_while_it_fires() -> None:
    assert stamps_inside(SLOW, 3) > 0


def test_a_kernel_that_keeps_the_lock_lets_none_run() -> None:
    assert stamps_inside(SLOW, 3, lock_free=False) == 0


def test_kernels_firing_at_once_in_threads_give_their_own_matches() -> None:
    """Two runs of one net fire at the same time on two threads (the lock released: nothing
    of one kernel is shared with the other) and each finds what it finds alone."""
    text = "PATTERN q: SEQ(stock1 a, stock2 b, stock3 c) WHERE skip-till-any-match AND [price] WITHIN 60"
    tables = [stocks(300_000).slice(0, 150_000), stocks(300_000).slice(150_000)]

    def ids(table: pa.Table) -> list[tuple[int, ...]]:
        run = K.KernelRun(compile_text(text), id_field="id")
        out = pa.concat_tables([run.push(table), run.flush()])
        return list(zip(*(out.column(v).to_pylist() for v in "abc")))

    alone = [ids(t) for t in tables]
    together: list[list[tuple[int, ...]]] = [[], []]

    def fire(i: int) -> None:
        together[i] = ids(tables[i])

    threads = [threading.Thread(target=fire, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert together == alone and all(len(a) > 1000 for a in alone)
