"""The distribution: a wheel and an sdist built from this checkout as `python -m build` would (the same backend,
setuptools.build_meta, called without network: `build` is not locked), their contents and metadata, and the wheel
installed into a fresh virtualenv outside the checkout, where tablepolicy --version, init, validate, ddl and
doctor run (init and ddl read the package's templates and workflows: they prove the package data is in it)."""

from __future__ import annotations

import email
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from tablepolicy.compiler import __version__
from tests.integration.test_gitops import PACKAGES, locked_site, runner_bin, wheel  # noqa: F401  (fixtures)

ROOT = Path(__file__).resolve().parents[2]
# every file besides Python the running code reads from its package
DATA = ("compiler/sql/templates/*.sql.j2", "runtime/scaffold/workflows/*.yml", "runtime/spark/conf/*.properties")
# the folders of the checkout and where the wheel puts them: one import root (tablepolicy/compiler and
# tablepolicy/runtime are links to the root's compiler/ and runtime/)
MOUNTED = {"compiler": "tablepolicy/compiler", "runtime": "tablepolicy/runtime", "tablepolicy": "tablepolicy"}


def installed_name(path: Path) -> str:
    """Where a file of the checkout lands in the wheel."""
    folder, _, rest = path.relative_to(ROOT).as_posix().partition("/")
    return f"{MOUNTED[folder]}/{rest}"
TESTED = f"{sys.version_info.major}.{sys.version_info.minor}"  # the Python `make test` runs on


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def sdist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built from a copy of the tree (the shared work tree gets no egg-info); the wheel is test_gitops' (pip
    wheel of the same copy)."""
    source = tmp_path_factory.mktemp("sdist-source")
    for package in PACKAGES:
        shutil.copytree(ROOT / package, source / package, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    out = tmp_path_factory.mktemp("sdist")
    built = run(sys.executable, "-c", f"from setuptools import build_meta; build_meta.build_sdist({str(out)!r})",
                cwd=source)
    assert built.returncode == 0, built.stderr
    [found] = out.glob("tablepolicy-*.tar.gz")
    return found


def files(archive: Path) -> set[str]:
    if archive.suffix == ".whl":
        with zipfile.ZipFile(archive) as opened:
            return set(opened.namelist())
    with tarfile.open(archive) as tar:
        return {m.split("/", 1)[1] for m in tar.getnames() if "/" in m}


def package_data() -> set[str]:
    return {installed_name(p) for pattern in DATA for p in ROOT.glob(pattern)}


def test_the_wheel_holds_every_module_and_data_file(wheel: Path) -> None:  # noqa: F811
    names = files(wheel)
    modules = {installed_name(p) for top in MOUNTED for p in (ROOT / top).rglob("*.py")
               if "__pycache__" not in p.parts}
    data = package_data()
    assert len(modules) > 150 and len(data) >= 30 and data | modules <= names, sorted((data | modules) - names)
    assert not [n for n in names if "__pycache__" in n or n.endswith(".pyc") or n.startswith("tests/")]


def test_the_wheel_installs_one_top_level_name(wheel: Path) -> None:  # noqa: F811
    """PyPI has distributions named compiler and runtime: the wheel installs nothing beside tablepolicy."""
    with zipfile.ZipFile(wheel) as archive:
        record = archive.read(f"tablepolicy-{__version__}.dist-info/RECORD").decode()
        top_level = archive.read(f"tablepolicy-{__version__}.dist-info/top_level.txt").decode()
    assert {line.split(",")[0].split("/")[0] for line in record.splitlines() if line} == {
        "tablepolicy", f"tablepolicy-{__version__}.dist-info"}
    assert top_level.split() == ["tablepolicy"]


def bystander(name: str, where: Path) -> Path:
    """A small distribution that installs a top-level module ``name`` (as PyPI's compiler and runtime do), built
    as a wheel here without an index."""
    source = where / f"{name}-bystander"
    (source / name).mkdir(parents=True)
    (source / name / "__init__.py").write_text(f"WHO = 'the other {name}'\n")
    (source / "pyproject.toml").write_text(
        f'[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "9.9"\n[tool.setuptools]\npackages = ["{name}"]\n')
    built = run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                "-w", where / "dist", source, cwd=where)
    assert built.returncode == 0, built.stderr
    [found] = (where / "dist").glob(f"{name}-9.9-*.whl")
    return found


def test_the_wheel_lives_beside_other_compiler_and_runtime_packages(
        wheel: Path, tmp_path_factory: pytest.TempPathFactory) -> None:  # noqa: F811
    """A virtualenv that already holds distributions providing top-level ``compiler`` and ``runtime``: after the
    wheel is installed, tablepolicy's version, validate and plan (embedded catalog) work, and both other
    modules are still theirs."""
    where = tmp_path_factory.mktemp("bystanders")
    venv = where / "venv"
    assert run(sys.executable, "-m", "venv", venv, cwd=where).returncode == 0
    locked = where / "locked-packages"  # tablepolicy's dependencies: the locked ones of this checkout, via a .pth
    locked.mkdir()
    for entry in locked_site().iterdir():
        if not entry.name.startswith(("tablepolicy", "__editable__", "_tablepolicy")) and entry.suffix != ".pth":
            (locked / entry.name).symlink_to(entry)
    [site] = (venv / "lib").glob("python3*/site-packages")
    (site / "locked_packages.pth").write_text(f"{locked}\n")
    bin_ = venv / "bin"
    others = [bystander("compiler", where), bystander("runtime", where)]
    pip = run(bin_ / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", *others, cwd=where)
    assert pip.returncode == 0, pip.stderr
    pip = run(bin_ / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel, cwd=where)
    assert pip.returncode == 0, pip.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    project = where / "project"
    shutil.copytree(ROOT / "policies", project / "policies")
    tablepolicy = bin_ / "tablepolicy"
    version = run(tablepolicy, "--version", cwd=project, env=env)
    assert (version.returncode, version.stdout) == (0, f"tablepolicy {__version__}\n"), version.stderr
    validate = run(tablepolicy, "validate", "policies", cwd=project, env=env)
    assert validate.returncode == 0 and "0 error(s)" in validate.stdout + validate.stderr, validate.stderr
    plan = run(tablepolicy, "plan", "policies", "--detailed-exitcode", cwd=project, env=env)
    assert plan.returncode == 2 and "create table" in plan.stdout.lower(), plan.stdout + plan.stderr
    both = run(bin_ / "python", "-c", "import compiler, runtime, tablepolicy.compiler as c; "
               "print(compiler.WHO, '|', runtime.WHO, '|', c.__file__)", cwd=project, env=env)
    assert both.returncode == 0, both.stderr
    mine, theirs, ours = both.stdout.strip().split(" | ")
    assert (mine, theirs) == ("the other compiler", "the other runtime")
    assert ours.startswith(str(venv)) and "/tablepolicy/compiler/" in ours
    listed = run(bin_ / "python", "-m", "pip", "show", "-f", "tablepolicy", cwd=project, env=env).stdout
    installed_files = [line.strip() for line in listed.split("Files:", 1)[1].splitlines() if line.strip()]
    assert {f.split("/")[0] for f in installed_files if not f.startswith("..")} == {"tablepolicy",
                                                           f"tablepolicy-{__version__}.dist-info"}


def test_the_sdist_rebuilds_the_same_wheel(sdist: Path, wheel: Path, tmp_path: Path) -> None:  # noqa: F811
    """Everything a wheel needs is in the sdist: pip builds one from it (as `python -m build` does) with the
    same files as the wheel built from the tree."""
    members = files(sdist)
    assert {"pyproject.toml", "README.md", "PKG-INFO"} <= members and package_data() <= members
    again = run(sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "--no-index",
                "-w", tmp_path, sdist, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    [rebuilt] = tmp_path.glob("tablepolicy-*.whl")
    assert files(rebuilt) == files(wheel)


def test_the_metadata_is_complete(wheel: Path) -> None:  # noqa: F811
    with zipfile.ZipFile(wheel) as archive:
        text = archive.read(f"tablepolicy-{__version__}.dist-info/METADATA").decode()
        entry_points = archive.read(f"tablepolicy-{__version__}.dist-info/entry_points.txt").decode()
    meta = email.message_from_string(text)
    assert meta["Name"] == "tablepolicy" and meta["Version"] == __version__
    assert meta["License-Expression"] == "Apache-2.0" and meta["Summary"] and meta["Keywords"]
    assert meta["Requires-Python"] == ">=3.11"
    classifiers = meta.get_all("Classifier") or []
    assert f"Programming Language :: Python :: {TESTED}" in classifiers  # the version tests run on is declared
    versions = [c.rsplit(" ", 1)[1] for c in classifiers if c.startswith("Programming Language :: Python :: 3.")]
    assert all(tuple(map(int, v.split("."))) >= (3, 11) for v in versions)  # none below requires-python
    assert meta["Description-Content-Type"] == "text/markdown" and "# tablepolicy" in meta.get_payload()
    assert "tablepolicy = tablepolicy.cli.app:main" in entry_points
    assert any(r.startswith("pyiceberg[") for r in meta.get_all("Requires-Dist") or [])


@pytest.fixture(scope="module")
def installed(wheel: Path, runner_bin: Path) -> Path:  # noqa: F811
    """The wheel in a fresh virtualenv outside the checkout, installed with no index: its dependencies are the
    locked packages of this one, reached through a .pth (test_gitops' runner)."""
    pip = run(runner_bin / "python", "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel,
              cwd=runner_bin.parent)
    assert pip.returncode == 0, pip.stderr
    return runner_bin


def test_the_installed_wheel_runs_outside_the_checkout(installed: Path, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    tablepolicy = installed / "tablepolicy"
    where = run(installed / "python", "-c",
                "import tablepolicy.compiler as c, tablepolicy.runtime as r; print(c.__file__, r.__file__)",
                cwd=tmp_path, env=env)
    assert where.returncode == 0 and str(ROOT) not in where.stdout, where.stdout + where.stderr
    assert str(installed.parent) in where.stdout  # imported from the virtualenv, not from the checkout
    version = run(tablepolicy, "--version", cwd=tmp_path, env=env)
    assert (version.returncode, version.stdout) == (0, f"tablepolicy {__version__}\n"), version.stderr
    assert run(tablepolicy, "version", cwd=tmp_path, env=env).stdout == f"{__version__}\n"
    # installed from a wheel file no runner can reach: init writes this installed distribution as a wheel
    init = run(tablepolicy, "init", "repo", cwd=tmp_path, env=env)
    assert init.returncode == 0, init.stderr
    written = tmp_path / "repo" / "wheels" / f"tablepolicy-{__version__}-py3-none-any.whl"
    with zipfile.ZipFile(written) as archive:
        assert {"tablepolicy/cli/app.py", "tablepolicy/compiler/sql/templates/create_table.sql.j2"} <= set(
            archive.namelist())
    workflows = sorted(p.name for p in (tmp_path / "repo" / ".github" / "workflows").iterdir())
    assert workflows == sorted(p.name for p in (ROOT / "runtime" / "scaffold" / "workflows").glob("*.yml"))
    assert all("python -m" not in (tmp_path / "repo" / ".github" / "workflows" / w).read_text() for w in workflows)
    validate = run(tablepolicy, "validate", "repo/policies", cwd=tmp_path, env=env)
    assert validate.returncode == 0 and "0 error(s)" in validate.stdout + validate.stderr, validate.stderr
    ddl = run(tablepolicy, "ddl", "repo/policies", cwd=tmp_path, env=env)  # rendered from the packaged templates
    assert ddl.returncode == 0 and "CREATE TABLE `lake`.`analytics`.`page_views`" in ddl.stdout, ddl.stderr
    doctor = run(tablepolicy, "doctor", "repo/policies", cwd=tmp_path, env=env)
    assert doctor.returncode == 0 and "all passed" in doctor.stdout, doctor.stdout + doctor.stderr
