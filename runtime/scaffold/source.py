"""Where CI installs tablepolicy from: a requirement that resolves on a fresh runner and names one build.

``init`` writes it into every workflow. Given with ``--install`` (or ``TABLEPOLICY_INSTALL``, a team's vetted
line), it is checked: a git URL pinned to a full commit (a branch or tag moves), an exact version, a URL with
its hash, or a path inside the repository. Otherwise it is the source the running tool was installed from,
when the install recorded one CI can reach (PEP 610's ``direct_url.json``: a git commit, a URL with its hash;
an index install: that version; a git checkout: its commit on a network remote, an SSH remote written as https,
which a hosted runner can clone). When none can be told, init commits the running tool's own wheel into the
repository (wheel.py) and the workflows install that file after checking its sha256: the first pull request
installs without an index that serves tablepolicy. A version given with --install is asked of the configured
package index (``pip download --no-deps``) before it is written: one the index does not serve is refused with
the index's answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tablepolicy.compiler import __version__

from ..gitinfo import run_git
from .wheel import Wheel, WheelError, build_wheel

DISTRIBUTION = "tablepolicy"
ENV = "TABLEPOLICY_INSTALL"
COMMIT = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
WHEEL = f"./wheels/tablepolicy-{__version__}-py3-none-any.whl"
EXAMPLES = (f"a commit of its git repository (--install 'git+https://github.com/ORG/tablepolicy@<40-hex commit>'), "
            f"a wheel committed to the policy repository (--install {WHEEL}), or a version your package index serves "
            f"(--install 'tablepolicy=={__version__}')")


class InstallSourceError(Exception):
    """No install line CI can resolve; the message says why and what to pass."""


@dataclass(frozen=True)
class InstallLine:
    spec: str
    origin: str  # how it was chosen, for init's closing line
    wheel: Wheel | None = None  # the running tool's wheel, which init writes at spec's path


def split_digest(spec: str) -> tuple[str, str | None]:
    """``./wheels/t.whl#sha256=<hex>`` -> (``./wheels/t.whl``, ``<hex>``); any other spec -> (spec, None)."""
    if match := re.fullmatch(r"(\.[^#\s]*)#sha256=([0-9a-f]{64})", spec.strip()):
        return match.group(1), match.group(2)
    return spec, None


def check_spec(spec: str, root: Path, given_by: str = "--install") -> None:
    """A requirement CI may install: one build, reachable from a fresh runner."""
    spec = spec.strip()
    if not spec:
        raise InstallSourceError(f"{given_by} is empty; pass {EXAMPLES}")
    url = spec.split("@", 1)[1].strip() if re.match(r"[A-Za-z0-9_.\-]+(\[[^\]]*\])?\s*@", spec) else spec
    if url.startswith("git+"):
        _check_git_url(url, given_by)
    elif url.startswith(("http://", "https://")):
        if not re.search(r"#sha256=[0-9a-f]{64}\b", url):
            raise InstallSourceError(f"{given_by} {spec!r} is a URL without its hash: what it serves can change; add "
                                     "#sha256=<the file's digest> (pip checks it)")
    elif url.startswith(("/", "~", "file:")):
        raise InstallSourceError(f"{given_by} {spec!r} is a path outside the repository: CI's runner has only the "
                                 "checkout; copy the wheel into the repository and give its relative path "
                                 f"(e.g. {WHEEL})")
    elif url.startswith(".") or "/" in url or url.endswith((".whl", ".tar.gz", ".zip")):
        url, digest = split_digest(url)
        file = root / url.split("[", 1)[0]
        if url not in (".", "./") and not file.exists():
            raise InstallSourceError(f"{given_by} {spec!r}: {file} does not exist; the path is "
                                     "relative to the policy repository, whose checkout is all CI has")
        if digest is not None and file.is_file() and hashlib.sha256(file.read_bytes()).hexdigest() != digest:
            raise InstallSourceError(f"{given_by} {spec!r}: {file} does not have that sha256 (it has "
                                     f"{hashlib.sha256(file.read_bytes()).hexdigest()}); give the digest of the file "
                                     "the repository holds (sha256sum prints it)")
    elif match := re.fullmatch(r"[A-Za-z0-9_.\-]+(?:\[[^\]]*\])?\s*(.*)", spec):
        pin = match.group(1).strip()
        if not pin:
            raise InstallSourceError(f"{given_by} {spec!r} is an unpinned name: anyone could publish it and receive "
                                     f"your catalog credentials; pin it (e.g. 'tablepolicy=={__version__}') or pass "
                                     f"{EXAMPLES}")
        if not re.fullmatch(r"===?\s*[A-Za-z0-9_.+!\-]+", pin) or "*" in pin:
            raise InstallSourceError(f"{given_by} {spec!r} is a range, not a pin: each run could install another "
                                     f"release; pin one (e.g. 'tablepolicy=={__version__}')")
    else:
        raise InstallSourceError(f"{given_by} {spec!r} is not a requirement pip reads; pass {EXAMPLES}")


def _check_git_url(url: str, given_by: str) -> None:
    location = url.split("#", 1)[0]
    ref = location.rsplit("@", 1)[1] if "@" in location.split("://", 1)[-1].split("/", 1)[-1] else ""
    if not ref:
        raise InstallSourceError(f"{given_by} {url!r} names no commit: it installs whatever the default branch holds "
                                 "when CI runs; append @<40-hex commit>")
    if not COMMIT.fullmatch(ref):
        raise InstallSourceError(f"{given_by} {url!r} pins {ref!r}, a branch, tag or short sha, which can move: pin "
                                 "the full commit (git rev-parse <ref> prints it): @<40-hex commit>")


def install_line(given: str, root: Path) -> InstallLine:
    """The line init writes: ``given`` (--install), else TABLEPOLICY_INSTALL, else the running tool's source, else
    the running tool's own wheel (written into the repository by init)."""
    if given:
        check_spec(given, root)
        check_index(given)
        return InstallLine(given.strip(), "--install")
    if os.environ.get(ENV):
        check_spec(os.environ[ENV], root, ENV)
        check_index(os.environ[ENV], ENV)
        return InstallLine(os.environ[ENV].strip(), ENV)
    try:
        spec, origin = running_source()
        check_spec(spec, root, f"the source tablepolicy was installed from ({origin})")
        if re.fullmatch(r"tablepolicy==\S+", spec):
            check_index(spec, f"the version tablepolicy was installed as ({origin})")
    except InstallSourceError as exc:
        try:
            wheel = build_wheel()
        except WheelError as why:
            raise InstallSourceError(f"{exc}; and {why}") from None
        reason = str(exc).split(", which CI's runner cannot install from", 1)[0].removeprefix(
            "this tablepolicy was installed from ")
        return InstallLine(f"./{wheel.path}#sha256={wheel.sha256}",
                           f"this tablepolicy's own wheel, written to {wheel.path}: no published or pushed source is "
                           f"known (it runs from {reason}); commit the file", wheel)
    return InstallLine(spec, origin)


def check_index(spec: str, given_by: str = "--install") -> None:
    """A pinned version the configured package index serves (pip's own configuration: PIP_INDEX_URL, pip.conf);
    InstallSourceError with the index's answer otherwise. Other forms (git, URL, path) are left to check_spec."""
    spec = spec.strip()
    if not re.fullmatch(r"[A-Za-z0-9_.\-]+(?:\[[^\]]*\])?\s*===?\s*[A-Za-z0-9_.+!\-]+", spec):
        return
    with tempfile.TemporaryDirectory(prefix="tablepolicy-index-") as folder:
        try:
            done = subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet",
                                   "--disable-pip-version-check", "--dest", folder, spec],
                                  capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise InstallSourceError(f"{given_by} {spec!r}: could not ask the package index whether it serves it "
                                     f"({exc}); nothing was written") from None
    if done.returncode != 0:
        answer = " ".join(line.strip() for line in done.stderr.splitlines()
                          if line.strip().startswith("ERROR:"))[:600] or done.stderr.strip()[-600:]
        raise InstallSourceError(f"{given_by} {spec!r}: the package index CI would install from does not serve it "
                                 f"({answer}); publish that version first, or leave --install out to commit this "
                                 f"tablepolicy's own wheel into the repository, or pass {EXAMPLES}; nothing was "
                                 "written")


def running_source() -> tuple[str, str]:
    """The requirement that installs the running tool again, and where that was read; InstallSourceError when
    the install recorded nothing a CI runner can reach."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        dist = None
    recorded = dist.read_text("direct_url.json") if dist is not None else None
    if recorded:
        return from_direct_url(json.loads(recorded))
    checkout = source_checkout()
    if checkout is not None:
        return from_checkout(checkout)
    if dist is not None:
        return f"{DISTRIBUTION}=={dist.version}", "the package index it was installed from"
    raise InstallSourceError(f"cannot tell where this tablepolicy was installed from; pass {EXAMPLES}; nothing "
                             "was written")


def from_direct_url(record: dict[str, object]) -> tuple[str, str]:
    """PEP 610's record of a direct install."""
    url = str(record.get("url", ""))
    vcs = record.get("vcs_info")
    archive = record.get("archive_info")
    subdirectory = f"#subdirectory={record['subdirectory']}" if record.get("subdirectory") else ""
    if isinstance(vcs, dict) and vcs.get("vcs") == "git" and vcs.get("commit_id"):
        if url.startswith("file:"):
            raise _unreachable(f"a git repository on this machine ({url})")
        return f"git+{network_url(url) or url}@{vcs['commit_id']}{subdirectory}", "its git install (direct_url.json)"
    if isinstance(archive, dict) and url.startswith(("http://", "https://")):
        digest = archive.get("hashes", {}).get("sha256") if isinstance(archive.get("hashes"), dict) else None
        if digest is None and str(archive.get("hash", "")).startswith("sha256="):
            digest = str(archive["hash"]).split("=", 1)[1]
        if digest is None:
            raise _unreachable(f"{url}, with no hash recorded")
        return f"{url.split('#', 1)[0]}#sha256={digest}", "the URL it was installed from (direct_url.json)"
    if url.startswith("file:"):
        folder = Path(url.removeprefix("file://"))
        if folder.is_dir():
            return from_checkout(folder)
        raise _unreachable(f"a file on this machine ({url})")
    raise _unreachable(url or "an unrecorded place")


def source_checkout() -> Path | None:
    """The git work tree the running code is imported from, when it runs from one (an editable install)."""
    package = Path(__file__).resolve().parents[2]
    return package if (package / "pyproject.toml").is_file() and _git(package, "rev-parse", "--git-dir") else None


def from_checkout(folder: Path) -> tuple[str, str]:
    """The checkout's commit on a network remote: what a runner can clone."""
    head = _git(folder, "rev-parse", "HEAD")
    if head is None:
        raise _unreachable(f"{folder}, which is not a git checkout")
    if _git(folder, "status", "--porcelain", "--untracked-files=no"):
        raise _unreachable(f"the checkout {folder}, which has uncommitted changes (no commit holds this code)")
    remotes = [r for r in (_git(folder, "branch", "-r", "--contains", head) or "").split() if "/" in r and r != "->"]
    for remote in dict.fromkeys(r.split("/", 1)[0] for r in remotes):
        url = _git(folder, "remote", "get-url", remote)
        if url and (network := network_url(url)):
            return f"git+{network}@{head}", f"the commit of its checkout {folder} on {remote}"
    raise _unreachable(f"the checkout {folder}: commit {head[:12]} is on no remote branch a runner could clone "
                       "(push it, or pass --install)")


def network_url(url: str) -> str | None:
    """A remote's URL as pip's git+ form, when a runner could reach it (not a path on this machine)."""
    if url.startswith(("https://", "http://")):
        return url
    # SSH (ssh://git@host/org/repo, scp-like git@host:org/repo): a hosted runner has no SSH key for it; the same
    # repository over https is what it clones (a private one with the workflow's token)
    if match := re.fullmatch(r"ssh://(?:[^@/]+@)?([^/:]+)(?::\d+)?/(.+)", url):
        return f"https://{match.group(1)}/{match.group(2)}"
    if match := re.fullmatch(r"[\w.-]+@([\w.-]+):(.+)", url):  # scp-like git@github.com:org/repo.git
        return f"https://{match.group(1)}/{match.group(2).lstrip('/')}"
    return None


def _unreachable(what: str) -> InstallSourceError:
    return InstallSourceError(f"this tablepolicy was installed from {what}, which CI's runner cannot install from; "
                              f"pass {EXAMPLES} (or set {ENV}); nothing was written")


def _git(folder: Path, *args: str) -> str | None:
    out = run_git(folder, *args)
    return out.strip() if out is not None else None
