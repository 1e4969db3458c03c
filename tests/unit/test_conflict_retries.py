"""Which failures a step is run again for (with_conflict_retries), against a stand-in for the Spark session:
a lost commit race or a validation conflict with a concurrent commit is retried on the table as it is
then; any other failure is reported at once. The real races run in tests/integration (test_maintain_processes,
test_erase_processes)."""

from __future__ import annotations

from unittest import mock

import pytest

from tablepolicy.runtime import executor
from tablepolicy.runtime.executor import ExecutionError, with_conflict_retries

MANIFEST_DROPPED = ("t: rewrite manifests failed: ValidationException: Deleted manifest file:/w/m0.avro could not "
                    "be found in the latest snapshot 7196545713075973007")
CASES = {
    "a writer's append dropped a manifest the rewrite planned to replace": ([MANIFEST_DROPPED], 2, None),
    "a compaction replaced a file the delete rewrote": (["ValidationException: Missing required files to delete: "
                                                         "/w/a.parquet"], 2, None),
    "a lost commit race, then a conflict": (["CommitFailedException: Cannot commit", MANIFEST_DROPPED], 3, None),
    "a failure that is no conflict": (["AnalysisException: Table or view not found"], 1, "Table or view not found"),
    "conflicts every time: the last one is reported": ([MANIFEST_DROPPED] * executor.CONFLICT_ATTEMPTS,
                                                       executor.CONFLICT_ATTEMPTS, "could not be found"),
}


def session() -> mock.MagicMock:
    spark = mock.MagicMock()
    spark._jsparkSession.sessionState.return_value.conf.return_value.getAllConfs.return_value.mkString.return_value = ""
    return spark


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_what_is_run_again(case: tuple[list[str], int, str | None], monkeypatch: pytest.MonkeyPatch) -> None:
    failures, attempts, reported = case
    monkeypatch.setattr(executor.time, "sleep", lambda _s: None)
    calls = []

    def step() -> list[str]:
        calls.append(1)
        if len(calls) <= len(failures):
            raise ExecutionError(failures[len(calls) - 1])
        return ["rows"]

    if reported is None:
        assert with_conflict_retries(session(), step) == ["rows"]
    else:
        with pytest.raises(ExecutionError, match=reported):
            with_conflict_retries(session(), step)
    assert len(calls) == attempts
