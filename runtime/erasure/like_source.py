"""A rewritten file is written as the file it replaces was: the same codec, dictionary encoding per column and row
groups, and the level the table's engine uses, so an erasure writes about the bytes Spark's rewrite would.

pyiceberg's writer takes only the table's properties, and fills what they leave unset with pyarrow's defaults.
Measured on a Spark-written file of 100,000 rows (bench/erase_bytes.py): pyiceberg's defaults wrote 1.58x Spark's
bytes (zstd at level 1 against parquet-mr's 3, and a dictionary for every column: a unique id or timestamp
column Spark writes plain took three times the bytes); as the source says, 0.99x. So:

- codec: the table's ``write.parquet.compression-codec``, else the source file's own codec;
- level: the table's ``write.parquet.compression-level``, else the level parquet-mr (Spark's writer) uses for
  that codec (zstd 3, gzip 6), which is also what a file written by Spark was written with;
- dictionary: off for the columns the source file writes plain; for those it encodes with one, on where a
  dictionary pays for the rows written, by parquet-mr's own test (top-level columns, matched by field id so a
  renamed column keeps its encoding; nested ones keep pyarrow's). pyarrow, and so pyiceberg, writes a dictionary
  for every column whatever it costs; parquet-mr (Spark's writer) drops it after the first page when the
  dictionary and its indices take no fewer bytes than the plain values (``isCompressionSatisfying``), and when the
  dictionary outgrows ``write.parquet.dict-size-bytes``. Copied from a pyiceberg-written source, a unique id or
  timestamp column cost 1.31-1.41x Spark's bytes (bench/erase_matrix.py --writer pyiceberg);
- rows per row group: the source file's largest row group;
- page and dictionary page sizes: the table's properties, as pyiceberg reads them;
- bloom filters: on the columns the table's ``write.parquet.bloom-filter-enabled.column.*`` properties name, with
  their fpp and at most ``write.parquet.bloom-filter-max-bytes`` (pyiceberg writes none and warns), so an erasure
  keeps the filters the next one is pruned by. pyarrow sizes a filter by its count of distinct values: the rows of
  a row group, at most what fits the byte limit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import IO, Any, cast

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pyiceberg.io import FileIO
from pyiceberg.io.pyarrow import (
    PYARROW_PARQUET_FIELD_ID_KEY,
    ParquetFormatModel,
    _get_parquet_writer_kwargs,
    _to_requested_schema,
    compute_statistics_plan,
    data_file_statistics_from_parquet_metadata,
    parquet_path_to_id_mapping,
)
from pyiceberg.manifest import DataFile, DataFileContent, FileFormat
from pyiceberg.schema import Schema, sanitize_column_names
from pyiceberg.table import TableProperties, WriteTask
from pyiceberg.table.locations import load_location_provider
from pyiceberg.table.metadata import TableMetadata
from pyiceberg.typedef import Record
from pyiceberg.utils.properties import property_as_int

from tablepolicy.compiler.model import bloom

CODECS = {"GZIP": "gzip", "ZSTD": "zstd", "SNAPPY": "snappy", "UNCOMPRESSED": "none", "LZ4": "lz4",
          "LZ4_RAW": "lz4", "BROTLI": "brotli"}
PARQUET_MR_LEVELS = {"zstd": 3, "gzip": 6, "brotli": 1}  # parquet-mr's defaults (Spark's and Iceberg Java's writer)
DICTIONARY = {"PLAIN_DICTIONARY", "RLE_DICTIONARY"}
BLOOM_KEYS = "write.parquet.bloom-filter-"
BLOOM_FPP, BLOOM_MAX_BYTES = 0.01, 1 << 20  # Iceberg's defaults


@dataclass(frozen=True)
class SourceLayout:
    """How a parquet file was written, as its footer says."""

    codec: str  # pyarrow's name
    dictionary_ids: frozenset[int]  # top-level primitive columns written with a dictionary, by field id
    plain_ids: frozenset[int]  # top-level primitive columns written without one
    rows_per_group: int


def source_layout(io: FileIO, path: str) -> SourceLayout:
    """The footer of ``path``: one small read at the end of the file."""
    with io.new_input(path).open() as stream:
        parquet = pq.ParquetFile(cast(IO[bytes], stream))
        meta, arrow = parquet.metadata, parquet.schema_arrow
    ids = {f.name: int(f.metadata[PYARROW_PARQUET_FIELD_ID_KEY]) for f in arrow
           if f.metadata and PYARROW_PARQUET_FIELD_ID_KEY in f.metadata and not pa.types.is_nested(f.type)}
    dictionary: set[int] = set()
    plain: set[int] = set()
    codec = "zstd"
    for group in range(meta.num_row_groups):
        for index in range(meta.num_columns):
            chunk = meta.row_group(group).column(index)
            codec = CODECS.get(chunk.compression.upper(), chunk.compression.lower())
            if (field_id := ids.get(chunk.path_in_schema)) is not None:
                (dictionary if DICTIONARY & set(chunk.encodings) else plain).add(field_id)
    rows = max((meta.row_group(g).num_rows for g in range(meta.num_row_groups)), default=0)
    return SourceLayout(codec, frozenset(dictionary), frozenset(plain - dictionary), rows)


def writer_options(properties: dict[str, str], layout: SourceLayout, rows: pa.Table) -> dict[str, Any]:
    """pyarrow ParquetWriter's arguments for writing ``rows`` like the source (see the module's note)."""
    options = _get_parquet_writer_kwargs({k: v for k, v in properties.items() if not k.startswith(BLOOM_KEYS)})
    codec = properties.get(TableProperties.PARQUET_COMPRESSION) or layout.codec
    options["compression"] = "none" if codec == "uncompressed" else codec
    if properties.get(TableProperties.PARQUET_COMPRESSION_LEVEL) is None:
        options["compression_level"] = PARQUET_MR_LEVELS.get(options["compression"])
    page = _PageLimits(options["data_page_size"], options["dictionary_pagesize_limit"], property_as_int(
        properties, TableProperties.PARQUET_PAGE_ROW_LIMIT, TableProperties.PARQUET_PAGE_ROW_LIMIT_DEFAULT) or 0)
    options["use_dictionary"] = [f.name for f, column in zip(rows.schema, rows.columns, strict=True)
                                 if _dictionary(f, column, layout, page)]
    return options


@dataclass(frozen=True)
class _PageLimits:
    page_bytes: int
    dictionary_bytes: int
    page_rows: int


def _dictionary(field: pa.Field, column: pa.ChunkedArray, layout: SourceLayout, page: _PageLimits) -> bool:
    if pa.types.is_nested(field.type) or not field.metadata or PYARROW_PARQUET_FIELD_ID_KEY not in field.metadata:
        return True
    if int(field.metadata[PYARROW_PARQUET_FIELD_ID_KEY]) in layout.plain_ids:
        return False
    return dictionary_pays(column, page)


def dictionary_pays(column: pa.ChunkedArray, page: _PageLimits) -> bool:
    """parquet-mr's test (FallbackValuesWriter, DictionaryValuesWriter): a dictionary is kept when, on the first
    page, the dictionary's plain bytes and its bit-packed indices come to fewer bytes than the plain values, and
    the whole column's dictionary fits ``write.parquet.dict-size-bytes``. No dictionary for booleans or for
    fixed-length binary (UUIDs, wide decimals), as parquet-mr's v1 pages have none for them."""
    kind = column.type
    if pa.types.is_boolean(kind) or pa.types.is_fixed_size_binary(kind) or (
            pa.types.is_decimal(kind) and kind.precision > 18):
        return False
    rows = min(len(column), page.page_rows or len(column))
    first = column.slice(0, rows)
    raw = _plain_bytes(first)
    if raw > page.page_bytes and rows > 1:  # the first page ends at its size: fewer rows
        first = column.slice(0, max(1, rows * page.page_bytes // raw))
        raw = _plain_bytes(first)
    distinct = pc.unique(first.drop_null())
    values = len(first) - int(first.null_count)
    indices = math.ceil(values * max(1, math.ceil(math.log2(max(len(distinct), 2)))) / 8)
    if _plain_bytes(distinct) + indices >= raw:
        return False
    # the dictionary holds each distinct value once: no larger than the column's plain values, summed without
    # hashing them; only a column whose values outgrow the limit is hashed whole
    return _plain_bytes(column) <= page.dictionary_bytes or \
        _plain_bytes(pc.unique(column.drop_null())) <= page.dictionary_bytes


def _plain_bytes(values: pa.Array | pa.ChunkedArray) -> int:
    """The bytes of ``values`` PLAIN-encoded: a length and the bytes of each text or binary, else the fixed width."""
    kind = values.type
    present = len(values) - int(values.null_count)
    if pa.types.is_string(kind) or pa.types.is_binary(kind) or pa.types.is_large_string(kind) or \
            pa.types.is_large_binary(kind):
        return 4 * present + int(pc.sum(pc.binary_length(values)).as_py() or 0)
    if pa.types.is_decimal(kind):
        return present * (4 if kind.precision <= 9 else 8)  # Iceberg writes them as int32 or int64
    return present * max(1, int(kind.bit_width) // 8)


def write_like(io: FileIO, metadata: TableMetadata, task: WriteTask, layout: SourceLayout) -> DataFile:
    """pyiceberg's write_file for one task, with the writer settings of the file it replaces."""
    table_schema = metadata.schema()
    file_schema = sanitize_column_names(table_schema)
    batches = [_to_requested_schema(requested_schema=file_schema, file_schema=task.schema, batch=batch,
                                    include_field_ids=True, format_model=ParquetFormatModel())
               for batch in task.record_batches]
    table = pa.Table.from_batches(batches)
    locations = load_location_provider(table_location=metadata.location, table_properties=metadata.properties)
    path = locations.new_data_location(data_file_name=task.generate_data_file_filename("parquet"),
                                       partition_key=task.partition_key)
    output = io.new_output(path)
    options = writer_options(metadata.properties, layout, table)
    options["bloom_filter_options"] = bloom_filter_options(
        metadata.properties, table_schema, file_schema, min(table.num_rows, layout.rows_per_group or table.num_rows))
    with output.create(overwrite=True) as stream:
        writer = pq.ParquetWriter(cast(IO[Any], stream), schema=table.schema, store_decimal_as_integer=True,
                                  **options)
        writer.write(table, row_group_size=layout.rows_per_group or None)
        writer.close()
    statistics = data_file_statistics_from_parquet_metadata(
        parquet_metadata=writer.writer.metadata,
        stats_columns=compute_statistics_plan(file_schema, metadata.properties),
        parquet_column_mapping=parquet_path_to_id_mapping(file_schema))
    return DataFile.from_args(
        content=DataFileContent.DATA, file_path=path, file_format=FileFormat.PARQUET,
        partition=task.partition_key.partition if task.partition_key else Record(), file_size_in_bytes=len(output),
        sort_order_id=None, spec_id=metadata.default_spec_id, equality_ids=None, key_metadata=None,
        **statistics.to_serialized_dict())


def bloom_filter_options(properties: dict[str, str], table_schema: Schema, file_schema: Schema, rows: int
                         ) -> dict[str, dict[str, float | int]] | None:
    """pyarrow's ``bloom_filter_options``: a filter on each column the table's properties name (by field id, so a
    sanitized parquet name is found), sized for ``rows`` distinct values within the byte limit (parquet-mr's
    formula: bits = -8 ndv / ln(1 - fpp^(1/8)), a power of two). A name no column has writes no filter, as in
    Iceberg's writer."""
    paths = {field_id: path for path, field_id in parquet_path_to_id_mapping(file_schema).items()}
    limit = property_as_int(properties, bloom.MAX_BYTES, BLOOM_MAX_BYTES) or BLOOM_MAX_BYTES
    options: dict[str, dict[str, float | int]] = {}
    for column in bloom.enabled_columns(properties):
        try:
            path = paths.get(table_schema.find_field(column).field_id)
        except ValueError:
            continue
        if path is None:
            continue
        fpp = float(properties.get(bloom.FPP + column, BLOOM_FPP))
        fits = int(0.999 * (1 << (limit.bit_length() - 1)) * -math.log(1 - fpp ** (1 / 8)))  # just under a rounding up
        options[path] = {"ndv": max(1, min(rows, fits)), "fpp": fpp}
    return options or None
