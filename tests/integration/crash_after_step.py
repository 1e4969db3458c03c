"""The tablepolicy CLI, killed with SIGKILL the moment the apply journal has recorded step N: a runner that
dies mid-plan, for the crash-resume tests. The kill lives here, not in runtime/: production code carries no
switch for it.

    python tests/integration/crash_after_step.py N apply plan.json --policies policies/
"""

from __future__ import annotations

import os
import signal
import sys

from tablepolicy.cli.app import main
from tablepolicy.runtime.journal import Journal


def die_after(step: int) -> None:
    """After the journal line of ``step`` is durable (fsynced), as a power cut right then would leave it."""
    record = Journal.record

    def record_then_die(self: Journal, index: int, summary: str, status: str = "done") -> None:
        record(self, index, summary, status)
        if index == step:
            os.kill(os.getpid(), signal.SIGKILL)

    Journal.record = record_then_die  # type: ignore[method-assign]


if __name__ == "__main__":
    die_after(int(sys.argv[1]))
    sys.argv = ["tablepolicy", *sys.argv[2:]]
    main()
