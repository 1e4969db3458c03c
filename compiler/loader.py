"""Policy files -> validated models, with every problem of every file collected at once."""

from __future__ import annotations

import functools
import hashlib
import os
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ValidationError

from . import __version__, codes
from .diagnostics import Diagnostic, Diagnostics, Location, Severity
from .errors import TablePolicyError
from .heap import settled_heap
from .iceberg.names import parse_name
from .modelcache import ModelCache, file_stamp
from .paths import POLICY_SUFFIXES as POLICY_SUFFIXES  # where they were first
from .paths import display_path as display_path
from .paths import policy_files
from .policy.errors import findings_from
from .policy.rules import Rules, RulesFile
from .policy.table import NamespaceDefaults, TablePolicy
from .policy.view import ViewPolicy
from .versions import accepts
from .yamlsource import SourceMap, YamlDocument, parse_yaml

if TYPE_CHECKING:
    from .overlay import LoadedEnvironment



@dataclass(frozen=True)
class LoadedTable:
    """A valid table policy. Restored from the model cache, its model is validated again only when read (and not
    kept: see ``policy``): a warm plan reads just the name and state of the tables whose plans are cached."""

    declared: str  # the table's name as written
    state: Literal["present", "absent"]
    source: SourceMap
    digest: str = ""  # sha256 of the file text: the plan cache's key
    model: TablePolicy | None = None
    packed_json: bytes | None = None  # the model's JSON as the cache holds it, zlib-compressed, when no ``model``
    plain_json: str | None = None  # or as it is (see ``cached``)

    @classmethod
    def of(cls, policy: TablePolicy, source: SourceMap, digest: str) -> LoadedTable:
        return cls(policy.table, policy.state, source, digest, model=policy)

    @classmethod
    def cached(cls, declared: str, state: Literal["present", "absent"], source: SourceMap, digest: str,
               model_json: str, *, pack: bool = True) -> LoadedTable:
        """``pack``: keep the JSON compressed (a plan of 10,000 tables holds them all to its end); validate, which
        reads none of them, keeps the cache's text as it is."""
        return cls(declared, state, source, digest,
                   packed_json=zlib.compress(model_json.encode(), 1) if pack else None,
                   plain_json=None if pack else model_json)

    @property
    def model_json(self) -> str | None:
        """The model's JSON when it was restored from the cache (None when ``model`` is built)."""
        if self.plain_json is not None:
            return self.plain_json
        return zlib.decompress(self.packed_json).decode() if self.packed_json is not None else None

    @property
    def policy(self) -> TablePolicy:
        """Built from the cached JSON for the few tables last asked, never kept on the table: a plan of 10,000
        tables reads each policy for a moment and would otherwise hold every model to its end."""
        if self.model is not None:
            return self.model
        if self.plain_json is not None:
            return _policy_of_text(self.plain_json)
        assert self.packed_json is not None
        return _policy_of(self.packed_json)

    @cached_property
    def name(self) -> tuple[str, ...]:
        return parse_name(self.declared)


@functools.lru_cache(maxsize=64)
def _policy_of(packed_json: bytes) -> TablePolicy:
    return TablePolicy.model_validate_json(zlib.decompress(packed_json))


@functools.lru_cache(maxsize=64)
def _policy_of_text(model_json: str) -> TablePolicy:
    return TablePolicy.model_validate_json(model_json)


@dataclass(frozen=True)
class LoadedNamespace:
    defaults: NamespaceDefaults
    source: SourceMap
    digest: str = ""

    @property
    def name(self) -> tuple[str, ...]:
        return parse_name(self.defaults.namespace)


@dataclass(frozen=True)
class LoadedView:
    """A valid view policy (``view:``); never restored from the model cache: views are few and small."""

    policy: ViewPolicy
    source: SourceMap

    @property
    def declared(self) -> str:
        return self.policy.view

    @property
    def state(self) -> Literal["present", "absent"]:
        return self.policy.state

    @cached_property
    def name(self) -> tuple[str, ...]:
        return parse_name(self.policy.view)


@dataclass(frozen=True)
class LoadedRules:
    """An org rules file (``_rules.yaml``): checked against every table by tablepolicy.compiler.guardrails."""

    rules: Rules
    source: SourceMap


@dataclass
class Project:
    """Everything declared under one policies directory."""

    root: Path
    tables: list[LoadedTable] = field(default_factory=list)
    namespaces: list[LoadedNamespace] = field(default_factory=list)
    rules: list[LoadedRules] = field(default_factory=list)
    views: list[LoadedView] = field(default_factory=list)
    environment: LoadedEnvironment | None = None  # the overlay selected with --env: the strongest layer


def discover(path: Path) -> list[Path]:
    """Policy files under ``path`` (or ``path`` itself), in a stable order; ``.YAML`` counts as ``.yaml``."""
    if path.is_file():
        return [path]
    return [Path(file) for file in policy_files(str(path))]


@dataclass(frozen=True)
class PolicyText:
    """A policy file's text, or, when the model cache's file index vouches for its content (``known_digest``), the
    means to read it: a warm run of a large project reads only the files that changed (and any a finding quotes)."""

    file: str  # as displayed in findings
    content: str | None  # None: not read; ``text`` reads it, checked against ``known_digest``
    path: Path | None = None  # the file it was read from, read again when a position is asked (see SourceMap)
    known_digest: str | None = None
    index: ModelCache | None = field(default=None, compare=False)  # the file index that vouched for it

    @cached_property
    def text(self) -> str:
        if self.content is not None:
            return self.content
        assert self.path is not None and self.known_digest is not None
        return read_again(self.path, self.file, self.known_digest, self.index)

    @cached_property
    def digest(self) -> str:
        return self.known_digest or hashlib.sha256(self.text.encode()).hexdigest()


def read_sources(path: Path, cache: ModelCache | None = None,
                 files: list[Path] | None = None) -> tuple[list[PolicyText], Diagnostics]:
    """The text of every policy file under ``path``; unreadable files, and a path with none, become findings.
    ``cache``: its file index names the content of files unchanged since it was written (see ``file_stamp``), which
    are then not read when the cache has their model; ``files``: ``discover(path)`` when the caller has it."""
    diagnostics = Diagnostics()
    if not path.exists():
        diagnostics.error(codes.TP000, Location(display_path(path)), "no such file or directory",
                          "give the policies folder, a subfolder or one policy file")
        return [], diagnostics
    files = discover(path) if files is None else files
    if not files:
        diagnostics.error(codes.TP006, Location(display_path(path)), "no policy files (*.yaml, *.yml) in this folder",
                          "give the folder that holds the policy files, e.g. policies/")
    sources = []
    shown = _display_under(path)
    for file in files:
        absolute = file.absolute()
        try:
            stamp = file_stamp(os.stat(absolute))
            known = cache.known_digest(str(absolute), stamp) if cache is not None else None
            if known is not None and cache is not None and cache.model(known) is not None:
                sources.append(PolicyText(shown(file), None, absolute, known, cache))
                continue
            data = file.read_bytes()
        except OSError as exc:
            diagnostics.error(codes.TP007, Location(display_path(file)),
                              f"cannot read policy file: {exc.strerror or exc}",
                              "check that it is a regular file this user may read")
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as exc:
            diagnostics.add(not_utf8(display_path(file), data, exc))
            continue
        read = PolicyText(shown(file), text, absolute)
        if cache is not None:
            cache.note_file(str(absolute), stamp, read.digest)
        sources.append(read)
    return sources, diagnostics


def _display_under(folder: Path) -> Callable[[Path], str]:
    """``display_path`` for the files under ``folder``, by joining names to the folder's display path (one relpath
    instead of one per file; the same result unless the working directory lies inside ``folder``)."""
    base, prefix = str(folder), display_path(folder)
    if folder.is_file() or all(part == os.pardir for part in prefix.split(os.sep)):
        return display_path

    def shown(file: Path) -> str:
        text = str(file)
        if not text.startswith(base.rstrip(os.sep) + os.sep):
            return display_path(file)
        rest = text[len(base.rstrip(os.sep)) + 1:]
        return rest if prefix == os.curdir else os.path.join(prefix, rest)

    return shown


def not_utf8(file: str, data: bytes, exc: UnicodeDecodeError) -> Diagnostic:
    """Where the first byte that is not UTF-8 sits (line and column of the text before it)."""
    before = data[: exc.start].decode("utf-8")
    line = before.count("\n") + 1
    col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
    utf16 = data[:2] in (b"\xff\xfe", b"\xfe\xff")
    return Diagnostic(
        codes.TP008, Severity.ERROR, Location(file, line, col),
        f"not UTF-8: byte 0x{data[exc.start]:02x} at offset {exc.start} cannot be decoded",
        "the file is UTF-16: save it as UTF-8" if utf16 else "save the file as UTF-8",
    )


def project_root(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def load_project(path: Path, cache: ModelCache | None = None) -> tuple[Project, Diagnostics]:
    """Parse and validate every policy file; never raises on bad input."""
    sources, diagnostics = read_sources(path)
    project = load_sources(sources, project_root(path), diagnostics, cache)
    return project, diagnostics


def load_sources(
    sources: list[PolicyText], root: Path, diagnostics: Diagnostics, cache: ModelCache | None = None
) -> Project:
    project = Project(root=root)
    with settled_heap() as settle:
        for source in sources:
            reread = functools.partial(read_again, source.path, source.file, source.digest,
                                       source.index) if source.path else None
            text = source.content if reread is not None else source.text  # not read when the model cache has it
            load_text(text, source.file, project, diagnostics, cache, source.digest, reread)
            settle()  # the models kept live as long as the project
    return project


def read_again(path: Path, file: str, digest: str, index: ModelCache | None = None) -> str:
    """The text of a policy file read earlier in this run, for positions: the same text, or an error (a position
    in a file edited meanwhile would point at the wrong line). ``index``: the model cache whose file index vouched
    for the text instead of it being read; when the file was rewritten keeping its stat, the entry is dropped (and
    the index saved), so that the next run reads the file."""
    try:
        text = path.read_bytes().decode("utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    if text is not None and hashlib.sha256(text.encode()).hexdigest() == digest:
        return text
    entry = index.files.get(str(path)) if index is not None else None
    try:
        kept = entry is not None and file_stamp(os.stat(path)) == entry[:-1]
    except OSError:
        kept = False
    if index is not None and kept:
        index.forget_file(str(path))
        try:
            index.save()
            again = "run the command again (it will read the file)"
        except TablePolicyError as exc:  # the model cache's, which could not be saved
            again = f"touch it and run the command again ({exc})"
        raise TablePolicyError(f"{file} was rewritten keeping its size and modification time, so tablepolicy took "
                               f"it for the text it read on an earlier run; {again}")
    raise TablePolicyError(f"{file} changed while tablepolicy was reading the policies; run the command again")


def load_text(
    text: str | None, file: str, project: Project, diagnostics: Diagnostics, cache: ModelCache | None = None,
    digest: str | None = None, reread: Callable[[], str] | None = None,
) -> None:
    """Validate one document and add it to ``project`` (or add findings to ``diagnostics``); ``digest``:
    the text's sha256 when the caller has it; ``reread``: how to read the text again for positions (the text is
    then not kept), and the text itself when ``text`` is None and the model cache does not have it."""
    if digest is None:
        assert text is not None, "a text not read comes with its digest"
        digest = hashlib.sha256(text.encode()).hexdigest()
    cached = cache.model(digest) if cache is not None else None
    source = SourceMap(file, text=text, digest=digest) if reread is None else SourceMap(file, reread=reread,
                                                                                        digest=digest)
    if cached is not None:
        if cached["kind"] == "table":
            project.tables.append(LoadedTable.cached(cached["table"], cached["state"], source, digest,
                                                     cached["data"], pack=cache is None or cache.pack_models))
        else:
            project.namespaces.append(
                LoadedNamespace(NamespaceDefaults.model_validate_json(cached["data"]), source, digest))
        return
    if text is None:
        assert reread is not None, "a text not read comes with the means to read it"
        text = reread()
    parsed = parse_yaml(text, file)
    if isinstance(parsed, Diagnostic):
        diagnostics.add(parsed)
        return
    kind = _document_kind(parsed)
    if kind is None:
        diagnostics.add(
            Diagnostic(
                codes.TP003,
                Severity.ERROR,
                Location(file, 1, 1),
                "a policy file is a mapping with a 'table:' key (a table), a 'view:' key (a view), a 'namespace:' "
                "key (defaults) or a 'rules:' key (org rules)",
                "start the file with 'table: namespace.name'",
            )
        )
        return
    model = _validate(kind, parsed, diagnostics)
    if isinstance(model, TablePolicy | NamespaceDefaults) and cache is not None:
        cache.put_model(digest, model)
    source.root = parsed.source.root  # kept while the checks ask for positions; validate lets it go after them
    parsed.source = source
    if isinstance(model, RulesFile):
        project.rules.append(LoadedRules(model.rules, parsed.source))
        if model.required_version is not None and not accepts(model.required_version, __version__):
            diagnostics.add(Diagnostic(
                codes.TP009, Severity.ERROR, parsed.source.value(("required_version",)),
                f"this repository requires tablepolicy {model.required_version}; the installed tablepolicy is "
                f"{__version__}",
                "install a version it accepts (the workflows' install line names the one CI runs), or change "
                "required_version in a reviewed pull request"))
    elif isinstance(model, TablePolicy):
        project.tables.append(LoadedTable.of(model, parsed.source, digest))
    elif isinstance(model, NamespaceDefaults):
        project.namespaces.append(LoadedNamespace(model, parsed.source, digest))
    elif isinstance(model, ViewPolicy):
        project.views.append(LoadedView(model, parsed.source))


def _document_kind(doc: YamlDocument) -> type[BaseModel] | None:
    if not isinstance(doc.data, dict):
        return None
    if "table" in doc.data:
        return TablePolicy
    if "view" in doc.data:
        return ViewPolicy
    if "namespace" in doc.data:
        return NamespaceDefaults
    if "rules" in doc.data:
        return RulesFile
    return None


def _validate(kind: type[BaseModel], doc: YamlDocument, diagnostics: Diagnostics) -> BaseModel | None:
    try:
        return kind.model_validate(doc.data)
    except ValidationError as exc:
        diagnostics.extend(findings_from(exc, kind, doc.data, doc.source))
        return None
