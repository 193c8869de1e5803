"""petricep: complex event processing on timed colored Petri nets."""

__version__ = "0.1.0"

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from petricep.api.frames import match


def __getattr__(name: str) -> Any:
    """``petricep.match`` on first use: importing it loads pyarrow and the whole engine (about
    a second), which ``petricep check``, ``--version`` and Spark workers importing
    ``petricep.errors`` should not pay for."""
    if name == "match":
        from petricep.api.frames import match

        return match
    raise AttributeError(f"module 'petricep' has no attribute {name!r}")


__all__ = ["__version__", "match"]
