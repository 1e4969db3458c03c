"""A damaged ``.tablepolicy/models.tsv`` is ignored (and rebuilt), never a crash."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tablepolicy.compiler import __version__
from tablepolicy.compiler.modelcache import CACHE_VERSION
from tablepolicy.compiler.validate import validate
from tablepolicy.runtime.caches.models import FileModelCache

ROOT = Path(__file__).resolve().parents[2]
DAMAGE = {
    "not_json": b"{nope",
    "not_utf8": b"\xff\xfe\x00",
    "a_list": b"[1, 2]",
    "models_a_list": f'{{"version": {CACHE_VERSION}, "tool": "{__version__}", "models": [], "checks": {{}}}}'.encode(),
    "deeply_nested": b"[" * 100_000 + b"]" * 100_000,
    "entry_cut_short": f'{{"version": {CACHE_VERSION}, "tool": "{__version__}"}}\n{{}}\nabc\ttable\n'.encode(),
    "entry_of_no_kind": f'{{"version": {CACHE_VERSION}, "tool": "{__version__}"}}\n{{}}\nabc\tview\tx\ty\t{{}}\n'
                        .encode(),
    "findings_a_list": f'{{"version": {CACHE_VERSION}, "tool": "{__version__}"}}\n[]\n'.encode(),
}


@pytest.mark.parametrize("damage", DAMAGE.values(), ids=list(DAMAGE))
def test_damaged_cache_is_rebuilt(tmp_path: Path, damage: bytes) -> None:
    policies = tmp_path / "policies"
    shutil.copytree(ROOT / "policies", policies)
    cache_file = tmp_path / ".tablepolicy" / "models.tsv"
    cache_file.parent.mkdir()
    cache_file.write_bytes(damage)
    project, diagnostics = validate(policies, FileModelCache.open(cache_file))
    assert not diagnostics.has_errors and len(project.tables) == 4
    assert FileModelCache.open(cache_file).models  # saved anew
