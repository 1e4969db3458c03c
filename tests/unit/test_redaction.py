"""Credentials never printed, however the catalog URI is written."""

from __future__ import annotations

import pytest

from compiler.catalog.config import CatalogConfig, redact_uri

CASES = [
    ("postgresql://etl:s3cr3t@db:5432/lake", "postgresql://etl:***@db:5432/lake"),
    ("postgresql+psycopg2://etl:s3cr3t@db/lake", "postgresql+psycopg2://etl:***@db/lake"),
    ("postgresql://:s3cr3t@db/lake", "postgresql://:***@db/lake"),
    ("postgresql://etl:s3@cr3t@db/lake", "postgresql://etl:***@db/lake"),
    ("postgresql://etl:s3/cr?3t@db/lake", "postgresql://etl:***@db/lake"),
    ("postgresql://etl:s3cr3t@db/lake?sslmode=require&password=s3cr3t",
     "postgresql://etl:***@db/lake?sslmode=require&password=***"),
    ("postgresql://db/lake?user=etl&password=s3cr3t", "postgresql://db/lake?user=etl&password=***"),
    ("https://rest.example/api?token=s3cr3t&x=1", "https://rest.example/api?token=***&x=1"),
    ("postgresql://etl:s3cr3t@", "postgresql://etl:***@"),
    ("postgresql://etl:s3cr3t@db:notaport/lake", "postgresql://etl:***@db:notaport/lake"),
    ("cannot connect to postgresql://etl:s3cr3t@db/lake: refused", "cannot connect to postgresql://etl:***@db/lake: "
                                                                  "refused"),
    ("sqlite:////tmp/a@b/catalog.db", "sqlite:////tmp/a@b/catalog.db"),
    ("postgresql://etl@db/lake", "postgresql://etl@db/lake"),
    ("thrift://metastore:9083", "thrift://metastore:9083"),
]


@pytest.mark.parametrize(("uri", "shown"), CASES, ids=[c[0] for c in CASES])
def test_uri_credentials_are_masked(uri: str, shown: str) -> None:
    assert redact_uri(uri) == shown
    assert "s3cr3t" not in CatalogConfig("prod", {"uri": uri}).header()


@pytest.mark.parametrize("text", ["error near 's3cr3t'", "password s3%40cr3t rejected", "token=s3cr3t"])
def test_configured_secrets_are_masked_in_any_message(text: str) -> None:
    config = CatalogConfig("prod", {"uri": "postgresql://etl:s3%40cr3t@db/lake", "token": "s3cr3t"})
    assert "s3cr3t" not in config.redact(text) and "s3%40cr3t" not in config.redact(text)
    assert config.redacted()["token"] == "***"
