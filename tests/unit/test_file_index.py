"""The model cache's file index: a warm run reads only the policy files whose size or mtime changed (as Git's index
does), never trusts a file changed within the clock's reach of the index being written, and changes no finding."""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import tablepolicy.compiler.loader as loader_module
import tablepolicy.compiler.validate as validate_module
import tablepolicy.runtime.caches.models as models_module
from tablepolicy.compiler.errors import TablePolicyError
from tablepolicy.compiler.validate import validate
from tablepolicy.compiler.yamlsource import _TREES
from tablepolicy.runtime.caches.models import FILE_INDEX, FileModelCache
from tests.cli_runner import Run, tablepolicy

ROOT = Path(__file__).resolve().parents[2]
HOUR_AGO_NS = 3600 * 10**9


def project(tmp_path: Path) -> tuple[Path, Path]:
    policies = shutil.copytree(ROOT / "policies", tmp_path / "policies")
    for file in policies.rglob("*.yaml"):
        age(file)
    return policies, tmp_path / ".tablepolicy" / "models.tsv"


def age(file: Path, mtime_ns: int | None = None) -> None:
    """As if last edited an hour before now (the index is written now): its entry is then trusted."""
    stamp = mtime_ns if mtime_ns is not None else file.stat().st_mtime_ns - HOUR_AGO_NS
    os.utime(file, ns=(stamp, stamp))


def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The table files read from now on (a namespace defaults file is read again each run for its checks'
    positions: those are not cached, the files are few)."""
    read: list[str] = []
    original = Path.read_bytes

    def counted(self: Path) -> bytes:
        if self.name != "_namespace.yaml":
            read.append(self.name)
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", counted)
    return read


def test_a_warm_run_reads_only_the_file_that_changed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    policies, cache_file = project(tmp_path)
    cold, cold_findings = validate(policies, FileModelCache.open(cache_file))
    assert (cache_file.parent / FILE_INDEX).is_file()
    read = reads(monkeypatch)
    warm, warm_findings = validate(policies, FileModelCache.open(cache_file))
    assert read == []
    assert [t.name for t in warm.tables] == [t.name for t in cold.tables]
    assert [d.render() for d in warm_findings] == [d.render() for d in cold_findings]

    edited = next(policies.rglob("click_log.yaml"))
    edited.write_text(edited.read_text().replace("table: ads.click_log", "table: ads.click_log_v2"))
    changed, _ = validate(policies, FileModelCache.open(cache_file))
    assert read == ["click_log.yaml"]
    assert ("ads", "click_log_v2") in [t.name for t in changed.tables]


def test_an_unchanged_stat_is_taken_at_its_word_only_when_old_enough(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A file rewritten in place with its size and mtime set back is read again (its ctime moved). Where the ctime
    does not tell, it passes as unchanged once its entry is trusted (Git's rule); rewritten within RACY_NS of the
    run that wrote the index, it is read again."""
    policies, cache_file = project(tmp_path)
    file = next(policies.rglob("click_log.yaml"))
    text = file.read_text()
    renamed = text.replace("table: ads.click_log", "table: ads.click_lug")
    assert len(renamed) == len(text)

    def rewritten_keeping_mtime() -> list[tuple[str, ...]]:
        """The tables a warm run sees after the file is rewritten with its mtime set back."""
        validate(policies, FileModelCache.open(cache_file))
        stamp = file.stat().st_mtime_ns
        file.write_text(renamed)
        age(file, stamp)
        return [t.name for t in validate(policies, FileModelCache.open(cache_file))[0].tables]

    assert ("ads", "click_lug") in rewritten_keeping_mtime()  # read again: its ctime moved

    without_ctime(monkeypatch)
    file.write_text(text)
    age(file)
    assert ("ads", "click_log") in rewritten_keeping_mtime()  # trusted: nothing in its stat tells

    now = (cache_file.parent / FILE_INDEX).stat().st_mtime_ns
    file.write_text(text)
    age(file, now)  # edited in the same instant the index was written: racy, never trusted
    validate(policies, FileModelCache.open(cache_file))
    file.write_text(renamed)
    age(file, now)
    racy, _ = validate(policies, FileModelCache.open(cache_file))
    assert ("ads", "click_lug") in [t.name for t in racy.tables]


@pytest.mark.parametrize("damage", ["{not json", '{"version": 1, "files": {"/x": [1, 2]}}', "[" * 50_000])
def test_a_damaged_file_index_is_started_over(tmp_path: Path, damage: str, monkeypatch: pytest.MonkeyPatch) -> None:
    policies, cache_file = project(tmp_path)
    _, cold_findings = validate(policies, FileModelCache.open(cache_file))
    (cache_file.parent / FILE_INDEX).write_text(damage)
    read = reads(monkeypatch)
    _, findings = validate(policies, FileModelCache.open(cache_file))
    assert sorted(read) == sorted(p.name for p in policies.rglob("*.yaml") if p.name != "_namespace.yaml")
    assert [d.render() for d in findings] == [d.render() for d in cold_findings]


# Warm against cold: the project (with a namespace warning, whose position is read from its file on every run) is
# validated once with the cache (which writes the file index), changed, then validated warm; the findings and the
# models, as text, must be those of a run without any cache.

WARNED = ("orphan_files: {older_than: 3d}", "orphan_files: {older_than: 2d}")  # TP422 in logs/_namespace.yaml
SPACED = """table: "`ads`.`click log ü`"
columns:
  - {name: "a\\tb", type: string}
  - {name: dt, type: date}
"""
TAB_IN_NAME = 'table: "ads.`a\\tb`"\ncolumns:\n  - {name: dt, type: date}\n'
BROKEN = "table: ads.broken\ncolumns:\n  - {name: dt, type: nope}\n"
VIEW = "view: ads.clicks_by_user\nsql: SELECT user_id, count(*) AS clicks FROM ads.click_log GROUP BY user_id\n"
RULES = "rules:\n  ignore_unmanaged: ['ads.*_tmp']\n"


def view_and_rules(policies: Path, _: pytest.MonkeyPatch) -> None:
    (policies / "ads" / "clicks_by_user.yaml").write_text(VIEW)
    (policies / "_rules.yaml").write_text(RULES)


def warned_project(tmp_path: Path) -> tuple[Path, Path]:
    policies, cache_file = project(tmp_path)
    defaults = policies / "logs" / "_namespace.yaml"
    stamp = defaults.stat().st_mtime_ns
    defaults.write_text(defaults.read_text().replace(*WARNED))
    age(defaults, stamp)
    return policies, cache_file


def answer(policies: Path, cache: FileModelCache | None) -> list[str]:
    """The findings and every table's model, as text."""
    _TREES.clear()  # positions as a new process finds them (this one may hold an earlier run's tree)
    loaded, findings = validate(policies, cache)
    return [d.render() for d in findings] + [f"{t.source.file}: {t.declared} {t.state} {t.policy.model_dump_json()}"
                                             for t in loaded.tables]


def without_ctime(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on a file system whose ctime did not move (coarse timestamps, or a backup restored with its times): only
    size, mtime, inode and mode tell a rewrite, and the racy rule and the checked re-read are what is left."""
    real = loader_module.file_stamp

    def stamp(seen: os.stat_result) -> list[int]:
        size, mtime, _, inode, mode = real(seen)
        return [size, mtime, 0, inode, mode]

    monkeypatch.setattr(loader_module, "file_stamp", stamp)


def write_keeping_stat(file: Path, data: bytes) -> None:
    """``data`` over ``file`` in place, its size and mtime as they were (the inode too)."""
    stamp, size = file.stat().st_mtime_ns, file.stat().st_size
    assert len(data) == size, "the same size, or the stat changes anyway"
    file.write_bytes(data)
    age(file, stamp)


def replace_keeping_stat(file: Path, text: str) -> None:
    """A new file of the same size and mtime renamed over ``file`` (what ``mv`` or an editor's save does)."""
    stamp = file.stat().st_mtime_ns
    new = file.with_name("new.tmp")
    new.write_text(text)
    age(new, stamp)
    os.replace(new, file)


def click_lug(text: str) -> str:
    return text.replace("table: ads.click_log", "table: ads.click_lug")


def point_elsewhere(policies: Path, _: pytest.MonkeyPatch) -> None:
    """click_log.yaml a symlink, first to one copy, then (run between) to another of the same size and mtime."""
    file = next(policies.rglob("click_log.yaml"))
    text, stamp = file.read_text(), file.stat().st_mtime_ns
    for name, body in (("v1.yaml", text), ("v2.yaml", click_lug(text))):
        (policies.parent / name).write_text(body)
        age(policies.parent / name, stamp)
    file.unlink()
    file.symlink_to(policies.parent / "v1.yaml")


def repoint(policies: Path) -> None:
    file = next(policies.rglob("click_log.yaml"))
    file.unlink()
    file.symlink_to(policies.parent / "v2.yaml")


def unreadable(policies: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """chmod 000 (the tests run as root, who reads it anyway: a file without read bits refuses, as for a user)."""
    file = next(policies.rglob("click_log.yaml"))
    file.chmod(0)
    original = Path.read_bytes

    def refusing(self: Path) -> bytes:
        if self.stat().st_mode & 0o444 == 0:
            raise PermissionError(13, "Permission denied", str(self))
        return original(self)

    monkeypatch.setattr(Path, "read_bytes", refusing)


def click_log(policies: Path) -> Path:
    return next(policies.rglob("click_log.yaml"))


Change = Callable[[Path, pytest.MonkeyPatch], object]


def unchanged(policies: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing changed after the first run."""


CHANGES: dict[str, tuple[Change | None, Change]] = {  # before the first run, then before the warm one
    "nothing changed": (None, unchanged),
    "a file deleted": (None, lambda p, m: click_log(p).unlink()),
    "a file replaced by a folder": (None, lambda p, m: (click_log(p).unlink(), click_log_path(p).mkdir())),
    "a file replaced by a broken symlink": (
        None, lambda p, m: (click_log(p).unlink(), click_log_path(p).symlink_to(p / "nowhere.yaml"))),
    "a file made unreadable": (None, unreadable),
    "a file renamed": (None, lambda p, m: click_log(p).rename(p / "ads" / "clicks.yaml")),
    "a file moved to another namespace's folder": (None, lambda p, m: click_log(p).rename(p / "logs" / "c.yaml")),
    "a namespace defaults file moved away": (
        None, lambda p, m: (p / "logs" / "_namespace.yaml").rename(p / "ads" / "_namespace.yaml")),
    "a file replaced by one of the same size and mtime": (
        None, lambda p, m: replace_keeping_stat(click_log(p), click_lug(click_log(p).read_text()))),
    "a symlink pointed at a file of the same size and mtime": (point_elsewhere, lambda p, m: repoint(p)),
    "a file with errors, unchanged": (lambda p, m: (p / "ads" / "broken.yaml").write_text(BROKEN),
                                      unchanged),
    "a file with errors added": (None, lambda p, m: (p / "ads" / "broken.yaml").write_text(BROKEN)),
    "names with spaces, unicode and a column's tab": (lambda p, m: (p / "ads" / "spaced.yaml").write_text(SPACED),
                                                      unchanged),
    "a view and org rules beside": (view_and_rules, unchanged),
    "the table a view reads replaced by one of the same size and mtime": (
        view_and_rules, lambda p, m: replace_keeping_stat(click_log(p), click_lug(click_log(p).read_text()))),
    "a table name with a tab": (lambda p, m: (p / "ads" / "tab.yaml").write_text(TAB_IN_NAME), unchanged),
}


def click_log_path(policies: Path) -> Path:
    return policies / "ads" / "click_log.yaml"


@pytest.mark.parametrize("change", list(CHANGES))
def test_a_warm_run_answers_as_a_cold_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: str) -> None:
    monkeypatch.chdir(tmp_path)
    policies, cache_file = warned_project(tmp_path)
    before, after = CHANGES[change]
    if before is not None:
        before(policies, monkeypatch)
        for file in policies.rglob("*.yaml"):
            if not file.is_symlink():
                age(file)
    first = answer(policies, FileModelCache.open(cache_file))
    after(policies, monkeypatch)
    warm = answer(policies, FileModelCache.open(cache_file))
    assert warm == answer(policies, None)
    assert answer(policies, FileModelCache.open(cache_file)) == warm  # and so does the next one
    assert (warm == first) == (CHANGES[change][1] is unchanged)


def refused(self: Path, *args: Any, **kwargs: Any) -> int:
    raise OSError(30, "Read-only file system", str(self))


AGAIN = {"saved": "run the command again (it will read the file)",
         "read-only": "touch it and run the command again (cannot save the model cache .tablepolicy/files.json: "
                      "Read-only file system; make .tablepolicy/ writable for this user, or remove it to run without "
                      "caches)"}


@pytest.mark.parametrize("cache", list(AGAIN))
def test_a_file_rewritten_keeping_its_stat_is_an_error_once_then_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                     cache: str) -> None:
    """Not UTF-8 any more, same size, old mtime, same inode, and a ctime that did not tell: trusted (as Git trusts
    it without ctime) until a finding's position needs its text; then one error saying so, and the next run reads
    it as a cold run does (the cache's folder read-only: the error says to touch the file)."""
    monkeypatch.chdir(tmp_path)
    without_ctime(monkeypatch)
    policies, cache_file = warned_project(tmp_path)
    answer(policies, FileModelCache.open(cache_file))
    defaults = policies / "logs" / "_namespace.yaml"
    write_keeping_stat(defaults, defaults.read_bytes().replace(b"platform-logs", b"platform-l\xff\xfes"))
    with monkeypatch.context() as patched:
        if cache == "read-only":
            patched.setattr(Path, "write_text", refused)
        with pytest.raises(TablePolicyError) as raised:
            answer(policies, FileModelCache.open(cache_file))
    assert str(raised.value) == (
        "policies/logs/_namespace.yaml was rewritten keeping its size and modification time, so tablepolicy took it "
        f"for the text it read on an earlier run; {AGAIN[cache]}")
    if cache == "read-only":
        defaults.touch()
    cold = answer(policies, None)
    assert cold[0].startswith("policies/logs/_namespace.yaml:4:18: error TP008: not UTF-8")
    assert answer(policies, FileModelCache.open(cache_file)) == cold


def test_a_file_edited_between_its_stat_and_its_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The index vouched for it at the start of the run; edited before a position is read from it: the run stops
    (its positions would point at the wrong lines) and the next one reads the new text."""
    monkeypatch.chdir(tmp_path)
    policies, cache_file = warned_project(tmp_path)
    answer(policies, FileModelCache.open(cache_file))
    defaults = policies / "logs" / "_namespace.yaml"
    original = validate_module.read_sources

    def then_edited(*args: Any, **kwargs: Any) -> Any:
        read = original(*args, **kwargs)
        defaults.write_text("# edited\n" + defaults.read_text())
        return read

    monkeypatch.setattr(validate_module, "read_sources", then_edited)
    with pytest.raises(TablePolicyError) as raised:
        answer(policies, FileModelCache.open(cache_file))
    assert str(raised.value) == ("policies/logs/_namespace.yaml changed while tablepolicy was reading the policies; "
                                 "run the command again")
    monkeypatch.setattr(validate_module, "read_sources", original)
    assert answer(policies, FileModelCache.open(cache_file)) == answer(policies, None)


@pytest.mark.parametrize("cut", [-40, -2, 120])
def test_a_models_file_cut_short_is_started_over(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cut: int) -> None:
    """A line cut short (a copy or a disk that stopped mid-file) would restore a model from half its JSON."""
    monkeypatch.chdir(tmp_path)
    policies, cache_file = warned_project(tmp_path)
    cold = answer(policies, FileModelCache.open(cache_file))
    cache_file.write_bytes(cache_file.read_bytes()[:cut])
    assert answer(policies, FileModelCache.open(cache_file)) == cold


def test_a_run_reading_the_cache_while_another_writes_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each cache file is replaced whole: a run that reads while another is half way through writing (here: between
    the two halves of each file) finds the previous files, complete; so does every run after a writer that died
    there, and the writer leaves no temporary file behind."""
    monkeypatch.chdir(tmp_path)
    policies, cache_file = warned_project(tmp_path)
    cold = answer(policies, FileModelCache.open(cache_file))
    saved = {p.name: p.read_bytes() for p in cache_file.parent.iterdir()}
    click_log(policies).write_text(click_lug(click_log(policies).read_text()))
    expected = answer(policies, None)
    original, seen = Path.write_text, []

    def halting(self: Path, text: str, *args: Any, **kwargs: Any) -> int:
        original(self, text[: len(text) // 2], *args, **kwargs)
        reader = FileModelCache.open(cache_file)
        reader.path = None  # it saves nothing
        seen.append(answer(policies, reader))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", halting)
    with pytest.raises(TablePolicyError) as raised:
        answer(policies, FileModelCache.open(cache_file))
    assert str(raised.value) == ("cannot save the model cache .tablepolicy/models.tsv: No space left on device; make "
                                 ".tablepolicy/ writable for this user, or remove it to run without caches")
    monkeypatch.setattr(Path, "write_text", original)
    assert seen == [expected]
    assert {p.name: p.read_bytes() for p in cache_file.parent.iterdir()} == saved
    assert answer(policies, FileModelCache.open(cache_file)) == expected != cold


# The CLI end to end: the index is written by one spelling of the project and read by another (relative, absolute,
# through a symlinked project folder, a subfolder, one file, from another working folder).
SPELLINGS = [  # (argv, working folder below tmp_path)
    (["validate", "policies"], "proj"),
    (["validate", "{tmp}/proj/policies"], "."),
    (["validate", "link/policies"], "."),
    (["validate", "policies/logs"], "proj"),
    (["validate", "."], "proj/policies/logs"),
    (["validate", "../logs/app_events.yaml"], "proj/policies/ads"),
    (["plan", "policies"], "proj"),
    (["plan", "link/policies/logs"], "."),
    (["plan", "{tmp}/link/policies/ads/click_log.yaml"], "proj/policies/logs"),
]


def cli(tmp_path: Path, argv: list[str], where: str, cache: bool = True) -> Run:
    _TREES.clear()  # as in a new process
    caches, aside = tmp_path / "proj" / ".tablepolicy", tmp_path / "proj" / "aside"
    if not cache:
        caches.rename(aside)
    try:
        return tablepolicy(*(a.format(tmp=tmp_path) for a in argv), cwd=tmp_path / where)
    finally:
        if not cache:
            aside.rename(caches)


@pytest.mark.parametrize(("argv", "where"), SPELLINGS, ids=[f"{' '.join(a)} in {w}" for a, w in SPELLINGS])
def test_the_cli_warm_answers_as_cold_whatever_the_spelling(tmp_path: Path, argv: list[str], where: str) -> None:
    warned_project(tmp_path / "proj")
    (tmp_path / "proj" / ".tablepolicy").mkdir()  # caches on, as tablepolicy init leaves a project
    (tmp_path / "link").symlink_to(tmp_path / "proj")
    for first, place in SPELLINGS[:3]:  # the index written by other spellings
        assert cli(tmp_path, first, place).returncode == 0
    defaults = tmp_path / "proj" / "policies" / "logs" / "_namespace.yaml"
    defaults.write_text(defaults.read_text().replace("older_than: 2d", "older_than: 36h"))
    cold = cli(tmp_path, argv, where, cache=False)
    assert cold.returncode == 0, cold
    assert cli(tmp_path, argv, where) == cold
    assert cli(tmp_path, argv, where) == cold


def test_the_cli_on_a_file_rewritten_keeping_its_stat(tmp_path: Path) -> None:
    policies, cache_file = warned_project(tmp_path)
    cache_file.parent.mkdir()
    for command in ("validate", "plan"):
        assert tablepolicy(command, "policies", cwd=tmp_path).returncode == 0
    defaults = policies / "logs" / "_namespace.yaml"
    write_keeping_stat(defaults, defaults.read_bytes().replace(b"platform-logs", b"platform-l\xff\xfes"))
    _TREES.clear()
    for command in ("validate", "plan"):  # its ctime moved: read again at once, as a cold run reads it
        warm = tablepolicy(command, "policies", cwd=tmp_path)
        assert warm.returncode == 1
        assert warm.stdout + warm.stderr == (
            "policies/logs/_namespace.yaml:4:18: error TP008: not UTF-8: byte 0xff at offset 181 cannot be decoded\n"
            "    hint: save the file as UTF-8\n"
            + ("6 file(s) checked: 1 error(s), 0 warning(s)\n" if command == "validate" else ""))


def test_a_file_rewritten_in_the_tick_it_was_read_during_a_long_run(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved just before the run started, rewritten (same size) in the same clock tick right after the run read it,
    by a run that wrote the index 3 s later: the file is still racy, as its mtime is not older than the run's start
    (the index's own mtime, written after the 2 s margin, would vouch for the text read before the rewrite)."""
    monkeypatch.chdir(tmp_path)
    policies, cache_file = warned_project(tmp_path)
    answer(policies, FileModelCache.open(cache_file))
    file = click_log(policies)
    text = file.read_text()
    file.write_text(text.replace("ads-data", "ads-date"))
    age(file, time.time_ns() + 10**9)  # saved as the run starts (a second ahead: however slow the machine)
    original = validate_module.read_sources

    def then_rewritten(*args: Any, **kwargs: Any) -> Any:
        read = original(*args, **kwargs)
        write_keeping_stat(file, text.replace("ads-data", "ads-dato").encode())
        return read

    monkeypatch.setattr(validate_module, "read_sources", then_rewritten)
    answer(policies, FileModelCache.open(cache_file))
    monkeypatch.setattr(validate_module, "read_sources", original)
    index = cache_file.parent / FILE_INDEX
    later = index.stat().st_mtime_ns + 3 * 10**9
    os.utime(index, ns=(later, later))
    assert answer(policies, FileModelCache.open(cache_file)) == answer(policies, None)


def test_a_file_too_recent_to_trust_is_trusted_once_a_later_run_saw_it(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Saved just before a run (a checkout, then validate), a file is read again by the next run, which saves the
    index again, though nothing in it changed, so that the run after trusts the file."""
    policies, cache_file = project(tmp_path)
    saved = click_log(policies).stat().st_mtime_ns  # an hour ago: the first run started a second after that
    monkeypatch.setattr(models_module.time, "time_ns", lambda: saved + 10**9)
    validate(policies, FileModelCache.open(cache_file))
    monkeypatch.undo()
    read = reads(monkeypatch)
    validate(policies, FileModelCache.open(cache_file))
    assert "click_log.yaml" in read
    again = list(read)
    validate(policies, FileModelCache.open(cache_file))
    assert read == again  # none again


def test_the_index_keeps_only_the_files_a_run_saw(tmp_path: Path) -> None:
    policies, cache_file = project(tmp_path)
    validate(policies, FileModelCache.open(cache_file))
    gone = click_log(policies)
    assert str(gone) in json.loads((cache_file.parent / FILE_INDEX).read_text())["files"]
    gone.rename(tmp_path / "aside.yaml")
    validate(policies, FileModelCache.open(cache_file))
    files = json.loads((cache_file.parent / FILE_INDEX).read_text())["files"]
    assert sorted(files) == sorted(str(p) for p in policies.rglob("*.yaml"))


def test_the_cli_with_a_cache_it_cannot_save(tmp_path: Path) -> None:
    """One line naming the file and what to do, not an internal error (a cold run, without .tablepolicy/, passes)."""
    warned_project(tmp_path)
    (tmp_path / ".tablepolicy" / "models.tsv").mkdir(parents=True)
    assert tablepolicy("validate", "policies", cwd=tmp_path) == Run(1, "", (
        "error: cannot save the model cache .tablepolicy/models.tsv: Is a directory; make .tablepolicy/ writable for "
        "this user, or remove it to run without caches\n"))
    assert os.listdir(tmp_path / ".tablepolicy") == ["models.tsv"]  # no temporary left


@pytest.mark.parametrize("entry", [5, "text", {"a": 1}, [1, 2], [None] * 6, ["1", 2, 3, 4, 5, "d"], None])
def test_a_damaged_entry_vouches_for_nothing(tmp_path: Path, entry: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An entry of another shape or type is not trusted (its file is read again); the others still are."""
    policies, cache_file = project(tmp_path)
    _, cold_findings = validate(policies, FileModelCache.open(cache_file))
    index_file = cache_file.parent / FILE_INDEX
    index = json.loads(index_file.read_text())
    damaged = str(next(policies.rglob("click_log.yaml")).absolute())
    index["files"][damaged] = entry
    index_file.write_text(json.dumps(index))
    read = reads(monkeypatch)
    _, findings = validate(policies, FileModelCache.open(cache_file))
    assert read == ["click_log.yaml"]
    assert [d.render() for d in findings] == [d.render() for d in cold_findings]
