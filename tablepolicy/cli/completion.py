"""Shell completion of the names a project defines: environments (``environments/*.yaml``) and declared tables.

Completion runs on every Tab press, so it reads file names and one line per policy file (``table: ns.name``)
rather than validating the project; it never touches a catalog. The path is the command's own argument when
already typed, else ``policies`` under the current folder.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tablepolicy.compiler.iceberg.names import natural_key

TABLE_LINE = re.compile(r"^table:\s*['\"]?([^'\"#\s]+)", re.MULTILINE)


def _project_path(ctx: Any) -> Path:
    given = getattr(ctx, "params", {}).get("path")
    return Path(given) if given else Path("policies")


def environment_names(ctx: Any, incomplete: str) -> list[str]:
    from tablepolicy.compiler.paths import find_project

    folder = find_project(_project_path(ctx)).root / "environments"
    if not folder.is_dir():
        return []
    names = {p.stem for p in folder.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file()}
    return sorted((n for n in names if n.startswith(incomplete)), key=natural_key)


def table_names(ctx: Any, incomplete: str) -> list[str]:
    from tablepolicy.compiler.paths import find_project

    found: set[str] = set()
    for file in find_project(_project_path(ctx)).policies.rglob("*.y*ml"):
        try:
            head = file.read_text(encoding="utf-8", errors="replace")[:4096]
        except OSError:
            continue
        found.update(m.group(1) for m in TABLE_LINE.finditer(head))
    return sorted((n for n in found if n.startswith(incomplete)), key=lambda name: natural_key(tuple(name.split("."))))
