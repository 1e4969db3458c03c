"""Common configuration of every policy model: strict types, unknown keys refused, immutable."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=False)
