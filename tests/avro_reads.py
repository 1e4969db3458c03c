"""Count every avro file a process opens (manifest lists and manifests), by path: the measure of "each manifest
read at most once per run" (bench/fleet.py, tests/process/test_fleet_reads.py).

Every manifest list and manifest is opened through the table's FileIO (``PyArrowFile.open``: pyiceberg's
``Snapshot.manifests``, ``ManifestFile.fetch_manifest_entry`` and a scan's planning, runtime/manifests.py's
reader alike), so counting there sees every read whoever asks for it: tablepolicy's shared reads, a scan's
own, or another cache's.

Run a command counted: ``python -m tests.avro_reads OUT tablepolicy-args...`` runs the CLI in this process and
writes ``{path: opens}`` as JSON to OUT when it exits; pyspark is made unimportable first, so a command that
would start a JVM fails instead.
"""

from __future__ import annotations

import atexit
import json
import sys
from collections import Counter
from pathlib import Path
from typing import Any

OPENS: Counter[str] = Counter()


def install() -> Counter[str]:
    """Count from now on (once per process): every ``.avro`` file opened for reading, by its location."""
    from pyiceberg.io.pyarrow import PyArrowFile

    if getattr(PyArrowFile.open, "_counted", False):
        return OPENS
    open_file = PyArrowFile.open

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        if self.location.endswith(".avro"):
            OPENS[self.location] += 1
        return open_file(self, *args, **kwargs)

    counted._counted = True  # type: ignore[attr-defined]
    PyArrowFile.open = counted  # type: ignore[method-assign]
    return OPENS


class _NoPyspark:
    """An import hook refusing pyspark: a command counted here must decide without a JVM."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "pyspark" or name.startswith("pyspark."):
            raise ImportError(f"{name}: this run must not start Spark (tests/avro_reads.py)")
        return None


def main() -> None:
    out, args = Path(sys.argv[1]), sys.argv[2:]
    sys.meta_path.insert(0, _NoPyspark())
    install()
    atexit.register(lambda: out.write_text(json.dumps(dict(sorted(OPENS.items())), indent=1)))
    sys.argv = ["tablepolicy", *args]
    from tablepolicy.cli.app import main as cli

    cli()


if __name__ == "__main__":
    main()
