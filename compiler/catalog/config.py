"""Which catalog to talk to, in pyiceberg's conventions, shared by the planner and Spark.

``.pyiceberg.yaml`` and ``PYICEBERG_CATALOG__<NAME>__URI`` / ``__WAREHOUSE`` / ``__TYPE`` define catalogs
by name. A name given by ``--catalog`` or ``TABLEPOLICY_CATALOG`` must be one of them. Only when no
catalog is configured at all is the embedded SQLite catalog (``lake``) used: ``.lake/catalog.db`` and
``.lake/warehouse/`` beside the project's ``policies/``. With catalogs configured and none named,
pyiceberg's default (``default-catalog``, else ``default``) is used, else the only one there is.

The rules and the redaction live here, pure; reading ``.pyiceberg.yaml`` and the environment is IO and lives
in runtime/catalog/config.py, which passes what it read to ``choose_catalog``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

from ..errors import CatalogError
from ..paths import ProjectPath, find_project

EMBEDDED_NAME = "lake"
SECRET_KEYS = re.compile(r"(password|passwd|pwd|secret|token|credential|key|signature|auth)", re.IGNORECASE)
MASK = "***"
# AWS's credential variables: read by S3A and pyarrow when a definition has no keys, masked like its own secrets
AWS_SECRET_VARIABLES = ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN")


class CatalogNotDefinedError(CatalogError):
    """A catalog name no configuration defines: refused before anything is read or created."""


@dataclass(frozen=True)
class CatalogConfig:
    name: str
    properties: dict[str, str] = field(repr=False)
    embedded: bool = False
    # secret values from outside the definition (the AWS_* credential variables; runtime/catalog/config.py)
    outside_secrets: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def kind(self) -> str:
        declared = self.properties.get("type")
        if declared:
            return declared.lower()
        uri = self.properties.get("uri", "")
        if uri.startswith(("http://", "https://")):
            return "rest"
        if uri.startswith("thrift://"):
            return "hive"
        return "sql"

    def redacted(self) -> dict[str, str]:
        """Properties safe to print: secret keys masked, credentials in URIs masked."""
        return {k: (MASK if SECRET_KEYS.search(k) else self.redact(v)) for k, v in self.properties.items()}

    def redact(self, text: str) -> str:
        """Any text with URI credentials and every configured secret value masked."""
        text = redact_uri(text)
        secrets = [s for key, value in sorted(self.properties.items()) for s in _secrets(key, value)]
        secrets += [s for s in self.outside_secrets if len(s) >= 3]
        for secret in sorted(secrets, key=len, reverse=True):  # a secret inside another is masked with it
            text = text.replace(secret, MASK)
        return text

    @property
    def where(self) -> str:
        return self.redacted().get("uri") or self.redacted().get("warehouse") or "no uri"

    def describe(self) -> str:
        return f"catalog '{self.name}' ({self.kind}, {self.where})"

    def header(self) -> str:
        """The first line of every command's output, e.g. ``Catalog: prod (sql, postgresql://etl:***@db/lake)``."""
        return f"Catalog: {self.name} ({self.kind}, {self.where})"

    def summary(self) -> dict[str, str]:
        """The catalog as JSON reports record it (credentials redacted)."""
        return {"name": self.name, "type": self.kind, "uri": self.where}


def _secrets(key: str, value: str) -> list[str]:
    """Secret strings inside one property: the value of a secret key, a URI's password (raw and decoded)."""
    found = [value] if SECRET_KEYS.search(key) and len(value) >= 3 else []
    password = _userinfo_password(value)
    if password and len(password) >= 3:
        found += [password, unquote(password)]
    return found


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://")


def _split_userinfo(rest: str) -> tuple[str, str] | None:
    """(userinfo, after) of what follows ``scheme://``; the userinfo ends at the last ``@`` before the query.

    Passwords may carry unencoded ``@``, ``/``, ``?`` or ``:``: masking too much is safe, too little is not.
    """
    first = rest.find("@")
    if first < 0 or rest.startswith("/"):  # no '@', or no authority at all (sqlite:////path/with@sign)
        return None
    query = rest.find("?", first)
    at = rest.rfind("@", 0, query if query >= 0 else len(rest))
    return rest[:at], rest[at + 1:]


def _is_a_path(userinfo: str) -> bool:
    """What precedes the ``@`` is a host and a path, not credentials: a ``/`` comes before any ``:``, as in
    ``https://github.com/acme/tablepolicy@<commit>`` (pip's git pin): a dotted host name, then ``/``. A password
    with a ``/`` follows a ``:``, and a token written as the user has no dotted host before its ``/``."""
    host, slash, _ = userinfo.partition("/")
    return bool(slash) and re.fullmatch(r"[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+", host) is not None


def _userinfo_password(value: str) -> str | None:
    match = _SCHEME.search(value)
    split = _split_userinfo(value[match.end():]) if match else None
    if split is None or ":" not in split[0]:
        return None
    return split[0].split(":", 1)[1]


_QUERY_SECRET = re.compile(r"([?&;][^=&;#]*(?:password|passwd|pwd|secret|token|credential|key|signature|auth)"
                           r"[^=&;#]*=)[^&;#]*", re.IGNORECASE)


def redact_uri(value: str) -> str:
    """Credentials in any URI inside ``value`` masked, however written.

    >>> redact_uri("postgresql://etl:s3cret@db:5432/lake")
    'postgresql://etl:***@db:5432/lake'
    >>> redact_uri("postgresql://:pw@db/lake?sslpassword=x")
    'postgresql://:***@db/lake?sslpassword=***'
    """
    match = _SCHEME.search(value)
    if match is not None:
        rest = value[match.end():]
        split = _split_userinfo(rest)
        if split is not None and not _is_a_path(split[0]):
            userinfo, after = split
            user, colon, _ = userinfo.partition(":")
            masked = f"{user}:{MASK}" if colon else (userinfo if "@" not in userinfo and "/" not in userinfo else MASK)
            value = f"{value[:match.end()]}{masked}@{after}"
    return _QUERY_SECRET.sub(lambda m: m[1] + MASK, value)


def choose_catalog(
    requested: str | None, flag: str, catalogs: dict[str, dict[str, str]], default: str, policies: ProjectPath
) -> CatalogConfig:
    """The rules, given what was read: ``requested``, the name asked for (None: none), written in ``flag``;
    ``catalogs`` and ``default``, what pyiceberg's configuration defines (runtime/catalog/config.py reads it);
    ``policies``, any path of the project (locates the embedded catalog)."""
    if not catalogs:
        if requested is None or requested == EMBEDDED_NAME:
            return embedded_catalog(policies)
        raise CatalogNotDefinedError(
            f"catalog '{requested}' ({flag}) is not defined: no catalog is configured, only the embedded catalog "
            f"'{EMBEDDED_NAME}' exists; define '{requested}' in .pyiceberg.yaml or with "
            f"PYICEBERG_CATALOG__{requested.upper()}__URI, or drop {flag}")
    defined = ", ".join(catalogs)
    if requested is not None:
        key = requested.lower()  # pyiceberg matches names case-insensitively
        if key not in catalogs:
            raise CatalogNotDefinedError(f"catalog '{requested}' ({flag}) is not defined; defined catalogs: {defined}")
        return checked(CatalogConfig(key, catalogs[key]))
    if default.lower() in catalogs:
        return checked(CatalogConfig(default.lower(), catalogs[default.lower()]))
    if len(catalogs) == 1:
        [(only, props)] = catalogs.items()
        return checked(CatalogConfig(only, props))
    raise CatalogNotDefinedError(f"several catalogs are defined and none is selected; choose one with --catalog or "
                                 f"TABLEPOLICY_CATALOG: {defined}")


def checked(config: CatalogConfig) -> CatalogConfig:
    """Refuse a URI whose password holds an unencoded ``@``: drivers would take part of it for the host name
    (and print it in their errors)."""
    for key, value in sorted(config.properties.items()):
        match = _SCHEME.search(value)
        split = _split_userinfo(value[match.end():]) if match else None
        if split is not None and "@" in split[0]:
            raise CatalogError(f"{config.describe()}: the credentials in its {key} hold an unencoded '@'; write it "
                               "as %40 (URL-encode the user name and password)")
    return config


def embedded_catalog(policies: ProjectPath) -> CatalogConfig:
    root = policies_dir(policies).parent / ".lake"
    return CatalogConfig(
        EMBEDDED_NAME,
        {"type": "sql", "uri": f"sqlite:///{root / 'catalog.db'}", "warehouse": (root / "warehouse").as_uri()},
        embedded=True,
    )


def policies_dir(path: ProjectPath) -> Path:
    """The project's policies folder, for any path inside the project (which need not exist yet)."""
    return find_project(path).policies


def embedded_root(config: CatalogConfig) -> Path | None:
    """The ``.lake`` directory of an embedded catalog (created on first use)."""
    if not config.embedded:
        return None
    return Path(config.properties["uri"].removeprefix("sqlite:///")).parent
