"""The values a long run hands its ``progress=`` callback (the public module: ``from tablepolicy.events import
TableErased``). They are defined beside the runs that send them (tablepolicy/runtime/events.py)."""

from tablepolicy.runtime.events import (
    ActionFinished,
    ActionStarted,
    CallbackProgress,
    ErasureDecided,
    ErasureProgress,
    Event,
    LedgerNote,
    MaintenanceDecided,
    ProgressCallback,
    SparkStarting,
    TableErased,
    TableStarted,
)

__all__ = ["ActionFinished", "ActionStarted", "CallbackProgress", "ErasureDecided", "ErasureProgress", "Event",
           "LedgerNote", "MaintenanceDecided", "ProgressCallback", "SparkStarting", "TableErased", "TableStarted"]
