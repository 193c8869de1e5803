"""Event readers and match writers."""

from .readers import EventSource, InputSpec, events_from_records, events_from_table, infer_format, open_events

__all__ = [
    "EventSource",
    "InputSpec",
    "events_from_records",
    "events_from_table",
    "infer_format",
    "open_events",
]
