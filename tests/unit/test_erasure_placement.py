"""Where erase reads a table's files (runtime/erasure/runners.py): this process, or a Spark job on a cluster's
executors when the master is a cluster's and the files listed under the table's locations are larger than the
threshold (lifecycle.erasure.cluster_above, erase --cluster-above, else 10GiB). The threshold's bad input, the
placement's rule, and one erase whose survey and proof go through the cluster seam: a fake Spark context here runs
the job in this process, after pickling the job's function and items as pyspark ships them, so the whole run needs
no JVM (tests/integration/test_erase_cluster_survey.py runs it on the standalone cluster)."""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

import tablepolicy
from tablepolicy.compiler.erasure.cost import Placement
from tablepolicy.compiler.errors import TablePolicyError
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.erase_run import cluster_above
from tablepolicy.runtime.erasure.runners import OnCluster, Threads, placement
from tests.catalog_fixtures import create_like, embedded_catalog
from tests.cli_runner import pyspark_unimportable
from tests.cli_runner import tablepolicy as cli
from tests.integration.erasure_data import ERASED, checksum, events_table, fill, keys_in_storage, policy, requests_yaml

GIB = 2**30
KEYS = set(ERASED.values())


@pytest.mark.parametrize(("master", "listed", "threshold", "expected"), [
    ("local[2]", 50 * GIB, GIB, Placement(False, "local master local[2]")),  # a flag with a local master: said why
    ("local", 10, 1, Placement(False, "local master local")),
    ("spark://h:7077", GIB, GIB, Placement(False, "1,073,741,824 bytes listed, not above the threshold 1.0 GiB")),
    ("spark://h:7077", GIB + 1, GIB, Placement(True, "1,073,741,825 bytes listed, above the threshold 1.0 GiB")),
    ("spark://h:7077", 5_000, 1, Placement(True, "5,000 bytes listed, above the threshold 1 bytes")),
    ("yarn", 0, 1, Placement(False, "0 bytes listed, not above the threshold 1 bytes")),
])
def test_where_a_tables_files_are_read(master: str, listed: int, threshold: int, expected: Placement) -> None:
    assert placement(master, listed, threshold) == expected


@pytest.mark.parametrize("count", [0, 1, 15, 16, 17, 1000, 5003])
def test_reader_threads_answer_every_item_in_order(count: int) -> None:
    """Threads.map hands the threads runs of items (a task per file cost more than an excluded file's work):
    the answers still come one per item, in the items' order."""
    assert Threads().map(lambda n: n * 2, list(range(count))) == [n * 2 for n in range(count)]


@pytest.mark.parametrize(("text", "expected"), [("50GB", 50 * GIB), ("10GiB", 10 * GIB), ("1B", 1),
                                                ("512MB", 512 * 2**20)])
def test_the_cluster_above_flag_reads_a_size(text: str, expected: int) -> None:
    assert cluster_above(text) == expected


@pytest.mark.parametrize(("text", "says"), [
    ("50", "write a whole number and a unit"),  # a number alone has no unit
    ("lots", "write a whole number and a unit"),
    ("1.5GB", "write a whole number and a unit"),
    ("-1GB", "write a whole number and a unit"),
    ("0B", "is zero: write 1B to read every table on the cluster"),
    ("9000000TB", "out of range"),
])
def test_a_cluster_above_that_is_not_a_size_is_one_line_naming_the_flag(tmp_path: Path, text: str, says: str) -> None:
    with pytest.raises(TablePolicyError, match=r"^--cluster-above: ") as raised:
        cluster_above(text)
    assert says in str(raised.value)
    with pyspark_unimportable():
        run = cli("erase", "policies", "--requests", "requests.yaml", "--cluster-above", text, cwd=tmp_path)
    lines = run.stderr.strip().splitlines()
    assert run.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: --cluster-above: "), run.stderr
    assert says in lines[0] and "Traceback" not in run.stdout + run.stderr


@pytest.mark.parametrize(("value", "line", "says"), [
    ("lots", 10, "bad size 'lots'"),
    ("50", 10, "expected a string"),  # YAML reads a bare 50 as a number: no unit
    ("0B", 10, "is zero"),
    ("9000000TB", 10, "out of range"),
])
def test_a_policys_cluster_above_that_is_not_a_size_is_a_finding(tmp_path: Path, value: str, line: int,
                                                                  says: str) -> None:
    policies = tmp_path / "policies"
    policies.mkdir()
    (policies / "events.yaml").write_text(policy("events", "copy-on-write", holds=f", cluster_above: {value}"))
    _, findings = validate(policies)
    (finding,) = [f for f in findings if f.code == "TP111"]
    assert (finding.location.file.endswith("events.yaml"), finding.location.line) == (True, line), finding.render()
    assert says in finding.message and finding.hint, finding.render()


@dataclass
class FakeContext:
    """A SparkContext's parallelize(...).map(f).collect() run here, after pickling ``f`` with cloudpickle and the
    items with pickle, as pyspark sends them to executors; it counts the jobs and their items."""

    defaultParallelism: int = 2
    jobs: list[int] = field(default_factory=list)

    def parallelize(self, items: list[Any], slices: int) -> FakeRDD:
        assert 1 <= slices <= len(items)
        return FakeRDD(self, pickle.loads(pickle.dumps(list(items))))


@dataclass
class FakeRDD:
    context: FakeContext
    items: list[Any]
    function: Any = None

    def map(self, function: Any) -> FakeRDD:
        from pyspark import cloudpickle

        self.function = pickle.loads(cloudpickle.dumps(function))
        return self

    def collect(self) -> list[Any]:
        self.context.jobs.append(len(self.items))
        return [pickle.loads(pickle.dumps(self.function(item))) for item in self.items]


@dataclass
class FakeSession:
    sparkContext: FakeContext = field(default_factory=FakeContext)


class FakeOnDemand:
    """The run's SessionOnDemand: counts the sessions asked for."""

    session_asked = 0
    spark = FakeSession()

    def __init__(self, catalog: Any, options: Any) -> None:
        self.catalog, self.options = catalog, options

    def session(self) -> FakeSession:
        FakeOnDemand.session_asked += 1
        return self.spark


def _project(root: Path, threshold: str = "") -> Path:
    """privacy.events (nested key user.uid) filled by erasure_data.fill, an unreferenced copy of a file holding
    keys under its location, and the requests of ERASED."""
    policies = root / "policies"
    policies.mkdir(parents=True)
    (policies / "events.yaml").write_text(policy("events", "copy-on-write", holds=threshold))
    model, _ = validate(policies)
    catalog = embedded_catalog(policies)
    from tablepolicy.compiler.desired import desired_states

    for state in desired_states(model):
        create_like(catalog, state)
    fill(catalog.load_table(("privacy", "events")))
    holding = sorted(keys_in_storage(events_table(policies).location(), KEYS))[0]
    Path(holding).with_name("orphan-copy.parquet").write_bytes(Path(holding).read_bytes())
    (root / "requests.yaml").write_text(requests_yaml())
    return policies


@pytest.mark.parametrize(("master", "flag", "policy_threshold", "cluster", "why"), [
    ("spark://fake:7077", "1B", "", True, "above the threshold 1 bytes"),
    ("spark://fake:7077", None, ", cluster_above: 1B", True, "above the threshold 1 bytes"),
    ("spark://fake:7077", "1B", ", cluster_above: 1TB", True, "above the threshold 1 bytes"),  # the flag wins
    ("spark://fake:7077", None, "", False, "not above the threshold 10.0 GiB"),  # the default
    ("local[2]", "1B", "", False, "local master local[2]"),
])
def test_erase_reads_where_the_threshold_says_with_the_same_outcome(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, master: str, flag: str | None, policy_threshold: str,
    cluster: bool, why: str,
) -> None:
    """The survey and the proof of a cluster run go through the Spark job (one job per survey that had files to
    read; no session is asked for otherwise) and find what this process finds: the same rows, files and orphan."""
    monkeypatch.setattr("tablepolicy.runtime.spark.session.SessionOnDemand", FakeOnDemand)
    monkeypatch.setattr(FakeOnDemand, "spark", FakeSession())
    monkeypatch.setattr(FakeOnDemand, "session_asked", 0)
    outcomes = {}
    for name, (run_master, run_flag) in {"single": ("local[2]", None), "chosen": (master, flag)}.items():
        policies = _project(tmp_path / name, policy_threshold)
        kept = checksum(events_table(policies))
        with pyspark_unimportable() if run_master.startswith("local") else _nothing():
            outcome = tablepolicy.erase(policies, requests=tmp_path / name / "requests.yaml", spark_master=run_master,
                                        cluster_above=run_flag, proof=tmp_path / name / "proof.json")
        (table,) = json.loads((tmp_path / name / "proof.json").read_text())["tables"]
        assert checksum(events_table(policies).refresh()) == kept
        assert keys_in_storage(events_table(policies).location(), KEYS) == {}
        outcomes[name] = (outcome.complete, table["state"], table["rows_before"], table["rows_after"],
                          len(table["files_with_keys_before"]), len(table["orphans_deleted"]),
                          table["files_scanned"] > 0)
        if name == "chosen":
            for read in ("survey", "proof"):  # the listing's bytes differ (the proof's is after the erasure)
                assert table["reads"][read]["where"] == ("cluster" if cluster else "this process")
                assert why in table["reads"][read]["why"], table["reads"]
    assert outcomes["chosen"] == outcomes["single"]
    assert outcomes["single"][:2] == (True, "complete") and outcomes["single"][3:] == (0, 10, 1, True)
    jobs = FakeOnDemand.spark.sparkContext.jobs
    assert (len(jobs) >= 2 and all(jobs)) if cluster else jobs == [], jobs  # the first survey's and the proof's
    assert (FakeOnDemand.session_asked > 0) == cluster


def _nothing() -> Any:
    import contextlib

    return contextlib.nullcontext()


def test_erase_says_where_each_tables_files_were_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """--cluster-above with a local master does not silently do nothing: the output says where and why."""
    _project(tmp_path)
    with pyspark_unimportable():
        run = cli("erase", "policies", "--requests", "requests.yaml", "--cluster-above", "1B", cwd=tmp_path)
    assert run.returncode == 0, run.stdout + run.stderr
    assert ("privacy.events: files read by the survey in this process (local master local[2]); by the proof in this "
            "process (local master local[2])") in run.stdout
    assert "in this process (local master local[2])" in run.stdout.split("proving:")[1]



@dataclass
class JavaError:
    """A py4j JavaObject of a Throwable, as much of one as the message needs."""

    kind: str
    message: str
    cause: JavaError | None = None

    def getCause(self) -> JavaError | None:
        return self.cause

    def getMessage(self) -> str:
        return self.message

    def getClass(self) -> Any:
        return type("Class", (), {"getSimpleName": lambda _self: self.kind})()


class Py4JJavaError(Exception):
    def __init__(self, java: JavaError) -> None:
        super().__init__("An error occurred while calling o42.collectAndServe.\n: ...")
        self.java_exception = java


class BrokenContext:
    defaultParallelism = 1

    def __init__(self, error: Exception) -> None:
        self.error = error

    def parallelize(self, items: list[Any], slices: int) -> BrokenContext:
        return self

    def map(self, function: Any) -> BrokenContext:
        return self

    def collect(self) -> list[Any]:
        raise self.error


@pytest.mark.parametrize(("error", "says"), [
    (Py4JJavaError(JavaError("SparkException", "Job aborted", JavaError(
        "PythonException", "Traceback (most recent call last):\n  File ...\nModuleNotFoundError: No module named "
        "'pyarrow'\n"))), "an executor's Python: ModuleNotFoundError: No module named 'pyarrow'"),
    (Py4JJavaError(JavaError("SparkException", "Job aborted", JavaError("IOException", "Connection refused"))),
     "IOException: Connection refused"),
    (RuntimeError("the session stopped\nmore"), "the session stopped"),
])
def test_a_failed_job_fails_the_table_with_what_went_wrong(error: Exception, says: str) -> None:
    """The executor's own error, not py4j's 'An error occurred while calling' nor a traceback's first line."""
    from tablepolicy.runtime.executor import ExecutionError

    runner = OnCluster(lambda: type("Session", (), {"sparkContext": BrokenContext(error)})(),
                       Placement(True, "test"))
    with pytest.raises(ExecutionError) as raised:
        runner.map(str, [1, 2])
    assert str(raised.value) == f"erasure: reading the key columns on the cluster failed: {says}"
