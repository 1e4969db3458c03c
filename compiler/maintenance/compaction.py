"""What ``rewrite_data_files`` (binpack) will do to a table, predicted from metadata the way Iceberg plans it
(Iceberg 1.10: BinPackRewriteFilePlanner, SizeBasedFileRewritePlanner, SparkBinPackFileRewriteRunner).

Per partition, the small files (under 75% of the target) form a group. Spark rewrites a group when it has
more than one file and either at least ``min-input-files`` of them or more bytes than the target, or when it
holds more than 180% of the target. It reads the group in splits of ``split_size`` bytes (files packed
first-fit, opening a file costs nothing) and writes one file per split: the files written are known exactly
when the group fits one split, and within a range otherwise. Every split but the last is fuller than
``split_size - largest file``, which bounds the count from above; ``bytes / split_size`` bounds it from below.

The bytes Spark writes are not predictable from metadata: it decodes the rows and encodes them again (one
footer instead of many, pages merged, its own codec and statistics). On files of a few KiB the output is
smaller than the input by a large factor; on files of many MiB it is close to it. The estimate therefore
gives the bytes read (exact) and says the bytes written are unknown until the run.
"""

from __future__ import annotations

from dataclasses import dataclass
from math import ceil

from .health import SmallGroup, TableHealth

MIN_FILE_RATIO = 0.75  # min-file-size-bytes: files under it are rewritten
MAX_FILE_RATIO = 1.80  # max-file-size-bytes: a group holding more than this is rewritten whatever its count
SPLIT_OVERHEAD = 5 * 1024  # added to the split size Iceberg computes for a group


def rewrites(group: SmallGroup, target: int, min_input_files: int) -> bool:
    """Whether Spark rewrites this partition's small files (filterFileGroups)."""
    enough_files = group.files > 1 and group.files >= min_input_files
    enough_content = group.files > 1 and group.bytes > target
    return enough_files or enough_content or group.bytes > int(target * MAX_FILE_RATIO)


def expected_output_files(size: int, target: int) -> int:
    """The file count Iceberg aims for with ``size`` bytes of input (expectedOutputFiles): a remainder above the
    minimum file size is a file of its own, else it is spread over the others when that keeps them within 110%
    of the target."""
    if size < target:
        return 1
    with_remainder, without = -(-size // target), size // target
    minimum, write_max = int(target * MIN_FILE_RATIO), _write_max(target)
    if size % target > minimum:
        return with_remainder
    if size // without < min(1.1 * target, write_max):
        return without
    return with_remainder


def split_size(size: int, target: int) -> int:
    """The bytes of input each read task (and so each file written) covers (inputSplitSize)."""
    estimated = size // expected_output_files(size, target) + SPLIT_OVERHEAD
    return target if estimated < target else min(estimated, _write_max(target))


def _write_max(target: int) -> int:
    """The size at which Spark's writer starts another file during a rewrite: halfway from target to max."""
    return int(target + (int(target * MAX_FILE_RATIO) - target) * 0.5)


def files_written(group: SmallGroup, target: int) -> tuple[int, int]:
    """The fewest and the most files Spark writes for a group it rewrites (equal when it fits one split)."""
    split = split_size(group.bytes, target)
    if group.bytes <= split:
        return 1, 1
    least = ceil(group.bytes / split)
    most = ceil(group.bytes / (split - group.largest)) if group.largest < split else group.files
    return least, max(least, min(group.files, most))


@dataclass(frozen=True)
class CompactionEstimate:
    """The whole rewrite: ``taken`` files (``taken_bytes`` read) become ``written`` files (from ``written[0]`` to
    ``written[1]``); ``left`` are the groups it leaves alone."""

    taken: int
    taken_bytes: int
    written: tuple[int, int]
    groups_taken: tuple[SmallGroup, ...]
    left: tuple[SmallGroup, ...]

    @property
    def exact(self) -> bool:
        return self.written[0] == self.written[1]


def small_groups(health: TableHealth) -> tuple[SmallGroup, ...]:
    """The table's groups with their bytes; figures made by hand give counts only (bytes 0: one file each)."""
    return health.small_groups or tuple(SmallGroup(files=n) for n in health.small_file_groups)


def retained_groups(health: TableHealth) -> tuple[SmallGroup, ...] | None:
    """``small_groups`` once the files wholly before the retention cutoff are deleted (None without one)."""
    if health.retained_small_file_groups is None:
        return None
    return health.retained_small_groups or tuple(SmallGroup(files=n) for n in health.retained_small_file_groups)


def estimate(groups: tuple[SmallGroup, ...], target: int, min_input_files: int) -> CompactionEstimate:
    taken = tuple(g for g in groups if rewrites(g, target, min_input_files))
    left = tuple(g for g in groups if not rewrites(g, target, min_input_files))
    counts = [files_written(g, target) for g in taken]
    return CompactionEstimate(
        taken=sum(g.files for g in taken), taken_bytes=sum(g.bytes for g in taken),
        written=(sum(c[0] for c in counts), sum(c[1] for c in counts)), groups_taken=taken, left=left)
