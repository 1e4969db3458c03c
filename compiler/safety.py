"""How risky a change is; severity rises with the value and a plan's safety is its maximum."""

from __future__ import annotations

from enum import IntEnum


class Safety(IntEnum):
    SAFE = 0
    BREAKING = 1
    DESTRUCTIVE = 2

    def __str__(self) -> str:
        return self.name.lower()
