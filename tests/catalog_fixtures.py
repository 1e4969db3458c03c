"""Create catalog tables with pyiceberg alone (no JVM): the fast tests' way to give the planner a live table."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pyiceberg.catalog import Catalog
from pyiceberg.catalog.sql import SqlCatalog
from pyiceberg.partitioning import PartitionField, PartitionSpec
from pyiceberg.table import Table
from pyiceberg.table.sorting import NullOrder, SortDirection, SortField, SortOrder
from pyiceberg.transforms import parse_transform

from tablepolicy.compiler.model.table import TableState, field_paths


def embedded_catalog(policies: Path) -> SqlCatalog:
    """The embedded catalog the CLI uses for ``policies`` (``.lake`` beside it)."""
    root = policies.resolve().parent / ".lake"
    (root / "warehouse").mkdir(parents=True, exist_ok=True)
    return SqlCatalog("lake", uri=f"sqlite:///{root / 'catalog.db'}", warehouse=(root / "warehouse").as_uri())


def create_like(catalog: Catalog, state: TableState) -> None:
    """Create the table exactly as ``state`` declares it."""
    ids = {path: fid for fid, path in field_paths(state.columns).items()}
    spec = PartitionSpec(*(
        PartitionField(source_id=ids[f.source], field_id=1000 + i, transform=parse_transform(str(f.transform)),
                       name=f.name or f"{f.source[-1]}_{f.transform.kind}")
        for i, f in enumerate(state.partition)
    ))
    order = SortOrder(*(
        SortField(source_id=ids[f.source], transform=parse_transform(str(f.transform)),
                  direction=SortDirection.ASC if f.direction == "asc" else SortDirection.DESC,
                  null_order=NullOrder.NULLS_FIRST if f.nulls == "first" else NullOrder.NULLS_LAST)
        for f in state.sort
    ))
    catalog.create_namespace_if_not_exists(state.namespace)
    props = {**state.properties, "format-version": str(state.format_version)}
    if state.comment:
        props["comment"] = state.comment
    catalog.create_table(state.name, schema=state.schema_, partition_spec=spec, sort_order=order, properties=props)


def create_examples(policies: Path, edit: Callable[[TableState], TableState] = lambda state: state) -> None:
    """Every table the policies under ``policies`` declare, created in their embedded catalog (``edit``: how
    each differs from its policy)."""
    from tablepolicy.compiler.desired import desired_states
    from tablepolicy.compiler.validate import validate

    project, _ = validate(policies)
    catalog = embedded_catalog(policies)
    for state in desired_states(project):
        create_like(catalog, edit(state))


def policy_table(root: Path, policy: str, name: tuple[str, str]) -> tuple[Path, Table]:
    """A project of one policy (``root``/policies/table.yaml) and its table ``name``, created in the embedded catalog
    as the policy declares it: the policies folder and the table."""
    from tablepolicy.compiler.desired import desired_states
    from tablepolicy.compiler.validate import validate

    policies = root / "policies"
    policies.mkdir()
    (policies / "table.yaml").write_text(policy)
    project, diagnostics = validate(policies)
    assert not diagnostics.has_errors, [d.render() for d in diagnostics]
    catalog = embedded_catalog(policies)
    create_like(catalog, desired_states(project)[0])
    return policies, catalog.load_table(name)
