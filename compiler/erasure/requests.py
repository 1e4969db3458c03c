"""The erasure requests file: who asked, when, and the key values that identify them.

```yaml
requests:
  - id: REQ-2026-0042          # the ticket, so the proof can be matched to it
    received: "2026-11-02"     # the SLA (lifecycle.erasure.within) counts from here
    keys: {user_id: u042}      # the erasure key columns a table declares, with this subject's values
```
Errors name the file, line and key, like policy findings.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any

from pydantic import Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from compiler.diagnostics import Diagnostic, Diagnostics, Location, Severity
from compiler.model.names import UNSAFE_HINT, unsafe_character
from compiler.spec.base import LONG_MAX, Spec
from compiler.spec.errors import findings_from
from compiler.yamlsource import SourceMap, parse_yaml

KeyValue = str | Annotated[int, Field(ge=-LONG_MAX - 1, le=LONG_MAX)]  # an integer key column holds at most a long
# The deadline (received + within, at most 1000 years) must stay a date: year 9999 is the last one.
LAST_RECEIVED = date(8999, 12, 31)


class ErasureRequest(Spec):
    id: str = Field(min_length=1, description="The request's ticket id; the proof names it.")
    received: date = Field(description="When the request arrived (YYYY-MM-DD); the SLA counts from here.")
    keys: dict[str, KeyValue] = Field(min_length=1, description="Erasure key column -> this subject's value.")

    @field_validator("received", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        if isinstance(value, str):
            try:
                value = date.fromisoformat(value)
            except ValueError:
                raise ValueError(f"'{value}' is not a date; write it as YYYY-MM-DD") from None
            if value > LAST_RECEIVED:
                raise PydanticCustomError("TP611", "received {value} is out of range: at most {last}",
                                          {"value": str(value), "last": str(LAST_RECEIVED),
                                           "hint": "the date the request arrived, e.g. 2026-11-02"})
        return value

    @field_validator("id")
    @classmethod
    def _printable(cls, value: str) -> str:
        bad = unsafe_character(value)
        if bad:
            raise PydanticCustomError("TP610", "request id {id} holds {bad}",
                                      {"id": repr(value), "bad": bad, "hint": UNSAFE_HINT})
        return value


class ErasureRequests(Spec):
    requests: list[ErasureRequest] = Field(min_length=1, description="Every subject to erase in this run.")


@dataclass(frozen=True)
class LoadedRequests:
    model: ErasureRequests
    source: SourceMap  # positions for findings about a request

    def at(self, index: int, *key: str) -> Location:
        return self.source.value(("requests", index, *key))


def load_requests(text: str, file: str) -> tuple[LoadedRequests | None, Diagnostics]:
    diagnostics = Diagnostics()
    parsed = parse_yaml(text, file)
    if isinstance(parsed, Diagnostic):
        diagnostics.add(parsed)
        return None, diagnostics
    if not isinstance(parsed.data, dict):
        diagnostics.add(Diagnostic("TP612", Severity.ERROR, Location(file, 1, 1),
                                   "an erasure requests file is a mapping with a 'requests:' list",
                                   "start the file with 'requests:'"))
        return None, diagnostics
    try:
        requests = ErasureRequests.model_validate(parsed.data)
    except ValidationError as exc:
        diagnostics.extend(findings_from(exc, ErasureRequests, parsed.data, parsed.source))
        return None, diagnostics
    seen: dict[str, int] = {}
    for i, request in enumerate(requests.requests):
        if request.id in seen:
            diagnostics.add(Diagnostic("TP601", Severity.ERROR, parsed.source.value(("requests", i, "id")),
                                       f"request '{request.id}' is listed twice",
                                       f"first listed as item {seen[request.id] + 1}"))
        seen.setdefault(request.id, i)
    return (None if diagnostics.has_errors else LoadedRequests(requests, parsed.source)), diagnostics
