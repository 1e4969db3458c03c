"""The closed set of changes a plan can hold: small frozen models joined in one union on ``action``.

Each change knows its stable finding code, whose registered safety (compiler/codes.py) is its safety class
(a kind whose changes differ in safety has one code per safety), and a one-line summary; renderers and the
executor consume the union with ``match`` ending in ``assert_never``. Column paths run through
structs by name and through lists and maps by Iceberg's ``element`` / ``key`` / ``value``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, PlainSerializer, PlainValidator, model_validator
from pyiceberg.types import IcebergType, PrimitiveType

from ..codes import registered_safety
from ..iceberg.names import format_name
from ..iceberg.types import primitive_spelling
from ..model.properties import STAMP_KEYS
from ..model.table import ColumnPath, PartitionFieldState, RefRetention, SortFieldState, TableState
from ..model.view import ViewState
from ..safety import Safety


def _load_type(value: object) -> IcebergType:
    return value if isinstance(value, IcebergType) else IcebergType.model_validate(value)


# Iceberg's own JSON form of a type ("long", {"type": "struct", ...}), as in table metadata.
IcebergTypeField = Annotated[
    IcebergType, PlainValidator(_load_type), PlainSerializer(lambda t: t.model_dump(mode="json", by_alias=True))
]


class ChangeBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    table: tuple[str, ...] = Field(description="The table (or namespace) the change applies to.")

    safety: Safety = Field(Safety.SAFE, description="The code's registered safety (compiler/codes.py), set from it.")
    code: str  # a kind's codes, each registered in compiler/codes.py with its safety

    @model_validator(mode="before")
    @classmethod
    def _registered_safety(cls, data: Any) -> Any:
        return registered_safety(data, cls.model_fields["code"].default)

    @property
    def summary(self) -> str:
        raise NotImplementedError

    @property
    def approval(self) -> str | None:
        """For destructive changes: the entry of ``allow_destructive`` that approves it."""
        return None


def _col(path: ColumnPath) -> str:
    return format_name(path)


def _type(t: IcebergType) -> str:
    return primitive_spelling(t) if isinstance(t, PrimitiveType) else str(t)


class CreateNamespace(ChangeBase):
    action: Literal["create_namespace"] = "create_namespace"
    code: Literal["TC101"] = "TC101"

    @property
    def summary(self) -> str:
        return f"create namespace {format_name(self.table)}"


class CreateTable(ChangeBase):
    action: Literal["create_table"] = "create_table"
    code: Literal["TC102"] = "TC102"
    state: TableState

    @property
    def summary(self) -> str:
        return f"create table {format_name(self.table)} ({len(self.state.columns.fields)} columns)"


class DropTable(ChangeBase):
    action: Literal["drop_table"] = "drop_table"
    code: Literal["TC302"] = "TC302"
    uuid: str | None = Field(None, description="The table dropped: an approval approves this table only.")

    @property
    def summary(self) -> str:
        return f"drop table {format_name(self.table)} (state: absent)"

    @property
    def approval(self) -> str:
        return "drop_table"


class AddColumn(ChangeBase):
    action: Literal["add_column"] = "add_column"
    code: Literal["TC201", "TC207"] = "TC201"  # TC207: re-added name, flagged breaking
    path: ColumnPath
    type: IcebergTypeField
    doc: str | None = None
    position: Literal["first", "after", "last"] = "last"
    after: str | None = None
    readded: bool = Field(False, description="A field of this name was dropped before: its old values stay gone.")

    @property
    def summary(self) -> str:
        note = " (re-added: the dropped column's old values do not come back)" if self.readded else ""
        return f"add column {_col(self.path)} {_type(self.type)}{note}"


class ColumnAdd(BaseModel):
    """One column of an ``AddColumns`` batch."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    path: ColumnPath
    type: IcebergTypeField
    doc: str | None = None
    position: Literal["first", "after", "last"] = "last"
    after: str | None = None


class AddColumns(ChangeBase):
    """Several new columns of one table in one ``ALTER TABLE ... ADD COLUMNS``: one schema commit."""

    action: Literal["add_columns"] = "add_columns"
    code: Literal["TC201"] = "TC201"
    columns: tuple[ColumnAdd, ...] = Field(min_length=2)

    @property
    def summary(self) -> str:
        return "add columns " + ", ".join(f"{_col(c.path)} {_type(c.type)}" for c in self.columns)


class DropColumn(ChangeBase):
    action: Literal["drop_column"] = "drop_column"
    code: Literal["TC301"] = "TC301"
    path: ColumnPath
    field_id: int

    @property
    def summary(self) -> str:
        return f"drop column {_col(self.path)} (field id {self.field_id}; its data is no longer readable)"

    @property
    def approval(self) -> str:
        return f"drop_column {_col(self.path)}"


class RenameColumn(ChangeBase):
    action: Literal["rename_column"] = "rename_column"
    code: Literal["TC202"] = "TC202"
    path: ColumnPath
    new_name: str
    field_id: int

    @property
    def summary(self) -> str:
        return f"rename column {_col(self.path)} to {format_name((self.new_name,))} (field id {self.field_id} kept)"


class WidenType(ChangeBase):
    action: Literal["widen_type"] = "widen_type"
    code: Literal["TC203"] = "TC203"
    path: ColumnPath
    old: IcebergTypeField
    new: IcebergTypeField

    @property
    def summary(self) -> str:
        return f"widen {_col(self.path)} from {_type(self.old)} to {_type(self.new)}"


class MakeOptional(ChangeBase):
    action: Literal["make_optional"] = "make_optional"
    code: Literal["TC204"] = "TC204"
    path: ColumnPath

    @property
    def summary(self) -> str:
        return f"make {_col(self.path)} optional (drop NOT NULL)"


class UpdateDoc(ChangeBase):
    action: Literal["update_doc"] = "update_doc"
    code: Literal["TC205"] = "TC205"
    path: ColumnPath
    doc: str

    @property
    def summary(self) -> str:
        return f"update doc of {_col(self.path)}"


class MoveColumn(ChangeBase):
    action: Literal["move_column"] = "move_column"
    code: Literal["TC206"] = "TC206"
    path: ColumnPath
    position: Literal["first", "after"]
    after: str | None = None

    @property
    def summary(self) -> str:
        where = "first" if self.position == "first" else f"after {format_name((self.after or '',))}"
        return f"move column {_col(self.path)} {where}"


class AddPartitionField(ChangeBase):
    action: Literal["add_partition_field"] = "add_partition_field"
    code: Literal["TC401"] = "TC401"
    field: PartitionFieldState

    @property
    def summary(self) -> str:
        name = f" as {self.field.name}" if self.field.name else ""
        return f"add partition field {self.field.transform.expression(self.field.source)}{name} (future writes)"


class DropPartitionField(ChangeBase):
    action: Literal["drop_partition_field"] = "drop_partition_field"
    code: Literal["TC402"] = "TC402"
    field: PartitionFieldState

    @property
    def summary(self) -> str:
        return (f"drop partition field {self.field.transform.expression(self.field.source)} "
                "(future writes; existing files keep their layout)")


class RenamePartitionField(ChangeBase):
    action: Literal["rename_partition_field"] = "rename_partition_field"
    code: Literal["TC403"] = "TC403"
    field: PartitionFieldState = Field(description="The field as declared, with its new name.")
    old_name: str

    @property
    def summary(self) -> str:
        return (f"rename partition field {self.old_name} -> {self.field.name} "
                f"({self.field.transform.expression(self.field.source)}; readers of the partitions table see it)")


class ReplacePartitionField(ChangeBase):
    """One partition field replaced by another in one commit (``REPLACE PARTITION FIELD``): the table is
    never without either."""

    action: Literal["replace_partition_field"] = "replace_partition_field"
    code: Literal["TC407"] = "TC407"
    old: PartitionFieldState = Field(description="The current field, with the name the catalog gave it.")
    field: PartitionFieldState = Field(description="The field as declared.")

    @property
    def summary(self) -> str:
        name = f" as {self.field.name}" if self.field.name else ""
        return (f"replace partition field {self.old.transform.expression(self.old.source)} by "
                f"{self.field.transform.expression(self.field.source)}{name} in one commit (future writes)")


class PartitionRename(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    old_name: str
    field: PartitionFieldState


class UpdatePartitionSpec(ChangeBase):
    """A partition evolution that takes more than one statement, run as one commit of Iceberg's
    UpdatePartitionSpec API: the table goes from the old spec to the new one and through nothing else."""

    action: Literal["update_partition_spec"] = "update_partition_spec"
    code: Literal["TC408", "TC409"] = "TC408"  # TC409: drops or renames fields, breaking
    remove: tuple[PartitionFieldState, ...] = ()
    rename: tuple[PartitionRename, ...] = ()
    add: tuple[PartitionFieldState, ...] = ()

    @property
    def summary(self) -> str:
        parts = [f"drop {f.transform.expression(f.source)}" for f in self.remove]
        parts += [f"rename {r.old_name} -> {r.field.name}" for r in self.rename]
        parts += [f"add {f.transform.expression(f.source)}" + (f" as {f.name}" if f.name else "") for f in self.add]
        return f"evolve the partition spec in one commit: {', '.join(parts)} (future writes)"


class SetSortOrder(ChangeBase):
    action: Literal["set_sort_order"] = "set_sort_order"
    code: Literal["TC404"] = "TC404"
    sort: tuple[SortFieldState, ...]
    distribution_mode: str | None = None

    @property
    def summary(self) -> str:
        if not self.sort:
            return "remove the write sort order (future writes)"
        fields = ", ".join(f"{f.transform.expression(f.source)} {f.direction}" for f in self.sort)
        return f"sort future writes by {fields}"


class SetIdentifierFields(ChangeBase):
    action: Literal["set_identifier_fields"] = "set_identifier_fields"
    code: Literal["TC405"] = "TC405"
    fields: tuple[ColumnPath, ...]

    @property
    def summary(self) -> str:
        return f"set identifier fields {', '.join(_col(p) for p in self.fields)}"


class DropIdentifierFields(ChangeBase):
    action: Literal["drop_identifier_fields"] = "drop_identifier_fields"
    code: Literal["TC405"] = "TC405"
    fields: tuple[ColumnPath, ...]

    @property
    def summary(self) -> str:
        return f"drop identifier fields {', '.join(_col(p) for p in self.fields)}"


class UpgradeFormat(ChangeBase):
    action: Literal["upgrade_format"] = "upgrade_format"
    code: Literal["TC406"] = "TC406"
    old: int
    new: int

    @property
    def summary(self) -> str:
        return f"upgrade format version {self.old} -> {self.new} (irreversible; readers must support v{self.new})"


class SetComment(ChangeBase):
    action: Literal["set_comment"] = "set_comment"
    code: Literal["TC503"] = "TC503"
    comment: str

    @property
    def summary(self) -> str:
        return "update the table comment"


class PropertyChange(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    key: str
    old: str | None
    new: str | None
    setting: str | None = Field(None, description="The policy setting that owns the key, if any.")
    origin: str | None = Field(None, description="Where the effective value was written (file:line:col).")


class SetProperties(ChangeBase):
    action: Literal["set_properties"] = "set_properties"
    code: Literal["TC501", "TC505"] = "TC501"  # TC505: a shorter snapshot expiry, breaking
    changes: tuple[PropertyChange, ...]

    @property
    def summary(self) -> str:
        """``set k: old -> new``; apply's stamps (which plan and commit changed the table) are records whose earlier
        value nobody read, so they read ``tablepolicy.plan-id = <id>``, never as if they had been unset."""
        return "set " + ", ".join(f"{c.key} = {c.new}" if c.key in STAMP_KEYS and c.old is None
                                  else f"{c.key}: {c.old or '(unset)'} -> {c.new}" for c in self.changes)


class UnsetProperties(ChangeBase):
    action: Literal["unset_properties"] = "unset_properties"
    code: Literal["TC502"] = "TC502"
    changes: tuple[PropertyChange, ...]

    @property
    def summary(self) -> str:
        return "unset " + ", ".join(f"{c.key} (was {c.old})" for c in self.changes)


class RetentionEstimate(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    files: int = Field(description="Data files entirely older than the new cutoff (deleted whole).")
    partial_files: int = Field(description="Files straddling the cutoff (rewritten).")
    rows: int = Field(description="Rows in wholly expired files (a lower bound of rows deleted).")
    rows_upper: int = Field(description="Rows in all files touched (an upper bound).")
    bytes: int = Field(description="Bytes of wholly expired files.")


class TightenRetention(ChangeBase):
    action: Literal["tighten_retention"] = "tighten_retention"
    code: Literal["TC504"] = "TC504"
    column: str
    old: str | None
    new: str
    properties: tuple[PropertyChange, ...]
    estimate: RetentionEstimate | None = None

    @property
    def summary(self) -> str:
        base = f"retention on {self.column}: {self.old or 'keep forever'} -> {self.new} (maintain deletes older rows)"
        e = self.estimate
        if e is None:
            return base
        return (f"{base}; estimated from metadata: {e.files} file(s), {e.rows:,} row(s), {e.bytes:,} byte(s) "
                f"wholly expired, {e.partial_files} more file(s) partly")

    @property
    def approval(self) -> str:
        return "tighten_retention"


TABLES = "the table's"
_UNITS = (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000), ("ms", 1))


def duration_text(ms: int) -> str:
    """Milliseconds as a policy writes them, in the largest whole unit: ``2592000000`` -> ``30d``."""
    return next(f"{ms // size}{unit}" for unit, size in _UNITS if ms % size == 0)


def retention_text(keep: RefRetention, kind: str) -> str:
    """What a ref keeps, unset values named as the table's: ``max_ref_age 30d, min_snapshots_to_keep table's``."""
    values = [("max_ref_age", duration_text(keep.max_ref_age_ms) if keep.max_ref_age_ms else None)]
    if kind == "branch":
        values += [("min_snapshots_to_keep", str(keep.min_snapshots_to_keep) if keep.min_snapshots_to_keep else None),
                   ("max_snapshot_age",
                    duration_text(keep.max_snapshot_age_ms) if keep.max_snapshot_age_ms else None)]
    return ", ".join(f"{key} {value or TABLES}" for key, value in values)


class CreateRef(ChangeBase):
    """A new branch or tag, at the snapshot the plan names (the current one when planned, or the declared one);
    a branch of a table without a snapshot starts on an empty snapshot of its own."""

    action: Literal["create_ref"] = "create_ref"
    code: Literal["TC601"] = "TC601"
    name: str
    kind: Literal["branch", "tag"]
    snapshot_id: int | None = Field(description="Where it starts; None: a branch of a table without a snapshot.")
    declared_start: bool = Field(False, description="The policy names the snapshot (else the current one).")
    retention: RefRetention

    @property
    def summary(self) -> str:
        start = ("on a new empty snapshot" if self.snapshot_id is None else f"at snapshot {self.snapshot_id}"
                 + ("" if self.declared_start else " (the current one)"))
        return f"create {self.kind} {format_name((self.name,))} {start}; {retention_text(self.retention, self.kind)}"


class SetRefRetention(ChangeBase):
    """A ref's own retention set to what git declares, in one commit that never moves the ref."""

    action: Literal["set_ref_retention"] = "set_ref_retention"
    code: Literal["TC602", "TC603"] = "TC602"  # TC603: snapshots or the ref itself may expire sooner
    name: str
    kind: Literal["branch", "tag"]
    snapshot_id: int = Field(description="Where the ref pointed when planned (shown; apply leaves it where it is).")
    old: RefRetention
    new: RefRetention

    @property
    def summary(self) -> str:
        return (f"set retention of {self.kind} {format_name((self.name,))}: {retention_text(self.old, self.kind)} "
                f"-> {retention_text(self.new, self.kind)}")

    @property
    def approval(self) -> str | None:
        return f"shorten_ref {self.name}" if self.code == "TC603" else None


class DropRef(ChangeBase):
    """A ref an apply recorded as declared and git no longer declares."""

    action: Literal["drop_ref"] = "drop_ref"
    code: Literal["TC604"] = "TC604"
    name: str
    kind: Literal["branch", "tag"]
    snapshot_id: int = Field(description="Where the ref points: an approval approves dropping it there only.")

    @property
    def summary(self) -> str:
        return (f"drop {self.kind} {format_name((self.name,))} (at snapshot {self.snapshot_id}; snapshots only it "
                "keeps become expirable)")

    @property
    def approval(self) -> str:
        return f"drop_{self.kind} {self.name}"


class CreateView(ChangeBase):
    """A new view: its SQL, column comments, comment and properties in one commit (``table``: the view)."""

    action: Literal["create_view"] = "create_view"
    code: Literal["TC701"] = "TC701"
    state: ViewState

    @property
    def summary(self) -> str:
        return f"create view {format_name(self.table)}"


class ReplaceView(ChangeBase):
    """The view as git declares it, in one commit (CREATE OR REPLACE VIEW): a new version of the view."""

    action: Literal["replace_view"] = "replace_view"
    code: Literal["TC702"] = "TC702"
    state: ViewState
    differs: tuple[Literal["sql", "columns", "comment", "properties"], ...] = Field(
        description="What differs from the view's current version, as git declares it.")
    version_id: int = Field(description="The view's current version when planned (replaced by a new one).")

    @property
    def summary(self) -> str:
        return f"replace view {format_name(self.table)} (version {self.version_id}): new {', '.join(self.differs)}"


class UnsetViewProperties(ChangeBase):
    """Property keys an apply recorded as declared on the view (``tablepolicy.declared-properties``) that git no
    longer declares: Iceberg's replace keeps a view's properties, so they are unset."""

    action: Literal["unset_view_properties"] = "unset_view_properties"
    code: Literal["TC704"] = "TC704"
    keys: tuple[str, ...] = Field(min_length=1)

    @property
    def summary(self) -> str:
        return f"unset properties of view {format_name(self.table)} (removed from git): {', '.join(self.keys)}"


class DropView(ChangeBase):
    action: Literal["drop_view"] = "drop_view"
    code: Literal["TC703"] = "TC703"
    uuid: str = Field(description="The view dropped: an approval approves this view only.")

    @property
    def summary(self) -> str:
        return f"drop view {format_name(self.table)} (state: absent)"

    @property
    def approval(self) -> str:
        return "drop_view"


Change = Annotated[
    CreateNamespace
    | CreateTable
    | DropTable
    | AddColumn
    | AddColumns
    | DropColumn
    | RenameColumn
    | WidenType
    | MakeOptional
    | UpdateDoc
    | MoveColumn
    | AddPartitionField
    | DropPartitionField
    | RenamePartitionField
    | ReplacePartitionField
    | UpdatePartitionSpec
    | SetSortOrder
    | SetIdentifierFields
    | DropIdentifierFields
    | UpgradeFormat
    | SetComment
    | SetProperties
    | UnsetProperties
    | TightenRetention
    | CreateRef
    | SetRefRetention
    | DropRef
    | CreateView
    | ReplaceView
    | UnsetViewProperties
    | DropView,
    Field(discriminator="action"),
]

