"""Spark's and Py4J's messages are masked with the catalog's secrets before any report, journal, proof or
error line takes them: ExecutionError masks its message as it is built (runtime/redaction.py)."""

from __future__ import annotations

from typing import Any

import pytest

from tablepolicy.cli.output import error
from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.compiler.diff.changes import DropTable
from tablepolicy.runtime import executor
from tablepolicy.runtime.executor import ExecutionError, guard, prepare, query_sql, run_sql
from tablepolicy.runtime.redaction import redact, register

SECRET = "sk-unit-9f8e7d6c5b4a"
ACCESS = "AKIA-unit-0123"
PASSWORD = "pg-unit-pass"
CONFIG = CatalogConfig("redacted", {"type": "sql", "uri": f"postgresql://etl:{PASSWORD}@db/lake",
                                    "warehouse": "s3://lake/wh", "s3.access-key-id": ACCESS,
                                    "s3.secret-access-key": SECRET})
SECRETS = (SECRET, ACCESS, PASSWORD)
# what the JVM says: a location with the keys in it, the bare key, a JDBC URL with the password
MESSAGE = (f"No such file or directory: s3a://{ACCESS}:{SECRET}@lake/wh/t/data/{SECRET}.parquet; "
           f"jdbc:postgresql://etl:{PASSWORD}@db/lake refused")


class JavaError:
    """A Py4J Java exception's surface: the innermost cause's class and message are what _reason reads."""

    def __init__(self, message: str, cause: JavaError | None = None) -> None:
        self.message, self.cause = message, cause

    def getCause(self) -> JavaError | None:
        return self.cause

    def getClass(self) -> Any:
        return type("Class", (), {"getSimpleName": lambda _self: "FileNotFoundException"})()

    def getMessage(self) -> str:
        return self.message


class SparkFailure(Exception):
    def __init__(self) -> None:
        super().__init__(f"An error occurred while calling o42.sql: {MESSAGE}")
        self.java_exception = JavaError("Job aborted", JavaError(MESSAGE))


class FailingSpark:
    """A session whose every statement and parse fails with the secrets in the message."""

    def sql(self, _sql: str) -> Any:
        raise SparkFailure

    @property
    def _jsparkSession(self) -> Any:
        def parse(_sql: str) -> None:
            raise SparkFailure

        parser = type("Parser", (), {"parsePlan": lambda _self, sql: parse(sql)})()
        state = type("State", (), {"sqlParser": lambda _self: parser})()
        return type("Session", (), {"sessionState": lambda _self: state})()


@pytest.fixture(autouse=True)
def registered() -> None:
    register(CONFIG)


def assert_masked(text: str) -> None:
    for secret in SECRETS:
        assert secret not in text, text
    assert "***" in text, text


def test_every_way_a_spark_statement_fails_is_masked() -> None:
    spark = FailingSpark()
    statement = f"ALTER TABLE t SET LOCATION 's3a://{ACCESS}:{SECRET}@lake/x'"  # the statement is shown as well
    calls = [lambda: run_sql(spark, statement, "step 1"), lambda: query_sql(spark, statement, "step 2"),
             lambda: guard("step 3", statement, lambda: spark.sql(statement)),
             lambda: prepare(spark, "lake", DropTable(table=("ns", "t")), statement, "step 4")]
    for call in calls:
        with pytest.raises(ExecutionError) as raised:
            call()
        assert_masked(str(raised.value))
        assert "FileNotFoundException" in str(raised.value) or "cannot run" in str(raised.value)


def test_an_execution_error_built_anywhere_is_masked() -> None:
    """Erasure's commits and others build ExecutionError from their own exceptions' text."""
    assert_masked(str(ExecutionError(f"t: erasure: lost the commit race 3 times: {MESSAGE}")))
    assert_masked(redact(MESSAGE))


def test_the_aws_variables_a_catalog_was_resolved_with_are_masked() -> None:
    register(CatalogConfig("env", {"type": "sql", "uri": "sqlite:///x.db"}, outside_secrets=("aws-env-secret",)))
    assert "aws-env-secret" not in str(ExecutionError("denied for aws-env-secret"))


def test_the_cli_error_line_is_masked(capsys: pytest.CaptureFixture[str]) -> None:
    error(f"internal error: RuntimeError: {MESSAGE}")
    assert_masked(capsys.readouterr().err)


def test_a_failed_maintenance_step_records_the_masked_error(monkeypatch: pytest.MonkeyPatch) -> None:
    """maintain's step error (its text and JSON report) is str() of the ExecutionError its retries raise."""
    monkeypatch.setattr(executor, "renew_connections", lambda _spark, again: None)
    spark = FailingSpark()
    with pytest.raises(ExecutionError) as raised:
        executor.with_conflict_retries(spark, lambda: query_sql(spark, "CALL x", "ns.t: merge manifests"))
    assert_masked(str(raised.value))
