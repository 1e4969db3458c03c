"""Current state of tables, read with pyiceberg (no JVM), as the same TableState the policies give."""

from __future__ import annotations

import warnings
from dataclasses import dataclass

from pyiceberg.catalog import Catalog, load_catalog
from pyiceberg.exceptions import NoSuchNamespaceError, NoSuchTableError
from pyiceberg.table import Table
from pyiceberg.table.sorting import NullOrder, SortDirection
from pyiceberg.types import StructType

from compiler.catalog.config import CatalogConfig, embedded_root
from compiler.errors import CatalogError
from compiler.model.table import ColumnPath, PartitionFieldState, SortFieldState, TableState
from compiler.model.transforms import parse_iceberg_transform


@dataclass(frozen=True)
class CurrentTable:
    """A table as the catalog holds it, with the metadata file it was read from."""

    state: TableState
    metadata_location: str
    schema_id: int
    spec_id: int
    sort_order_id: int


def open_catalog(config: CatalogConfig) -> Catalog:
    root = embedded_root(config)
    if root is not None:
        (root / "warehouse").mkdir(parents=True, exist_ok=True)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return load_catalog(config.name, **config.properties)
    except Exception as exc:  # pyiceberg raises many kinds; the user needs one clear line
        raise CatalogError(f"cannot open {config.describe()}: {type(exc).__name__}: {_clean(exc, config)}") from None


def _clean(exc: Exception, config: CatalogConfig) -> str:
    """First line of the error with every configured secret masked."""
    text = str(exc).splitlines()[0] if str(exc) else ""
    redacted = config.redacted()
    for key, value in config.properties.items():
        if value and redacted[key] != value:
            text = text.replace(value, redacted[key])
    return text


def read_table(catalog: Catalog, name: tuple[str, ...]) -> CurrentTable | None:
    """The table's current state, or None when it does not exist."""
    try:
        table = catalog.load_table(name)
    except (NoSuchTableError, NoSuchNamespaceError):
        return None
    return current_table(name, table)


def current_table(name: tuple[str, ...], table: Table) -> CurrentTable:
    metadata = table.metadata
    schema = table.schema()
    paths = _paths_by_id(schema.as_struct())
    spec = table.spec()
    order = table.sort_order()
    state = TableState(
        name=name,
        schema_=schema,
        partition=tuple(
            PartitionFieldState(source=paths[f.source_id], transform=parse_iceberg_transform(str(f.transform)),
                                name=f.name)
            for f in spec.fields
        ),
        sort=tuple(
            SortFieldState(
                source=paths[f.source_id],
                transform=parse_iceberg_transform(str(f.transform)),
                direction="asc" if f.direction == SortDirection.ASC else "desc",
                nulls="first" if f.null_order == NullOrder.NULLS_FIRST else "last",
            )
            for f in order.fields
        ),
        identifier_fields=tuple(paths[i] for i in schema.identifier_field_ids),
        properties=dict(sorted(table.properties.items())),
        comment=table.properties.get("comment"),
        location=table.location(),
        format_version=metadata.format_version,
    )
    return CurrentTable(
        state=state,
        metadata_location=table.metadata_location,
        schema_id=schema.schema_id,
        spec_id=spec.spec_id,
        sort_order_id=order.order_id,
    )


def _paths_by_id(struct: StructType, prefix: ColumnPath = ()) -> dict[int, ColumnPath]:
    """Field id -> name path, through structs (partition and sort sources live there)."""
    out: dict[int, ColumnPath] = {}
    for f in struct.fields:
        out[f.field_id] = (*prefix, f.name)
        if isinstance(f.field_type, StructType):
            out.update(_paths_by_id(f.field_type, (*prefix, f.name)))
    return out



class CatalogReader:
    """Current state of the catalog, read once per table per run."""

    def __init__(self, config: CatalogConfig) -> None:
        self.config = config
        self.catalog = open_catalog(config)

    def table(self, name: tuple[str, ...]) -> CurrentTable | None:
        try:
            return read_table(self.catalog, name)
        except CatalogError:
            raise
        except Exception as exc:
            raise CatalogError(f"cannot read table {'.'.join(name)} from {self.config.describe()}: "
                               f"{_clean(exc, self.config)}") from None

    def namespace_exists(self, namespace: tuple[str, ...]) -> bool:
        try:
            return bool(self.catalog.namespace_exists(namespace))
        except Exception as exc:
            message = f"cannot list namespaces of {self.config.describe()}: {_clean(exc, self.config)}"
            raise CatalogError(message) from None

    def tables_in(self, namespace: tuple[str, ...]) -> list[tuple[str, ...]]:
        try:
            return [tuple(t) for t in self.catalog.list_tables(namespace)]
        except NoSuchNamespaceError:
            return []
