"""A REST server that misbehaves mid-run, through a fault-injecting proxy (tests/rest_proxy.py) in front of the real
server (SeaweedFS, tests/seaweed.py), on both engines: pyiceberg (plan, the tool's reads) and Spark's RESTCatalog
(apply's and maintain's SQL).

- a server that accepts and never answers: the run ends with an error naming the timeout setting, nothing
  half-applied (the request held before the server or its answer lost after the commit), and once the server
  answers again a re-run converges;
- 503 answers: a read answered 503 twice is retried and the run succeeds; a server answering 503 to every request
  ends the run with an error naming its answer, and a commit answered 503 is never sent again (its outcome is
  unknown): the table unchanged, a re-run converges;
- a token that expires during the run is refreshed: pyiceberg when the server refuses it (401), Spark's
  RESTCatalog ahead of its ``expires_in``.

Fast settings (timeouts of seconds, 2 retries) keep each case to seconds; the defaults are README's.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cli_runner import Run, tablepolicy
from tests.rest_proxy import RestProxy, commits, every, reads, rest_proxy
from tests.seaweed import SECRET_KEY, SeaweedServer, seaweed_server_with_fresh_spark

pytestmark = pytest.mark.spark
FAST = {"rest.client.connection-timeout-ms": "2000", "rest.client.socket-timeout-ms": "3000",
        "rest.client.max-retries": "2"}
POLICY = """table: ops.{table}
columns:
  - {{name: id, type: long}}
  - {{name: note, type: string}}
properties: {{{props}}}
lifecycle:
  snapshots: {{max_age: 1d, min_keep: 1}}
  compaction: {{min_input_files: 2, target_file_size: 128MB}}
"""


@pytest.fixture(scope="module")
def server() -> Iterator[SeaweedServer]:
    with seaweed_server_with_fresh_spark() as running:
        yield running


@pytest.fixture
def proxy(server: SeaweedServer) -> Iterator[RestProxy]:
    with rest_proxy(server.uri) as running:
        yield running


class Project:
    """A project whose catalog (named after the test: Spark keeps one catalog per name) is reached through the
    proxy."""

    def __init__(self, root: Path, name: str, props: dict[str, str]) -> None:
        self.root, self.name = root, name
        (root / ".pyiceberg.yaml").write_text(yaml.safe_dump({"catalog": {name: props}}))
        (root / "policies" / "ops").mkdir(parents=True, exist_ok=True)

    def policy(self, table: str, props: str = "") -> None:
        (self.root / "policies" / "ops" / f"{table}.yaml").write_text(POLICY.format(table=table, props=props))

    def cli(self, *args: str) -> Run:
        run = tablepolicy(*args, cwd=self.root, env={"TABLEPOLICY_CATALOG": self.name})
        assert SECRET_KEY not in run.stdout + run.stderr and "Traceback" not in run.stderr, run.stderr
        return run

    def ok(self, *args: str) -> Run:
        run = self.cli(*args)
        assert run.returncode == 0, run.stdout + run.stderr
        return run


def project(tmp_path: Path, server: SeaweedServer, proxy: RestProxy, name: str) -> Project:
    return Project(tmp_path, name, proxy.properties({**server.catalog_properties(), **FAST}))


def table_properties(server: SeaweedServer, table: str) -> dict[str, str]:
    """The table as the server holds it, read around the proxy."""
    from pyiceberg.catalog import load_catalog

    return dict(load_catalog("direct", **server.catalog_properties()).load_table(f"ops.{table}").properties)


def spark() -> Any:
    from pyspark.sql import SparkSession

    session = SparkSession._instantiatedSession
    assert session is not None, "the CLI's apply started no session in this process"
    return session


def test_a_server_that_never_answers_ends_plan_with_an_error_naming_the_timeout(server: SeaweedServer,
                                                                                proxy: RestProxy,
                                                                                tmp_path: Path) -> None:
    p = project(tmp_path, server, proxy, "hungplan")
    p.policy("hung_plan")
    proxy.hang(every)
    run = p.cli("plan", "policies")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the REST server did not answer within rest.client.socket-timeout-ms" in run.stderr, run.stderr
    assert "raise 'rest.client.socket-timeout-ms' of catalog 'hungplan'" in run.stderr, run.stderr
    assert proxy.requests == [("POST", "/v1/oauth/tokens")]  # one request held, none sent again
    proxy.passing()
    assert p.cli("plan", "policies", "--detailed-exitcode").returncode == 2


HUNG_CASES = [  # (id, forward): the commit held before the server (nothing changed), or sent on and its answer lost
    ("held-before-the-server", False),
    ("answer-lost-after-the-commit", True),
]


@pytest.mark.parametrize("forward", [c[1] for c in HUNG_CASES], ids=[c[0] for c in HUNG_CASES])
def test_a_commit_never_answered_ends_apply_with_an_error_and_a_rerun_converges(server: SeaweedServer,
                                                                                proxy: RestProxy, tmp_path: Path,
                                                                                forward: bool) -> None:
    table = f"hung_{int(forward)}"
    p = project(tmp_path, server, proxy, f"hungapply{int(forward)}")
    p.policy(table)
    p.ok("apply", "policies", "--auto-approve")
    before = table_properties(server, table)
    p.policy(table, "commit.retry.num-retries: '7'")
    proxy.hang(commits, forward=forward)
    run = p.cli("apply", "policies", "--auto-approve")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the catalog server did not answer within rest.client.socket-timeout-ms: the commit's outcome is " \
           "unknown; run plan again" in run.stderr, run.stderr
    assert proxy.count(commits) == 1  # the commit never sent again
    after = table_properties(server, table)
    assert "commit.retry.num-retries" not in after  # apply stopped at the step whose answer it never had
    assert (after != before) is forward  # that step's commit landed only when the server had it
    proxy.passing()
    run = p.ok("apply", "policies", "--auto-approve")
    assert table_properties(server, table)["commit.retry.num-retries"] == "7"
    assert p.cli("plan", "policies", "--detailed-exitcode").returncode == 0


def test_a_server_hung_mid_maintain_ends_it_with_an_error_and_a_rerun_converges(server: SeaweedServer,
                                                                               proxy: RestProxy,
                                                                               tmp_path: Path) -> None:
    """The server hangs at the first compaction's commit and answers nothing from then on: the compaction fails,
    the table read again after it does not answer, and the run ends there (exit 1) naming the timeout setting, the
    tables' files as they were; once the server answers, a re-run compacts both."""
    p = project(tmp_path, server, proxy, "hungmaintain")
    tables = ("hung_maintain_a", "hung_maintain_b")
    for table in tables:
        p.policy(table)
    p.ok("apply", "policies", "--auto-approve")
    for table in tables:
        for i in range(3):
            spark().sql(f"INSERT INTO hungmaintain.ops.{table} VALUES ({i}, 'row {i}')")
    data = {table: data_files(server, table) for table in tables}
    proxy.hang(commits, then_all=True)
    started = time.monotonic()
    run = p.cli("maintain", "policies", "--only", "compaction", "--format", "json")
    print(f"maintain of {len(tables)} tables against a server hung mid-run (socket timeout "
          f"{FAST['rest.client.socket-timeout-ms']} ms): ended after {time.monotonic() - started:.1f} s")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the REST server did not answer within rest.client.socket-timeout-ms" in run.stderr, run.stderr
    assert {table: data_files(server, table) for table in tables} == data  # the tables' files as they were
    proxy.passing()
    run = p.ok("maintain", "policies", "--only", "compaction", "--format", "json")
    assert [step["status"] for t in json.loads(run.stdout)["tables"] for step in t["steps"]] == ["done", "done"]
    for table in tables:
        assert len(data_files(server, table)) == 1
        assert sorted(r.id for r in spark().sql(f"SELECT id FROM hungmaintain.ops.{table}").collect()) == [0, 1, 2]


def data_files(server: SeaweedServer, table: str) -> set[str]:
    """The table's live data files, read around the proxy."""
    from pyiceberg.catalog import load_catalog

    loaded = load_catalog("direct", **server.catalog_properties()).load_table(f"ops.{table}")
    return {task.file.file_path for task in loaded.scan().plan_files()}


def test_reads_answered_503_twice_are_retried_on_both_engines(server: SeaweedServer, proxy: RestProxy,
                                                              tmp_path: Path) -> None:
    p = project(tmp_path, server, proxy, "busy")
    p.policy("busy")
    proxy.fail(503, 2, reads)
    p.ok("plan", "policies")  # pyiceberg
    assert [r[2] for r in proxy.refused] == [503, 503]
    p.ok("apply", "policies", "--auto-approve")
    proxy.fail(503, 2, reads)
    spark().sql("INSERT INTO busy.ops.busy VALUES (1, 'one')")  # Spark's RESTCatalog
    assert [r[2] for r in proxy.refused] == [503] * 4
    assert [r.id for r in spark().sql("SELECT id FROM busy.ops.busy").collect()] == [1]


def test_a_server_answering_503_ends_the_run_naming_its_answer_and_a_commit_is_not_resent(
        server: SeaweedServer, proxy: RestProxy, tmp_path: Path) -> None:
    p = project(tmp_path, server, proxy, "down")
    p.policy("down")
    p.ok("apply", "policies", "--auto-approve")
    p.policy("down", "commit.retry.num-retries: '8'")
    proxy.fail(503)
    run = p.cli("plan", "policies")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "the REST server answered with an error (ServiceUnavailableException: injected by the test's proxy)" \
           in run.stderr and "'rest.client.max-retries' of catalog 'down'" in run.stderr, run.stderr
    assert len(proxy.refused) == 1 + 0  # the first request, a token's POST: never sent again
    proxy.passing()
    proxy.fail(503, None, commits)
    run = p.cli("apply", "policies", "--auto-approve")
    assert run.returncode == 1, run.stdout + run.stderr
    assert "Service failed: 503" in run.stderr and "the commit's outcome is unknown; run plan again" in run.stderr, \
        run.stderr
    assert proxy.count(commits) == 1  # never sent again
    assert "commit.retry.num-retries" not in table_properties(server, "down")
    proxy.passing()
    p.ok("apply", "policies", "--auto-approve")
    assert p.cli("plan", "policies", "--detailed-exitcode").returncode == 0


def test_pyiceberg_asks_for_a_new_token_when_the_server_refuses_its_own(server: SeaweedServer, proxy: RestProxy,
                                                                        tmp_path: Path) -> None:
    p = project(tmp_path, server, proxy, "tokpy")
    for i in range(4):
        p.policy(f"tok_{i}")
    proxy.token_uses = 3  # a token is refused (401, as SeaweedFS refuses an expired one) after 3 requests
    run = p.ok("plan", "policies")
    assert run.stdout.count("+ create table") == 4, run.stdout
    refused = [r for r in proxy.refused if r[2] == 401]
    assert refused and proxy.tokens_issued >= 1 + len(refused), (proxy.tokens_issued, proxy.refused)


def test_spark_refreshes_its_token_before_it_expires(server: SeaweedServer, proxy: RestProxy,
                                                     tmp_path: Path) -> None:
    p = project(tmp_path, server, proxy, "tokspark")
    p.policy("tok_spark")
    # Iceberg Java refreshes by the clock, 10% before expires_in; the proxy refuses a token 4 s old, so a client
    # that refreshes is never refused however slow its refresh, and one that does not is refused after the wait
    proxy.expires_in, proxy.token_life = 2, 4.0
    p.ok("apply", "policies", "--auto-approve")
    spark().sql("INSERT INTO tokspark.ops.tok_spark VALUES (1, 'one')")
    exchanged = proxy.exchanges
    time.sleep(5)  # past the life of every token issued before it (a slower machine only waits longer)
    spark().sql("INSERT INTO tokspark.ops.tok_spark VALUES (2, 'two')")  # a stale token would be refused 401
    assert proxy.exchanges > exchanged  # refreshed by a token exchange, as Iceberg Java does
    assert sorted(r.id for r in spark().sql("SELECT id FROM tokspark.ops.tok_spark").collect()) == [1, 2]
