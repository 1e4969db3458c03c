"""Plan -> a pull-request comment that always fits: a header (catalog, plan id, policies commit), warnings
and blocked changes first, a summary table by table and safety, then each table's changes with its SQL
folded. Past the budget (GitHub refuses comments over 65,536 characters) the summary stays and the
remaining tables' details are left to the plan file in the workflow's artifact."""

from __future__ import annotations

import html
from collections import Counter

from ..diagnostics import Diagnostics
from ..iceberg.names import format_name
from ..plan.codec import plan_id
from ..plan.model import Plan, TablePlan
from ..plan.steps import table_changes, table_stamp
from ..safety import Safety
from ..sql.statements import change_sql
from .text import overlay_groups, summary_counts

ICONS = {Safety.SAFE: "🟢", Safety.BREAKING: "🟠", Safety.DESTRUCTIVE: "🔴"}
BUDGET = 60_000  # characters; leaves room under GitHub's limit for the sticky comment's marker
NOTICES = 50  # warnings, blocked changes and unmanaged tables listed before "and N more"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _commit(sha: str | None) -> str:
    """The policies' commit; a work tree with uncommitted policy changes (``<sha>-dirty``) says so in words."""
    if sha is None:
        return ""
    if sha.endswith("-dirty"):
        return f" · policies `{sha[:12]}-dirty` (uncommitted policy changes: no commit holds what was planned)"
    return f" · policies `{sha[:12]}`"


def render_markdown(plan: Plan, diagnostics: Diagnostics | None = None, catalog: str | None = None,
                    budget: int = BUDGET) -> str:
    """``catalog``: the header line naming the catalog (``Catalog: prod (sql, ...)``), the comment's first line."""
    commit = _commit(plan.git_sha)
    out = [f"### tablepolicy plan · {catalog}" if catalog else "### tablepolicy plan", "",
           f"plan `{plan_id(plan)}`{commit} · tablepolicy {plan.tool_version}", ""]
    out += _notices(plan, diagnostics)
    out += _environment(plan)
    if not plan.has_changes:
        out.append("**No changes.** The catalog matches the policies.")
        return "\n".join(out) + "\n"
    out += [f"**{summary_counts(plan)}**", "", "| table | safe | breaking | destructive |",
            "| --- | ---: | ---: | ---: |"]
    if plan.namespaces:
        out.append(f"| namespaces | {len(plan.namespaces)} | 0 | 0 |")
    for table in plan.tables:
        if table.changes:
            counts = Counter(c.safety for c in table.changes)
            out.append(f"| `{_cell(format_name(table.table))}` | {counts[Safety.SAFE]} | "
                       f"{counts[Safety.BREAKING]} | {counts[Safety.DESTRUCTIVE]} |")
    out.append("")
    head = "\n".join(out)
    changed = [t for t in plan.tables if t.changes]
    details: list[str] = []
    used = len(head)
    identity = plan_id(plan)
    for index, table in enumerate(changed):
        section = _details(plan, table, identity)
        if used + len(section) > budget - 400:
            details.append(f"**{len(changed) - index} more table(s) not shown in detail** to keep this comment "
                           "under GitHub's size limit: the full plan, SQL included, is `plan.json` in the "
                           "workflow's artifact (`tablepolicy plan --format text` shows it too).\n")
            break
        details.append(section)
        used += len(section)
    else:
        if plan.namespaces:
            details.append("#### namespaces\n\n" + "".join(f"- 🟢 {c.summary}\n" for c in plan.namespaces))
    return (head + "\n" + "\n".join(details)).rstrip("\n") + "\n"


def _environment(plan: Plan) -> list[str]:
    """The overlay's values and where each was written, folded: one row per value, however many tables."""
    if plan.environment is None:
        return []
    groups = overlay_groups(plan.environment)
    rows = [f"| `{_cell(setting)}` | `{_cell(value)}` | `{_cell(origin)}` | {_cell(_some(tables))} |"
            for setting, value, origin, tables in groups]
    more = [f"| … {len(rows) - NOTICES} more | | | |"] if len(rows) > NOTICES else []
    summary = (f"<details><summary>Environment <b>{html.escape(plan.environment.name)}</b>: {len(groups)} value(s) "
               f"from <code>{html.escape(plan.environment.file)}</code></summary>")
    return [summary, "", "| setting | value | from | tables |", "| --- | --- | --- | --- |", *rows[:NOTICES], *more,
            "", "</details>", ""]


def _some(tables: list[str], shown: int = 20) -> str:
    """A cell that stays small however many tables a value of ``defaults:`` reaches (the plan file lists all)."""
    rest = f" and {len(tables) - shown} more" if len(tables) > shown else ""
    return ", ".join(tables[:shown]) + rest


def _notices(plan: Plan, diagnostics: Diagnostics | None) -> list[str]:
    lines = [f"> ⛔ **{finding.code}** `{finding.location}` {finding.message} — {finding.hint or ''}"
             for finding in diagnostics or []]
    lines += [f"> ⛔ **blocked** `{format_name(b.table)}`: {b.summary}. To approve, add to `{b.policy_file}`: "
              f"`allow_destructive: [\"{b.approval}\"]`" for b in plan.blocked]
    lines += [f"> ⚠️ unmanaged table `{format_name(name)}`: no policy declares it (left alone)"
              for name in plan.unmanaged]
    if len(lines) > NOTICES:
        lines = [*lines[:NOTICES], f"> … and {len(lines) - NOTICES} more (see the plan file)"]
    return [*lines, ""] if lines else []


def _details(plan: Plan, table: TablePlan, identity: str) -> str:
    """The table's changes, then the SQL apply runs for them: the stamping commit first (compiler/plan/steps.py,
    the list apply itself reads), so the comment shows every commit apply makes."""
    out = [f"#### `{format_name(table.table)}`", ""]
    stamp = table_stamp(plan, table, identity)
    if stamp is not None and table.requirement.exists:
        out.append(f"- ⚪ stamp {', '.join(f'`{k}`' for k in stamp)}: apply's first commit, so a re-run knows its "
                   "own work")
    out += [f"- {ICONS[c.safety]} {_cell(c.summary)} `{c.code}`" for c in table.changes]
    sql = [s for c in table_changes(plan, table, identity) for s in change_sql(c, plan.catalog)]
    out += ["", "<details><summary>SQL</summary>", "", "```sql", ";\n\n".join(sql) + ";", "```", "", "</details>",
            "", ""]
    return "\n".join(out)
