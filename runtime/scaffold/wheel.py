"""The running tool as a wheel: what ``init`` commits into a policy repository when no published or pushed source
is known, so the repository's first pull request installs it on any runner, without an index that serves it.

The wheel is built from the files the running ``tablepolicy`` package is imported from (a checkout's or an
installed distribution's: the same walk) and the distribution's own metadata and entry points. It is
byte-deterministic (sorted entries, a fixed timestamp), so the same code always gives the same sha256, which the
workflows check before they install it.
"""

from __future__ import annotations

import base64
import hashlib
import importlib.util
import io
import os
import zipfile
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from tablepolicy.compiler import __version__

DISTRIBUTION = "tablepolicy"
FOLDER = "wheels"
NAME = f"{DISTRIBUTION}-{__version__}-py3-none-any.whl"
DATA = (".sql.j2", ".properties", ".yml", ".typed")  # pyproject's package-data, beside the modules
EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip records: no build time in the file


class WheelError(Exception):
    """The running tool cannot be written as a wheel; the message says what to do instead."""


@dataclass(frozen=True)
class Wheel:
    name: str
    data: bytes

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    @property
    def path(self) -> str:
        """Where init writes it, relative to the repository: ``wheels/tablepolicy-0.1.0-py3-none-any.whl``."""
        return f"{FOLDER}/{self.name}"


def package_files(package: Path) -> list[tuple[str, Path]]:
    """(name in the wheel, file) for every module and data file of the package: the folders that are packages
    (an ``__init__.py``), as setuptools' ``packages.find`` takes them; symlinked folders (a checkout's compiler/ and
    runtime/) followed; caches left out."""
    found: list[tuple[str, Path]] = []
    for folder, dirs, files in os.walk(package, followlinks=True):
        here = Path(folder)
        dirs[:] = sorted(d for d in dirs if d != "__pycache__" and not d.startswith("."))
        if not _inside_packages(here, package):
            continue
        for file in sorted(files):
            if (file.endswith(".py") and (here / "__init__.py").is_file()) or file.endswith(DATA):
                relative = (here / file).relative_to(package).as_posix()
                found.append((f"{DISTRIBUTION}/{relative}", here / file))
    return sorted(found)


def _inside_packages(folder: Path, package: Path) -> bool:
    """A data folder (workflows/, templates/) belongs to the nearest package above it."""
    return any((parent / "__init__.py").is_file() for parent in (folder, *folder.parents)
               if parent == package or package in parent.parents)


def build_wheel() -> Wheel:
    """The running tool as one wheel, with its distribution's metadata (dependencies, entry points)."""
    try:
        dist = metadata.distribution(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        raise WheelError("tablepolicy runs without its distribution's metadata (not installed with pip), so its "
                         "dependencies are unknown; install it (pip install -e .) or pass --install") from None
    meta = dist.read_text("METADATA") or dist.read_text("PKG-INFO")  # a wheel's install, or a checkout's egg-info
    if meta is None:
        raise WheelError(f"the installed tablepolicy {dist.version} has no METADATA; reinstall it or pass --install")
    info = f"{DISTRIBUTION}-{__version__}.dist-info"
    entries: list[tuple[str, bytes]] = [
        (name, file.read_bytes()) for name, file in package_files(_package())]
    entries.append((f"{info}/METADATA", meta.encode("utf-8")))
    entries.append((f"{info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: tablepolicy init\nRoot-Is-Purelib: true\n"
                                     b"Tag: py3-none-any\n"))
    if (points := dist.read_text("entry_points.txt")) is not None:
        entries.append((f"{info}/entry_points.txt", points.encode("utf-8")))
    record = "".join(f"{name},sha256={_digest(data)},{len(data)}\n" for name, data in entries)
    entries.append((f"{info}/RECORD", (record + f"{info}/RECORD,,\n").encode("utf-8")))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        for name, data in entries:
            item = zipfile.ZipInfo(name, date_time=EPOCH)
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(item, data)
    return Wheel(NAME, buffer.getvalue())


def _package() -> Path:
    """The folder the running ``tablepolicy`` package is imported from (found, not imported: the runtime stands
    below the package's top)."""
    spec = importlib.util.find_spec(DISTRIBUTION)
    if spec is None or spec.origin is None:
        raise WheelError("the running tablepolicy package has no folder to build a wheel from; pass --install")
    return Path(spec.origin).resolve().parent


def _digest(data: bytes) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode("ascii")
