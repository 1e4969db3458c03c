"""doctor's locks check (runtime/doctor.py locks): where apply, maintain and erase lock tables, and a failed check
when a catalog other runners share would be locked with files in one work tree."""

from __future__ import annotations

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig
from tablepolicy.runtime.doctor import locks

KEYS = {"s3.access-key-id": "AKIA", "s3.secret-access-key": "s3cr3t"}
REST = {"type": "rest", "uri": "http://127.0.0.1:8181", **KEYS}


@pytest.mark.parametrize(("properties", "ok", "detail"), [
    ({"uri": "postgresql+psycopg2://u:p@db/cat"}, True, "PostgreSQL advisory locks"),
    ({"uri": "sqlite:////srv/lake/catalog.db"}, True, "files beside the SQLite database"),
    ({"uri": "mysql+pymysql://u:p@db/cat"}, True, "rows in the catalog's database"),
    (REST, False, "a rest catalog without tablepolicy.lock-location: apply, maintain and erase would lock tables "
                  "with files in this work tree's .tablepolicy/"),
    ({"type": "glue", **KEYS}, False, "a glue catalog without tablepolicy.lock-location"),
    ({"uri": "thrift://metastore:9083", **KEYS}, False, "a hive catalog without tablepolicy.lock-location"),
    ({**REST, "tablepolicy.lock-location": "s3://locks/lake"}, True, "objects under s3://locks/lake"),
    ({**REST, "tablepolicy.lock-location": "/tmp/locks"}, False, "tablepolicy.lock-location must be an s3://"),
], ids=["postgresql", "sqlite", "other sql", "rest", "glue", "hive", "rest with a lock location", "not s3"])
def test_where_the_locks_are_and_whether_every_runner_sees_them(properties: dict[str, str], ok: bool,
                                                                detail: str) -> None:
    check = locks(CatalogConfig("lake", properties))
    assert (check.ok, check.detail.startswith(detail)) == (ok, True), check
    assert ("tablepolicy.lock-location" in check.fix) == (not ok)
    assert "s3cr3t" not in check.detail + check.fix
