"""The erasure requests file: who asked, when, and the key values that identify them.

Three formats, chosen by the file's extension (privacy teams export CSV or JSON lines):

```yaml
requests:                      # requests.yaml / .yml
  - id: REQ-2026-0042          # the ticket, so the proof can be matched to it
    received: "2026-11-02"     # the SLA (lifecycle.erasure.within) counts from here
    keys: {user_id: u042}      # the erasure key columns a table declares, with this subject's values
```

```
id,received,user_id,user.uid              requests.csv: a header, then one request per record (RFC 4180)
REQ-2026-0042,2026-11-02,u042,            an empty cell: that column is no key of this request
```

```
{"id": "REQ-2026-0042", "received": "2026-11-02", "keys": {"user_id": "u042", "user.uid": 7}}
```
(requests.jsonl / .ndjson: one object per line). A nested key column is always written flat, with a dot
(``user.uid``), in every format. CSV cells are text: the key column's type decides whether a cell is read
as an integer (``Text``); YAML and JSON values carry their own type.

Errors name the file, line and key, like policy findings; a CSV record is reported at the physical line
where it starts (a quoted field may span lines). The CSV and JSON lines readers are hand-written loops
over the C tokenisers of ``re`` and ``json``: no model is built per row, so 10,000 rows load in tens of
milliseconds. A YAML file of one flow mapping per line, as exports write it, is read line by line into the data
libyaml would compose (``_flow_lines``); any other YAML is composed, with positions.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import date
from typing import Annotated, Any, Protocol

from pydantic import Field, ValidationError, field_validator
from pydantic_core import PydanticCustomError
from yaml.nodes import ScalarNode

from .. import jsontext
from ..diagnostics import Diagnostic, Diagnostics, Location, Severity
from ..iceberg.names import UNSAFE_HINT, unsafe_character
from ..iceberg.types import LONG_MAX
from ..policy.base import Spec
from ..policy.errors import findings_from
from ..policy.table import SAFE_NAME
from ..yamlsource import Path, SourceMap, YamlDocument, _scalar, parse_yaml
from .formats import ACCEPTED, FORMATS, RequestsFormat

NonEmpty = Annotated[str, Field(min_length=1)]
KeyValue = NonEmpty | Annotated[int, Field(ge=-LONG_MAX - 1, le=LONG_MAX)]  # an integer key column holds at most a long
# The deadline (received + within, at most 1000 years) must stay a date: year 9999 is the last one.
LAST_RECEIVED = date(8999, 12, 31)

_ISO_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_INTEGER = re.compile(r"[-+]?[0-9]{1,19}")
FIELDS = ("id", "received", "keys")
_FIELD_SET = frozenset(FIELDS)
MAX_ID = 200  # characters: the ledger keys rows by request id
# the JSON Schema's "received": a date (format) of a year up to LAST_RECEIVED's, 8999
_RECEIVED_PATTERN = "^[0-8][0-9]{3}-[0-9]{2}-[0-9]{2}$"


class Text(str):
    """A CSV cell: text whose type the key column decides (a long column reads ``42`` as the integer 42)."""

    __slots__ = ()


def column_value(value: KeyValue, *, integer: bool) -> KeyValue | None:
    """``value`` as a key column of that kind holds it, or None when it does not fit: an integer column takes
    integers (and CSV cells that spell one within a long), a string column takes text."""
    if integer:
        if isinstance(value, Text):
            number = int(value) if _INTEGER.fullmatch(value) else None
            return number if number is not None and -LONG_MAX - 1 <= number <= LONG_MAX else None
        return value if isinstance(value, int) else None
    return str.__str__(value) if isinstance(value, str) else None


def received_date(text: str) -> date | str:
    """The received date, or why it is not one."""
    try:
        value = date.fromisoformat(text) if _ISO_DATE.fullmatch(text) else None
    except ValueError:
        value = None
    if value is None:
        return f"'{text}' is not a date; write it as YYYY-MM-DD"
    if value > LAST_RECEIVED:
        return f"received {value} is out of range: at most {LAST_RECEIVED}"
    return value


class ErasureRequest(Spec):
    id: str = Field(min_length=1, max_length=MAX_ID, description="The request's ticket id; the proof names it.",
                    json_schema_extra={"pattern": SAFE_NAME})  # no control character (TP610)
    received: date = Field(description="When the request arrived (YYYY-MM-DD); the SLA counts from here.",
                           json_schema_extra={"pattern": _RECEIVED_PATTERN})
    keys: dict[NonEmpty, KeyValue] = Field(min_length=1, description="Erasure key column -> this subject's value.")

    @field_validator("received", mode="before")
    @classmethod
    def _iso_date(cls, value: Any) -> Any:
        if isinstance(value, str):
            value = received_date(value)
            if isinstance(value, str):
                code = "TP611" if "out of range" in value else "TP104"
                raise PydanticCustomError(code, "{message}", {
                    "message": value, "hint": "the date the request arrived, e.g. 2026-11-02"})
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


@dataclass(frozen=True, slots=True)
class Request:
    """One subject to erase, as every format loads it (a plain object: 10,000 of them cost milliseconds)."""

    id: str
    received: date
    keys: dict[str, KeyValue]  # key column (nested ones with a dot: user.uid) -> value
    deadline: date | None = None  # a deadline of its own (the request table's column): the earlier one applies


@dataclass(frozen=True)
class Requests:
    requests: tuple[Request, ...]


class Positions(Protocol):
    """Where a request's parts sit in its file: ``("requests", index, "keys", column)`` -> location."""

    def value(self, path: Path) -> Location: ...


def _part(path: Path) -> str:
    """``id``, ``received``, ``keys`` or a key column: the last part of a request path."""
    return str(path[-1]) if len(path) > 2 else "keys"


@dataclass(frozen=True)
class CsvPositions:
    """A CSV record is reported at the line it starts on, each cell at its column when it starts there."""

    file: str
    header: dict[str, int]  # column name -> field index; "keys" -> the first key column
    rows: list[tuple[int, tuple[int, ...]]]  # per request: its line, the column of each field

    def value(self, path: Path) -> Location:
        line, columns = self.rows[int(path[1])]
        return Location(self.file, line, columns[self.header.get(_part(path), self.header["keys"])])


@dataclass(frozen=True)
class JsonLinesPositions:
    """A JSON line's parts are found in its text when a finding needs them (a valid file never pays)."""

    file: str
    rows: list[tuple[int, str]]  # per request: its line number and text

    def value(self, path: Path) -> Location:
        line, text = self.rows[int(path[1])]
        part = _part(path)
        start = _column(text, "keys") if len(path) > 3 else 1
        return Location(self.file, line, _column(text, part, start))


@dataclass(frozen=True)
class KeptPositions:
    """The positions of the requests kept after dropping repeated ones."""

    source: Positions
    original: tuple[int, ...]

    def value(self, path: Path) -> Location:
        return self.source.value((path[0], self.original[int(path[1])], *path[2:]))


@dataclass(frozen=True)
class LoadedRequests:
    model: Requests
    positions: Positions  # for findings about a request

    def at(self, index: int, *key: str) -> Location:
        return self.positions.value(("requests", index, *key))


def requests_format(file: str) -> RequestsFormat | Diagnostic:
    """The format the file's extension names, or TP604 listing the accepted ones."""
    suffix = file[file.rfind("."):].lower() if "." in file.rsplit("/", 1)[-1] else ""
    found = FORMATS.get(suffix)
    if found is not None:
        return found
    return Diagnostic("TP604", Severity.ERROR, Location(file),
                      f"unknown requests format {suffix or '(no extension)'!r}: the extension names the format",
                      f"name the file with one of {ACCEPTED}")


def sniffed_format(text: str) -> RequestsFormat:
    """The format of requests read from standard input, which has no extension: a JSON object on the first line
    is JSON lines, ``requests:`` (or a YAML document start) is YAML, anything else CSV (a header line)."""
    first = next((line.strip() for line in text.removeprefix("\ufeff").splitlines() if line.strip()), "")
    if first.startswith("{"):
        return "jsonl"
    if first.startswith(("requests:", "---", "#")):
        return "yaml"
    return "csv"


def load_requests(
    text: str, file: str, kind: RequestsFormat | None = None
) -> tuple[LoadedRequests | None, Diagnostics]:
    """Parse a requests file in the format its name's extension says (or ``kind``, for standard input); every
    finding of the file at once."""
    diagnostics = Diagnostics()
    if kind is None:
        found = requests_format(file)
        if isinstance(found, Diagnostic):
            diagnostics.add(found)
            return None, diagnostics
        kind = found
    return _load(text, file, kind, diagnostics)


def date_findings(requests: LoadedRequests, today: date) -> Diagnostics:
    """A request received after ``today`` (TP616: a typo, or a clock gone wrong: its deadline would be late by
    design) or whose own deadline is before it was received (TP617). Checked before anything is erased."""
    findings = Diagnostics()
    for index, request in enumerate(requests.model.requests):
        if request.received > today:
            findings.error("TP616", requests.at(index, "received"),
                           f"request '{request.id}' was received on {request.received}, after today ({today})",
                           "fix the received date: a request cannot arrive in the future")
        if request.deadline is not None and request.deadline < request.received:
            findings.error("TP617", requests.at(index, "deadline"),
                           f"request '{request.id}' has deadline {request.deadline}, before it was received "
                           f"({request.received})",
                           "fix the deadline (or leave it empty: the policy's lifecycle.erasure.within applies)")
    return findings


def _load(text: str, file: str, kind: RequestsFormat, diagnostics: Diagnostics
          ) -> tuple[LoadedRequests | None, Diagnostics]:
    positions: Positions
    match kind:
        case "yaml":
            return _load_yaml(text, file, diagnostics)
        case "csv":
            requests, positions = _csv_requests(text, file, diagnostics)
        case "jsonl":
            requests, positions = _jsonl_requests(text, file, diagnostics)
    if not requests and not diagnostics.has_errors:
        diagnostics.error("TP103", Location(file, 1, 1), "the requests file holds no request",
                          "one request per record: " + ("a header, then id,received,key..." if kind == "csv"
                                                        else '{"id": ..., "received": ..., "keys": {...}}'))
    kept = unique_requests(requests, positions, diagnostics)
    if diagnostics.has_errors:
        return None, diagnostics
    if len(kept) < len(requests):
        positions = KeptPositions(positions, tuple(kept))
    return LoadedRequests(Requests(tuple(requests[i] for i in kept)), positions), diagnostics


def _load_yaml(text: str, file: str, diagnostics: Diagnostics) -> tuple[LoadedRequests | None, Diagnostics]:
    lines = _flow_lines(text)
    parsed = YamlDocument(lines, SourceMap(file, text=text)) if lines is not None else parse_yaml(text, file)
    if isinstance(parsed, Diagnostic):
        diagnostics.add(parsed)
        return None, diagnostics
    if not isinstance(parsed.data, dict):
        diagnostics.add(Diagnostic("TP612", Severity.ERROR, Location(file, 1, 1),
                                   "an erasure requests file is a mapping with a 'requests:' list",
                                   "start the file with 'requests:'"))
        return None, diagnostics
    try:
        validated = ErasureRequests.model_validate(parsed.data)
    except ValidationError as exc:
        diagnostics.extend(findings_from(exc, ErasureRequests, parsed.data, parsed.source))
        return None, diagnostics
    requests = [Request(r.id, r.received, dict(r.keys)) for r in validated.requests]
    kept = unique_requests(requests, parsed.source, diagnostics)
    if diagnostics.has_errors:
        return None, diagnostics
    kept_positions = KeptPositions(parsed.source, tuple(kept))
    return LoadedRequests(Requests(tuple(requests[i] for i in kept)), kept_positions), diagnostics


# --- YAML of one request per line --------------------------------------------------------------------------
# What exports write: ``requests:``, then ``  - {id: REQ-1, received: "2026-11-02", keys: {user_id: u1}}`` per line.
# Composing 10,000 of them with libyaml built a node (and two marks) per scalar: 0.6 s. Such a file is read here
# line by line into the same data parse_yaml builds; anything else in it (a comment, a block mapping, an escape, a
# plain scalar with other characters, a key given twice) leaves it to parse_yaml, which also finds every error.
# Positions are composed from the text only when a finding asks for one (SourceMap(text=...)).

_WIDE = r"\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\U00010000-\U0010ffff"  # printable, no line break or BOM
_FLOW_TOKEN = re.compile(
    r" *(?:"
    r"(?P<key>[A-Za-z_][A-Za-z0-9_.-]{0,99}): +"  # a key: a name, then ': '
    r"|(?P<plain>(?:[A-Za-z0-9_]|[-+.][A-Za-z0-9_])[A-Za-z0-9_.@/+-]{0,98}(?![A-Za-z0-9_.@/+-]))"
    rf'|"(?P<double>(?:[\x20\x21\x23-\x5b\x5d-\x7e{_WIDE}]|\\["\\])*)"'  # of the escapes only \" and \\
    rf"|'(?P<single>(?:[\x20-\x26\x28-\x7e{_WIDE}]|'')*)'"
    r"|(?P<punct>[{},])"
    r") *")
_STR = "tag:yaml.org,2002:str"
_ESCAPED = re.compile(r"\\(.)")  # \" or \\ in a double-quoted scalar


def _flow_lines(text: str) -> dict[str, Any] | None:
    """The requests of a file of one flow mapping per line, as parse_yaml would build them; None when the file
    has any other shape."""
    lines = text.split("\n")
    if lines[0] != "requests:":
        return None
    requests: list[Any] = []
    prefix = ""
    for line in lines[1:]:
        if not line.strip(" "):
            continue
        if not prefix:
            prefix = line[:line.find("- {") + 2]
            if prefix.strip(" ") != "-":
                return None
        if not line.startswith(prefix) or (item := _flow_mapping(line, len(prefix))) is None:
            return None
        requests.append(item)
    return {"requests": requests} if requests else None


def _flow_mapping(line: str, pos: int) -> dict[str, Any] | None:
    """The mapping ``{key: value, ...}`` (a value a scalar or, one level down, a mapping of scalars) that fills
    ``line`` from ``pos``; None for anything else."""
    stack: list[tuple[dict[str, Any], str]] = []  # the mappings open, and the key each is the value of
    key, expect = "", "{"  # what may come next: "{", "key", "value" (a scalar or "{") or "," (or "}")
    while pos < len(line):
        token = _FLOW_TOKEN.match(line, pos)
        if token is None:
            return None
        pos, kind, text = token.end(), token.lastgroup, token.group(token.lastgroup or 0)
        if kind == "key" and expect == "key":
            key, expect = str(_scalar(ScalarNode(_STR, text))), "value"
            if key in stack[-1][0]:  # parse_yaml names the duplicate
                return None
        elif kind == "punct" and text == "{" and expect in ("{", "value") and len(stack) < 2:
            stack.append(({}, key))
            expect = "key"
        elif kind == "punct" and text == "," and expect == ",":
            expect = "key"
        elif kind == "punct" and text == "}" and expect == ",":
            mapping, of = stack.pop()
            if not stack:
                return mapping if pos == len(line) else None
            stack[-1][0][of] = mapping
        elif kind in ("plain", "double", "single") and expect == "value":
            stack[-1][0][key] = (_scalar(ScalarNode(_STR, text)) if kind == "plain" else
                                 _ESCAPED.sub(r"\1", text) if kind == "double" else text.replace("''", "'"))
            expect = ","
        else:
            return None
    return None


def unique_requests(requests: list[Request], positions: Positions, diagnostics: Diagnostics) -> list[int]:
    """Indices of the requests to keep: a request listed again with the same content is counted once (a
    warning); the same id with other content is an error (TP601)."""
    first: dict[str, int] = {}
    kept = []
    for i, request in enumerate(requests):
        seen = first.setdefault(request.id, i)
        if seen == i:
            kept.append(i)
            continue
        where = positions.value(("requests", i, "id"))
        earlier = positions.value(("requests", seen, "id")).line
        if requests[seen] == request:
            diagnostics.add(Diagnostic("TP613", Severity.WARNING, where, f"request '{request.id}' is listed twice",
                                       f"the same request as on line {earlier}; it is erased once"))
        else:
            diagnostics.add(Diagnostic("TP601", Severity.ERROR, where,
                                       f"request '{request.id}' is listed twice, with other content",
                                       f"first listed on line {earlier}; a request id names one subject: "
                                       "give each its own id"))
    return kept


@functools.lru_cache(maxsize=4096)
def _day(text: str) -> date | str:
    return received_date(text)


def _request(
    at: Callable[[str], Location], ident: Any, received: Any, keys: dict[str, KeyValue], diagnostics: Diagnostics
) -> Request | None:
    """Check one CSV or JSON lines request; ``at``: the location of one of its parts."""
    day = _day(received) if isinstance(received, str) else "the received date is missing or not text"
    if isinstance(ident, str) and ident and keys and not isinstance(day, str) and len(ident) <= MAX_ID \
            and not unsafe_character(ident):
        return Request(ident, day, keys)
    if not isinstance(ident, str) or not ident:
        diagnostics.error("TP104" if ident else "TP103", at("id"), "the request id is missing or not text",
                          "give every request its ticket id, e.g. REQ-2026-0042")
    elif len(ident) > MAX_ID:
        diagnostics.error("TP105", at("id"), f"the request id is {len(ident)} characters long: at most {MAX_ID}",
                          "the ledger keeps ticket ids of at most 200 characters")
    elif bad := unsafe_character(ident):
        diagnostics.error("TP610", at("id"), f"request id {ident!r} holds {bad}", UNSAFE_HINT)
    if isinstance(day, str):
        diagnostics.error("TP611" if "out of range" in day else "TP104", at("received"), day,
                          "the date the request arrived, e.g. 2026-11-02")
    if not keys:
        diagnostics.error("TP103", at("keys"), f"request {ident!r} has no key value",
                          "give the value of each erasure key column of the tables it reaches")
    return None


# --- CSV --------------------------------------------------------------------------------------------------

_QUOTED = re.compile(r'"((?:[^"]|"")*)"')
_PLAIN = re.compile(r'[^,"\r\n]*')
# one field and what ends it: a comma, a line break (CRLF, LF or CR) or the end of the text
_FIELD = re.compile(r'(?:"((?:[^"]|"")*)"|([^,"\r\n]*))(,|\r\n|\n|\r|\Z)')


class _CsvError(Exception):
    def __init__(self, line: int, col: int, message: str, hint: str) -> None:
        super().__init__(message)
        self.line, self.col, self.message, self.hint = line, col, message, hint


def _csv_records(text: str) -> Iterator[tuple[int, list[tuple[str, int]]]]:
    """RFC 4180 records: (the line the record starts on, [(field, its column on that line or 1)]).

    Fields are separated by commas, records by CRLF or LF; a field in double quotes may hold commas,
    quotes (doubled) and line breaks. A stray quote is an error, never guessed around.
    """
    pos = 1 if text.startswith("\ufeff") else 0  # a byte order mark, as spreadsheet exports write
    line, line_start, end = 1, pos, len(text)
    while pos < end:
        record_line, fields = line, []
        while True:
            field = _FIELD.match(text, pos)
            if field is None:
                raise _csv_error(text, pos, line, line_start)
            quoted, plain, stop = field.groups()
            col = pos - line_start + 1 if line == record_line else 1
            if quoted is None:
                fields.append((plain, col))
            else:
                fields.append((quoted.replace('""', '"'), col))
                newlines = quoted.count("\n")
                if newlines:
                    line, line_start = line + newlines, text.rfind("\n", pos, field.end()) + 1
            pos = field.end()
            if stop != ",":
                if stop:
                    line, line_start = line + 1, pos
                break
        if len(fields) > 1 or fields[0][0]:  # a blank line holds no record
            yield record_line, fields


def _csv_error(text: str, pos: int, line: int, line_start: int) -> _CsvError:
    """Why no field starts at ``pos``: an unclosed quote, or a quote where a field cannot have one."""
    if text.startswith('"', pos) and _QUOTED.match(text, pos) is None:
        return _CsvError(line, pos - line_start + 1, "a quoted field is never closed",
                         'end it with a quote; a quote inside a quoted field is written twice: ""')
    quoted = _QUOTED.match(text, pos)
    stray = quoted.end() if quoted is not None else _PLAIN.match(text, pos).end()  # type: ignore[union-attr]
    line_start_at = text.rfind("\n", 0, stray) + 1
    return _CsvError(line + text.count("\n", pos, stray), stray - max(line_start, line_start_at) + 1,
                     "text after a closing quote" if quoted is not None else
                     "a quote inside a field that does not start with one",
                     'quote the whole field and double the quotes inside it: "say ""hi"""')


def _csv_requests(text: str, file: str, diagnostics: Diagnostics) -> tuple[list[Request], CsvPositions]:
    records = _csv_records(text)
    requests: list[Request] = []
    positions = CsvPositions(file, {}, [])
    try:
        header_line, header = next(records, (1, []))
        if not _csv_header(file, header_line, header, diagnostics):
            return requests, positions
        names = [name for name, _ in header]
        keys = [(i, name) for i, name in enumerate(names) if name not in ("id", "received")]
        positions.header.update({name: i for i, name in enumerate(names)}, keys=keys[0][0])
        ident, received = names.index("id"), names.index("received")
        for line, fields in records:
            columns = tuple(col for _, col in fields)
            if len(fields) != len(names):
                diagnostics.error("TP605", Location(file, line, 1),
                                  f"this record has {len(fields)} field(s), the header has {len(names)}",
                                  'quote a field that holds a comma or a line break: "a,b"')
                continue
            found = _request(lambda part: Location(file, line, columns[positions.header[part]]),  # noqa: B023
                             fields[ident][0], fields[received][0],
                             {name: Text(fields[i][0]) for i, name in keys if fields[i][0]}, diagnostics)
            if found is not None:
                requests.append(found)
                positions.rows.append((line, columns))
    except _CsvError as exc:
        diagnostics.error("TP605", Location(file, exc.line, exc.col), exc.message, exc.hint)
    return requests, positions


def _csv_header(file: str, line: int, header: list[tuple[str, int]], diagnostics: Diagnostics) -> bool:
    names = [name for name, _ in header]
    problems = len(diagnostics.items)
    for position, (name, col) in enumerate(header):
        if not name:
            diagnostics.error("TP605", Location(file, line, col), f"header column {position + 1} has no name",
                              "name every column: id, received, then the key columns")
        elif name in names[:position]:
            diagnostics.error("TP002", Location(file, line, col), f"header column '{name}' is named twice",
                              "name each column once")
    missing = [part for part in ("id", "received") if part not in names]
    if missing:
        diagnostics.error("TP103", Location(file, line, 1), f"the header has no {' or '.join(missing)} column",
                          f"the first line names the columns: id,received,<key columns>; found {','.join(names)}")
    elif len(set(names) - {"id", "received"}) == 0:
        diagnostics.error("TP103", Location(file, line, 1), "the header names no key column",
                          "add the erasure key columns after id,received (a nested one as user.uid)")
    return len(diagnostics.items) == problems


# --- JSON lines ---------------------------------------------------------------------------------------------


class _Duplicate(Exception):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result = dict(pairs)
    if len(result) != len(pairs):
        seen: set[str] = set()
        raise _Duplicate(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return result


_KEY_END = re.compile(r'"\s*:')  # every key of a JSON object ends so (a value may too: then it is checked)


def _json_object(line: str) -> Any:
    """json.loads, refusing a key given twice: the C parser first, the (slower) duplicate check only when
    the line has more key-like spots than the keys of a request it parsed to."""
    item = jsontext.loads(line)
    keys = item.get("keys") if isinstance(item, dict) else None
    found = len(item) + len(keys) if isinstance(keys, dict) else -1
    if len(_KEY_END.findall(line)) != found:
        jsontext.loads(line, object_pairs_hook=_no_duplicates)
    return item


def _jsonl_requests(text: str, file: str, diagnostics: Diagnostics) -> tuple[list[Request], JsonLinesPositions]:
    shape = '{"id": "REQ-1", "received": "2026-11-02", "keys": {"user_id": "u1"}}'
    requests: list[Request] = []
    positions = JsonLinesPositions(file, [])
    for number, raw in enumerate(text.removeprefix("\ufeff").split("\n"), 1):  # not splitlines: U+2028 is text
        line = raw.removesuffix("\r")
        if not line.strip():
            continue
        try:
            item = _json_object(line)
        except json.JSONDecodeError as exc:
            # the decoder's own wording ("Expecting value") names its grammar, not the user's mistake
            reason = exc.msg if exc.msg.startswith("nesting too deep") else "the text stops being JSON here"
            diagnostics.error("TP605", Location(file, number, exc.colno), f"not JSON: {reason}",
                              f"write one JSON object per line, e.g. {shape}")
            continue
        except _Duplicate as exc:
            diagnostics.error("TP002", Location(file, number, _column(line, str(exc))),
                              f"key '{exc}' is given twice", "give each key once")
            continue
        if not isinstance(item, dict):
            diagnostics.error("TP605", Location(file, number, 1), "a line is one JSON object",
                              f"write one JSON object per line, e.g. {shape}")
            continue
        at = JsonLinesPositions(file, [(number, line)])
        unknown = sorted(set(item) - _FIELD_SET)
        for key in unknown:
            diagnostics.error("TP102", Location(file, number, _column(line, key)), f"unknown key '{key}'",
                              f"a request has {', '.join(FIELDS)}")
        keys = _json_keys(at, item.get("keys"), diagnostics)
        if unknown or keys is None:
            continue
        found = _request(lambda part: at.value(("requests", 0, part)), item.get("id"),  # noqa: B023
                         item.get("received"), keys, diagnostics)
        if found is not None:
            requests.append(found)
            positions.rows.append((number, line))
    return requests, positions


def _column(line: str, key: str, start: int = 1) -> int:
    """The column of ``"key"`` in a JSON line, from column ``start`` (1 if it is spelled with escapes)."""
    return line.find(json.dumps(key, ensure_ascii=False), start - 1) + 1 or 1


def _json_keys(at: JsonLinesPositions, keys: Any, diagnostics: Diagnostics) -> dict[str, KeyValue] | None:
    if keys is None:
        return {}
    if not isinstance(keys, dict):
        diagnostics.error("TP104", at.value(("requests", 0, "keys")), "keys is not an object",
                          'write the key columns and values as an object: "keys": {"user_id": "u1"}')
        return None
    good = True
    for column, value in keys.items():
        in_range = type(value) is int and -LONG_MAX - 1 <= value <= LONG_MAX
        if column and ((isinstance(value, str) and value) or in_range):
            continue
        good = False
        place = at.value(("requests", 0, "keys", column))
        if not column or value == "":  # as in YAML: an empty name or value names no column or subject
            what = "a key column's name" if not column else f"keys.{column}"
            diagnostics.error("TP112", place, f"{what} is empty",
                              "write the column and this subject's value, or leave the key out")
        elif isinstance(value, dict):
            nested = ", ".join(f'"{column}.{k}"' for k in value) or f'"{column}.<field>"'
            diagnostics.error("TP104", place, f"keys.{column} is an object",
                              f"write a nested key column flat, with a dot: {nested}")
        elif isinstance(value, int) and not isinstance(value, bool):
            diagnostics.error("TP105", place, f"keys.{column} = {value} is out of range",
                              "an integer key column holds at most a long (19 digits)")
        else:
            diagnostics.error("TP104", place, f"keys.{column} = {json.dumps(value)} is no string or integer",
                              "write text in quotes and integers bare")
    return keys if good else None
