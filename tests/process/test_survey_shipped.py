"""A survey's reads shipped as a cluster's executors receive them (runtime/erasure/runners.py OnCluster): the job's
function and items, pickled by value, run in another interpreter that cannot import tablepolicy or pyiceberg (an
executor has pyarrow and pyspark, nothing of this project), and the survey built from what comes back is the one
this process's reader threads build: the same files holding a key (a nested key, matched by field id), the same
clean files, the same unreadable file, an unreferenced copy found too."""

from __future__ import annotations

import pickle
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow as pa

from tablepolicy.compiler.erasure.cost import Placement
from tablepolicy.runtime.erasure.keys import SUBJECT, KeyColumn, KeySet
from tablepolicy.runtime.erasure.runners import OnCluster, Runner, Threads
from tablepolicy.runtime.erasure.survey import FileReader, Survey, survey
from tests.integration.erasure_data import ERASED, erasure_project, events_table, keys_in_storage

EXECUTOR = r"""
import pickle, sys

class NotOnTheExecutor:  # an executor's Python has pyarrow and pyspark, not tablepolicy
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in ("tablepolicy", "pyiceberg", "tests"):
            raise ImportError(f"{name} is not installed on the executor")
        return None

sys.meta_path.insert(0, NotOnTheExecutor())
sys.path = [p for p in sys.path if p not in ("", ".")]
function, items = pickle.loads(sys.stdin.buffer.read())
results = [function(item) for item in items]
assert not [m for m in sys.modules if m.split(".")[0] in ("tablepolicy", "pyiceberg")]
sys.stdout.buffer.write(pickle.dumps(results))
"""


@dataclass
class ExecutorContext:
    """parallelize(items).map(f).collect() with f and the items sent to another interpreter, as pyspark sends
    them (f by cloudpickle, items by pickle)."""

    defaultParallelism: int = 1  # pyspark's name
    jobs: list[int] = field(default_factory=list)
    items: list[Any] = field(default_factory=list)
    function: Any = None

    def parallelize(self, items: list[Any], slices: int) -> ExecutorContext:
        self.items = list(items)
        return self

    def map(self, function: Any) -> ExecutorContext:
        self.function = function
        return self

    def collect(self) -> list[Any]:
        from pyspark import cloudpickle

        sent = cloudpickle.dumps((self.function, self.items))
        done = subprocess.run([sys.executable, "-c", EXECUTOR], input=sent, capture_output=True, timeout=120,
                              check=False, cwd="/")
        assert done.returncode == 0, done.stderr.decode()
        self.jobs.append(len(self.items))
        return list(pickle.loads(done.stdout))


@dataclass
class Session:
    sparkContext: ExecutorContext = field(default_factory=ExecutorContext)


def test_a_survey_read_by_executors_without_tablepolicy_is_the_survey_read_here(tmp_path: Path) -> None:
    policies, _, _ = erasure_project(tmp_path)
    table = events_table(policies)
    holding = sorted(keys_in_storage(table.location(), set(ERASED.values())))
    Path(holding[0]).with_name("orphan-copy.parquet").write_bytes(Path(holding[0]).read_bytes())
    Path(holding[0]).with_name("torn.parquet").write_bytes(b"PAR1 and then nothing")
    uid = table.schema().find_field("user.uid").field_id
    column = KeyColumn(("user", "uid"), uid, pa.string())
    keys = KeySet((column,), pa.table({column.alias: list(ERASED.values()), SUBJECT: pa.array([0, 1], pa.int32())}),
                  ("REQ-1", "REQ-2"))
    session = Session()

    def read(runner: Runner) -> Survey:
        return survey(table, FileReader(keys), {}, runners=lambda _listed: runner)

    here = read(Threads())
    there = read(OnCluster(lambda: session, Placement(True, "shipped")))

    assert session.sparkContext.jobs == [here.files_read]  # one job, every data file: none read in this process
    assert there.held == here.held and len(here.held) == len(holding) + 1  # + the unreferenced copy
    assert there.orphans == here.orphans and len(here.orphans) == 1
    assert there.clean == here.clean and here.clean
    assert there.unreadable == here.unreadable and len(here.unreadable) == 1
    assert (there.placement, here.placement.cluster) == (Placement(True, "shipped"), False)
