"""Credentials never printed, however the catalog URI is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tablepolicy.compiler.catalog.config import CatalogConfig, redact_uri

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
    # pip's git pin: the '@' follows a host and a path, not credentials
    ("git+https://github.com/acme/tablepolicy@" + "a" * 40, "git+https://github.com/acme/tablepolicy@" + "a" * 40),
    ("https://s3cr3t/with/slash@host/x", "https://***@host/x"),  # a token as the user, no dotted host before '/'
    ("https://etl:s3cr3t/x@db.example/lake", "https://etl:***@db.example/lake"),
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


S3_SECRETS = {"s3.access-key-id": "AKIAEXAMPLEKEY", "s3.secret-access-key": "wJalrSecretValue",
              "s3.session-token": "FwoGZXIvYXdzSessionToken", "client.access-key-id": "AKIACLIENTKEY",
              "client.secret-access-key": "clientSecretValue", "client.session-token": "clientSessionToken"}


def test_every_s3_credential_property_is_masked() -> None:
    config = CatalogConfig("prod", {"uri": "sqlite:////l/c.db", "warehouse": "s3://b/wh",
                                    "s3.endpoint": "http://127.0.0.1:9000", **S3_SECRETS})
    shown = config.redacted()
    assert {k: shown[k] for k in S3_SECRETS} == dict.fromkeys(S3_SECRETS, "***")
    assert shown["s3.endpoint"] == "http://127.0.0.1:9000"
    message = "S3A refused " + " and ".join(S3_SECRETS.values())
    assert not any(secret in config.redact(message) for secret in S3_SECRETS.values())
    assert not any(secret in text for secret in S3_SECRETS.values()
                   for text in (config.header(), config.describe(), str(config.summary()), repr(config)))


def test_aws_environment_credentials_are_masked(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from tablepolicy.runtime.catalog.config import resolve_catalog

    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "AKIAENVKEY")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "envSecretValue")
    monkeypatch.setenv("AWS_SESSION_TOKEN", "envSessionToken")
    monkeypatch.setenv("HOME", str(tmp_path))
    for key in [k for k in os.environ if k.startswith(("PYICEBERG_", "TABLEPOLICY_"))]:
        monkeypatch.delenv(key)
    config = resolve_catalog(None, tmp_path / "policies")
    text = config.redact("403 for AKIAENVKEY signed with envSecretValue (token envSessionToken)")
    assert text == "403 for *** signed with *** (token ***)"
    assert "envSecretValue" not in repr(config)
