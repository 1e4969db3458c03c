"""Exit codes, as documented in the README."""

from __future__ import annotations

from enum import IntEnum


class Exit(IntEnum):
    OK = 0  # success; for plan --detailed-exitcode: no changes
    ERROR = 1  # invalid policy, catalog unreachable, failed step
    CHANGES = 2  # plan --detailed-exitcode: the plan has changes
    BLOCKED = 3  # the plan holds changes that policy blocks (destructive without approval)
