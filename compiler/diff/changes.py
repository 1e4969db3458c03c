"""The closed set of changes a plan can hold: small frozen models joined in one union on ``action``.

Each change knows its safety class, its stable finding code and a one-line summary; renderers and
the executor consume the union with ``match`` ending in ``assert_never``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

from compiler.diff.safety import Safety
from compiler.model.names import format_name
from compiler.model.table import TableState


class ChangeBase(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    table: tuple[str, ...] = Field(description="The table (or namespace) the change applies to.")

    @property
    def safety(self) -> Safety:
        return Safety.SAFE

    @property
    def code(self) -> str:
        return "TC100"

    @property
    def summary(self) -> str:
        raise NotImplementedError


class CreateNamespace(ChangeBase):
    action: Literal["create_namespace"] = "create_namespace"

    @property
    def code(self) -> str:
        return "TC101"

    @property
    def summary(self) -> str:
        return f"create namespace {format_name(self.table)}"


class CreateTable(ChangeBase):
    action: Literal["create_table"] = "create_table"
    state: TableState

    @property
    def code(self) -> str:
        return "TC102"

    @property
    def summary(self) -> str:
        columns = len(self.state.schema_.fields)
        return f"create table {format_name(self.table)} ({columns} columns)"


Change = Annotated[CreateNamespace | CreateTable, Field(discriminator="action")]
