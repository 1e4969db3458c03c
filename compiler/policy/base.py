"""Common configuration of every policy model: strict types, unknown keys refused, immutable."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

from ..iceberg.types import INT32_MAX

__all__ = ["Count", "NonEmpty", "Spec"]

# A positive count or field id: Iceberg and Spark hold these as Java ints.
Count = Annotated[int, Field(ge=1, le=INT32_MAX)]
# A name, key, tag or label: empty text names nothing.
NonEmpty = Annotated[str, Field(min_length=1)]


class Spec(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, populate_by_name=False)
