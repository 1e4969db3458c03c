"""MkDocs hook for the manual: a link from a page to a file of the repository outside docs/ (a test, a module,
README.md) has no page in the site; it is shown as the path in code, so the page's text stays as written in git
(where the link works) and the strict build still fails on a broken link between pages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LINK = re.compile(r"\[([^\]]+)\]\(((?!https?:|mailto:|#)[^)\s]+)\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    here = (ROOT / "docs" / page.file.src_path).parent

    def outside(match: re.Match[str]) -> str:
        target = match.group(2).split("#", 1)[0]
        resolved = (here / target).resolve()
        docs = (ROOT / "docs").resolve()
        if not target or (docs in resolved.parents and resolved.exists()):
            return match.group(0)  # a page of the site (or an anchor): MkDocs checks it
        found = [f for f in (resolved, (ROOT / target).resolve()) if f.exists() and docs not in f.parents]
        if not found:
            return match.group(0)  # neither a page nor a repository file: left for the strict build to report
        target = str(found[0].relative_to(ROOT))
        text = match.group(1)
        return text if text.strip("`") == target else f"{text} (`{target}`)"

    return LINK.sub(outside, markdown)
