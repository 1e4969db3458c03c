"""The split-block bloom filter format read without a dependency (runtime/erasure/bloom.py): XXH64 against known
vectors, the BloomFilterHeader's Thrift compact encoding, the block check, and filters pyarrow writes: every value
written tests "maybe", values never written mostly "no"."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from tablepolicy.runtime.erasure.bloom import (
    BloomFormatError,
    Header,
    Probe,
    SplitBlockFilter,
    encode,
    parse_header,
    read_filter,
    xxh64,
)


@pytest.mark.parametrize(("data", "digest"), [
    (b"", 0xEF46DB3751D8E999),
    (b"a", 0xD24EC4F1A98C6E5B),
    (b"abc", 0x44BC2CF5AD770999),
    (b"Nobody inspects the spammish repetition", 0xFBCEA83C8A378BF1),  # 32-byte stripes, a 4-byte and 1-byte tail
])
def test_xxh64_gives_the_reference_digests(data: bytes, digest: int) -> None:
    assert xxh64(data) == digest


ARROW_HEADER = bytes.fromhex("1580011c1c00001c1c00001c1c000000")  # numBytes 64, BLOCK, XXHASH, UNCOMPRESSED


@pytest.mark.parametrize(("header", "parsed"), [
    (ARROW_HEADER, Header(64, 16)),
    (bytes.fromhex("15c0021c1c00001c1c00001c1c000000"), Header(160, 16)),  # a two-byte varint
    (bytes.fromhex("1580011c1c00001c1c00001c1c000056e80700"), Header(64, 19)),  # field 9, unknown: skipped
    (bytes.fromhex("050280011c1c00001c1c00001c1c000000"), Header(64, 17)),  # field 1 by its long form
], ids=["pyarrow's", "larger", "unknown-field", "long-form-id"])
def test_a_header_is_read(header: bytes, parsed: Header) -> None:
    assert parse_header(header + bytes(parsed.num_bytes)) == parsed


@pytest.mark.parametrize("header", [
    "1580011c2c00001c1c00001c1c000000",  # algorithm: a union member the spec does not define
    "1580011c1c00001c2c00001c1c000000",  # hash: not XXHASH
    "1580011c1c00001c1c00001c2c000000",  # compression: not UNCOMPRESSED
    "1580011c1c00001c1c000000",  # no compression field
    "15421c1c00001c1c00001c1c000000",  # numBytes 33: not whole blocks
    "1580011c1c00",  # torn
    "1d",  # a Thrift type that does not exist
], ids=["algorithm", "hash", "compression", "missing", "partial-block", "torn", "bad-type"])
def test_a_header_it_cannot_decode_is_refused(header: str) -> None:
    with pytest.raises(BloomFormatError):
        read_filter(bytes.fromhex(header) + bytes(64))


def test_a_bitset_shorter_than_its_header_says_is_refused() -> None:
    with pytest.raises(BloomFormatError):
        read_filter(ARROW_HEADER + bytes(63))


PROBE = Probe.of(b"u1")


@pytest.mark.parametrize(("bitset", "holds"), [
    (bytes(32), False),  # empty: nothing was inserted
    (b"\xff" * 32, True),  # saturated: every key "maybe"
    (PROBE.mask.to_bytes(32, "little"), True),  # exactly the key's eight bits
    ((PROBE.mask & ~(PROBE.mask & -PROBE.mask)).to_bytes(32, "little"), False),  # one of its eight bits missing
    (bytes(32) + b"\xff" * 32 if (PROBE.selector * 2) >> 32 == 0 else b"\xff" * 32 + bytes(32), False),  # the
    # other block is full, the key's empty
], ids=["empty", "saturated", "its-bits", "seven-of-eight", "other-block"])
def test_the_block_check(bitset: bytes, holds: bool) -> None:
    assert SplitBlockFilter(bitset).may_hold(PROBE) is holds


@pytest.mark.parametrize(("value", "physical_type", "encoded"), [
    ("u1", "BYTE_ARRAY", b"u1"),
    ("é", "BYTE_ARRAY", "é".encode()),
    (7, "INT32", b"\x07\x00\x00\x00"),
    (-1, "INT64", b"\xff" * 8),
    (1 << 40, "INT32", None),  # an int column cannot hold it: nothing concluded
    ("7", "INT32", None),
    (7, "BYTE_ARRAY", None),
    (1.5, "DOUBLE", None),
])
def test_plain_encoding_of_keys(value: object, physical_type: str, encoded: bytes | None) -> None:
    assert encode(value, physical_type) == encoded


def filters(path: Path) -> list[tuple[str, SplitBlockFilter]]:
    """Every column chunk's filter in the file, with the chunk's physical type."""
    data, meta = path.read_bytes(), pq.ParquetFile(path).metadata
    found = []
    for group in range(meta.num_row_groups):
        for index in range(meta.num_columns):
            chunk = meta.row_group(group).column(index)
            assert chunk.bloom_filter_offset is not None
            start = chunk.bloom_filter_offset
            found.append((chunk.physical_type, read_filter(data[start:start + chunk.bloom_filter_length])))
    return found


@pytest.mark.parametrize(("values", "arrow_type", "absent"), [
    ([f"subject-{i}" * (i % 7) for i in range(500)], pa.string(), [f"other-{i}" for i in range(2000)]),  # 0-77 bytes
    (list(range(-250, 250)), pa.int32(), list(range(1000, 3000))),
    ([i * 7919 << 20 for i in range(500)], pa.int64(), [i * 7919 << 21 | 1 for i in range(2000)]),
], ids=["strings", "int32", "int64"])
def test_filters_pyarrow_writes_hold_every_value_written(tmp_path: Path, values: list[object],
                                                        arrow_type: pa.DataType, absent: list[object]) -> None:
    path = tmp_path / "f.parquet"
    pq.write_table(pa.table({"k": pa.array(values, arrow_type)}), path, row_group_size=250,
                   bloom_filter_options={"k": {"ndv": 250, "fpp": 0.01}})
    ((first_type, first), (second_type, second)) = filters(path)
    for physical_type, bloom, written in ((first_type, first, values[:250]), (second_type, second, values[250:])):
        assert all(bloom.may_hold(Probe.of(encode(v, physical_type) or b"")) for v in written)
        maybe = sum(bloom.may_hold(Probe.of(encode(v, physical_type) or b"")) for v in absent)
        assert maybe < len(absent) // 20  # fpp 1% asked: far below 5%
