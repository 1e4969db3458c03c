"""Erasure's commits through pyiceberg on a real SQLite catalog, without a JVM: the delete's overwrite (rows,
bounds, the summary, what conflicts and what does not), the manifest rewrite and the expiry (what it deletes,
what stays readable). The same steps under kills and a writer in another process: tests/integration."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.manifest import DataFile, DataFileContent, ManifestEntry, ManifestEntryStatus
from pyiceberg.typedef import Record

from tablepolicy.runtime.erasure.arrow_rewrite import LeftToSpark, StagedRewrite, stage_rewrite
from tablepolicy.runtime.erasure.commits import (
    FILE_PATH_FIELD,
    _applies,
    _replaced,
    commit_rewrite,
    expire,
    rewrite_manifests,
)
from tablepolicy.runtime.erasure.survey import table_reach
from tablepolicy.runtime.manifests import READS
from tablepolicy.runtime.orphans import normalize
from tests.unit.test_erasure_rewrite import ONE, files_of, keys, lake

U1 = keys(ONE, [("u1",)])


def users(table: Any, snapshot_id: int | None = None) -> list[str]:
    return sorted(table.scan(snapshot_id=snapshot_id).to_arrow().column("user_id").to_pylist())


def entries(table: Any) -> list[Any]:
    snapshot = table.current_snapshot()
    return [e for m in READS.manifests(table.io, snapshot) for e in READS.entries(table.io, m, discard_deleted=False)]


def staged_eu(table: Any) -> tuple[frozenset[str], StagedRewrite]:
    holding = frozenset(path for path, region in files_of(table).items() if region == "eu")
    staged = stage_rewrite(table, holding, U1)
    assert isinstance(staged, StagedRewrite)
    return holding, staged


def no_restage(table: Any) -> StagedRewrite | LeftToSpark:
    raise AssertionError("nothing conflicted: the rewrite is not staged again")


@pytest.mark.parametrize("version", ["1", "2"])
def test_the_delete_swaps_the_files_and_keeps_no_key_as_a_bound(tmp_path: Path, version: str) -> None:
    table = lake(tmp_path, **{"format-version": version})
    assert table.metadata.format_version == int(version)
    before = users(table)
    holding, staged = staged_eu(table)
    commit_rewrite("privacy.events", table.refresh, staged, no_restage)
    table = table.refresh()
    assert users(table).count("u1") == 2 and len(users(table)) == len(before) - 4  # eu's four u1 rows gone
    assert sorted(files_of(table).values()) == ["eu", "eu", "us", "us"] and not set(files_of(table)) & holding
    summary = table.current_snapshot().summary
    assert summary["tablepolicy.operation"] == "erasure"
    assert summary["tablepolicy.erasure.read-snapshot-id"] == str(staged.snapshot_id)
    assert summary["total-records"] == str(len(table.scan().to_arrow()))
    deleted = [e for e in entries(table) if e.status == ManifestEntryStatus.DELETED]
    assert {normalize(e.data_file.file_path) for e in deleted} == holding
    assert all(not e.data_file.lower_bounds and not e.data_file.upper_bounds for e in deleted)  # the keys
    assert all(e.data_file.lower_bounds for e in entries(table) if e.status != ManifestEntryStatus.DELETED)


def test_an_append_meanwhile_does_not_conflict(tmp_path: Path) -> None:
    table = lake(tmp_path)
    _, staged = staged_eu(table)
    table.append(pa.table({"event_id": pa.array([900], pa.int64()), "user_id": ["w"], "region": ["eu"]}))
    commit_rewrite("privacy.events", table.refresh, staged, no_restage)
    table = table.refresh()
    assert "w" in users(table) and users(table).count("u1") == 2  # the append kept, eu's u1 rows gone
    assert table.current_snapshot().parent_snapshot_id != staged.snapshot_id  # committed on the new head


def test_a_file_replaced_meanwhile_conflicts_and_the_rewrite_is_staged_again(tmp_path: Path) -> None:
    table = lake(tmp_path)
    holding, staged = staged_eu(table)
    first = [Path(p.removeprefix("file://")) for f in staged.files for p, _ in f.written]
    table.delete("event_id == 1")  # someone else's copy-on-write delete rewrites an eu file
    restaged: list[int] = []

    def restage(latest: Any) -> StagedRewrite | LeftToSpark:
        restaged.append(latest.metadata.current_snapshot_id)
        return stage_rewrite(latest, frozenset(files_of(latest)) & holding, U1)

    commit_rewrite("privacy.events", table.refresh, staged, restage)
    table = table.refresh()
    assert restaged == [table.current_snapshot().parent_snapshot_id]
    assert not any(p.exists() for p in first)  # the first attempt's files are gone
    eu = table.scan(row_filter="region == 'eu'").to_arrow()
    assert eu.column("event_id").to_pylist().count(1) == 0  # the other writer's delete stands
    # the file that writer wrote is not one the survey found: it still holds u1 (erase's next survey finds it)
    assert "u1" in eu.column("user_id").to_pylist()


@pytest.mark.parametrize(("file", "replaced"), [
    ({"content": DataFileContent.DATA, "file_path": "file:///w/a.parquet"}, True),
    ({"content": DataFileContent.DATA, "file_path": "file:///w/b.parquet"}, False),
    ({"content": DataFileContent.POSITION_DELETES, "file_path": "/w/d.parquet",
      "referenced_data_file": "file:///w/a.parquet"}, True),
    ({"content": DataFileContent.POSITION_DELETES, "file_path": "/w/d.parquet",
      "lower_bounds": {FILE_PATH_FIELD: b"/w/a.parquet"}, "upper_bounds": {FILE_PATH_FIELD: b"/w/a.parquet"}}, True),
    ({"content": DataFileContent.POSITION_DELETES, "file_path": "/w/d.parquet",
      "lower_bounds": {FILE_PATH_FIELD: b"/w/a.parquet"}, "upper_bounds": {FILE_PATH_FIELD: b"/w/b.parquet"}}, False),
    ({"content": DataFileContent.EQUALITY_DELETES, "file_path": "/w/e.parquet",
      "referenced_data_file": "/w/a.parquet"}, False),
], ids=["a replaced data file", "another data file", "a deletion vector or file-scoped position deletes",
        "position deletes of one file, by their path bounds", "position deletes of two files",
        "equality deletes serve a partition, not a file"])
def test_which_files_the_delete_removes(file: dict[str, Any], replaced: bool) -> None:
    data_file = DataFile.from_args(_table_format_version=3, **file)
    assert _replaced(data_file, frozenset({"/w/a.parquet"})) is replaced


def test_the_manifest_rewrite_drops_deleted_entries_and_changes_no_row(tmp_path: Path) -> None:
    table = lake(tmp_path)
    table.delete("user_id == 'u1'")  # someone else's delete: its deleted entries keep u1 as a bound
    table = table.refresh()
    rows = users(table)
    assert [e for e in entries(table) if e.status == ManifestEntryStatus.DELETED]
    revealing = frozenset(normalize(m.manifest_path) for m in table.current_snapshot().manifests(table.io))
    assert rewrite_manifests("privacy.events", table.refresh, revealing) == len(revealing)
    table = table.refresh()
    assert table.current_snapshot().summary.operation.value == "replace"
    assert not [e for e in entries(table) if e.status == ManifestEntryStatus.DELETED]
    assert users(table) == rows


def test_the_expiry_deletes_what_only_the_expired_snapshots_read(tmp_path: Path) -> None:
    table = lake(tmp_path)
    holding, staged = staged_eu(table)
    commit_rewrite("privacy.events", table.refresh, staged, no_restage)
    table = table.refresh()
    first, second, erased = (s.snapshot_id for s in table.metadata.snapshots)
    before = table_reach(table)
    kept_rows = users(table, first)
    deleted = expire("privacy.events", table.refresh, [second], before, table_reach)
    table = table.refresh()
    assert [s.snapshot_id for s in table.metadata.snapshots] == [first, erased]
    # the second append's manifest list, and its eu file (the first snapshot does not read it, the erasure
    # replaced it): not the first append's files, which the first snapshot still reads
    second_eu = {p for p in holding if p not in before.live[first]}
    (second_manifest,) = before.manifests[second] - before.manifests[first] - before.manifests[erased]
    assert set(deleted) == {before.list_of[second], second_manifest} | second_eu
    assert len(second_eu) == 1 and set(files_of(table)) <= set(before.live[erased])  # the us files stay
    assert not any(Path(p).exists() for p in deleted)
    assert users(table, first) == kept_rows  # time travel to the kept history still works
    assert users(table, erased).count("u1") == 2


def entry(content: DataFileContent, sequence: int, partition: str, spec_id: int = 0, **file: Any) -> Any:
    data_file = DataFile.from_args(content=content, file_path=file.pop("path", "/w/x.parquet"),
                                   partition=Record(partition), **file)
    data_file.spec_id = spec_id
    return ManifestEntry.from_args(status=ManifestEntryStatus.EXISTING, snapshot_id=1, sequence_number=sequence,
                                   file_sequence_number=sequence, data_file=data_file)


EQ, POS, DATA = DataFileContent.EQUALITY_DELETES, DataFileContent.POSITION_DELETES, DataFileContent.DATA
ONE_FILE = {"lower_bounds": {FILE_PATH_FIELD: b"/w/a.parquet"}, "upper_bounds": {FILE_PATH_FIELD: b"/w/a.parquet"}}
APPLIES = {
    "an equality delete, an older file of its partition": (entry(EQ, 5, "eu"), entry(DATA, 4, "eu"), True),
    "an equality delete, a file as new as it": (entry(EQ, 5, "eu"), entry(DATA, 5, "eu"), False),
    "an equality delete, another partition": (entry(EQ, 5, "eu"), entry(DATA, 4, "us"), False),
    "an unpartitioned equality delete, any partition": (entry(EQ, 5, "", spec_id=1), entry(DATA, 4, "us"), True),
    "position deletes, a file as new as them": (entry(POS, 5, "eu"), entry(DATA, 5, "eu"), True),
    "position deletes of one file, another file": (entry(POS, 5, "eu", **ONE_FILE),
                                                   entry(DATA, 4, "eu", path="/w/b.parquet"), False),
    "position deletes of one file, that file": (entry(POS, 5, "eu", **ONE_FILE),
                                                entry(DATA, 4, "eu", path="/w/a.parquet"), True),
}


@pytest.mark.parametrize("case", APPLIES.values(), ids=APPLIES.keys())
def test_whether_a_delete_file_still_applies(case: tuple[Any, Any, bool]) -> None:
    delete, data, applies = case
    assert _applies(delete, data, unpartitioned={1}) is applies


def test_a_conflict_leaves_no_manifest_behind(tmp_path: Path) -> None:
    table = lake(tmp_path)
    _, staged = staged_eu(table)
    table.delete("event_id == 1")  # replaces an eu file the rewrite read
    metadata = set((tmp_path / "privacy" / "events" / "metadata").iterdir())
    commit_rewrite("privacy.events", table.refresh, staged, lambda latest: LeftToSpark("the test stops here"))
    assert set((tmp_path / "privacy" / "events" / "metadata").iterdir()) == metadata


def test_a_commit_the_server_answers_with_an_error_keeps_its_files_and_says_to_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A REST server's 5xx to a commit (pyiceberg: CommitStateUnknownException): the commit may have landed, so the
    files it wrote stay (a re-run's survey decides) and the error says so, naming no traceback."""
    from pyiceberg.exceptions import CommitStateUnknownException

    from tablepolicy.runtime.erasure import commits
    from tablepolicy.runtime.executor import ExecutionError

    table = lake(tmp_path)
    _, staged = staged_eu(table)
    written = [Path(p.removeprefix("file://")) for f in staged.files for p, _ in f.written]

    def answered_500(*_args: Any, **_kwargs: Any) -> None:
        raise CommitStateUnknownException("ServiceFailure: Server error: 500 Internal Server Error")

    monkeypatch.setattr(commits, "_overwrite_latest", answered_500)
    with pytest.raises(ExecutionError) as raised:
        commit_rewrite("privacy.events", table.refresh, staged, no_restage)
    assert str(raised.value) == (
        "privacy.events: erasure: delete the subjects' rows: ServiceFailure: Server error: 500 Internal Server Error: "
        "the commit's outcome is unknown; run erase again once the catalog server answers (the requests stay "
        "pending until a proof)")
    assert written and all(p.exists() for p in written)


@pytest.mark.parametrize("version", ["1", "2"])
def test_the_manifests_a_delete_writes_are_one_avro_block_each_and_read_back_whole(tmp_path: Path,
                                                                                    version: str) -> None:
    """pyiceberg writes a block per entry (a sync marker and a deflate each); erasure's commit writes one."""
    table = lake(tmp_path, **{"format-version": version})
    before = {e.data_file.file_path for e in entries(table) if e.status != ManifestEntryStatus.DELETED}
    holding, staged = staged_eu(table)
    commit_rewrite("privacy.events", table.refresh, staged, no_restage)
    table = table.refresh()
    head = table.metadata.current_snapshot_id
    written = [m for m in table.current_snapshot().manifests(table.io) if m.added_snapshot_id == head]
    assert written
    for manifest in written:
        data = table.io.new_input(manifest.manifest_path).open().read()
        sync = data[-16:]  # every block ends with the file's sync marker, the header too
        assert data.count(sync) == 2, manifest.manifest_path  # the header's and one block's
        assert len(manifest.fetch_manifest_entry(table.io, discard_deleted=False)) == (
            manifest.added_files_count + manifest.existing_files_count + manifest.deleted_files_count)
    live = {e.data_file.file_path for e in entries(table) if e.status != ManifestEntryStatus.DELETED}
    assert {normalize(p) for p in before - live} == holding
