"""The versioned plan file: per table the state it was planned against and the ordered changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .. import __version__
from ..diff.changes import Change
from ..safety import Safety

if TYPE_CHECKING:  # the catalog configuration finds the project, which reads plans: no import at run time
    from ..catalog.config import CatalogConfig

# 2: each table carries the property keys its policy declares; 3: the catalog's type and redacted URI, each
# table's UUID and the approvals it consumed, by-path dicts as [path, value] pairs (a create with renamed_from)
PLAN_FORMAT_VERSION = 3


class Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class CatalogRef(Frozen):
    """The catalog a plan targets, as printed and recorded: never its credentials."""

    name: str
    type: str | None = Field(None, description="sql, rest, hive, glue, ...")
    uri: str | None = Field(None, description="The catalog URI with any password masked.")

    @classmethod
    def of(cls, config: CatalogConfig) -> CatalogRef:
        return cls(name=config.name, type=config.kind, uri=config.redacted().get("uri"))

    def describe(self) -> str:
        return f"catalog '{self.name}' ({self.type or '?'}, {self.uri or '?'})"


class OverlaidSetting(Frozen):
    """A value an environment overlay sets for a table: the plan shows it with the file and line it came from."""

    table: tuple[str, ...]
    setting: str = Field(description="The dotted setting, e.g. lifecycle.snapshots.max_age.")
    value: Any = Field(description="The effective value, as the policy format writes it (e.g. '7d').")
    origin: str | None = Field(None, description="file:line:col of the value in the overlay.")


class EnvironmentRef(Frozen):
    """The environment overlay a plan was made with (``--env``) and every value it sets."""

    name: str
    file: str = Field(description="The overlay file, as this run names it.")
    settings: list[OverlaidSetting] = Field(default_factory=list)


class Requirement(Frozen):
    """What the catalog held when the plan was made; apply refuses if any of it changed.

    Data commits (appends by running writers) move the metadata location but none of what the plan
    depends on: schema, partition spec, sort order and properties are compared.
    """

    exists: bool = Field(description="Whether the table existed.")
    metadata_location: str | None = Field(None, description="Metadata file the plan was made against.")
    uuid: str | None = Field(None, description="The table's UUID: a table dropped and re-created since is stale.")
    schema_id: int | None = None
    spec_id: int | None = None
    sort_order_id: int | None = None
    format_version: int | None = None
    properties_digest: str | None = Field(None, description="sha256 of the table's properties.")
    refs_digest: str | None = Field(None, description="sha256 of the table's branches and tags (not where they "
                                    "point) other than main; None: it has none.", exclude_if=lambda v: v is None)


class Blocked(Frozen):
    """A destructive change git has not approved; the plan cannot be applied until it is."""

    table: tuple[str, ...]
    code: str
    summary: str
    approval: str = Field(description="The allow_destructive entry that approves the change.")
    policy_file: str


class TablePlan(Frozen):
    table: tuple[str, ...]
    kind: Literal["table", "view"] = Field("table", description="A view's plan holds view changes only.",
                                           exclude_if=lambda v: v == "table")
    policy_file: str | None = Field(None, description="The policy file that declares the table.")
    requirement: Requirement
    changes: list[Change] = Field(default_factory=list)
    declared_properties: tuple[str, ...] = Field(
        (), description="Property keys the policy declares by hand; apply records them on the table, so a key "
                        "later removed from git is unset and keys other tools set are never touched.")
    declared_refs: tuple[str, ...] = Field(
        (), description="Branches and tags the policy declares; apply records them on the table, so one later "
                        "removed from git is dropped (with approval) and refs made by hand are never touched.")
    consumed_approvals: tuple[str, ...] = Field(
        (), description="Approvals earlier applies consumed on this table, each qualified by what it approved "
                        "(e.g. 'drop_column order_id (field id 3)'); apply adds the ones this plan consumes.")

    @property
    def safety(self) -> Safety:
        return max((c.safety for c in self.changes), default=Safety.SAFE)


class Plan(Frozen):
    format_version: int = PLAN_FORMAT_VERSION
    tool_version: str = __version__
    catalog_ref: CatalogRef = Field(description="The catalog the plan was made against (never its credentials).")
    git_sha: str | None = Field(None, description="Commit of the policies, when planned inside git; `<sha>-dirty` when "
                                  "the policies in the work tree differed from it.")
    environment: EnvironmentRef | None = Field(None, description="The overlay the plan was made with, if any.")
    namespaces: list[Change] = Field(default_factory=list, description="Namespaces to create first.")
    tables: list[TablePlan] = Field(default_factory=list)
    unmanaged: list[tuple[str, ...]] = Field(
        default_factory=list, description="Tables in managed namespaces that no policy declares (never dropped)."
    )
    blocked: list[Blocked] = Field(default_factory=list, description="Destructive changes without approval.")
    selected: list[tuple[str, ...]] | None = Field(
        None, description="The tables of a plan restricted to a path (a file or subfolder); None: the whole "
                          "project. Apply compares only these with the plan derived now.")

    @property
    def catalog(self) -> str:
        """The catalog's name, as the SQL names it."""
        return self.catalog_ref.name

    @property
    def changes(self) -> list[Change]:
        return [*self.namespaces, *(c for t in self.tables for c in t.changes)]

    @property
    def has_changes(self) -> bool:
        return bool(self.changes)

    @property
    def safety(self) -> Safety:
        return max((c.safety for c in self.changes), default=Safety.SAFE)
