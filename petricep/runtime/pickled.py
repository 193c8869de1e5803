"""The Python engine's run state as bytes (``Engine.snapshot`` / ``Engine.restore``: the
matcher contract's, :mod:`petricep.runtime.matcher`), for Spark's state store.

``pickle.dumps(engine)`` fails: an :class:`Engine` holds the closures its conditions
compile to (``as_condition.<locals>.cond`` and friends), and closures do not pickle.
Everything else in it — per-key markings (tokens pointing to their predecessors and to
events), pending matches, negative-event buffers, counters — is plain data.

So a snapshot is the engine's instance attributes *minus* the ones a freshly built
``Engine(net, tie)`` rebuilds from the net: those are found once per net, as the
attributes of a fresh engine that do not pickle (the compiled runtimes, their indexes,
the RETURN closures). Run state that refers to one of those compiled objects (a deferred
kill naming its runtime) is written as a reference to it and resolved against the new
engine on load. :func:`restore` puts the state back into a fresh ``Engine(net, tie)``.
(The engine is typed ``Any`` here: this module is the engine's, which imports it.)

Nothing here names an engine internal: if the engine grows new compiled parts or new
state, they are classified the same way. Partial matches are chains of tokens, each
pointing to its predecessor, and pickle walks such chains recursively: a chain deeper
than the interpreter's recursion limit allows is (un)pickled again on a helper thread
with a large stack and a high limit (a Kleene list of 100,000 events is fine).
"""

from __future__ import annotations

import io
import pickle
import sys
import threading
from collections.abc import Callable
from typing import Any

from petricep.compile.net import Net

_DEEP_RECURSION = 2_000_000
_DEEP_STACK = 1 << 30  # bytes of stack for the helper thread
_compiled_cache: dict[tuple[int, str], tuple[Net, frozenset[str]]] = {}


def _picklable(value: Any) -> bool:
    try:
        pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:
        return False
    return True


def compiled_attributes(engine: Any) -> frozenset[str]:
    """Attributes of an engine like ``engine`` (its class, net and tie rule) that are rebuilt
    from the net, not state."""
    net, tie = engine.net, engine.tie
    key = (id(net), tie)
    hit = _compiled_cache.get(key)
    if hit is not None and hit[0] is net:
        return hit[1]
    fresh = type(engine)(net, tie=tie)
    names = frozenset({"net"} | {name for name, value in vars(fresh).items() if not _picklable(value)})
    _compiled_cache[key] = (net, names)
    return names


def _references(engine: Any, compiled: frozenset[str]) -> dict[int, tuple[Any, ...]]:
    """id(object) -> path, for every object inside the compiled attributes (3 levels of
    containers deep) — what run state may point to."""
    out: dict[int, tuple[Any, ...]] = {}

    def walk(obj: Any, path: tuple[Any, ...], depth: int) -> None:
        if isinstance(obj, (str, bytes, int, float, bool, frozenset)) or obj is None:
            return
        if not isinstance(obj, tuple):  # tuples may be shared singletons such as ()
            out.setdefault(id(obj), path)
        if depth == 0:
            return
        if isinstance(obj, (list, tuple)):
            for i, x in enumerate(obj):
                walk(x, (*path, i), depth - 1)
        elif isinstance(obj, dict):
            for k, x in obj.items():
                if isinstance(k, (str, int)):
                    walk(x, (*path, k), depth - 1)

    for name in sorted(compiled):
        walk(getattr(engine, name), (name,), 3)
    return out


def _resolve(engine: Any, path: tuple[Any, ...]) -> Any:
    obj: Any = getattr(engine, path[0])
    for step in path[1:]:
        obj = obj[step]
    return obj


def _deep(fn: Callable[[], Any]) -> Any:
    """``fn()``; if it recurses too deep, again on a thread with a large stack."""
    try:
        return fn()
    except RecursionError:
        pass
    result: list[Any] = []
    error: list[BaseException] = []

    def target() -> None:
        old = sys.getrecursionlimit()
        sys.setrecursionlimit(_DEEP_RECURSION)
        try:
            result.append(fn())
        except BaseException as e:  # re-raised in the caller
            error.append(e)
        finally:
            sys.setrecursionlimit(old)

    with _STACK_LOCK:
        old_size = threading.stack_size(_DEEP_STACK)
        try:
            thread = threading.Thread(target=target, name="petricep-snapshot")
            thread.start()
        finally:
            threading.stack_size(old_size)
    thread.join()
    if error:
        raise error[0]
    return result[0]


_STACK_LOCK = threading.Lock()


class _Pickler(pickle.Pickler):
    def __init__(self, file: Any, refs: dict[int, tuple[Any, ...]]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.refs = refs

    def persistent_id(self, obj: Any) -> Any:
        return self.refs.get(id(obj))


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: Any, engine: Any) -> None:
        super().__init__(file)
        self.engine = engine

    def persistent_load(self, pid: Any) -> Any:
        return _resolve(self.engine, tuple(pid))


def dumps(engine: Any) -> bytes:
    """The run state of ``engine`` (see the module docstring)."""
    compiled = compiled_attributes(engine)
    state = {name: value for name, value in vars(engine).items() if name not in compiled}
    refs = _references(engine, compiled)

    def dump() -> bytes:
        buf = io.BytesIO()
        _Pickler(buf, refs).dump(state)
        return buf.getvalue()

    return _deep(dump)  # type: ignore[no-any-return]


def restore(engine: Any, data: bytes) -> None:
    """Put the state :func:`dumps` saved into ``engine``, a fresh engine over its net."""
    state = _deep(lambda: _Unpickler(io.BytesIO(data), engine).load())
    for name, value in state.items():
        setattr(engine, name, value)


__all__ = ["compiled_attributes", "dumps", "restore"]
