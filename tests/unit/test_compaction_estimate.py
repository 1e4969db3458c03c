"""maintain --dry-run's compaction estimate (compiler/maintenance/compaction.py), engine-free: which partitions
Spark's binpack rewrite takes, how many files it writes (exact, or the range the split packing allows), and how
the dry-run report shows what it cannot know (the bytes written) as a bound instead of a number.

tests/integration/test_maintain_estimate.py runs the same estimate against what Spark then does."""

from __future__ import annotations

import pytest

from tablepolicy.compiler.maintenance.compaction import (
    estimate,
    expected_output_files,
    files_written,
    rewrites,
    split_size,
)
from tablepolicy.compiler.maintenance.health import SmallGroup

KiB, MiB, GiB = 1024, 1024**2, 1024**3
TARGET = 512 * MiB


def group(files: int, each: int) -> SmallGroup:
    return SmallGroup(files=files, bytes=files * each, largest=each)


@pytest.mark.parametrize(("size", "target", "files"), [
    (100, 1000, 1),  # under the target: one file
    (1000, 1000, 1),
    (int(10.1 * GiB), GiB, 10),  # the 0.1 GiB remainder spread over ten files (1.01 GiB each, within 110%)
    (int(10.8 * GiB), GiB, 11),  # a 0.8 GiB remainder is above min-file-size (75%): a file of its own
    (int(1.5 * GiB), GiB, 2),  # 0.5 GiB left, but 1.5 GiB in one file is beyond 110%: two files
    (60_390, 16 * KiB, 4),
], ids=["small", "exactly-target", "remainder-spread", "remainder-kept", "remainder-too-big", "kib-files"])
def test_iceberg_expected_output_files(size: int, target: int, files: int) -> None:
    assert expected_output_files(size, target) == files


@pytest.mark.parametrize(("small", "target", "min_input_files", "taken"), [
    (group(5, 2013), TARGET, 5, True),  # the tutorial's partitions: five files of 2 KiB
    (group(4, 2013), TARGET, 5, False),  # below min-input-files, far below the target
    (group(2, 9 * KiB), 16 * KiB, 5, True),  # two files, but more bytes than the target (enough content)
    (group(1, 12 * KiB), 16 * KiB, 1, False),  # one file is never rewritten into itself
    (group(3, 4 * KiB), 16 * KiB, 3, True),
], ids=["tutorial", "below-min-input-files", "enough-content", "single-file", "at-min-input-files"])
def test_which_partitions_spark_rewrites(small: SmallGroup, target: int, min_input_files: int, taken: bool) -> None:
    assert rewrites(small, target, min_input_files) is taken


@pytest.mark.parametrize(("small", "target", "written"), [
    (group(5, 2013), TARGET, (1, 1)),  # fits one read split: one file, exactly
    (group(1000, 100 * KiB), TARGET, (1, 1)),  # 1,000 files, 98 MiB: still one split
    (SmallGroup(files=5), TARGET, (1, 1)),  # figures made by hand (no bytes): one file
    # 30 files of 2,013 bytes, 16 KiB target: splits of 20,217 bytes hold 10 files each; the packing bound allows 4
    (group(30, 2013), 16 * KiB, (3, 4)),
    # 3,000 files of 300 KiB (879 MiB) into 512 MiB splits: two files at least, three at most
    (group(3000, 300 * KiB), TARGET, (2, 2)),
    (group(40, 100 * MiB), 2 * GiB, (2, 3)),
], ids=["tutorial", "many-small", "hand-made", "kib-target", "two-splits", "large-files"])
def test_files_written_per_partition(small: SmallGroup, target: int, written: tuple[int, int]) -> None:
    least, most = files_written(small, target)
    assert (least, most) == written
    # the range always holds what the split sizes allow: no fewer than bytes / split, no more than the input files
    assert least * split_size(small.bytes, target) >= small.bytes and most <= max(1, small.files)


def test_a_table_estimate_takes_exactly_the_groups_spark_takes() -> None:
    groups = (group(30, 2013), group(4, 2013), group(2, 9 * KiB), group(1, 2013))
    found = estimate(groups, 16 * KiB, 5)
    assert (found.taken, found.taken_bytes) == (32, 30 * 2013 + 2 * 9 * KiB)
    # 3 to 4 for the 30 files; the two 9 KiB files are more than the target together, so Spark takes them, and
    # reads them in two 16 KiB splits: two files again (Iceberg's rule, predicted as it is)
    assert found.written == (5, 6) and not found.exact
    assert found.left == (group(4, 2013), group(1, 2013))


def test_the_dry_run_report_shows_what_it_cannot_know_as_a_range() -> None:
    from datetime import UTC, datetime

    from tablepolicy.compiler.maintenance.actions import RewriteDataFiles
    from tablepolicy.compiler.maintenance.health import TableHealth
    from tablepolicy.compiler.maintenance.projection import projected
    from tablepolicy.compiler.maintenance.report import ActionRun, MaintenanceReport, Status, TableOutcome
    from tablepolicy.compiler.render.maintenance_report import report_markdown, report_text

    groups = (group(30, 2013), group(4, 2013))
    before = TableHealth(
        table=("est", "events"), snapshot_times=(), current_snapshot_id=None, data_files=34, data_bytes=34 * 2013,
        rows=34, small_files=34, small_file_groups=(30, 4), small_groups=groups, target_file_size=16 * KiB,
        position_delete_files=0, equality_delete_files=0, manifests=34, metadata_files=35)
    action = RewriteDataFiles(table=("est", "events"), reason="r", strategy="binpack", target_file_size=16 * KiB,
                              min_input_files=5)
    after, effect = projected(before, action, datetime(2026, 1, 1, tzinfo=UTC))
    assert (after.data_files, effect.written, effect.written_most) == (7, 3, 4)  # 4 left + 3 to 4 written
    assert (effect.rewritten, effect.bytes_rewritten, effect.bytes_written) == (30, 30 * 2013, None)
    outcome = TableOutcome(("est", "events"), before, after, (ActionRun(action, "CALL ...", Status.ESTIMATED, effect),))
    assert (outcome.data_files_after, outcome.data_bytes_after) == ((7, 8), (4 * 2013, 34 * 2013))
    text = report_text(MaintenanceReport({"name": "lake"}, True, (outcome,)))
    assert "  data files                        34                   7–8" in text
    # the 4 files left are known; the 30 rewritten ones may shrink to nearly nothing or keep their bytes
    assert "  average file size            2.0 KiB   1,006 bytes–9.5 KiB" in text
    assert "compaction    would run (rewrote 30 files (59.0 KiB) into 3 to 4, their size known after the run)" in text
    assert "| `est.events` | 34 → 7–8 | 2.0 KiB → 1,006 bytes–9.5 KiB |" in report_markdown(
        MaintenanceReport({"name": "lake"}, True, (outcome,)))
