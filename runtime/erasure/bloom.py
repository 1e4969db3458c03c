"""Parquet split-block bloom filters (apache/parquet-format BloomFilter.md), read without a new dependency.

pyarrow gives a column chunk's ``bloom_filter_offset`` and ``bloom_filter_length`` but not the filter: the bytes are
read here (one ranged read; with a few keys to test, their blocks alone: filter_at), their BloomFilterHeader decoded
(Thrift compact protocol), and each key tested: XXH64 (seed 0) of the value's PLAIN encoding (BYTE_ARRAY: the raw
bytes without their length; INT32 and INT64: little-endian), the upper 32 bits of the hash select a 256-bit block,
the lower 32 bits times eight salts one bit in each of its eight 32-bit words. A filter has no false negatives: a
key whose bits are not all set is absent. Anything this module cannot decode (another algorithm, hash or
compression, a torn header) raises BloomFormatError: the caller then reads the file.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from dataclasses import dataclass, field

MASK64 = (1 << 64) - 1
P1, P2, P3, P4, P5 = (0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9, 0x85EBCA77C2B2AE63,
                      0x27D4EB2F165667C5)
SALT = (0x47B6137B, 0x44974D91, 0x8824AD5B, 0xA2B7289D, 0x705495C7, 0x2DF1424B, 0x9EFC4947, 0x5C6BFB31)
BLOCK = 32  # bytes: eight 32-bit words
HEADER_GUESS = 64  # bytes read for a header whose length the footer does not give (written before format 2.10)
# the union members the spec defines, each the field id 1 of its union: SplitBlockAlgorithm, XxHash, Uncompressed
KNOWN = {"algorithm": 1, "hash": 1, "compression": 1}


class BloomFormatError(Exception):
    """A filter this module cannot decode: the file is read instead."""


def _rotl(value: int, bits: int) -> int:
    return ((value << bits) | (value >> (64 - bits))) & MASK64


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * P2) & MASK64, 31) * P1) & MASK64


def _merge(acc: int, value: int) -> int:
    return ((acc ^ _round(0, value)) * P1 + P4) & MASK64


def xxh64(data: bytes, seed: int = 0) -> int:
    """XXH64 of ``data`` (Yann Collet's xxHash, the 64-bit little-endian variant Parquet specifies)."""
    size, at = len(data), 0
    if size >= 32:
        lanes = [(seed + P1 + P2) & MASK64, (seed + P2) & MASK64, seed & MASK64, (seed - P1) & MASK64]
        while at + 32 <= size:
            words = struct.unpack_from("<4Q", data, at)
            lanes = [_round(lane, word) for lane, word in zip(lanes, words, strict=True)]
            at += 32
        acc = (_rotl(lanes[0], 1) + _rotl(lanes[1], 7) + _rotl(lanes[2], 12) + _rotl(lanes[3], 18)) & MASK64
        for lane in lanes:
            acc = _merge(acc, lane)
    else:
        acc = (seed + P5) & MASK64
    acc = (acc + size) & MASK64
    while at + 8 <= size:
        acc = (_rotl(acc ^ _round(0, struct.unpack_from("<Q", data, at)[0]), 27) * P1 + P4) & MASK64
        at += 8
    if at + 4 <= size:
        acc = (_rotl(acc ^ (struct.unpack_from("<I", data, at)[0] * P1 & MASK64), 23) * P2 + P3) & MASK64
        at += 4
    while at < size:
        acc = (_rotl(acc ^ (data[at] * P5 & MASK64), 11) * P1) & MASK64
        at += 1
    acc = ((acc ^ (acc >> 33)) * P2) & MASK64
    acc = ((acc ^ (acc >> 29)) * P3) & MASK64
    return acc ^ (acc >> 32)


@dataclass(frozen=True)
class Probe:
    """One key's hash as a filter test needs it: the block selector and the 256-bit mask of its eight bits
    (word i's bit b is bit 32*i + b of the block read as a little-endian integer)."""

    selector: int  # the upper 32 bits of the hash
    mask: int

    @classmethod
    def of(cls, encoded: bytes) -> Probe:
        hashed = xxh64(encoded)
        key = hashed & 0xFFFFFFFF
        mask = 0
        for word, salt in enumerate(SALT):
            mask |= 1 << (32 * word + (((key * salt) & 0xFFFFFFFF) >> 27))
        return cls(hashed >> 32, mask)


def encode(value: object, physical_type: str) -> bytes | None:
    """``value``'s PLAIN encoding in a column of ``physical_type``; None: a type this module does not hash, or a
    value the column cannot hold in that form (then nothing is concluded from the filter)."""
    if physical_type == "BYTE_ARRAY" and isinstance(value, str):
        return value.encode("utf-8")
    if physical_type == "BYTE_ARRAY" and isinstance(value, bytes):
        return value
    if physical_type in ("INT32", "INT64") and isinstance(value, int) and not isinstance(value, bool):
        form = "<i" if physical_type == "INT32" else "<q"
        try:
            return struct.pack(form, value)
        except struct.error:
            return None
    return None


@dataclass(frozen=True)
class SplitBlockFilter:
    bitset: bytes

    @property
    def blocks(self) -> int:
        return len(self.bitset) // BLOCK

    def may_hold(self, probe: Probe) -> bool:
        """False only when the key is certainly absent."""
        at = ((probe.selector * self.blocks) >> 32) * BLOCK
        return int.from_bytes(self.bitset[at:at + BLOCK], "little") & probe.mask == probe.mask


@dataclass
class SparseFilter:
    """A filter read one block at a time, for the few keys a file still has to be tested for: 32 bytes a key
    instead of the whole bitset (Iceberg's Parquet writer sizes every filter at write.parquet.bloom-filter-max-bytes,
    1 MiB by default, whatever the rows a row group holds)."""

    read_at: Callable[[int, int], bytes]  # (bytes, offset) of the file: pyarrow's NativeFile.read_at
    start: int  # where the bitset begins
    num_bytes: int
    cache: dict[int, int | None] = field(default_factory=dict)  # block index -> its bits (None: a short read)

    @property
    def blocks(self) -> int:
        return self.num_bytes // BLOCK

    @property
    def bytes_read(self) -> int:
        return len(self.cache) * BLOCK

    def may_hold(self, probe: Probe) -> bool:
        """False only when the key is certainly absent (a block that cannot be read concludes nothing)."""
        index = (probe.selector * self.blocks) >> 32
        if index not in self.cache:
            data = self.read_at(BLOCK, self.start + index * BLOCK)
            self.cache[index] = int.from_bytes(data, "little") if len(data) == BLOCK else None
        bits = self.cache[index]
        return bits is None or bits & probe.mask == probe.mask


SPARSE_KEYS = 8  # at most this many keys left to test: their blocks are read one by one...
SPARSE_SHARE = 16  # ...when the filter is more than this many times the bytes of those blocks...
SPARSE_MIN_BYTES = 256 * 2**10  # ...and this large: on object storage each block is a GET of its own (20-50 ms), which
# costs more time than a smaller filter's transfer in one GET; the bytes saved matter for Iceberg's 1 MiB filters


def filter_at(read_at: Callable[[int, int], bytes], offset: int, length: int | None, keys: int
              ) -> SplitBlockFilter | SparseFilter:
    """The filter at ``offset`` (``length``: its bytes with the header, as the footer gives them, else unknown) as the
    cheapest form for testing ``keys`` keys: the blocks they fall in, read one by one, or the whole bitset in one
    read. Raises BloomFormatError for a filter this module cannot decode."""
    sparse = keys <= SPARSE_KEYS and (not length or length >= SPARSE_MIN_BYTES)  # a small one: one read, whole
    data = read_at(HEADER_GUESS if sparse or not length else length, offset)
    header = parse_header(data)
    if sparse and header.num_bytes >= SPARSE_MIN_BYTES and header.num_bytes > keys * BLOCK * SPARSE_SHARE:
        return SparseFilter(read_at, offset + header.length, header.num_bytes)
    if len(data) < header.length + header.num_bytes:
        data = read_at(header.length + header.num_bytes, offset)
    return read_filter(data)


@dataclass(frozen=True)
class Header:
    num_bytes: int
    length: int  # bytes the header takes before the bitset


def parse_header(data: bytes) -> Header:
    """The BloomFilterHeader at the start of ``data``: numBytes, and each of algorithm, hash and compression the one
    the spec defines (BLOCK, XXHASH, UNCOMPRESSED); anything else raises BloomFormatError."""
    reader = _Compact(data)
    fields = reader.struct_fields()
    num_bytes = fields.get(1)
    if not isinstance(num_bytes, int) or num_bytes <= 0 or num_bytes % BLOCK:
        raise BloomFormatError(f"numBytes {num_bytes!r} is no whole number of 32-byte blocks")
    for field_id, name in ((2, "algorithm"), (3, "hash"), (4, "compression")):
        union = fields.get(field_id)
        if not isinstance(union, dict) or set(union) != {KNOWN[name]}:
            raise BloomFormatError(f"{name} {union!r} is not the one the spec defines")
    return Header(num_bytes, reader.at)


def read_filter(data: bytes) -> SplitBlockFilter:
    """A filter from its header and bitset (``data`` may run past the bitset)."""
    header = parse_header(data)
    bitset = data[header.length:header.length + header.num_bytes]
    if len(bitset) != header.num_bytes:
        raise BloomFormatError(f"the bitset has {len(bitset)} of its {header.num_bytes} bytes")
    return SplitBlockFilter(bytes(bitset))


class _Compact:
    """The few Thrift compact-protocol forms a BloomFilterHeader uses, and skipping of any other field."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def byte(self) -> int:
        if self.at >= len(self.data):
            raise BloomFormatError("the header ends early")
        self.at += 1
        return self.data[self.at - 1]

    def varint(self) -> int:
        value, shift = 0, 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 63:
                raise BloomFormatError("a varint longer than 64 bits")

    def zigzag(self) -> int:
        value = self.varint()
        return (value >> 1) ^ -(value & 1)

    def struct_fields(self) -> dict[int, object]:
        """A struct's fields by id: integers, nested structs as dicts, anything else skipped (as None)."""
        fields: dict[int, object] = {}
        last = 0
        while (head := self.byte()) != 0:
            delta, kind = head >> 4, head & 0x0F
            last = last + delta if delta else self.zigzag()
            fields[last] = self.value(kind)
        return fields

    def value(self, kind: int) -> object:
        match kind:
            case 1 | 2:  # booleans carry their value in the type
                return kind == 1
            case 3:
                self.byte()
                return None
            case 4 | 5 | 6:
                return self.zigzag()
            case 7:
                self.skip(8)
                return None
            case 8:
                self.skip(self.varint())
                return None
            case 9 | 10:
                head = self.byte()
                count = head >> 4 if head >> 4 != 15 else self.varint()
                for _ in range(count):
                    self.value(head & 0x0F)
                return None
            case 11:
                count = self.varint()
                if count:
                    kinds = self.byte()
                    for _ in range(count):
                        self.value(kinds >> 4)
                        self.value(kinds & 0x0F)
                return None
            case 12:
                return self.struct_fields()
        raise BloomFormatError(f"Thrift compact type {kind} unknown")

    def skip(self, count: int) -> None:
        if self.at + count > len(self.data):
            raise BloomFormatError("the header ends early")
        self.at += count
