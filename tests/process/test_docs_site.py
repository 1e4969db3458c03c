"""The manual builds as a site (MkDocs with the Material theme, --strict: a broken link between pages or a page
missing from the navigation fails), and reads as a page in headless Chromium: the landing page and a reference
page are rendered and screenshotted (kept under .tablepolicy/ for a person to look at)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest

from tests.process.test_health_html import CHROMIUM_FLAGS

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)], cwd=ROOT,
                           capture_output=True, text=True, timeout=300,
                           env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    return out


def test_every_page_is_built(site: Path) -> None:
    pages = {p.stem for p in (ROOT / "docs").glob("*.md")}
    built = {p.parent.name for p in site.glob("*/index.html")} | {"index"}
    assert pages <= built, sorted(pages - built)
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "tablepolicy history" in cli and "--lock-timeout" in cli
    assert "(`tests/integration/test_readers_spark.py`)" not in (site / "cicd" / "index.html").read_text()


@pytest.mark.parametrize(("page", "shot"), [("index.html", "docs-landing.png"),
                                            ("findings/index.html", "docs-findings.png")])
def test_headless_chromium_renders_the_page(site: Path, tmp_path: Path, page: str, shot: str) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is installed by `make dev` (scripts/system-deps.sh dev; make test runs it)"
    png, profile = tmp_path / shot, tmp_path / "profile"
    dom = subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom",
                          (site / page).as_uri()], capture_output=True, text=True, timeout=120)
    assert "tablepolicy" in dom.stdout and "md-content" in dom.stdout, dom.stderr[-2000:]
    subprocess.run([chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", f"--screenshot={png}",
                    "--window-size=1280,1000", (site / page).as_uri()], capture_output=True, timeout=120, check=True)
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and struct.unpack(">II", data[16:24]) == (1280, 1000)
    assert len(data) > 20_000  # text and the theme's header, not a blank page
    keep = ROOT / ".tablepolicy" / shot
    keep.parent.mkdir(exist_ok=True)
    shutil.copy(png, keep)
