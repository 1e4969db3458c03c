"""erase killed with SIGKILL in the middle of writing a file, at each of its write points: the new data file of
the rewrite, its manifest, its manifest list, the table metadata of the rewrite's commit and of the expiry's. The
kill comes from inside the process, at the exact byte: the file is created and left empty, or half of what was
to be written is flushed (a parquet file with its rows, holding the key, and no footer; an avro file cut in a
block). Then erase runs again, as the scheduled workflow would: it ends proven, the independent scan of every
parquet file under the table location (tests/integration/erasure_data.py, plain pyarrow) finds no key and reads
every file (a torn one left behind would fail it), and the rows kept are the rows that were kept. No JVM: erase's
pyarrow path, on copy-on-write and merge-on-read tables."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli_runner import ROOT
from tests.integration.erasure_data import (
    ERASED,
    checksum,
    erasure_project,
    events_table,
    keys_in_storage,
)

KEYS = set(ERASED.values())

# the CLI with pyiceberg's file creation wrapped: the ``nth`` file whose name matches ``kind`` is killed into
# ``how`` (empty: SIGKILL right after it is created; half: its bytes are held until close, then the first half
# is written and flushed and the process killed). Lives here, not in runtime/: production code has no switch.
KILLER = """
import os, signal, sys
from pyiceberg.io import pyarrow as pio

kind, nth, how = sys.argv[1], int(sys.argv[2]), sys.argv[3]
seen = [0]
KINDS = {"data": lambda n: n.endswith(".parquet"), "manifest": lambda n: n.endswith(".avro") and "-m" in n,
         "list": lambda n: n.startswith("snap-") and n.endswith(".avro"), "metadata": lambda n: n.endswith(".json")}


def die():
    os.kill(os.getpid(), signal.SIGKILL)


class Half:
    def __init__(self, stream):
        self.stream, self.held, self.closed = stream, bytearray(), False

    def write(self, data):
        self.held += bytes(data)
        return len(data)

    def tell(self):
        return len(self.held)

    def flush(self):
        pass

    def writable(self):
        return True

    def close(self):
        self.stream.write(bytes(self.held[: len(self.held) // 2]))
        self.stream.flush()
        self.stream.close()  # the bytes are in storage (an S3 upload completes here), then the process dies
        die()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


create = pio.PyArrowFile.create


def create_then_die(self, overwrite=False):
    stream = create(self, overwrite)
    if KINDS[kind](self.location.rsplit("/", 1)[-1]):
        seen[0] += 1
        if seen[0] == nth:
            if how == "empty":
                stream.flush()
                die()
            return Half(stream)
    return stream


pio.PyArrowFile.create = create_then_die
sys.argv = ["tablepolicy", *sys.argv[4:]]
from tablepolicy.cli.app import main
main()
"""


def erase(policies: Path, requests: Path, proof: Path,
          kill: tuple[str, int, str] | None, *extra: str) -> subprocess.CompletedProcess[str]:
    prefix = [sys.executable, "-c", KILLER, kill[0], str(kill[1]), kill[2]] if kill else [
        sys.executable, "-c", "from tablepolicy.cli.app import main; main()"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYICEBERG_CATALOG__")}
    return subprocess.run([*prefix, "erase", str(policies), "--requests", str(requests), "--proof", str(proof), *extra],
                          capture_output=True, text=True, cwd=ROOT, env=env, timeout=600, check=False)


def torn_files(location: str, suffixes: tuple[str, ...] = (".parquet", ".avro")) -> list[Path]:
    """The files under ``location`` that do not read as what their name says."""
    root = Path(location.removeprefix("file:").removeprefix("//"))
    return [p for p in root.rglob("*") if p.is_file() and p.suffix in suffixes and _torn(p)]


def _torn(path: Path) -> bool:
    import pyarrow.parquet as pq
    from pyiceberg.avro.file import AvroFile
    from pyiceberg.io.pyarrow import PyArrowFileIO

    try:
        if path.suffix == ".parquet":
            pq.ParquetFile(path)
        elif path.suffix == ".json":
            json.loads(path.read_text())
        else:
            with AvroFile(PyArrowFileIO().new_input(str(path))) as records:  # type: ignore[var-annotated]
                for _ in records:
                    pass
    except Exception:  # torn is the answer asked for
        return True
    return False


POINTS = [("data", 1), ("manifest", 1), ("list", 1), ("metadata", 1), ("metadata", 2)]


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
@pytest.mark.parametrize("how", ["empty", "half"])
@pytest.mark.parametrize("point", POINTS, ids=[f"{k}{n}" for k, n in POINTS])
def test_erase_killed_mid_write_converges_when_run_again(tmp_path: Path, point: tuple[str, int], how: str,
                                                         mode: str) -> None:
    policies, requests, before = erasure_project(tmp_path, mode)
    intact, history = checksum(events_table(policies)), checksum(events_table(policies), before)
    proof = tmp_path / "proof.json"

    killed = erase(policies, requests, proof, (*point, how))

    assert killed.returncode == -signal.SIGKILL, killed.stdout + killed.stderr  # the write point was reached
    assert torn_files(events_table(policies).location(), (".parquet", ".avro", ".json")), "the kill left no torn file"

    # the operator knows the writer was killed: no write can be in flight, so the torn files need not age first
    run = erase(policies, requests, proof, None, "--debris-min-age", "0s")

    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "internal error" not in output and "Traceback" not in output, output
    (result,) = json.loads(proof.read_text())["tables"]
    assert result["state"] == "complete", result
    assert torn_files(events_table(policies).location()) == []  # a torn metadata file holds no row: orphan removal's
    assert keys_in_storage(events_table(policies).location(), KEYS) == {}
    assert checksum(events_table(policies)) == intact
    assert checksum(events_table(policies), before) == history
