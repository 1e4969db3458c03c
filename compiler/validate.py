"""validate: load, check, and return the project with every finding of every file.

With many files the parsing and checking, which is most of the cost, runs in workers first (the runtime
passes forked processes; the compiler starts none):
each worker fills entries of a model cache (the model's JSON, the table's findings) and the project is
then loaded from that cache in this process, exactly as a warm run loads it. Namespace defaults files
are loaded here first, since every table's checks read them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .checks import check_project, findings_key, table_findings
from .diagnostics import Diagnostics
from .environment import LoadedEnvironment
from .guardrails import check_rules
from .loader import LoadedNamespace, PolicyText, Project, load_sources, load_text, project_root, read_sources
from .modelcache import ModelCache
from .parallel import IN_PROCESS, Workers
from .plan.locate import column_yaml_path
from .readers.check import check_readers

PARALLEL_FROM = 200  # files the cache cannot answer; below this, forking costs more than it saves


def validate(path: Path, cache: ModelCache | None = None, environment: LoadedEnvironment | None = None,
             workers: Workers = IN_PROCESS, files: list[Path] | None = None) -> tuple[Project, Diagnostics]:
    """``environment``: an overlay layered over every table's settings, which are checked with it; ``workers``:
    where files the cache cannot answer may be parsed and checked in parallel; ``files``: the policy files under
    ``path`` when the caller has listed them."""
    sources, diagnostics = read_sources(path, cache, files)
    models = cache if cache is not None else ModelCache.in_memory()
    root = project_root(path)
    _prepare(sources, root, models, environment, workers)
    project = load_sources(sources, root, diagnostics, models)
    project.environment = environment
    diagnostics.extend(check_project(project, models))
    for rules in project.rules:
        diagnostics.extend(check_rules(project, rules))
    diagnostics.extend(check_readers(project, column_yaml_path))
    maps = [*(t.source for t in project.tables), *(n.source for n in project.namespaces),
            *(r.source for r in project.rules), *(v.source for v in project.views)]
    for source in maps:
        source.forget_tree()  # checked: a plan of 10,000 tables must not hold every file's tree
    if cache is not None and not diagnostics.has_errors:
        cache.save()
    return project, diagnostics


@dataclass(frozen=True)
class _Prepared:
    models: dict[str, dict[str, Any]]
    checks: dict[str, list[dict[str, Any]]]


def _prepare(sources: list[PolicyText], root: Path, models: ModelCache, environment: LoadedEnvironment | None,
             workers: Workers) -> None:
    """Parse, validate and check in workers the files the cache cannot answer. Without workers (one core, another
    thread alive in this process, no fork) a large project is prepared the same way, one file after the other: each
    model is then kept as its JSON, as the workers hand it back, instead of every model staying built to the end
    (1.5 GB at 10,000 tables, against 0.2 GB)."""
    misses = [s for s in sources if models.model(s.digest) is None]
    count = workers.count(len(misses), PARALLEL_FROM)
    if not count and len(misses) < PARALLEL_FROM:
        return
    defaults = Project(root=root)
    for source in misses:
        if "namespace" in source.text:  # a defaults file must say so; a table file that mentions it is harmless
            load_text(source.text, source.file, defaults, Diagnostics(), models, source.digest)
    namespaces = defaults.namespaces
    rest = [s for s in misses if models.model(s.digest) is None]

    def prepare(source: PolicyText) -> _Prepared:
        return _parse_and_check(source, root, namespaces, environment)

    for prepared in workers.map(prepare, rest, count) if count else map(prepare, rest):
        models.models.update(prepared.models)
        models.checks.update(prepared.checks)
        models.changed = True


def _parse_and_check(source: PolicyText, root: Path, namespaces: list[LoadedNamespace],
                     environment: LoadedEnvironment | None) -> _Prepared:
    # A defaults file the filter above missed only means its tables' findings are keyed without it: the
    # parent then finds no entry for them and checks those tables itself.
    scratch = Project(root=root, namespaces=list(namespaces), environment=environment)
    entries = ModelCache.in_memory()
    load_text(source.text, source.file, scratch, Diagnostics(), entries, source.digest)
    for table in scratch.tables:
        if table.state == "present":
            entries.put_findings(findings_key(scratch, table), table_findings(scratch, table))
    return _Prepared(entries.models, entries.checks)
