"""Every install is the same product: the lock pins every package with hashes and this suite runs on it.

``make install`` installs ``requirements/spark.lock``, ``make dev`` ``dev.lock`` on top (pip --require-hashes); the
workflows install ``core.lock`` or ``spark.lock``. These tests fail when the environment is not the lock, when a
lock line has no hash, when the three locks disagree, or when pyproject.toml's ranges no longer admit the lock (a
dependency changed without ``make lock``).
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path
from types import ModuleType

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement

from tests.imports import script

ROOT = Path(__file__).resolve().parents[2]
LOCKS = {name: ROOT / "requirements" / f"{name}.lock" for name in ("dev", "core", "spark")}


def upstream() -> ModuleType:
    return script("upstream")


def applies(marker: str | None) -> bool:
    return marker is None or Marker(marker).evaluate()


def entries(lock: Path) -> dict[str, tuple[str, str | None, list[str]]]:
    """name -> (version, marker, hashes) of one lock file. A universal lock may pin one package twice under
    exclusive markers (``networkx==3.6.1 ; python_full_version < '3.12'``): the line for this interpreter wins."""
    found: dict[str, tuple[str, str | None, list[str]]] = {}
    for block in re.split(r"\n(?=[A-Za-z0-9])", lock.read_text(encoding="utf-8")):
        head = re.match(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s;\\]+)(?:\s*;\s*([^\\\n]+))?", block)
        if head:
            name = re.sub(r"[-_.]+", "-", head.group(1)).lower()
            marker = head.group(3).strip() if head.group(3) else None
            if name in found and applies(found[name][1]) and not applies(marker):
                continue
            found[name] = (head.group(2), marker, re.findall(r"--hash=sha256:([0-9a-f]{64})", block))
    return found


@pytest.mark.parametrize("lock", LOCKS.values(), ids=LOCKS.keys())
def test_every_locked_package_is_pinned_with_hashes(lock: Path) -> None:
    found = entries(lock)
    assert len(found) > 10 and {"pyiceberg", "pydantic", "pyyaml", "pip", "setuptools"} <= set(found)
    assert not [name for name, (_, _, hashes) in found.items() if not hashes], "every package needs its hashes"


def test_the_three_locks_agree() -> None:
    dev = entries(LOCKS["dev"])
    for name in ("core", "spark"):
        other = entries(LOCKS[name])
        assert {p: v[0] for p, v in other.items()} == {p: dev[p][0] for p in other}, f"{name}.lock differs from dev"
    assert "pyspark" in entries(LOCKS["spark"]) and "pyspark" not in entries(LOCKS["core"])


def test_pyproject_admits_every_locked_version() -> None:
    """A dependency added or re-ranged in pyproject.toml without `make lock` fails here, not on a user."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    dev = entries(LOCKS["dev"])
    wanted = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    for text in wanted:
        requirement = Requirement(text)
        name = re.sub(r"[-_.]+", "-", requirement.name).lower()
        assert name in dev, f"{name} is not in requirements/dev.lock: run make lock"
        assert requirement.specifier.contains(dev[name][0], prereleases=True), (
            f"pyproject.toml wants {requirement}, the lock has {dev[name][0]}: run make lock")


def test_the_environment_is_the_lock() -> None:
    """What runs these tests is exactly requirements/dev.lock: nothing newer, nothing missing, nothing extra."""
    dev = entries(LOCKS["dev"])
    installed = {re.sub(r"[-_.]+", "-", d.metadata["Name"]).lower(): d.version for d in metadata.distributions()}
    expected = {name: version for name, (version, marker, _) in dev.items() if applies(marker)}
    installed.pop("tablepolicy", None)
    assert {n: v for n, v in installed.items() if expected.get(n) != v} == {}, "installed but not as locked"
    assert sorted(set(expected) - set(installed)) == [], "locked but not installed"


def test_drift_names_each_package_that_moved() -> None:
    module = upstream()
    lock = ("pyyaml==6.0.3 \\\n    --hash=sha256:aa\nruamel-yaml==0.19.1 ; python_version >= '3.11' \\\n"
            "networkx==3.6.1 ; python_full_version < '3.12' \\\nnetworkx==3.7 ; python_full_version >= '3.12' \\\n")
    locked = module.locked_versions(lock, applies)
    assert locked == {"pyyaml": "6.0.3", "ruamel-yaml": "0.19.1", "networkx": "3.6.1"}  # this interpreter's line
    moved = module.drift(locked, {"pyyaml": "6.0.4", "ruamel-yaml": "0.19.1", "newdep": "1.0", "tablepolicy": "0.1.0"})
    assert moved == [("newdep", "-", "1.0"), ("pyyaml", "6.0.3", "6.0.4")]


def test_requirements_txt_is_the_dev_lock() -> None:
    """Where pip users and tools look for a project's pinned installs: the same hashed lock, byte for byte."""
    assert (ROOT / "requirements.txt").read_bytes() == (ROOT / "requirements" / "dev.lock").read_bytes()
