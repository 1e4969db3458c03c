"""Plan -> a pull-request comment: warnings first, a summary table, then each table's changes and SQL."""

from __future__ import annotations

from collections import Counter

from compiler.diagnostics import Diagnostics
from compiler.diff.safety import Safety
from compiler.model.names import format_name
from compiler.plan.model import Plan
from compiler.render.sql import change_sql
from compiler.render.text import summary_counts

ICONS = {Safety.SAFE: "🟢", Safety.BREAKING: "🟠", Safety.DESTRUCTIVE: "🔴"}


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(plan: Plan, diagnostics: Diagnostics | None = None, catalog: str | None = None) -> str:
    """``catalog``: the header line naming the catalog (``Catalog: prod (sql, ...)``), the comment's first line."""
    out = [f"### tablepolicy plan · {catalog}" if catalog else "### tablepolicy plan", ""]
    for finding in diagnostics or []:
        out.append(f"> ⛔ **{finding.code}** `{finding.location}` {finding.message} — {finding.hint or ''}")
    for blocked in plan.blocked:
        out.append(f"> ⛔ **blocked** `{format_name(blocked.table)}`: {blocked.summary}. To approve, add to "
                   f"`{blocked.policy_file}`: `allow_destructive: [\"{blocked.approval}\"]`")
    for name in plan.unmanaged:
        out.append(f"> ⚠️ unmanaged table `{format_name(name)}`: no policy declares it (left alone)")
    if out[-1] != "":
        out.append("")
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
    for table in plan.tables:
        if not table.changes:
            continue
        out += [f"#### `{format_name(table.table)}`", ""]
        out += [f"- {ICONS[c.safety]} {_cell(c.summary)} `{c.code}`" for c in table.changes]
        sql = [s for c in table.changes for s in change_sql(c, plan.catalog)]
        out += ["", "<details><summary>SQL</summary>", "", "```sql", ";\n\n".join(sql) + ";", "```", "",
                "</details>", ""]
    if plan.namespaces:
        out += ["#### namespaces", ""] + [f"- 🟢 {c.summary}" for c in plan.namespaces] + [""]
    return "\n".join(out).rstrip("\n") + "\n"
