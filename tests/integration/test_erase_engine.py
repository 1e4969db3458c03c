"""The erasure engine on real Spark, one session for the module: storage holds the keys after a plain
DELETE and none after erase (also when erase follows that DELETE, or an expiry interrupted after its
commit, including the manifests such an expiry leaves with the key as a column bound); history before the
first key stays readable; a declared hold keeps what it holds; 10,000 keys."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from pyiceberg.table import Table
from typer.testing import CliRunner

from tablepolicy.cli.app import app
from tablepolicy.runtime.erasure.spark_steps import BY_PYARROW, BY_SPARK
from tablepolicy.runtime.orphans import normalize
from tests.integration.conftest import Lake
from tests.integration.erasure_data import ERASED, KEPT, batch, checksum, fill, keys_in_storage, policy, requests_yaml
from tests.integration.evolve import converge
from tests.integration.manifest_scan import manifest_bounds

pytestmark = pytest.mark.spark
KEYS = set(ERASED.values())
SQL_KEYS = "'u\\'1', 'u,2\\n'"  # the same keys as Spark SQL literals, for the DELETE someone else runs


def cli(lake: Lake, *args: str) -> tuple[int, str]:
    env = {f"PYICEBERG_CATALOG__LAKE__{key.upper()}": value for key, value in lake.config.properties.items()}
    result = CliRunner(env=env).invoke(app, [*args, "--catalog", "lake"])
    lake.reload()  # erase commits through pyiceberg: Spark reads the catalog afresh
    return result.exit_code, result.output


def someone_elses_delete(lake: Lake, name: str) -> None:
    """A plain DELETE, as any Spark user would run it (after pyiceberg's appends: Spark's pooled SQLite
    connection would hold a stale read snapshot, so its catalogs are reloaded first)."""
    lake.reload()
    lake.spark.sql(f"DELETE FROM lake.privacy.{name} WHERE user.uid IN ({SQL_KEYS})")


def table_of(lake: Lake, name: str) -> Table:
    table = lake.reader().pyiceberg_table(("privacy", name), fresh=True)
    assert table is not None
    return table


def make(lake: Lake, tmp_path: Path, name: str, mode: str, holds: str = "") -> tuple[Path, Table, int]:
    policies = tmp_path / "policies"
    policies.mkdir(exist_ok=True)
    text = policy(name, mode, holds=holds)
    converge(lake, text)
    (policies / f"{name}.yaml").write_text(text)
    before = fill(table_of(lake, name))
    return policies, table_of(lake, name), before


def erase(lake: Lake, policies: Path, tmp_path: Path, requests: str = requests_yaml(), *extra: str
          ) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    file, proof = tmp_path / "requests.yaml", tmp_path / "proof.json"
    file.write_text(requests)
    proof.unlink(missing_ok=True)
    code, output = cli(lake, "erase", str(policies), "--requests", str(file), "--proof", str(proof), *extra)
    return code, output, json.loads(proof.read_text()) if proof.exists() else {}


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_a_plain_delete_leaves_keys_in_storage_erase_after_it_leaves_none(
    lake: Lake, tmp_path: Path, mode: str
) -> None:
    name = "after_delete_" + mode.replace("-", "_")
    policies, table, before = make(lake, tmp_path, name, mode)
    intact, history = checksum(table), checksum(table, before)
    first_key_files = keys_in_storage(table.location(), KEYS)
    assert len(first_key_files) == 9  # three snapshots x three day partitions

    someone_elses_delete(lake, name)
    assert lake.spark.sql(f"SELECT * FROM lake.privacy.{name} WHERE user.uid IN ({SQL_KEYS})").count() == 0
    assert keys_in_storage(table.location(), KEYS) == first_key_files  # gone from queries, not from storage

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    assert keys_in_storage(table.location(), KEYS) == {}
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["files_still_stored"] == [] and result["rows_after"] == 0
    if mode == "merge-on-read":  # the DELETE only masked the rows: the files are read with its deletes applied
        assert result["statements"][0].startswith(BY_PYARROW)
    # the new files' metrics are Iceberg's own: a key lookup pruned by bounds and a count answered from
    # record counts (aggregate push-down) see every remaining row
    assert lake.spark.sql(f"SELECT * FROM lake.privacy.{name} WHERE user.uid = 'u3'").count() == 3 * 3
    rows = len(table_of(lake, name).scan().to_arrow())
    assert lake.spark.sql(f"SELECT count(*) FROM lake.privacy.{name}").first()[0] == rows == 2 * 3 + 3 * 3 * 2
    assert {Path(f).name for f in result["files_with_keys_before"]} >= {Path(f).name for f in first_key_files}
    expired = result["snapshots_expired"]
    assert expired and all("which held a key of REQ-1, REQ-2" in s["reason"] for s in expired)
    table = table_of(lake, name)
    assert checksum(table) == intact  # every other row, unchanged
    assert before in {s.snapshot_id for s in table.metadata.snapshots}  # history before the first key stays
    assert checksum(table, before) == history
    assert lake.spark.sql(f"SELECT * FROM lake.privacy.{name} VERSION AS OF {before}").count() == 2 * 3
    assert "u'1" not in json.dumps(proof) and "u,2" not in json.dumps(proof)

    code, output, again = erase(lake, policies, tmp_path)  # the ledger says it is done: a re-run skips it
    assert code == 0, output
    assert again["tables"] == [] and {s["request"] for s in again["skipped"]} == {"REQ-1", "REQ-2"}
    assert checksum(table_of(lake, name)) == intact


def test_files_an_interrupted_expiry_left_behind_are_found_and_deleted(lake: Lake, tmp_path: Path) -> None:
    policies, table, before = make(lake, tmp_path, "orphaned", "copy-on-write")
    someone_elses_delete(lake, "orphaned")
    table = table_of(lake, "orphaned")
    history = {s.snapshot_id for s in table.metadata.snapshots if s.sequence_number <= table.snapshot_by_id(before)
               .sequence_number}
    reading = [s.snapshot_id for s in table.metadata.snapshots
               if s.snapshot_id not in history and s.snapshot_id != table.metadata.current_snapshot_id]
    table.maintenance.expire_snapshots().by_ids(reading).commit()  # pyiceberg: the commit, no file deleted
    left = keys_in_storage(table.location(), KEYS)
    assert len(left) == 9  # referenced by no snapshot, still in storage

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert sorted(Path(p).name for p in result["orphans_deleted"]) == sorted(Path(p).name for p in left)
    assert result["snapshots_expired"] == [] and result["state"] == "complete"
    assert keys_in_storage(table.location(), KEYS) == {}


def test_a_declared_hold_keeps_its_snapshot_and_the_proof_says_held(lake: Lake, tmp_path: Path) -> None:
    policies, _, _ = make(lake, tmp_path, "held", "copy-on-write", holds=", holds: [litigation_2026]")
    lake.spark._jsparkSession.sessionState().catalogManager().reset()
    lake.spark.sql("ALTER TABLE lake.privacy.held CREATE TAG litigation_2026")
    tagged = table_of(lake, "held").metadata.refs["litigation_2026"].snapshot_id
    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "held" and not result["complete"] and result["blocking_refs"] == []
    kept = result["held_by"]["litigation_2026"]
    assert len(kept) == 9 and set(kept) == set(result["files_still_stored"])
    assert "legal hold 'litigation_2026' keeps 9 file(s)" in output
    assert lake.spark.sql("SELECT * FROM lake.privacy.held WHERE user.uid = 'u\\'1'").count() == 0
    rows = lake.spark.sql(f"SELECT * FROM lake.privacy.held VERSION AS OF {tagged} WHERE user.uid = 'u\\'1'")
    assert rows.count() == 9  # the held snapshot still answers


def test_a_hold_naming_no_ref_is_refused_before_anything_runs(lake: Lake, tmp_path: Path) -> None:
    policies, table, _ = make(lake, tmp_path, "misheld", "copy-on-write", holds=", holds: [nosuch]")
    snapshots = len(table.metadata.snapshots)
    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 1 and proof == {}, output
    assert "misheld.yaml:10:51: error TP443: hold 'nosuch' names no tag or branch of privacy.misheld" in output
    assert len(table_of(lake, "misheld").metadata.snapshots) == snapshots


def test_dry_run_shows_files_snapshots_and_statements_without_key_values(lake: Lake, tmp_path: Path) -> None:
    policies, table, _ = make(lake, tmp_path, "preview", "merge-on-read")
    code, output, _ = erase(lake, policies, tmp_path, requests_yaml(), "--dry-run")
    assert code == 0, output
    assert ("privacy.preview: 9 file(s) hold 18 row(s) with a key (18 row(s) in 9 file(s) of the current "
            "snapshot, 0 file(s) no snapshot references)") in output
    assert output.count("    file ") == 9 and output.count("    expire snapshot ") == 3
    assert "DELETE FROM `lake`.`privacy`.`preview` WHERE `user`.`uid` IN (SELECT `k" in output
    assert "-- expire snapshots of `lake`.`privacy`.`preview`: " in output
    assert "u'1" not in output and "u,2" not in output
    assert len(table_of(lake, "preview").metadata.snapshots) == len(table.metadata.snapshots)


def empty_table(lake: Lake, tmp_path: Path, name: str) -> Path:
    """A copy-on-write table with no rows; returns its policies folder."""
    policies = tmp_path / "policies"
    policies.mkdir()
    text = policy(name, "copy-on-write")
    converge(lake, text)
    (policies / f"{name}.yaml").write_text(text)
    return policies


def test_ten_thousand_keys(lake: Lake, tmp_path: Path) -> None:
    policies = empty_table(lake, tmp_path, "many")
    table = table_of(lake, "many")
    erased = {f"REQ-{i}": f"subject-{i}" for i in range(10_000)}
    table.append(batch(0, [*erased.values(), *KEPT], days=1))
    table.append(batch(100_000, [*list(erased.values())[::7], *KEPT], days=2))
    table = table_of(lake, "many")
    intact = checksum(table, without=set(erased.values()))
    code, output, proof = erase(lake, policies, tmp_path, requests_yaml(erased))
    assert code == 0, output[-2000:]
    assert proof["tables"][0]["state"] == "complete"
    assert keys_in_storage(table.location(), set(erased.values())) == {}
    assert checksum(table_of(lake, "many"), without=set(erased.values())) == intact
    assert sorted(r.user.uid for r in lake.spark.sql("SELECT user FROM lake.privacy.many").collect()) == sorted(
        KEPT * 3)


def spark_fill(lake: Lake, name: str) -> None:
    """The rows fill() appends, written by Spark: its manifests carry every column's bounds, the key's too."""
    lake.spark._jsparkSession.sessionState().catalogManager().reset()
    schema = "event_id long, user struct<uid: string, name: string>, ts timestamp"
    for first, users in [(1000, ["old0"]), (2000, ["old1"]),
                         *[(10_000 * (i + 1), [*ERASED.values(), *KEPT]) for i in range(3)]]:
        lake.spark.createDataFrame(batch(first, users).to_pylist(), schema).writeTo(f"lake.privacy.{name}").append()


def key_bounds(table: Table) -> dict[str, int]:
    """Independently: every avro manifest under the location with a bound of user.uid equal to an erased key."""
    field_id = table.schema().find_field("user.uid").field_id
    root = Path(table.location().removeprefix("file:").removeprefix("//"))
    found = {str(path): hits for path in root.rglob("*.avro")
             if (hits := sum(v in KEYS for v in manifest_bounds(path).get(field_id, [])))}
    return found


def test_manifests_an_interrupted_expiry_left_behind_lose_their_key_bounds(lake: Lake, tmp_path: Path) -> None:
    policies = empty_table(lake, tmp_path, "bounded")
    spark_fill(lake, "bounded")
    table = table_of(lake, "bounded")
    intact = checksum(table)
    someone_elses_delete(lake, "bounded")
    table = table_of(lake, "bounded")
    current = table.metadata.current_snapshot_id
    reading = [s.snapshot_id for s in table.metadata.snapshots[2:] if s.snapshot_id != current]
    assert len(reading) == 3
    table.maintenance.expire_snapshots().by_ids(reading).commit()  # the commit, no file deleted: a kill's leftovers
    left = key_bounds(table)
    table = table_of(lake, "bounded")
    read = {normalize(m.manifest_path) for s in table.metadata.snapshots for m in s.manifests(table.io)}
    orphaned = sorted(Path(p).name for p in set(left) - read)
    assert len(orphaned) == 3  # the three expired appends' manifests: the key is every file's lower bound
    assert set(left) & read  # and the DELETE's own: it lists the files it replaced with their bounds
    assert len(keys_in_storage(table.location(), KEYS)) == 9

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["manifests_with_keys"] == [], result
    assert sorted(Path(p).name for p in result["manifests_deleted"]) == orphaned
    assert any(s.startswith("-- rewrite manifests of ") for s in result["statements"])
    assert result["manifests_scanned"] >= 2  # the current snapshot's manifests, checked and kept
    assert key_bounds(table) == {}
    assert keys_in_storage(table.location(), KEYS) == {}
    assert checksum(table_of(lake, "bounded")) == intact  # every manifest the table reads is still there
    kept_rows = 3 * len(KEPT) * 3 + 2 * 3  # three batches of the kept users over three days, two of one old user
    assert lake.spark.sql("SELECT * FROM lake.privacy.bounded").count() == kept_rows


def test_erases_own_delete_leaves_no_key_as_a_bound(lake: Lake, tmp_path: Path) -> None:
    """A DELETE's manifests list the files it replaced with their column bounds (Spark's and pyiceberg's do):
    erase's own delete writes those entries without bounds, so no manifest of the current snapshot holds a key
    and only the snapshots before the delete are expired.
    snapshot with the others."""
    policies = empty_table(lake, tmp_path, "rebounded")
    spark_fill(lake, "rebounded")
    table = table_of(lake, "rebounded")
    intact, snapshots = checksum(table), len(table.metadata.snapshots)
    assert len(key_bounds(table)) == 3  # the three appends holding the keys

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["manifests_with_keys"] == [], result
    # each statement's last line (the DELETE's first says how it is committed): no manifest rewrite
    assert [s.splitlines()[-1].split("(")[0].split(": ")[0] for s in result["statements"]] == [
        "DELETE FROM `lake`.`privacy`.`rebounded` WHERE `user`.`uid` IN ", "-- expire snapshots of "
        "`lake`.`privacy`.`rebounded`"]
    assert result["statements"][0].startswith(BY_PYARROW)
    table = table_of(lake, "rebounded")
    assert len(result["snapshots_expired"]) == 3  # the three appends with the keys
    assert len(table.metadata.snapshots) == snapshots + 1 - 3  # + the delete
    assert key_bounds(table) == {}
    assert keys_in_storage(table.location(), KEYS) == {}
    assert checksum(table) == intact


def equality_delete(lake: Lake, name: str, event_id: int) -> None:
    """Someone else's equality delete of one row by ``event_id`` (as Flink's upserts write them), in the
    partition of the file holding it."""
    spark, jvm = lake.spark, lake.spark._jvm
    spark._jsparkSession.sessionState().catalogManager().reset()
    (held,) = [r[0] for r in spark.sql(f"SELECT _file FROM lake.privacy.{name} WHERE event_id = {event_id}").collect()]
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, f"lake.privacy.{name}")
    tasks, partition = table.newScan().planFiles().iterator(), None
    while tasks.hasNext():
        task = tasks.next()
        if task.file().location() == held:
            partition = task.file().partition()
    field_id = table.schema().findField("event_id").fieldId()
    location = f"{table.location()}/data/equality-delete-{event_id}.parquet"
    local = Path(location.removeprefix("file:").removeprefix("//"))
    schema = pa.schema([pa.field("event_id", pa.int64(), False, {b"PARQUET:field_id": str(field_id).encode()})])
    pq.write_table(pa.table({"event_id": pa.array([event_id], pa.int64())}, schema=schema), local)
    ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    ids[0] = field_id
    delete = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).ofEqualityDeletes(ids)
              .withPath(location).withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
              .withFileSizeInBytes(local.stat().st_size).withPartition(partition).withRecordCount(1).build())
    table.newRowDelta().addDeletes(delete).commit()


def test_files_an_equality_delete_applies_to_are_rewritten_by_spark(lake: Lake, tmp_path: Path) -> None:
    """pyiceberg cannot read a file an equality delete file applies to: Spark rewrites the files instead, the
    equality delete applied (the row it removed does not come back) and the keys gone from storage."""
    policies, table, _ = make(lake, tmp_path, "upserted", "copy-on-write")
    gone = 30_000 + 2 * 3  # u3's event in day 0 of the last append, in a file holding the keys
    equality_delete(lake, "upserted", gone)
    events = {r[0] for r in lake.spark.sql("SELECT event_id FROM lake.privacy.upserted "
                                          f"WHERE user.uid NOT IN ({SQL_KEYS})").collect()}
    assert gone not in events and len(events) == 2 * 3 + 3 * 3 * 2 - 1

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "complete", result
    assert result["statements"][0].startswith(BY_SPARK) and "equality deletes" in result["statements"][0]
    assert keys_in_storage(table.location(), KEYS) == {}
    lake.spark._jsparkSession.sessionState().catalogManager().reset()
    assert {r[0] for r in lake.spark.sql("SELECT event_id FROM lake.privacy.upserted").collect()} == events



def equality_delete_of_subjects(lake: Lake, name: str, uids: list[str]) -> str:
    """Someone else's equality delete keyed on ``user.uid`` (a Flink upsert keyed on the subject): the file
    holds the uids themselves, in the partition of the table's first file. Returns its location."""
    spark, jvm = lake.spark, lake.spark._jvm
    lake.reload()
    table = jvm.org.apache.iceberg.spark.Spark3Util.loadIcebergTable(spark._jsparkSession, f"lake.privacy.{name}")
    partition = table.newScan().planFiles().iterator().next().file().partition()
    uid, user = table.schema().findField("user.uid").fieldId(), table.schema().findField("user").fieldId()
    location = f"{table.location()}/data/equality-delete-by-subject.parquet"
    local = Path(location.removeprefix("file:").removeprefix("//"))
    field = pa.field("uid", pa.string(), True, {b"PARQUET:field_id": str(uid).encode()})
    schema = pa.schema([pa.field("user", pa.struct([field]), True, {b"PARQUET:field_id": str(user).encode()})])
    pq.write_table(pa.table({"user": pa.array([{"uid": u} for u in uids], pa.struct([field]))}, schema=schema), local)
    ids = spark.sparkContext._gateway.new_array(jvm.int, 1)
    ids[0] = uid
    delete = (jvm.org.apache.iceberg.FileMetadata.deleteFileBuilder(table.spec()).ofEqualityDeletes(ids)
              .withPath(location).withFormat(jvm.org.apache.iceberg.FileFormat.PARQUET)
              .withFileSizeInBytes(local.stat().st_size).withPartition(partition).withRecordCount(len(uids)).build())
    table.newRowDelta().addDeletes(delete).commit()
    return str(local)


@pytest.mark.parametrize("mode", ["copy-on-write", "merge-on-read"])
def test_an_equality_delete_file_holding_a_key_goes_and_its_other_deletes_stand(
    lake: Lake, tmp_path: Path, mode: str
) -> None:
    """An equality delete file keyed on the subject holds the key itself: erase rewrites the files it served
    (in Spark: pyiceberg cannot read them) and then removes it, the key is gone from storage, and the rows it
    deleted of a kept user stay deleted."""
    name = "keyed_upserts_" + mode.replace("-", "_")
    policies, table, _ = make(lake, tmp_path, name, mode)
    delete_file = equality_delete_of_subjects(lake, name, ["u'1", "u3"])  # an erased key and a kept one
    lake.reload()
    rows = lambda: sorted(r[0] for r in lake.spark.sql(  # noqa: E731
        f"SELECT event_id FROM lake.privacy.{name} WHERE user.uid NOT IN ({SQL_KEYS})").collect())
    visible = rows()
    assert len(visible) == 2 * 3 + 3 * 3 * 2 - 3  # u3's three rows of the delete's partition are gone
    assert delete_file in keys_in_storage(table.location(), KEYS)

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "complete", result
    assert any(s.startswith("-- remove delete files of ") for s in result["statements"]), result["statements"]
    assert keys_in_storage(table.location(), KEYS) == {}
    assert not Path(delete_file).exists()
    assert rows() == visible  # u3's deleted rows did not come back
