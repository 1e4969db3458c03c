"""Where the workflows init writes install tablepolicy from (runtime/scaffold/source.py): a line a fresh runner
resolves to one build, or a refusal that says what to pass. Cases of --install, of what an install records
(PEP 610's direct_url.json), and of real git checkouts; the install itself runs in test_init_workflow.py."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

import pytest

from tablepolicy.runtime.scaffold.source import (
    InstallSourceError,
    check_spec,
    from_checkout,
    from_direct_url,
    install_line,
)
from tablepolicy.runtime.scaffold.wheel import build_wheel
from tests.cli_runner import tablepolicy

SHA = "3f2a9c1d" * 5
DIGEST = "ab" * 32


@pytest.mark.parametrize("spec", [
    "tablepolicy==0.1.0", "tablepolicy[spark]==0.1.0", f"git+https://github.com/acme/tablepolicy@{SHA}",
    f"tablepolicy @ git+https://github.com/acme/tablepolicy@{SHA}", f"git+ssh://git@github.com/acme/tablepolicy@{SHA}",
    f"https://files.example/tablepolicy-0.1.0-py3-none-any.whl#sha256={DIGEST}", ".",
    "./wheels/tablepolicy-0.1.0-py3-none-any.whl",
], ids=str)
def test_pinned_reachable_lines_are_accepted(tmp_path: Path, spec: str) -> None:
    (tmp_path / "wheels").mkdir()
    (tmp_path / "wheels" / "tablepolicy-0.1.0-py3-none-any.whl").write_bytes(b"")
    check_spec(spec, tmp_path)


@pytest.mark.parametrize(("spec", "why"), [
    ("tablepolicy", "is an unpinned name: anyone could publish it"),
    ("some-other-name", "is an unpinned name"),
    ("tablepolicy>=0.1", "is a range, not a pin"),
    ("tablepolicy==0.*", "is a range, not a pin"),
    ("git+https://github.com/acme/tablepolicy@main", "pins 'main', a branch, tag or short sha, which can move"),
    ("git+https://github.com/acme/tablepolicy@v0.1.0", "pins 'v0.1.0', a branch, tag or short sha"),
    ("git+https://github.com/acme/tablepolicy@3f2a9c1", "pins '3f2a9c1', a branch, tag or short sha"),
    ("git+https://github.com/acme/tablepolicy", "names no commit"),
    ("https://files.example/tablepolicy-0.1.0-py3-none-any.whl", "is a URL without its hash"),
    ("/home/me/dist/tablepolicy-0.1.0-py3-none-any.whl", "is a path outside the repository"),
    ("./wheels/missing.whl", "does not exist; the path is relative to the policy repository"),
    ("", "is empty"),
], ids=str)
def test_lines_a_runner_cannot_resolve_to_one_build_are_refused(tmp_path: Path, spec: str, why: str) -> None:
    with pytest.raises(InstallSourceError, match=why.replace("*", r"\*").replace("(", r"\(")):
        check_spec(spec, tmp_path)


@pytest.mark.parametrize(("record", "expected"), [
    ({"url": "https://github.com/acme/tablepolicy.git", "vcs_info": {"vcs": "git", "commit_id": SHA}},
     f"git+https://github.com/acme/tablepolicy.git@{SHA}"),
    ({"url": "https://github.com/acme/mono.git", "subdirectory": "tools/tablepolicy",
      "vcs_info": {"vcs": "git", "commit_id": SHA, "requested_revision": "main"}},
     f"git+https://github.com/acme/mono.git@{SHA}#subdirectory=tools/tablepolicy"),
    ({"url": "https://files.example/tablepolicy-0.1.0-py3-none-any.whl",
      "archive_info": {"hashes": {"sha256": DIGEST}}},
     f"https://files.example/tablepolicy-0.1.0-py3-none-any.whl#sha256={DIGEST}"),
    ({"url": "https://files.example/t.whl", "archive_info": {"hash": f"sha256={DIGEST}"}},
     f"https://files.example/t.whl#sha256={DIGEST}"),
], ids=["git", "git-subdirectory-branch-resolved-to-its-commit", "archive", "archive-legacy-hash"])
def test_a_recorded_direct_install_is_installed_again(record: dict[str, object], expected: str) -> None:
    assert from_direct_url(record)[0] == expected


@pytest.mark.parametrize(("record", "why"), [
    ({"url": "file:///home/me/dist/tablepolicy-0.1.0-py3-none-any.whl", "archive_info": {}}, "a file on this machine"),
    ({"url": "file:///srv/git/tablepolicy", "vcs_info": {"vcs": "git", "commit_id": SHA}},
     "a git repository on this machine"),
    ({"url": "https://files.example/t.whl", "archive_info": {}}, "with no hash recorded"),
], ids=["local-wheel", "local-git", "url-without-hash"])
def test_a_direct_install_no_runner_can_repeat_is_refused(record: dict[str, object], why: str) -> None:
    with pytest.raises(InstallSourceError, match=why) as caught:
        from_direct_url(record)
    assert "pass a commit of its git repository" in str(caught.value) and "nothing was written" in str(caught.value)


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "tablepolicy"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "-c", "user.email=a@b", "-c", "user.name=a", "commit", "-q", "--allow-empty", "-m", "one")
    return repo


@pytest.mark.parametrize(("remote", "expected"), [
    ("https://github.com/acme/tablepolicy.git", "git+https://github.com/acme/tablepolicy.git@{head}"),
    ("git@github.com:acme/tablepolicy.git", "git+https://github.com/acme/tablepolicy.git@{head}"),
    ("ssh://git@github.com/acme/tablepolicy.git", "git+https://github.com/acme/tablepolicy.git@{head}"),
    ("ssh://git@git.example:2222/acme/tablepolicy.git", "git+https://git.example/acme/tablepolicy.git@{head}"),
], ids=["https", "scp-like-ssh-written-as-https", "ssh-url-written-as-https", "ssh-port-dropped"])
def test_a_checkout_pins_its_commit_on_a_network_remote(checkout: Path, remote: str, expected: str) -> None:
    git(checkout, "remote", "add", "origin", remote)
    git(checkout, "update-ref", "refs/remotes/origin/main", "HEAD")  # what a fetch of the pushed commit leaves
    assert from_checkout(checkout)[0] == expected.format(head=git(checkout, "rev-parse", "HEAD"))


@pytest.mark.parametrize(("setup", "why"), [
    ("unpushed", "is on no remote branch a runner could clone"),
    ("local-remote", "is on no remote branch a runner could clone"),
    ("dirty", "which has uncommitted changes"),
])
def test_a_checkout_no_runner_can_clone_is_refused(checkout: Path, setup: str, why: str) -> None:
    git(checkout, "remote", "add", "origin", "/srv/git/tablepolicy" if setup == "local-remote" else
        "https://github.com/acme/tablepolicy.git")
    if setup != "unpushed":
        git(checkout, "update-ref", "refs/remotes/origin/main", "HEAD")
    if setup == "dirty":
        (checkout / "tracked.py").write_text("x = 1\n")
        git(checkout, "add", "tracked.py")
    with pytest.raises(InstallSourceError, match=why):
        from_checkout(checkout)


def test_the_team_line_from_the_environment_is_checked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TABLEPOLICY_INSTALL", "git+https://github.com/acme/tablepolicy@main")
    with pytest.raises(InstallSourceError, match=r"TABLEPOLICY_INSTALL 'git.*' pins 'main'"):
        install_line("", tmp_path)
    monkeypatch.setenv("TABLEPOLICY_INSTALL", f"git+https://github.com/acme/tablepolicy@{SHA}")
    assert install_line("", tmp_path).origin == "TABLEPOLICY_INSTALL"
    for key, value in index(tmp_path, "tablepolicy-0.1.0-py3-none-any.whl").items():
        monkeypatch.setenv(key, value)
    assert install_line("tablepolicy==0.1.0", tmp_path).spec == "tablepolicy==0.1.0"  # the flag wins, served


def test_init_refuses_a_branch_and_writes_nothing(tmp_path: Path) -> None:
    run = tablepolicy("init", "lake", "--install", "git+https://github.com/acme/tablepolicy@main", cwd=tmp_path)
    assert (run.returncode, run.stderr) == (1, (
        "error: --install 'git+https://github.com/acme/tablepolicy@main' pins 'main', a branch, tag or short sha, "
        "which can move: pin the full commit (git rev-parse <ref> prints it): @<40-hex commit>\n"))
    assert not (tmp_path / "lake").exists()


def test_init_names_the_line_it_chose_and_where_from(tmp_path: Path) -> None:
    run = tablepolicy("init", "lake", cwd=tmp_path,
                      env={"TABLEPOLICY_INSTALL": f"git+https://github.com/acme/tablepolicy@{SHA}"})
    assert run.returncode == 0, run.stderr
    assert f"Workflows install 'git+https://github.com/acme/tablepolicy@{SHA}' (TABLEPOLICY_INSTALL; change with " \
           "--install)" in run.stderr + run.stdout
    plan = (tmp_path / "lake" / ".github" / "workflows" / "tablepolicy-plan.yml").read_text()
    assert f'pip install "git+https://github.com/acme/tablepolicy@{SHA}"' in plan


def test_a_git_install_over_ssh_is_written_as_https() -> None:
    record = {"url": "ssh://git@github.com/acme/tablepolicy.git", "vcs_info": {"vcs": "git", "commit_id": SHA}}
    assert from_direct_url(record)[0] == f"git+https://github.com/acme/tablepolicy.git@{SHA}"


def index(tmp_path: Path, *wheels: str) -> dict[str, str]:
    """pip's configuration pointing at a package index in a folder that serves ``wheels`` (and nothing else)."""
    folder = tmp_path / "index" / "tablepolicy"
    folder.mkdir(parents=True)
    for name in wheels:  # a real wheel: pip download opens the one it chooses
        (folder / name).write_bytes(build_wheel().data if name == build_wheel().name else b"")
    (folder / "index.html").write_text("".join(f'<a href="{name}">{name}</a>\n' for name in wheels))
    return {"PIP_INDEX_URL": (tmp_path / "index").as_uri(), "PIP_EXTRA_INDEX_URL": "", "PIP_FIND_LINKS": "",
            "PIP_CONFIG_FILE": "/dev/null", "PIP_CONSTRAINT": ""}


def test_an_explicit_version_the_index_does_not_serve_is_refused_with_its_answer(tmp_path: Path) -> None:
    env = index(tmp_path, "tablepolicy-0.0.9-py3-none-any.whl")
    run = tablepolicy("init", "lake", "--install", "tablepolicy==0.1.0", cwd=tmp_path, env=env)
    assert run.returncode == 1
    assert run.stderr.startswith("error: --install 'tablepolicy==0.1.0': the package index CI would install from "
                                 "does not serve it (ERROR: Could not find a version that satisfies the requirement "
                                 "tablepolicy==0.1.0 (from versions: 0.0.9)"), run.stderr
    assert "nothing was written" in run.stderr and not (tmp_path / "lake").exists()


def test_init_without_a_reachable_source_commits_its_own_wheel_pinned_by_digest(tmp_path: Path) -> None:
    """The tool under test runs from a checkout no runner can clone (a worktree with changes, or a commit on no
    network remote): init writes its wheel, and the workflows check its sha256 before installing it."""
    repo = tmp_path / "lake"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    run = tablepolicy("init", cwd=repo)
    assert run.returncode == 0, run.stderr
    [wheel] = (repo / "wheels").iterdir()
    assert wheel.name == "tablepolicy-0.1.0-py3-none-any.whl"
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    plan = (repo / ".github" / "workflows" / "tablepolicy-plan.yml").read_text()
    apply = (repo / ".github" / "workflows" / "tablepolicy-apply.yml").read_text()
    check = f'echo "{digest}  wheels/{wheel.name}" | sha256sum --check --strict && pip install '
    assert f'{check}"./wheels/{wheel.name}"' in plan
    assert f'{check}"./wheels/{wheel.name}[spark]"' in apply
    assert "this tablepolicy's own wheel, written to wheels/tablepolicy-0.1.0-py3-none-any.whl" in run.stdout
    checked = subprocess.run(["sha256sum", "--check", "--strict"], input=f"{digest}  wheels/{wheel.name}\n",
                             cwd=repo, capture_output=True, text=True, check=False)
    assert checked.returncode == 0, checked.stderr
