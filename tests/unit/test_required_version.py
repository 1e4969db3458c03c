"""A policy repository declares the tablepolicy versions it accepts (``required_version`` in ``_rules.yaml``,
as Terraform's); every command that reads the policies refuses another version, naming both."""

from __future__ import annotations

from pathlib import Path

import pytest

from tablepolicy.compiler import __version__
from tablepolicy.compiler.validate import validate
from tablepolicy.compiler.versions import VersionSpecError, accepts
from tests.cli_runner import tablepolicy


@pytest.mark.parametrize(("spec", "version", "ok"), [
    (">=0.1, <0.2", "0.1.0", True), (">=0.1, <0.2", "0.2.0", False), (">=0.2", "0.1.9", False),
    ("0.1", "0.1.0", True), ("==0.1.0", "0.1", True), ("==0.1.*", "0.1.7", True), ("==0.1.*", "0.10.0", False),
    ("!=0.1.*", "0.2", True), ("~=0.1", "0.9.1", True), ("~=0.1", "1.0", False), ("~=0.1.2", "0.1.1", False),
    ("~=0.1.2", "0.2.0", False), (">0.1", "0.1.0", False), ("<=0.1", "0.1.0", True), ("v0.1", "0.1.0", True),
], ids=str)
def test_versions_a_spec_accepts(spec: str, version: str, ok: bool) -> None:
    assert accepts(spec, version) is ok


@pytest.mark.parametrize("spec", ["latest", ">=", "0.1,", "~=1", ">=0.1.*"], ids=str)
def test_a_spec_that_does_not_parse_says_the_form(spec: str) -> None:
    with pytest.raises(VersionSpecError):
        accepts(spec, "0.1.0")


def project(tmp_path: Path, required: str) -> Path:
    (tmp_path / "policies").mkdir()
    (tmp_path / "policies" / "_rules.yaml").write_text(f'required_version: "{required}"\nrules: {{}}\n')
    (tmp_path / "policies" / "t.yaml").write_text("table: a.t\ncolumns:\n  - {name: x, type: int}\n")
    return tmp_path / "policies"


def test_another_version_is_an_error_naming_the_installed_and_the_required_versions(tmp_path: Path) -> None:
    _, diagnostics = validate(project(tmp_path, ">=9.0"))
    [finding] = diagnostics.errors
    assert finding.code == "TP009" and (finding.location.line, finding.location.col) == (1, 19)
    assert finding.message == f"this repository requires tablepolicy >=9.0; the installed tablepolicy is {__version__}"


def test_an_accepted_version_passes(tmp_path: Path) -> None:
    assert validate(project(tmp_path, f">={__version__}"))[1].errors == []


def test_a_spec_that_does_not_parse_is_a_finding_on_the_rules_file(tmp_path: Path) -> None:
    [finding] = validate(project(tmp_path, "latest"))[1].errors
    assert finding.code == "TP104" and "'latest' is not a version clause" in finding.message


@pytest.mark.parametrize("command", [["plan"], ["ddl"], ["drift"], ["apply", "--dry-run"]], ids=" ".join)
def test_every_command_reading_the_policies_refuses_another_version(tmp_path: Path, command: list[str]) -> None:
    project(tmp_path, ">=9.0")
    run = tablepolicy(*command, cwd=tmp_path)
    assert run.returncode == 1
    assert f"error TP009: this repository requires tablepolicy >=9.0; the installed tablepolicy is {__version__}" \
        in run.stderr
