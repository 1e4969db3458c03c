"""The workflows' supply chain: actions pinned by commit SHA (release in a comment, one SHA per action
everywhere), Dependabot keeping them current, least-privilege permissions, artifacts that expire on purpose,
and pre-commit hooks other repositories can use by reference."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tablepolicy.runtime.scaffold import WORKFLOWS, Scaffold, workflow
from tests.cli_runner import tablepolicy

ROOT = Path(__file__).resolve().parents[2]
REPOSITORY_WORKFLOWS = sorted((ROOT / ".github" / "workflows").glob("*.yml"))
TEMPLATES = {name: workflow(name, "tablepolicy @ git+https://example.com/t.git@" + "a" * 40) for name in WORKFLOWS}
EVERY_WORKFLOW = {f".github/workflows/{p.name}": p.read_text(encoding="utf-8") for p in REPOSITORY_WORKFLOWS} | {
    f"init:{name}": text for name, text in TEMPLATES.items()}
USES = re.compile(r"^\s*(?:- )?uses:\s*(?P<ref>\S+)(?P<rest>.*)$", re.M)
PINNED = re.compile(r"^(?P<action>[\w.-]+/[\w.-]+)@(?P<sha>[0-9a-f]{40})$")
RELEASE = re.compile(r"^\s+# v\d+\.\d+\.\d+$")


def uses(text: str) -> list[tuple[str, str]]:
    return [(m["ref"], m["rest"]) for m in USES.finditer(text)]


@pytest.mark.parametrize("name", sorted(EVERY_WORKFLOW))
def test_every_action_is_pinned_by_commit_sha_with_its_release_in_a_comment(name: str) -> None:
    steps = uses(EVERY_WORKFLOW[name])
    assert steps, f"{name} uses no action"
    for ref, rest in steps:
        assert PINNED.match(ref), f"{name}: {ref} is not pinned by a 40-hex commit SHA"
        assert RELEASE.match(rest), f"{name}: {ref} has no '# vX.Y.Z' comment naming its release"


def test_an_action_has_one_sha_and_one_release_everywhere() -> None:
    seen: dict[str, set[tuple[str, str]]] = {}
    for text in EVERY_WORKFLOW.values():
        for ref, rest in uses(text):
            match = PINNED.match(ref)
            assert match
            seen.setdefault(match["action"], set()).add((match["sha"], rest.strip()))
    assert {action: len(pins) for action, pins in seen.items()} == dict.fromkeys(seen, 1), seen


@pytest.mark.parametrize("name", sorted(EVERY_WORKFLOW))
def test_every_workflow_declares_its_permissions(name: str) -> None:
    document = yaml.safe_load(EVERY_WORKFLOW[name])
    permissions = document.get("permissions")
    assert isinstance(permissions, dict) and permissions.get("contents") == "read", (name, permissions)
    writes = {scope for scope, level in permissions.items() if level == "write"}
    assert writes <= {"pull-requests", "id-token"}, f"{name} writes {writes}"
    # an OIDC token only where the job exchanges it for storage credentials
    assert ("id-token" in writes) == ("aws-actions/configure-aws-credentials@" in EVERY_WORKFLOW[name]), name


@pytest.mark.parametrize("name", sorted(TEMPLATES))
def test_storage_credentials_come_from_the_runners_identity_or_named_secrets(name: str) -> None:
    steps = [s for job in yaml.safe_load(TEMPLATES[name])["jobs"].values() for s in job["steps"]]
    readonly = "_READONLY" if name in ("tablepolicy-plan.yml", "tablepolicy-drift.yml") else ""
    [oidc] = [s for s in steps if str(s.get("uses", "")).startswith("aws-actions/configure-aws-credentials@")]
    assert oidc["if"] == f"vars.TABLEPOLICY_AWS_ROLE_ARN{readonly} != ''"
    assert oidc["with"]["role-to-assume"] == f"${{{{ vars.TABLEPOLICY_AWS_ROLE_ARN{readonly} }}}}"
    [keys] = [s for s in steps if s.get("name") == "storage credentials from secrets"]
    assert keys["env"] == {"KEY_ID": f"${{{{ secrets.TABLEPOLICY_AWS_ACCESS_KEY_ID{readonly} }}}}",
                           "SECRET": f"${{{{ secrets.TABLEPOLICY_AWS_SECRET_ACCESS_KEY{readonly} }}}}"}
    names = [s.get("name") or s.get("uses") for s in steps]
    assert names.index("storage credentials from secrets") < min(
        i for i, n in enumerate(names) if n and n.startswith(("validate", "plan", "drift", "find the reviewed",
                                                               "health", "erase pending")))


def test_no_run_cancels_a_queued_apply() -> None:
    """GitHub cancels the pending run of a concurrency group when another arrives: an apply shares its group with
    nothing (one per merge commit), and the runs that write wait for each other's table locks instead."""
    groups = {name: yaml.safe_load(text).get("concurrency") for name, text in TEMPLATES.items()}
    assert groups["tablepolicy-apply.yml"] == {"group": "tablepolicy-apply-${{ github.sha }}",
                                               "cancel-in-progress": False}
    others = {g["group"] for n, g in groups.items() if g and n != "tablepolicy-apply.yml"}
    assert not any(group.startswith("tablepolicy-apply") for group in others)
    for name in ("tablepolicy-apply.yml", "tablepolicy-maintain.yml", "tablepolicy-erase.yml"):
        assert "--lock-timeout 1h" in TEMPLATES[name], name


@pytest.mark.parametrize("name", sorted(EVERY_WORKFLOW))
def test_every_uploaded_artifact_has_a_retention(name: str) -> None:
    document = yaml.safe_load(EVERY_WORKFLOW[name])
    for job in document["jobs"].values():
        for step in job["steps"]:
            if str(step.get("uses", "")).startswith("actions/upload-artifact@"):
                assert isinstance(step["with"].get("retention-days"), int), (name, step["with"]["name"])


def test_the_reviewed_plan_is_kept_thirty_days() -> None:
    document = yaml.safe_load(TEMPLATES["tablepolicy-plan.yml"])
    (upload,) = [s for j in document["jobs"].values() for s in j["steps"]
                 if str(s.get("uses", "")).startswith("actions/upload-artifact@")]
    assert (upload["with"]["path"], upload["with"]["retention-days"]) == ("plan.json", 30)


def dependabot_ecosystems(path: Path) -> dict[str, str]:
    document = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert document["version"] == 2
    return {u["package-ecosystem"]: u["directory"] for u in document["updates"]}


def test_dependabot_keeps_the_pinned_actions_current_here_and_in_what_init_writes(tmp_path: Path) -> None:
    assert dependabot_ecosystems(ROOT / ".github" / "dependabot.yml")["github-actions"] == "/"
    Scaffold(tmp_path, "tablepolicy==9.9.9").write()
    assert dependabot_ecosystems(tmp_path / ".github" / "dependabot.yml") == {"github-actions": "/"}


def test_the_hooks_by_reference_are_the_ones_init_configures_and_they_run(tmp_path: Path) -> None:
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    Scaffold(tmp_path, "tablepolicy==9.9.9").write()
    local = yaml.safe_load((tmp_path / ".pre-commit-config.yaml").read_text(encoding="utf-8"))
    (repo,) = local["repos"]
    assert [h["id"] for h in hooks] == [h["id"] for h in repo["hooks"]]
    for hook, configured in zip(hooks, repo["hooks"], strict=True):
        assert hook["language"] == "python" and hook["pass_filenames"] is False
        assert hook["files"] == configured["files"]
        command = hook["entry"].split() + hook["args"]
        assert command == configured["entry"].split()  # the same command, wherever the hook comes from
        assert command[0] == "tablepolicy"
        result = tablepolicy(*command[1:], cwd=tmp_path)
        assert result.returncode == 0, (command, result.stdout, result.stderr)
