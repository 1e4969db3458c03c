"""Erasure through tags and branches as the policy decides per ref (``lifecycle.erasure.refs``), on real Spark
and the embedded SQLite catalog: rewrite deletes the keys from a branch's head and from a tag's snapshot (the
tag re-pointed, its retention kept, other subjects' rows all there), expire drops the ref, hold keeps it, and a
ref with no decision blocks naming the requests and the three choices. The certificate says which refs were
kept, rewritten or dropped and why."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from pyiceberg.table import Table
from pyiceberg.table.refs import SnapshotRefType

from tablepolicy.runtime.erasure.snapshot_delete import TEMPORARY_BRANCH
from tablepolicy.runtime.erasure.spark_steps import BY_PYARROW, BY_SPARK
from tests.integration.conftest import Lake, sqlite_lake
from tests.integration.erasure_data import ERASED, KEPT, batch, checksum, fill, keys_in_storage, policy, requests_yaml
from tests.integration.evolve import converge
from tests.integration.test_erase_engine import cli, equality_delete, table_of

pytestmark = pytest.mark.spark
KEYS = set(ERASED.values())
DAY_MS = 86_400_000


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lake]:
    with sqlite_lake(tmp_path_factory.mktemp("lake")) as made:
        yield made


def make(lake: Lake, tmp_path: Path, name: str, decisions: str) -> tuple[Path, Table]:
    """privacy.``name`` filled (keys in the last three snapshots), its policy declaring ``decisions``."""
    policies = tmp_path / "policies"
    policies.mkdir(exist_ok=True)
    text = policy(name, "copy-on-write", holds=decisions)
    converge(lake, text)
    (policies / f"{name}.yaml").write_text(text)
    fill(table_of(lake, name))
    lake.reload()
    return policies, table_of(lake, name)


def sql(lake: Lake, statement: str) -> None:
    lake.reload()
    lake.spark.sql(statement)


def erase(lake: Lake, policies: Path, tmp_path: Path, *extra: str) -> tuple[int, str, dict]:  # type: ignore[type-arg]
    file, proof = tmp_path / "requests.yaml", tmp_path / "proof.json"
    file.write_text(requests_yaml())
    proof.unlink(missing_ok=True)
    code, output = cli(lake, "erase", str(policies), "--requests", str(file), "--proof", str(proof), *extra)
    return code, output, json.loads(proof.read_text()) if proof.exists() else {}


def uids(lake: Lake, name: str, ref: str) -> list[str]:
    """The subjects a ref shows, read by Spark (VERSION AS OF the ref's name)."""
    rows = lake.spark.sql(f"SELECT user.uid FROM lake.privacy.{name} VERSION AS OF '{ref}'").collect()
    return sorted(r.uid for r in rows)


def test_rewrite_deletes_the_keys_through_a_tag_and_a_branch(lake: Lake, tmp_path: Path) -> None:
    policies, _ = make(lake, tmp_path, "audited", ", refs: {month_end: rewrite, audit: rewrite}")
    sql(lake, "ALTER TABLE lake.privacy.audited CREATE TAG month_end RETAIN 400 DAYS")
    sql(lake, "ALTER TABLE lake.privacy.audited CREATE BRANCH audit RETAIN 30 DAYS WITH SNAPSHOT RETENTION 2 SNAPSHOTS")
    # rows main does not have, written by Spark (pyiceberg 0.12's own commit to a branch resets its retention)
    rows = ", ".join(f"({90_000 + i}, named_struct('uid', {uid}, 'name', 'n'), TIMESTAMP '2026-11-01 10:00:00+00:00')"
                     for i, uid in enumerate(["'u\\'1'", "'u,2\\n'", "'u5'"]))
    sql(lake, f"INSERT INTO lake.privacy.audited.branch_audit VALUES {rows}")
    table = table_of(lake, "audited")
    table.append(batch(95_000, KEPT, days=1))  # main moves on: the tag is not main's head any more
    table = table_of(lake, "audited")
    tag, branch = table.metadata.refs["month_end"], table.metadata.refs["audit"]
    assert (branch.max_ref_age_ms, branch.min_snapshots_to_keep) == (30 * DAY_MS, 2)
    tag_rows, branch_rows = checksum(table, tag.snapshot_id), checksum(table, branch.snapshot_id)
    assert len(keys_in_storage(table.location(), KEYS)) == 10

    code, output, _ = erase(lake, policies, tmp_path, "--dry-run")  # the snapshots the rewrites release expire too
    assert code == 0, output
    assert all(f"    expire snapshot {ref.snapshot_id}: " in output for ref in (tag, branch))
    assert (f"tag 'month_end': the keys are deleted through it (a new snapshot on the tag's, the tag re-pointed, its "
            f"retention kept): snapshot {tag.snapshot_id} reads 9 file(s) holding a key of REQ-1, REQ-2") in output
    assert table_of(lake, "audited").metadata.refs["month_end"] == tag

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "complete" and result["blocking_refs"] == [] and result["held_by"] == {}
    after = table_of(lake, "audited")
    new_tag, new_branch = after.metadata.refs["month_end"], after.metadata.refs["audit"]
    # the tag: a new snapshot on its old one, same retention, every other row there, no key
    assert new_tag.snapshot_id != tag.snapshot_id and new_tag.snapshot_ref_type == SnapshotRefType.TAG
    assert new_tag.max_ref_age_ms == 400 * DAY_MS
    assert after.metadata.snapshot_by_id(new_tag.snapshot_id).parent_snapshot_id in (tag.snapshot_id, None)
    assert checksum(after, new_tag.snapshot_id) == tag_rows
    assert not KEYS & set(uids(lake, "audited", "month_end")) and set(KEPT) <= set(uids(lake, "audited", "month_end"))
    # the branch: its head moved to a snapshot without the keys, retention kept, its own rows there
    assert new_branch.snapshot_id != branch.snapshot_id and new_branch.snapshot_ref_type == SnapshotRefType.BRANCH
    assert (new_branch.max_ref_age_ms, new_branch.min_snapshots_to_keep) == (30 * DAY_MS, 2)
    assert checksum(after, new_branch.snapshot_id) == branch_rows
    assert "u5" in uids(lake, "audited", "audit") and not KEYS & set(uids(lake, "audited", "audit"))
    # the old snapshots read keys: expired, and storage holds no key any more
    gone = {s["snapshot_id"] for s in result["snapshots_expired"]}
    assert {tag.snapshot_id, branch.snapshot_id} <= gone
    assert not gone & {s.snapshot_id for s in after.metadata.snapshots}
    assert keys_in_storage(after.location(), KEYS) == {}
    # the proof and the certificate say what happened to each ref, and why
    refs = {r["ref"]: r for r in result["refs"]}
    assert refs["month_end"] | {"reason": ""} == {
        "ref": "month_end", "kind": "tag", "decision": "rewrite", "reason": "",
        "outcome": f"rewritten without the keys (now snapshot {new_tag.snapshot_id}, retention kept)",
        "snapshot_before": tag.snapshot_id, "snapshot_after": new_tag.snapshot_id,
        "files": refs["month_end"]["files"], "requests": ["REQ-1", "REQ-2"]}
    assert refs["month_end"]["reason"].startswith("rewrite declared at ")
    assert refs["month_end"]["reason"].endswith("policies/audited.yaml:10")  # the file as findings name it, and line
    assert refs["audit"]["snapshot_after"] == new_branch.snapshot_id and len(refs["audit"]["files"]) == 10
    statements = "\n".join(result["statements"])
    assert statements.count(BY_PYARROW) == 3  # main, the tag and the branch: no JVM
    assert "REPLACE TAG `month_end` AS OF VERSION" in statements and "committed on branch `audit`" in statements
    certificate = proof["certificate"]["requests"][0]["tables"][0]["proof"]["refs"]
    assert [(r["ref"], r["decision"], r["files"]) for r in certificate] == [("audit", "rewrite", 10),
                                                                           ("month_end", "rewrite", 9)]
    assert (f"tag 'month_end' rewritten without the keys (now snapshot {new_tag.snapshot_id}, retention kept) "
            "(rewrite declared at ") in output
    assert "u'1" not in json.dumps(proof)


def test_expire_drops_the_ref_hold_keeps_it_and_no_decision_blocks(lake: Lake, tmp_path: Path) -> None:
    policies, _ = make(lake, tmp_path, "decided", ", holds: [litigation], refs: {scratch: expire}")
    for ref in ("TAG litigation", "BRANCH scratch", "TAG forgotten"):
        sql(lake, f"ALTER TABLE lake.privacy.decided CREATE {ref}")
    table = table_of(lake, "decided")
    held, forgotten = table.metadata.refs["litigation"].snapshot_id, table.metadata.refs["forgotten"].snapshot_id

    code, output, proof = erase(lake, policies, tmp_path, "--dry-run")
    assert code == 1 and proof == {}, output  # the run would stop at the forgotten tag: the dry run says so
    assert ("error: the erasure would be blocked on privacy.decided (by forgotten): a tag or branch keeps a file "
            "holding a key and lifecycle.erasure.refs decides nothing for it") in output
    assert "tag 'litigation' is kept (legal hold): snapshot" in output
    assert "branch 'scratch' is dropped so its snapshots can be expired: snapshot" in output
    assert f"blocked by tag 'forgotten': snapshot {forgotten} reads 9 file(s) holding a key of REQ-1, REQ-2" in output
    assert "ALTER TABLE `lake`.`privacy`.`decided` DROP BRANCH `scratch`;" in output
    assert set(table_of(lake, "decided").metadata.refs) == {"main", "litigation", "scratch", "forgotten"}

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 1, output
    (result,) = proof["tables"]
    assert result["state"] == "incomplete" and result["blocking_refs"] == ["forgotten"]
    assert list(result["held_by"]) == ["litigation"]
    after = table_of(lake, "decided")
    assert set(after.metadata.refs) == {"main", "litigation", "forgotten"}  # scratch dropped, the others kept
    assert after.metadata.refs["litigation"].snapshot_id == held
    assert sorted(set(uids(lake, "decided", "litigation")) & KEYS) == sorted(KEYS)  # the hold still answers
    assert not KEYS & set(uids(lake, "decided", "main"))
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert lines == [
        f"error: privacy.decided: tag 'forgotten' keeps snapshot {forgotten}, which reads 9 file(s) holding a key of "
        "REQ-1, REQ-2, and the policy does not say what erasure does with it: declare lifecycle.erasure.refs: "
        "{forgotten: hold | rewrite | expire} (hold (legal hold: kept, the request held for this table), rewrite "
        "(the keys deleted through it) or expire (the ref dropped so its snapshots can be expired)) and run erase "
        "again"], output
    refs = {r["ref"]: (r["decision"], r["outcome"], r["reason"].split(" at ")[0], r["snapshot_after"])
            for r in result["refs"]}
    assert refs == {"forgotten": (None, "blocked the erasure", "no decision in lifecycle.erasure.refs", forgotten),
                    "litigation": ("hold", "kept", "legal hold declared", held),
                    "scratch": ("expire", "dropped, its snapshots expirable", "expire declared", None)}
    assert "branch 'scratch' dropped, its snapshots expirable (expire declared at " in output
    assert ("privacy.decided: failed: 18 row(s) in 9 file(s) (a run of 2 request(s)), 9 file(s) rewritten, "
            "2 snapshot(s) expired, 0 unreadable leftover file(s) of a killed writer deleted, NOT verified: 18 row(s), "
            "9 referenced and 9 stored file(s) still hold a key; tag 'forgotten' blocked the erasure (no decision in "
            "lifecycle.erasure.refs; it kept 9 file(s) with a key of REQ-1, REQ-2); tag 'litigation' kept (legal hold "
            "declared at ") in output

    # git decides: the forgotten tag is expired too; the next run finishes, only the hold keeps keys
    text = (policies / "decided.yaml").read_text().replace("scratch: expire", "scratch: expire, forgotten: expire")
    (policies / "decided.yaml").write_text(text)
    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    assert ("decided.yaml:10:71: warning TP447: erasure.refs expire 'scratch' names no tag or branch of "
            "privacy.decided: nothing to drop") in output  # the earlier run dropped it: said, not refused
    (result,) = proof["tables"]
    assert result["state"] == "held" and result["blocking_refs"] == []
    assert set(table_of(lake, "decided").metadata.refs) == {"main", "litigation"}
    assert set(keys_in_storage(table.location(), KEYS)) == {f.removeprefix("file:") for f in
                                                            result["held_by"]["litigation"]}


def test_a_decision_naming_no_ref_is_refused_before_anything_runs(lake: Lake, tmp_path: Path) -> None:
    policies, table = make(lake, tmp_path, "undecided", ", refs: {nosuch: rewrite}")
    snapshots = len(table.metadata.snapshots)
    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 1 and proof == {}, output
    assert ("undecided.yaml:10:50: error TP443: erasure.refs rewrite 'nosuch' names no tag or branch of "
            "privacy.undecided") in output
    assert len(table_of(lake, "undecided").metadata.snapshots) == snapshots


def test_spark_rewrites_through_a_tag_and_a_branch(lake: Lake, tmp_path: Path) -> None:
    """An equality delete applies to the refs' files: pyiceberg cannot read them, so Spark rewrites them. The
    branch takes the commit itself; the tag's is committed on a temporary branch started at its snapshot, the tag
    re-pointed to that branch's head and the branch dropped. A temporary branch a killed run left goes first."""
    policies, _ = make(lake, tmp_path, "upserted_refs", ", refs: {month_end: rewrite, audit: rewrite}")
    gone = 30_000 + 2 * 3  # u3's event in day 0 of the last append, in a file holding the keys
    equality_delete(lake, "upserted_refs", gone)
    sql(lake, "ALTER TABLE lake.privacy.upserted_refs CREATE TAG month_end RETAIN 7 DAYS")
    sql(lake, "ALTER TABLE lake.privacy.upserted_refs CREATE BRANCH audit RETAIN 9 DAYS")
    sql(lake, f"ALTER TABLE lake.privacy.upserted_refs CREATE BRANCH `{TEMPORARY_BRANCH}month_end`")  # a killed run's
    table = table_of(lake, "upserted_refs")
    table.append(batch(95_000, KEPT, days=1))
    before = table_of(lake, "upserted_refs").metadata.refs
    lake.reload()
    events = {r[0] for r in lake.spark.sql("SELECT event_id, user.uid FROM lake.privacy.upserted_refs VERSION AS OF "
                                          "'month_end'").collect() if r[1] not in KEYS}
    assert gone not in events

    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    (result,) = proof["tables"]
    assert result["state"] == "complete", result
    tag_statement = [s for s in result["statements"] if "REPLACE TAG" in s]
    branch_statement = [s for s in result["statements"] if "committed on branch `audit`" in s]
    for statement in (*tag_statement, *branch_statement):
        assert statement.startswith(BY_SPARK) and "equality deletes" in statement
    assert len(tag_statement) == len(branch_statement) == 1
    after = table_of(lake, "upserted_refs")
    assert set(after.metadata.refs) == {"main", "month_end", "audit"}  # no temporary branch left
    tag, branch = after.metadata.refs["month_end"], after.metadata.refs["audit"]
    assert tag.snapshot_id != before["month_end"].snapshot_id and tag.snapshot_ref_type == SnapshotRefType.TAG
    assert branch.snapshot_id != before["audit"].snapshot_id and branch.snapshot_ref_type == SnapshotRefType.BRANCH
    assert (tag.max_ref_age_ms, branch.max_ref_age_ms) == (7 * DAY_MS, 9 * DAY_MS)
    for ref in ("month_end", "audit"):  # the equality delete still applies, the other rows are all there
        assert {r[0] for r in lake.spark.sql("SELECT event_id FROM lake.privacy.upserted_refs VERSION AS OF "
                                             f"'{ref}'").collect()} == events
    assert keys_in_storage(after.location(), KEYS) == {}


def test_a_write_to_the_branch_while_erase_rewrites_through_it_stays(
    lake: Lake, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Someone writes to the branch after erase read its files and before its commit: the commit loses the race
    (the branch's head moved), is built again on the new head (an append does not conflict with the rewrite)
    and the writer's rows stay on the branch beside the erased ones' absence."""
    import tablepolicy.runtime.erase

    policies, _ = make(lake, tmp_path, "contended", ", refs: {audit: rewrite}")
    sql(lake, "ALTER TABLE lake.privacy.contended CREATE BRANCH audit RETAIN 9 DAYS")
    table = table_of(lake, "contended")
    table.append(batch(95_000, KEPT, days=1))  # main moves on: the branch is not main's head
    read = table_of(lake, "contended").metadata.refs["audit"].snapshot_id
    real = tablepolicy.runtime.erase.commit_rewrite

    def racing(name: str, latest: object, staged: object, restage: object, ref: str = "main") -> object:
        if ref == "audit":  # the writer commits between the rewrite's read and its commit
            sql(lake, "INSERT INTO lake.privacy.contended.branch_audit VALUES (77777, named_struct('uid', 'w1', "
                      "'name', 'n'), TIMESTAMP '2026-11-01 10:00:00+00:00')")
        return real(name, latest, staged, restage, ref=ref)  # type: ignore[arg-type]

    monkeypatch.setattr(tablepolicy.runtime.erase, "commit_rewrite", racing)
    code, output, proof = erase(lake, policies, tmp_path)
    assert code == 0, output
    assert proof["tables"][0]["state"] == "complete"
    after = table_of(lake, "contended")
    head = after.metadata.refs["audit"]
    written = after.metadata.snapshot_by_id(head.snapshot_id)
    assert written is not None and written.summary is not None
    assert written.summary["tablepolicy.erasure.read-snapshot-id"] == str(read)  # read before the writer's commit
    assert head.max_ref_age_ms == 9 * DAY_MS
    shown = uids(lake, "contended", "audit")
    assert "w1" in shown and not KEYS & set(shown)  # committed on the writer's head: its row is there
    assert keys_in_storage(after.location(), KEYS) == {}
