"""Every stable code tablepolicy reports, registered once: code, severity or safety, and what it means.

Users allow-list, grep and search for these codes, so each one means one thing and never changes
meaning. A finding (``TP``, ``TG``, ``TR``, ``TA``) has a severity; a change (``TC``) or a maintenance
action (``TM``) has a safety. Registering a code twice raises when this module is imported, as
Atlas's ``sqlcheck.Code`` panics on a second registration; ``lookup`` raises on a code nobody
registered. The README's code tables are rendered from here (``readme_with_tables``) and a test
fails when they differ; another test fails when compiler/ or runtime/ uses a code not registered
here, or when a registered code is used nowhere.

Adding a code is one line in its family's block below, e.g.::

    TP998 = register("TP998", ERROR, "what the finding says is wrong")

>>> lookup("TC301").level, lookup("TC301").title
(<Safety.DESTRUCTIVE: 2>, 'drop a column')
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from .diagnostics import Severity
from .safety import Safety

Level = Severity | Safety


@dataclass(frozen=True)
class Family:
    """Codes sharing a two-letter prefix; ``levels`` says whether they carry a severity or a safety."""

    prefix: str
    what: str  # the README column naming what one code of the family is
    levels: type[Severity] | type[Safety]


FAMILIES: Mapping[str, Family] = MappingProxyType({f.prefix: f for f in (
    Family("TP", "Finding in a policy, requests or environment file", Severity),
    Family("TG", "Org rule (`_rules.yaml`) broken", Severity),
    Family("TC", "Change", Safety),
    Family("TR", "Change refused", Severity),
    Family("TA", "Approval finding", Severity),
    Family("TM", "Maintenance action", Safety),
)})


@dataclass(frozen=True)
class Code:
    code: str
    level: Level  # a Severity for findings, a Safety for changes and maintenance actions
    title: str

    @property
    def family(self) -> Family:
        return FAMILIES[self.code[:2]]


class DuplicateCode(ValueError):
    """A code registered twice: it could then mean two things."""


class UnknownCode(LookupError):
    """A code no line of this module registers."""


_SHAPE = re.compile(r"T[A-Z]\d{3}")
_REGISTRY: dict[str, Code] = {}
REGISTRY: Mapping[str, Code] = MappingProxyType(_REGISTRY)


def register(code: str, level: Level, title: str) -> str:
    """Register ``code`` once and return it, so a module-level constant holds the plain string."""
    if code in _REGISTRY:
        raise DuplicateCode(f"{code} is registered twice: '{_REGISTRY[code].title}' and '{title}'")
    family = FAMILIES.get(code[:2])
    if not _SHAPE.fullmatch(code) or family is None:
        raise ValueError(f"{code!r} is no code: two letters of {', '.join(FAMILIES)}, then three digits")
    if not isinstance(level, family.levels):
        raise ValueError(f"{code}: a {family.prefix} code carries a {family.levels.__name__}, not {level!r}")
    if not title or "|" in title or "\n" in title:
        raise ValueError(f"{code}: the title is one line without '|' (it is a README table cell)")
    _REGISTRY[code] = Code(code, level, title)
    return code


def lookup(code: str) -> Code:
    """The registered entry of ``code``; an unknown code is an error naming its family's codes."""
    try:
        return _REGISTRY[code]
    except KeyError:
        family = sorted(c for c in _REGISTRY if c[:2] == code[:2])
        known = f"the {code[:2]} codes are {', '.join(family)}" if family else f"families: {', '.join(FAMILIES)}"
        raise UnknownCode(f"unknown code {code!r}: {known}") from None


ERROR, WARNING = Severity.ERROR, Severity.WARNING
SAFE, BREAKING, DESTRUCTIVE = Safety.SAFE, Safety.BREAKING, Safety.DESTRUCTIVE

# --- TP0xx: files
TP000 = register("TP000", ERROR, "a path that does not exist")
TP001 = register("TP001", ERROR, "YAML syntax error, or a character YAML does not allow")
TP002 = register("TP002", ERROR, "a key written twice in one mapping")
TP003 = register("TP003", ERROR, "a document that is no policy: a mapping with `table:`, `namespace:` or `rules:`")
TP004 = register("TP004", ERROR, "aliases that recurse or expand the file far beyond its size")
TP005 = register("TP005", ERROR, "nesting deeper than 200 levels")
TP006 = register("TP006", ERROR, "a folder (or selection) holding no policy files (`*.yaml`, `*.yml`, any case)")
TP007 = register("TP007", ERROR, "a policy file that cannot be read (permissions, a device, ...)")
TP008 = register("TP008", ERROR, "a policy file that is not UTF-8")
TP009 = register("TP009", ERROR, "a tablepolicy version the repository does not accept (`required_version` in "
                 "`_rules.yaml`)")
TP010 = register("TP010", WARNING, "a table policy file outside `policies/`, which is not part of the project")
# --- TP1xx: structure
TP101 = register("TP101", ERROR, "a name holding a control character (a tab is allowed in a column name)")
TP102 = register("TP102", ERROR, "an unknown key (with a \"did you mean\")")
TP103 = register("TP103", ERROR, "a missing required key")
TP104 = register("TP104", ERROR, "a value of the wrong type or form (`true` is no number, `1` no boolean)")
TP105 = register("TP105", ERROR, "a number out of range: ids and counts fit a 32-bit int, any number 19 digits")
TP106 = register("TP106", ERROR, "a value that is not one of the allowed values")
TP107 = register("TP107", ERROR, "a dotted name that does not parse (an unclosed or stray backtick, an empty part)")
TP108 = register("TP108", ERROR, "a table or namespace name longer than 200 bytes (lock files are named after it)")
TP109 = register("TP109", ERROR, "a table name without a namespace")
TP110 = register("TP110", ERROR, "a duration that does not parse, zero for a window or deadline, or over 365000d")
TP111 = register("TP111", ERROR,
                 "a size that does not parse, zero, or larger than a Java long (an int for bloom filter bytes)")
TP112 = register("TP112", ERROR, "an empty list or text where at least one item is needed (a table needs a column)")
TP113 = register("TP113", ERROR, "a namespace starting or ending with whitespace: pyiceberg strips it, Spark keeps it")
TP114 = register("TP114", ERROR, "a bloom filter false positive probability (`fpp`) not between 0 and 1 (exclusive)")
TP120 = register("TP120", ERROR, "a `readers:` engine tablepolicy does not know (the finding lists the known ones)")
TP121 = register("TP121", ERROR, "a `readers:` version that is not a version: dotted numbers, quoted (\"3.5\")")
TP122 = register("TP122", ERROR, "one engine declared twice in one `readers:` list, with different versions")
# --- TP2xx: columns and types
TP201 = register("TP201", ERROR, "an unknown type name")
TP203 = register("TP203", ERROR, "a type that is neither a name nor `{struct: ...}`, `{list: ...}` or `{map: ...}`")
TP204 = register("TP204", ERROR, "types nested deeper than 64 levels")
TP210 = register("TP210", ERROR, "two fields of one struct with the same name")
TP211 = register("TP211", WARNING, "names that differ only by case in a `case_sensitive: true` table")
TP212 = register("TP212", ERROR, "a type Spark 3.5 cannot create (`uuid`, `fixed[N]`, `time`)")
TP213 = register("TP213", ERROR, "required list elements or map values, which Spark DDL cannot create")
TP214 = register("TP214", ERROR, "a field id pinned twice")
TP215 = register("TP215", ERROR, "`renamed_from` naming a column that is still declared")
TP216 = register("TP216", ERROR, "names that differ only by case, which Spark cannot tell apart")
# --- TP3xx: partitions, sort order, identifier fields, write modes
TP301 = register("TP301", ERROR, "a partition or sort expression that does not parse")
TP302 = register("TP302", ERROR, "a partition source column that does not exist")
TP303 = register("TP303", ERROR, "a transform that does not apply to its column's type")
TP304 = register("TP304", ERROR, "`void` in a sort order")
TP305 = register("TP305", ERROR, "the same transform of a column partitioned twice")
TP306 = register("TP306", ERROR, "a partition field name that is also a column name")
TP307 = register("TP307", ERROR, "a `void` partition field, which Spark DDL cannot create")
TP308 = register("TP308", ERROR, "a sort column that does not exist")
TP309 = register("TP309", ERROR, "a partition field name used twice")
TP310 = register("TP310", ERROR, "an identifier field that does not exist")
TP311 = register("TP311", ERROR, "an optional identifier field")
TP312 = register("TP312", ERROR, "a floating-point identifier field")
TP313 = register("TP313", ERROR, "an identifier field that is a struct, list or map")
TP314 = register("TP314", ERROR, "merge-on-read on format version 1")
TP315 = register("TP315", ERROR, "an identifier field listed twice")
# --- TP4xx: tables across files, lifecycle
TP401 = register("TP401", ERROR, "a table declared twice")
TP402 = register("TP402", ERROR, "defaults of one namespace declared twice")
TP410 = register("TP410", ERROR, "retention without `column` or `keep`")
TP411 = register("TP411", ERROR, "a retention column that does not exist")
TP412 = register("TP412", ERROR, "a retention column that is no date or timestamp")
TP413 = register("TP413", ERROR, "a retention `keep` of zero")
TP420 = register("TP420", ERROR, "a snapshot `max_age` of zero")
TP421 = register("TP421", ERROR, "`orphan_files.older_than` under the 24h floor")
TP422 = register("TP422", WARNING, "`orphan_files.older_than` shorter than Iceberg's 3d default")
TP423 = register("TP423", WARNING, "`orphan_files.older_than` not longer than `workload.longest_write`")
TP424 = register("TP424", WARNING, "`previous_versions_max` without `delete_after_commit: true`")
TP425 = register("TP425", WARNING, "snapshots expiring before `workload.time_travel`")
TP430 = register("TP430", ERROR, "compaction strategy `zorder` without `zorder_by`")
TP431 = register("TP431", ERROR, "compaction strategy `sort` on a table without `sort_by`")
TP432 = register("TP432", ERROR, "a `zorder_by` column that does not exist")
TP433 = register("TP433", ERROR, "a `zorder_by` column Iceberg cannot z-order (nested, or of another type)")
TP434 = register("TP434", ERROR, "`zorder_by` with a compaction strategy other than `zorder`")
TP440 = register("TP440", ERROR, "erasure without `key` or `within`")
TP441 = register("TP441", ERROR, "an erasure key column that does not exist")
TP442 = register("TP442", ERROR, "an erasure key column that is no string or integer column")
TP443 = register("TP443", ERROR,
                 "an erasure hold or ref decision naming no tag or branch of the table, or `main` (checked by `erase`)")
TP444 = register("TP444", WARNING, "an erasure key column that is an identity or truncate partition source")
TP445 = register("TP445", ERROR,
                 "a ref in both `lifecycle.erasure.holds` and `lifecycle.erasure.refs` with another decision")
TP446 = register("TP446", ERROR,
                 "erasure `expire` for a ref the table declares in `refs:` (apply would create it again)")
TP447 = register("TP447", WARNING,
                 "erasure `expire` naming no tag or branch of the table: dropped already, or misspelled (`erase`)")
TP448 = register("TP448", ERROR, "an erasure batch_margin longer than its `within` (the SLA)")
TP449 = register("TP449", ERROR,
                 "a bloom filter setting for a column that is no erasure key column (or does not exist)")
TP450 = register(
    "TP450", ERROR, "a ref named `main`: the main branch is implicit (`lifecycle.snapshots` sets its retention)")
TP451 = register("TP451", ERROR, "a branch or tag declared twice in one table")
TP452 = register("TP452", WARNING, "a tag on a table without a snapshot: created by the first plan after a write")
TP460 = register("TP460", ERROR, "a view declared twice")
TP461 = register("TP461", ERROR, "a name declared both as a table and as a view")
TP462 = register("TP462", WARNING, "a view reading a column this plan drops or renames (the view breaks)")
TP463 = register("TP463", ERROR, "a view reading a table neither git declares nor the catalog holds (`plan`)")
TP464 = register("TP464", WARNING, "view SQL sqlglot cannot parse: its tables go unchecked (Spark parses it at apply)")
TP465 = register("TP465", WARNING, "a view the catalog cannot read (a REST server serving no views): not planned, "
                 "the tables beside it plan and apply")
TP470 = register("TP470", WARNING, "a new table beside an undeclared one tablepolicy applied before: a rename in git "
                 "leaves the data in the old table (`plan`)")
# --- TP5xx: properties
TP501 = register("TP501", ERROR, "a property Spark reserves (`owner`, `provider`, `location`, ...)")
TP502 = register("TP502", ERROR, "a property Iceberg computes")
TP503 = register("TP503", ERROR, "a property a policy setting owns: set the setting")
TP504 = register("TP504", ERROR, "a property both declared (or owned by a setting) and ignored")
TP505 = register("TP505", ERROR, "a property the catalog server or the engines keep up to date themselves "
                 "(`schema.name-mapping.default`)")
# --- TP6xx: erasure requests (`erase --requests FILE`)
TP601 = register("TP601", ERROR, "a request id listed twice")
TP602 = register("TP602", ERROR, "a request whose keys reach no table")
TP603 = register("TP603", ERROR, "a request key value that does not fit its key column")
TP604 = register("TP604", ERROR, "a requests file whose extension is not .yaml, .yml, .csv, .jsonl or .ndjson")
TP605 = register("TP605", ERROR, "a CSV record or JSON line that does not parse, or a CSV header column without a name")
TP606 = register("TP606", ERROR, "a request id the ledger has done for other key values")
TP610 = register("TP610", ERROR, "a request id holding a control character")
TP611 = register("TP611", ERROR, "a `received` date after 8999-12-31")
TP612 = register("TP612", ERROR, "a requests file that is no mapping with a `requests:` list")
TP613 = register("TP613", WARNING, "a request listed twice alike (erased once)")
TP614 = register("TP614", ERROR, "a request table that does not exist or cannot be read")
TP615 = register("TP615", ERROR, "a request table without the columns of a request table (or of other types)")
TP616 = register("TP616", ERROR, "a request received after the run's day")
TP617 = register("TP617", ERROR, "a request whose deadline is earlier than its received date")
TP618 = register("TP618", ERROR, "a requests file inside a git work tree (its keys would enter git history)")
TP619 = register("TP619", ERROR, "a requests file holding key values that git tracks")
TP620 = register("TP620", ERROR, "a request table row with a status other than pending or done")
# --- TP7xx: environment overlays (`environments/NAME.yaml`)
TP701 = register("TP701", ERROR, "an overlay key that declares a table or its columns (an overlay only sets values)")
TP702 = register("TP702", ERROR, "an overlay table no policy declares")
TP703 = register("TP703", ERROR, "an overlay namespace no policy declares")
TP704 = register("TP704", ERROR, "one table or namespace written twice in an overlay")

# --- TG: org rules, one code per rule of `policies/_rules.yaml`
TG101 = register("TG101", ERROR, "`owner_required`: a table without an owner (its own or its namespace's)")
TG102 = register("TG102", ERROR, "`pii_requires_erasure`: a column tagged `pii` in a table without `lifecycle.erasure`")
TG103 = register("TG103", ERROR, "`snapshots_max_age`: `lifecycle.snapshots.max_age` outside the rule's `{min, max}`")
TG104 = register("TG104", ERROR, "`retention_keep`: `lifecycle.retention.keep` outside the rule's `{min, max}`")
TG105 = register("TG105", ERROR, "`orphan_older_than`: `orphan_files.older_than` outside the rule's `{min, max}`")
TG106 = register("TG106", ERROR, "`erasure_within`: `lifecycle.erasure.within` outside the rule's `{min, max}`")
TG107 = register("TG107", ERROR, "`required_properties`: a property unset, or set to another value (null: any value)")
TG108 = register("TG108", ERROR, "`table_name`: a table name the rule's regular expression does not match")
TG109 = register("TG109", ERROR, "`column_name`: a field name the rule's regular expression does not match")
TG110 = register("TG110", ERROR, "`no_weakening`: a table loosening what its namespace defaults set")
TG111 = register("TG111", ERROR, "`ref_max_age`: a branch or tag kept longer than the rule's `{min, max}` (or forever)")
TG112 = register("TG112", ERROR, "`readers`: a table or planned change a declared reader cannot read "
                 "(a warning where `readers_severity` or the reader's `severity` says so)")
TG113 = register("TG113", WARNING, "`readers`: a feature no source says a declared reader can read (unknown)")

# --- TC: changes a plan holds, by safety (destructive ones need an `allow_destructive` approval)
TC101 = register("TC101", SAFE, "create a namespace")
TC102 = register("TC102", SAFE, "create a table")
TC201 = register("TC201", SAFE, "add columns")
TC202 = register("TC202", BREAKING, "rename a column")
TC203 = register("TC203", SAFE, "widen a type: int to long, float to double, decimal precision")
TC204 = register("TC204", SAFE, "make a column optional")
TC205 = register("TC205", SAFE, "update a column's doc")
TC206 = register("TC206", SAFE, "move a column")
TC207 = register("TC207", BREAKING, "add a column under a dropped name (its old values do not come back)")
TC301 = register("TC301", DESTRUCTIVE, "drop a column")
TC302 = register("TC302", DESTRUCTIVE, "drop a table (`state: absent`)")
TC401 = register("TC401", SAFE, "add a partition field")
TC402 = register("TC402", BREAKING, "drop a partition field")
TC403 = register("TC403", BREAKING, "rename a partition field (when `name` is declared)")
TC404 = register("TC404", SAFE, "set or remove the write sort order")
TC405 = register("TC405", BREAKING, "set or drop identifier fields")
TC406 = register("TC406", BREAKING, "upgrade the format version (irreversible)")
TC407 = register("TC407", BREAKING, "replace a partition field by another in one commit")
TC408 = register("TC408", SAFE, "add several partition fields in one commit")
TC409 = register("TC409", BREAKING, "evolve the partition spec in one commit, dropping or renaming fields")
TC501 = register("TC501", SAFE, "set table properties")
TC502 = register("TC502", SAFE, "unset table properties")
TC503 = register("TC503", SAFE, "update the table comment")
TC504 = register("TC504", DESTRUCTIVE, "tighten the retention (the next `maintain` deletes older rows)")
TC505 = register("TC505", BREAKING, "expire snapshots sooner (time travel reaches less far back)")
TC601 = register("TC601", SAFE, "create a branch or tag")
TC602 = register("TC602", SAFE, "keep a branch or tag, or its snapshots, as long or longer")
TC603 = register("TC603", DESTRUCTIVE, "shorten a branch's or tag's retention (snapshots become expirable)")
TC604 = register("TC604", DESTRUCTIVE, "drop a branch or tag (its snapshots become expirable)")
TC701 = register("TC701", SAFE, "create a view")
TC702 = register("TC702", SAFE, "replace a view's SQL, column comments or properties (one commit)")
TC703 = register("TC703", DESTRUCTIVE, "drop a view (state: absent)")
TC704 = register("TC704", SAFE, "unset view properties git declared before and no longer declares")

# --- TR: changes the planner refuses (exit 1), with what to do instead
TR101 = register("TR101", ERROR, "a type change that is no legal promotion")
TR102 = register("TR102", ERROR, "an optional column made required")
TR103 = register("TR103", ERROR, "a required column added to an existing table")
TR104 = register("TR104", ERROR, "a partition source column dropped (of the current or an older spec)")
TR105 = register("TR105", ERROR, "a format version downgrade")
TR106 = register("TR106", ERROR, "a column changing kind between primitive, struct, list and map")
TR107 = register("TR107", ERROR, "a map's key type changed")
TR108 = register("TR108", ERROR, "a pinned field id the table does not have")
TR109 = register("TR109", ERROR, "a new column differing only by case from an existing one")
TR110 = register("TR110", ERROR, "two columns claiming one existing field")
TR111 = register("TR111", ERROR, "a tag declared where the table has a branch of that name, or the reverse")
TR112 = register("TR112", ERROR, "a new ref starting at a snapshot id the table does not have")

# --- TA: approvals
TA101 = register("TA101", WARNING, "an `allow_destructive` entry that approves no change in this plan: delete it")

# --- TM: maintenance actions (`maintain`), in the order they run
TM101 = register("TM101", DESTRUCTIVE, "delete rows older than the retention")
TM201 = register("TM201", SAFE, "compact small data files")
TM202 = register("TM202", SAFE, "rewrite position delete files")
TM203 = register("TM203", SAFE, "rewrite manifests")
TM301 = register("TM301", DESTRUCTIVE, "expire snapshots")
TM302 = register("TM302", DESTRUCTIVE, "remove orphan files")


def safety_of(code: str) -> Safety:
    """The registered safety of a change (TC) or maintenance action (TM) code."""
    level = lookup(code).level
    if not isinstance(level, Safety):
        raise UnknownCode(f"{code} is a finding with a severity, not a change or action with a safety")
    return level


def registered_safety(data: Any, default_code: str) -> Any:
    """The input of a change or action model with ``safety`` set to its code's registered safety, the one
    source of it: a kind never declares its own, and an input that says otherwise (an edited plan file) is
    refused. An unregistered code is left for the model's own ``code`` field to refuse."""
    if not isinstance(data, dict):
        return data
    code = data.get("code", default_code)
    if code not in _REGISTRY:
        return data
    safety = safety_of(code)
    given = data.get("safety", safety)
    if given != safety:
        named = Safety(given) if given in set(Safety) else repr(given)
        raise ValueError(f"{code} is {safety}, not {named}: its safety is its code's")
    return {**data, "safety": safety}


def markdown_table(prefix: str) -> str:
    """One family's codes as a README table: Code | Severity or Safety | what the code means."""
    family = FAMILIES[prefix]
    level = "Severity" if family.levels is Severity else "Safety"
    rows = [f"| {c.code} | {c.level!s} | {c.title} |" for c in sorted(_REGISTRY.values(), key=lambda c: c.code)
            if c.code.startswith(prefix)]
    return "\n".join([f"| Code | {level} | {family.what} |", "| --- | --- | --- |", *rows])


BEGIN = re.compile(r"^<!-- codes:begin ([A-Z ]+) -->\n(.*?)^<!-- codes:end -->$", re.MULTILINE | re.DOTALL)


def readme_with_tables(readme: str) -> str:
    """``readme`` with every ``<!-- codes:begin TC TR -->`` ... ``<!-- codes:end -->`` block holding
    the tables of the families it names, each followed by a blank line."""
    def render(match: re.Match[str]) -> str:
        prefixes = match[1].split()
        unknown = [p for p in prefixes if p not in FAMILIES]
        if unknown:
            raise UnknownCode(f"README block names no code family {unknown}: families are {', '.join(FAMILIES)}")
        tables = "\n\n".join(markdown_table(p) for p in prefixes)
        return f"<!-- codes:begin {match[1]} -->\n{tables}\n<!-- codes:end -->"
    return BEGIN.sub(render, readme)


def families_in(readme: str) -> list[str]:
    """The families the README's generated blocks render, in order."""
    return [p for match in BEGIN.finditer(readme) for p in match[1].split()]


def codes_of(prefixes: Iterable[str]) -> list[str]:
    return sorted(c for c in _REGISTRY if c[:2] in set(prefixes))
