"""``tablepolicy init``: a policy repository from nothing, ready for the PR -> plan -> apply loop.

Writes the five workflows (installing tablepolicy from a requirement CI can resolve, see source.py),
org rules, a commented example table with its namespace defaults, the editor schema and its header,
a catalog configuration template, a pre-commit configuration running validate and fmt --check, and a
Dependabot configuration that keeps the workflows' SHA-pinned actions current.
This repository's own ``.github/workflows/tablepolicy-*.yml`` are these templates rendered with its
lock files and ``"."`` (``workflow(name, ".", locked=True)``), and a test keeps them equal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from tablepolicy.compiler import __version__
from tablepolicy.compiler.erasure.request_table import POLICY_COLUMNS
from tablepolicy.compiler.schema import policy_json_schema_text

from .source import split_digest
from .wheel import Wheel

SCHEMA_FILE = "policy.schema.json"
CACHES = ".tablepolicy"
WORKFLOWS = ("tablepolicy-apply.yml", "tablepolicy-drift.yml", "tablepolicy-erase.yml", "tablepolicy-maintain.yml",
             "tablepolicy-plan.yml")


class ScaffoldError(Exception):
    """init cannot write here; the message says what to do."""


def spark_spec(spec: str) -> str:
    """The same requirement with the ``spark`` extra: ``tablepolicy==0.1.0`` -> ``tablepolicy[spark]==0.1.0``,
    ``.`` -> ``.[spark]``, ``git+https://...`` -> ``tablepolicy[spark] @ git+https://...``."""
    if match := re.fullmatch(r"tablepolicy(\s*(?:==|@).*)", spec):
        return f"tablepolicy[spark]{match.group(1)}"
    if spec.startswith(("git+", "http://", "https://")):
        return f"tablepolicy[spark] @ {spec}"
    return f"{spec}[spark]"


def install_command(spec: str, *, spark: bool, locked: bool = False) -> str:
    """The workflow step that installs tablepolicy. ``locked`` is this repository's own form: every package
    from its hash-pinned lock (``requirements/core.lock``, or ``spark.lock`` for the Spark jobs), then this
    checkout without resolving anything again. A wheel in the repository pinned by its digest
    (``./wheels/t.whl#sha256=<hex>``) is checked with sha256sum before pip installs it."""
    if locked:
        lock = "spark" if spark else "core"
        return (f"pip install --require-hashes --no-deps -r requirements/{lock}.lock"
                f" && pip install --no-deps --no-build-isolation {spec}")
    path, digest = split_digest(spec)
    if digest is not None:
        return (f'echo "{digest}  {path.removeprefix("./")}" | sha256sum --check --strict'
                f' && pip install "{spark_spec(path) if spark else path}"')
    return f'pip install "{spark_spec(spec) if spark else spec}"'


# The steps that give a job its storage credentials, in every workflow that reads or writes the warehouse:
# the runner's cloud identity (OIDC) when a repository variable names a role, else named secrets, else none.
STORAGE = """\
      # Storage credentials for the warehouse (s3://...): the runner's cloud identity when the repository
      # variable TABLEPOLICY_AWS_ROLE_ARN{suffix} names an IAM role that trusts this repository's OIDC tokens
      # (no stored key), else the secrets TABLEPOLICY_AWS_ACCESS_KEY_ID{suffix} and
      # TABLEPOLICY_AWS_SECRET_ACCESS_KEY{suffix}, else none (a warehouse the runner reaches as it is).
      - uses: aws-actions/configure-aws-credentials@e6de054238d6b7531b4efff3b6587d9aade6a06c  # v6.2.3
        if: vars.TABLEPOLICY_AWS_ROLE_ARN{suffix} != ''
        with:
          role-to-assume: ${{{{ vars.TABLEPOLICY_AWS_ROLE_ARN{suffix} }}}}
          aws-region: ${{{{ vars.TABLEPOLICY_AWS_REGION || 'us-east-1' }}}}
      - name: storage credentials from secrets
        if: vars.TABLEPOLICY_AWS_ROLE_ARN{suffix} == ''
        env:
          KEY_ID: ${{{{ secrets.TABLEPOLICY_AWS_ACCESS_KEY_ID{suffix} }}}}
          SECRET: ${{{{ secrets.TABLEPOLICY_AWS_SECRET_ACCESS_KEY{suffix} }}}}
        run: |
          if [ -n "$KEY_ID" ]; then
            {{ echo "AWS_ACCESS_KEY_ID=$KEY_ID"; echo "AWS_SECRET_ACCESS_KEY=$SECRET"; }} >> "$GITHUB_ENV"
          else
            echo "no storage credentials configured (TABLEPOLICY_AWS_ROLE_ARN{suffix} or secrets): none given"
          fi
"""


def workflow(name: str, spec: str, *, locked: bool = False) -> str:
    template = resources.files(__package__).joinpath("workflows", name).read_text(encoding="utf-8")
    return (template.replace("__INSTALL_SPARK__", install_command(spec, spark=True, locked=locked))
            .replace("__INSTALL__", install_command(spec, spark=False, locked=locked))
            .replace("__STORAGE_WRITE__\n", STORAGE.format(suffix=""))
            .replace("__STORAGE_READ__\n", STORAGE.format(suffix="_READONLY")))


def schema_header(file: Path, root: Path) -> str:
    """``# yaml-language-server: $schema=../../policy.schema.json`` for a policy file under ``root``."""
    relative = Path(*[".."] * (len(file.relative_to(root).parts) - 1)) / SCHEMA_FILE
    return f"# yaml-language-server: $schema={relative.as_posix()}\n"


EXAMPLE_NAMESPACE = """\
# Defaults for every table of the analytics namespace (and nested ones); a table's own file wins.
namespace: analytics
owner: analytics-eng
lifecycle:
  snapshots: {max_age: 5d, min_keep: 3}
  orphan_files: {older_than: 3d}
"""

EXAMPLE_TABLE = """\
# A page-view log. Run `tablepolicy plan` to see what it creates; edit, open a pull request, merge.
table: analytics.page_views
description: One row per page view
columns:
  - {name: viewed_at, type: timestamptz, required: true}
  - {name: user_id, type: string, doc: Subject of privacy requests, tags: [pii]}
  - {name: url, type: string}
  - {name: referrer, type: string}
partition_by: [day(viewed_at)]
sort_by: [viewed_at]
lifecycle:
  retention: {column: viewed_at, keep: 400d}
  compaction: {target_file_size: 512MB}
  erasure: {key: [user_id], within: 30d}
"""

REQUEST_TABLE = f"""\
# Erasure requests live here, never in git (its history cannot be erased). The privacy portal appends one row
# per request with status pending; the daily erase workflow runs
#   tablepolicy erase --requests-table privacy.erasure_requests
# then replaces each request's keys, once erased and proven on every table, by the ledger's salted fingerprint
# and expires this table's older snapshots: the request store is erased like the tables it serves.
table: privacy.erasure_requests
description: Erasure requests (id, received, deadline, keys, status); keys emptied once erased and proven
owner: privacy
columns:
{POLICY_COLUMNS}write_modes: {{delete: copy-on-write, update: copy-on-write, merge: copy-on-write}}
lifecycle:
  snapshots: {{max_age: 1d, min_keep: 1}}
  orphan_files: {{older_than: 3d}}
"""

_MAJOR, _MINOR = (int(part) for part in __version__.split(".")[:2])
RULES = f"""\
# The tablepolicy versions this repository accepts: every command refuses another one (TP009). Raise it in a
# reviewed pull request together with the workflows' install line.
required_version: ">={__version__}, <{_MAJOR}.{_MINOR + 1}"
""" + """\
# Org rules every table keeps; `tablepolicy validate` reports each break with its TG code.
rules:
  owner_required: true
  pii_requires_erasure: true
  snapshots_max_age: {max: 7d}
  orphan_older_than: {min: 3d}
  erasure_within: {max: 30d}
  table_name: "^[a-z][a-z0-9_]*$"
  column_name: "^[a-z][a-z0-9_]*$"
  no_weakening: true
"""

ENVIRONMENT = """\
# Production's values over the policies: `tablepolicy plan --env prod` targets catalog prod and lists every
# value below with its file and line (the table files stay the same for every environment). Add
# environments/dev.yaml beside it for another environment. An overlay sets values, never tables or columns.
catalog: prod
defaults:
  lifecycle:
    snapshots: {max_age: 7d}  # a week of time travel
tables:
  analytics.page_views:
    lifecycle:
      retention: {keep: 400d}
"""

CATALOG = """\
# pyiceberg's catalog configuration; tablepolicy derives Spark's from it. Keep secrets out of git:
# in CI they come from PYICEBERG_CATALOG__PROD__URI (see .github/workflows). Locally, copy this file
# to .pyiceberg.yaml and fill it in, or leave it absent to use the embedded catalog under .lake/.
catalog:
  prod:
    type: sql
    uri: postgresql+psycopg2://USER:PASSWORD@HOST:5432/iceberg_catalog
    warehouse: s3://BUCKET/warehouse
"""

PRE_COMMIT = """\
repos:
  - repo: local
    hooks:
      - id: tablepolicy-validate
        name: tablepolicy validate
        entry: tablepolicy validate policies/
        language: system
        pass_filenames: false
        files: ^(policies|environments)/
      - id: tablepolicy-fmt
        name: tablepolicy fmt --check
        entry: tablepolicy fmt --check policies/
        language: system
        pass_filenames: false
        files: ^policies/
      - id: tablepolicy-no-requests-in-git
        name: no erasure requests in git (TP619)
        entry: tablepolicy validate policies/
        language: system
        pass_filenames: false
        files: \\.(ya?ml|csv|jsonl|ndjson)$
"""

# Workflows pin each action by commit SHA (its release in a comment); Dependabot proposes the next release's SHA.
DEPENDABOT = """\
version: 2
updates:
  - package-ecosystem: github-actions
    directory: /
    schedule:
      interval: weekly
"""

GITIGNORE = ".lake/\n.tablepolicy/\n.pyiceberg.yaml\nplan.json\nplan.md\n*.journal\n"


# What workflows scaffolded by releases before one import root ran: the modules now live under tablepolicy.
RETIRED_CALLS = ("python -m runtime.github", "python -m runtime.", "python -m compiler.")


def retired_calls(root: Path) -> list[str]:
    """Each line of the repository's workflows that still runs a module tablepolicy no longer installs, as
    ``file:line: what to change``."""
    found = []
    folder = root / ".github" / "workflows"
    for file in sorted(folder.glob("*.y*ml")) if folder.is_dir() else ():
        try:
            lines = file.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for number, line in enumerate(lines, 1):
            if "tablepolicy erase" in line and re.search(r"(--requests|-r)[ =](?![\"']?[-/$~])\S", line):
                found.append(f"{file.relative_to(root)}:{number}: erase reads a requests file of the repository: its "
                             "key values are in git history, which no erasure reaches; read the request table "
                             "instead (--requests-table privacy.erasure_requests; init --force rewrites this "
                             "workflow), then purge the file: git filter-repo --path FILE --invert-paths")
                continue
            call = next((c for c in RETIRED_CALLS if c in line), None)
            if call is None:
                continue
            module = line[line.index(call) + len("python -m "):].split()[0]
            now = "tablepolicy github" if module == "runtime.github" else f"python -m tablepolicy.{module}"
            found.append(f"{file.relative_to(root)}:{number}: runs `python -m {module}`, which tablepolicy no longer "
                         f"installs (everything lives under the tablepolicy package); change it to `{now}` with "
                         "the same arguments")
    return found


@dataclass(frozen=True)
class Outcome:
    path: Path
    action: str  # "wrote", "replaced", "unchanged", "added lines to", "kept"
    note: str = ""  # why a file was kept, and what to do


@dataclass(frozen=True)
class Scaffold:
    """What init writes into ``root``. Its own files (the workflows, the editor schema, the example catalog
    configuration, the wheel) are refused when they exist with other content, and replaced with ``force``. The
    examples (policies/, environments/prod.yaml) are written only into a repository without policies. Files a
    repository may already have for its own reasons are never replaced: ``.gitignore`` gets the missing lines,
    ``.pre-commit-config.yaml`` and ``.github/dependabot.yml`` are written only when absent."""

    root: Path
    spec: str
    wheel: Wheel | None = None

    def own(self) -> dict[Path, str | bytes]:
        files: dict[Path, str | bytes] = {
            self.root / ".github" / "workflows" / name: workflow(name, self.spec) for name in WORKFLOWS
        }
        files[self.root / SCHEMA_FILE] = policy_json_schema_text()
        files[self.root / ".pyiceberg.example.yaml"] = CATALOG
        if self.wheel is not None:
            files[self.root / self.wheel.path] = self.wheel.data
        return files

    def examples(self) -> dict[Path, str]:
        policies = self.root / "policies"
        files = {}
        for path, text in ((policies / "_rules.yaml", RULES), (policies / "analytics" / "_namespace.yaml",
                           EXAMPLE_NAMESPACE), (policies / "analytics" / "page_views.yaml", EXAMPLE_TABLE),
                           (policies / "privacy" / "erasure_requests.yaml", REQUEST_TABLE)):
            files[path] = schema_header(path, self.root) + text if path.name != "_rules.yaml" else text
        files[self.root / "environments" / "prod.yaml"] = ENVIRONMENT
        return files

    def shared(self) -> dict[Path, str]:
        return {self.root / ".pre-commit-config.yaml": PRE_COMMIT, self.root / ".github" / "dependabot.yml": DEPENDABOT}

    def files(self) -> dict[Path, str | bytes]:
        """Everything init writes into an empty folder."""
        return {**self.own(), **self.examples(), **self.shared(), self.root / ".gitignore": GITIGNORE}

    def write(self, *, force: bool = False) -> list[Outcome]:
        """Write the files; refuse (writing nothing) when one of init's own files exists with other content, unless
        ``force``. ``spec`` is checked by source.install_line before."""
        own = self.own()
        conflicts = sorted(str(p.relative_to(self.root)) for p, data in own.items() if p.exists()
                           and _read(p) != _bytes(data))
        if conflicts and not force:
            stale = "".join(f"\n  {line}" for line in retired_calls(self.root))
            raise ScaffoldError(f"{self.root} already has {', '.join(conflicts)} with other content; nothing was "
                                f"written (pass --force to replace these files of tablepolicy's; no other file is "
                                f"ever replaced){stale}")
        outcomes = []
        for path, data in sorted(own.items()):
            if path.exists() and _read(path) == _bytes(data):
                outcomes.append(Outcome(path, "unchanged"))
                continue
            outcomes.append(Outcome(path, "replaced" if path.exists() else "wrote"))
            _write(path, data)
        if (self.root / "policies").exists():
            outcomes.append(Outcome(self.root / "policies", "kept", "the repository has policies: no example "
                                    "table, rules or environment written"))
        else:
            for path, text in sorted(self.examples().items()):
                if path.exists():
                    outcomes.append(Outcome(path, "kept", "it exists"))
                else:
                    outcomes.append(Outcome(path, "wrote"))
                    _write(path, text)
        for path, text in sorted(self.shared().items()):
            if not path.exists():
                outcomes.append(Outcome(path, "wrote"))
                _write(path, text)
            elif _read(path) == _bytes(text):
                outcomes.append(Outcome(path, "unchanged"))
            else:
                outcomes.append(Outcome(path, "kept", f"it is yours; merge in what tablepolicy's would add:\n{text}"))
        outcomes.append(self._gitignore())
        (self.root / CACHES).mkdir(exist_ok=True)  # its presence turns the plan and model caches on (gitignored)
        return outcomes

    def _gitignore(self) -> Outcome:
        path = self.root / ".gitignore"
        if not path.exists():
            _write(path, GITIGNORE)
            return Outcome(path, "wrote")
        text = path.read_text(encoding="utf-8", errors="surrogateescape")
        present = {line.strip() for line in text.splitlines()}
        missing = [line for line in GITIGNORE.splitlines() if line not in present and line.rstrip("/") not in present]
        if not missing:
            return Outcome(path, "unchanged")
        separator = "" if not text or text.endswith("\n") else "\n"
        addition = f"{separator}# tablepolicy: the embedded catalog, caches, local catalog settings, plans\n"
        path.write_text(text + addition + "".join(f"{line}\n" for line in missing), encoding="utf-8",
                        errors="surrogateescape")
        return Outcome(path, "added lines to")


def _bytes(data: str | bytes) -> bytes:
    return data.encode("utf-8") if isinstance(data, str) else data


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _write(path: Path, data: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(_bytes(data))
