"""petricep: complex event processing on timed colored Petri nets."""

__version__ = "0.1.0"
