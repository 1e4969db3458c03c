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

from tablepolicy.compiler.erasure.request_table import POLICY_COLUMNS
from tablepolicy.compiler.schema import policy_json_schema_text

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
    checkout without resolving anything again."""
    if locked:
        lock = "spark" if spark else "core"
        return (f"pip install --require-hashes --no-deps -r requirements/{lock}.lock"
                f" && pip install --no-deps --no-build-isolation {spec}")
    return f'pip install "{spark_spec(spec) if spark else spec}"'


def workflow(name: str, spec: str, *, locked: bool = False) -> str:
    template = resources.files(__package__).joinpath("workflows", name).read_text(encoding="utf-8")
    return (template.replace("__INSTALL_SPARK__", install_command(spec, spark=True, locked=locked))
            .replace("__INSTALL__", install_command(spec, spark=False, locked=locked)))


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

RULES = """\
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
class Scaffold:
    root: Path
    spec: str

    def files(self) -> dict[Path, str]:
        policies = self.root / "policies"
        files = {
            self.root / ".github" / "workflows" / name: workflow(name, self.spec) for name in WORKFLOWS
        }
        for path, text in ((policies / "_rules.yaml", RULES), (policies / "analytics" / "_namespace.yaml",
                           EXAMPLE_NAMESPACE), (policies / "analytics" / "page_views.yaml", EXAMPLE_TABLE),
                           (policies / "privacy" / "erasure_requests.yaml", REQUEST_TABLE)):
            files[path] = schema_header(path, self.root) + text if path.name != "_rules.yaml" else text
        files[self.root / SCHEMA_FILE] = policy_json_schema_text()
        files[self.root / "environments" / "prod.yaml"] = ENVIRONMENT
        files[self.root / ".pyiceberg.example.yaml"] = CATALOG
        files[self.root / ".pre-commit-config.yaml"] = PRE_COMMIT
        files[self.root / ".github" / "dependabot.yml"] = DEPENDABOT
        files[self.root / ".gitignore"] = GITIGNORE
        return files

    def write(self, *, force: bool = False) -> list[Path]:
        """Write every file; refuse (writing nothing) when any exists, unless ``force``. ``spec`` is checked by
        source.install_line before."""
        files = self.files()
        existing = sorted(str(p.relative_to(self.root)) for p in files if p.exists())
        if existing and not force:
            stale = "".join(f"\n  {line}" for line in retired_calls(self.root))
            raise ScaffoldError(f"{self.root} already has {', '.join(existing)}; nothing was written "
                                f"(pass --force to overwrite them){stale}")
        for path, text in sorted(files.items()):
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        (self.root / CACHES).mkdir(exist_ok=True)  # its presence turns the plan and model caches on (gitignored)
        return sorted(files)
