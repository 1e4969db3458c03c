"""The S3 lock store's own pieces without a server (the protocol runs against SeaweedFS in
tests/integration/test_rest_locks.py): its SigV4 signature equals botocore's for the same request, path-style and
virtual-host, with and without a session token; the lock location and keys are read from the catalog definition,
and a location that is no S3 URI, or no keys, is refused naming the setting."""

from __future__ import annotations

import datetime as dt

import pytest
from botocore.auth import S3SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

from tablepolicy.runtime.lock.objects import LOCK_LOCATION, S3Settings, sign

KEYS = {"s3.access-key-id": "AKIDEXAMPLE", "s3.secret-access-key": "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"}
NOW = dt.datetime(2026, 11, 28, 7, 30, 5, tzinfo=dt.UTC)


@pytest.mark.parametrize(("props", "method", "key", "headers"), [
    ({**KEYS, "s3.endpoint": "http://127.0.0.1:8333", "s3.region": "us-east-1"}, "PUT", "runs/lock-shop.orders.json",
     {"If-None-Match": "*"}),
    ({**KEYS, "s3.endpoint": "http://127.0.0.1:8333"}, "DELETE", "lock-a b+c.json", {"If-Match": '"abc"'}),
    ({**KEYS, "s3.region": "eu-west-1", "s3.session-token": "TOKEN"}, "GET", "p/lock-x.json", {}),
], ids=["put-path-style", "delete-quoted-key", "get-virtual-host-token"])
def test_the_signature_is_botocores(props: dict[str, str], method: str, key: str, headers: dict[str, str]) -> None:
    settings = S3Settings.of("s3://locks/p", props)
    url = settings.url(key)
    body = b'{"table": "shop.orders"}' if method == "PUT" else b""
    ours = sign(method, url, headers, body, settings, NOW)
    request = AWSRequest(method=method, url=url, data=body,
                         headers={k: v for k, v in ours.items() if k != "authorization"})
    request.context["timestamp"] = NOW.strftime("%Y%m%dT%H%M%SZ")
    auth = S3SigV4Auth(Credentials(settings.access_key, settings.secret_key, settings.session_token), "s3",
                       settings.region)
    expected = auth.signature(auth.string_to_sign(request, auth.canonical_request(request)), request)
    assert ours["authorization"].endswith(f"Signature={expected}"), (ours, auth.canonical_request(request))


def test_settings_from_the_definition() -> None:
    settings = S3Settings.of("s3://locks/runs/main/", {**KEYS, "s3.endpoint": "http://h:1/", "client.region": "r"})
    assert (settings.bucket, settings.prefix, settings.endpoint, settings.region) == ("locks", "runs/main/",
                                                                                      "http://h:1", "r")
    assert settings.url("runs/main/lock-t.json") == "http://h:1/locks/runs/main/lock-t.json"
    assert S3Settings.of("s3://locks", {**KEYS, "s3.region": "eu-west-1"}).url("lock-t.json") == \
        "https://locks.s3.eu-west-1.amazonaws.com/lock-t.json"


@pytest.mark.parametrize(("location", "props", "message"), [
    ("file:///tmp/locks", KEYS, f"{LOCK_LOCATION} must be an s3://bucket/prefix URI"),
    ("s3://locks/p", {}, "need S3 keys: s3.access-key-id and s3.secret-access-key"),
], ids=["not-s3", "no-keys"])
def test_refused_settings(location: str, props: dict[str, str], message: str, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"):
        monkeypatch.delenv(variable, raising=False)
    with pytest.raises(ValueError, match=message):
        S3Settings.of(location, props)
