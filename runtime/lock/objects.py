"""Locks as objects in S3 (a REST, Glue or Hive catalog whose definition names ``tablepolicy.lock-location``): what
every runner of the catalog sees, wherever it starts. One object per table, created only if absent
(``If-None-Match: *``, the conditional write Terraform's S3 backend locks with), refreshed by the heartbeat only
while it is still the object this run wrote (``If-Match`` on its ETag), removed only if it is exactly the object
that was judged dead (``DELETE`` with ``If-Match``). A store that answers 412 to a condition did not write.

The requests are signed here (AWS Signature Version 4, path-style when the definition gives an endpoint), with the
catalog's own ``s3.*`` (else ``client.*``) keys, else the AWS_* variables: no SDK is needed at run time.
tests/unit/test_object_locks.py checks the signature against botocore's; tests/integration/test_rest_locks.py runs
the protocol against SeaweedFS.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import hmac
import html
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass

from tablepolicy.compiler.errors import TablePolicyError

from .files import lock_file_name
from .holder import Found, Holder, LockHeldError, Verdict, clear_dead, judge

LOCK_LOCATION = "tablepolicy.lock-location"  # the catalog definition's property: s3://bucket/prefix
TIMEOUT_SECONDS = 10.0


class ObjectStoreError(TablePolicyError):
    """The lock store answered something other than success or a failed condition: the run stops before any work,
    naming the location and the answer."""


@dataclass(frozen=True)
class S3Settings:
    bucket: str
    prefix: str  # "" or "a/b/"
    endpoint: str | None  # path-style endpoint (http://127.0.0.1:8333); None: AWS's virtual-host endpoint
    region: str
    access_key: str
    secret_key: str
    session_token: str | None = None

    @classmethod
    def of(cls, location: str, props: dict[str, str]) -> S3Settings:
        """From ``s3://bucket/prefix`` and the catalog's properties (pyiceberg's names, ``client.*`` as fallback)."""
        parsed = urllib.parse.urlparse(location)
        if parsed.scheme not in ("s3", "s3a", "s3n") or not parsed.netloc:
            raise ValueError(f"{LOCK_LOCATION} must be an s3://bucket/prefix URI, not {location!r}")

        def first(*keys: str) -> str | None:
            return next((props[k] for k in keys if props.get(k)), None)

        access = first("s3.access-key-id", "client.access-key-id") or os.environ.get("AWS_ACCESS_KEY_ID")
        secret = first("s3.secret-access-key", "client.secret-access-key") or os.environ.get("AWS_SECRET_ACCESS_KEY")
        if not access or not secret:
            raise ValueError(f"the locks at {location} need S3 keys: s3.access-key-id and s3.secret-access-key in the "
                             "catalog's definition, or AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY")
        token = first("s3.session-token", "client.session-token") or os.environ.get("AWS_SESSION_TOKEN")
        region = first("s3.region", "client.region") or os.environ.get("AWS_REGION") or "us-east-1"
        prefix = parsed.path.strip("/")
        return cls(parsed.netloc, f"{prefix}/" if prefix else "", (first("s3.endpoint") or "").rstrip("/") or None,
                   region, access, secret, token)

    def url(self, key: str) -> str:
        quoted = urllib.parse.quote(key, safe="/-_.~")
        if self.endpoint:
            return f"{self.endpoint}/{self.bucket}/{quoted}"
        return f"https://{self.bucket}.s3.{self.region}.amazonaws.com/{quoted}"


def _code(body: bytes) -> str:
    """S3's error code in an XML answer (``NoSuchBucket``), else the start of the body."""
    found = re.search(rb"<Code>([^<]+)</Code>", body)
    return found.group(1).decode("utf-8", "replace") if found else body[:100].decode("utf-8", "replace")


def _hmac(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode(), hashlib.sha256).digest()


def sign(method: str, url: str, headers: dict[str, str], body: bytes, settings: S3Settings,
         now: dt.datetime) -> dict[str, str]:
    """``headers`` with the SigV4 ``Authorization`` (and ``x-amz-date``, ``x-amz-content-sha256``) added."""
    parts = urllib.parse.urlsplit(url)
    stamp, day = now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")
    payload = hashlib.sha256(body).hexdigest()
    signed = {**{k.lower(): v.strip() for k, v in headers.items()}, "host": parts.netloc,
              "x-amz-date": stamp, "x-amz-content-sha256": payload}
    if settings.session_token:
        signed["x-amz-security-token"] = settings.session_token
    names = ";".join(sorted(signed))
    query = "&".join(sorted(f"{urllib.parse.quote(k, safe='-_.~')}={urllib.parse.quote(v, safe='-_.~')}"
                            for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)))
    canonical = "\n".join([method, parts.path or "/", query, *(f"{k}:{signed[k]}" for k in sorted(signed)), "",
                           names, payload])
    scope = f"{day}/{settings.region}/s3/aws4_request"
    to_sign = "\n".join(["AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest()])
    key = _hmac(_hmac(_hmac(_hmac(f"AWS4{settings.secret_key}".encode(), day), settings.region), "s3"),
                "aws4_request")
    signature = hmac.new(key, to_sign.encode(), hashlib.sha256).hexdigest()
    out = {k: v for k, v in signed.items() if k != "host"}
    out["authorization"] = (f"AWS4-HMAC-SHA256 Credential={settings.access_key}/{scope}, SignedHeaders={names}, "
                            f"Signature={signature}")
    return out


@dataclass(frozen=True)
class Answer:
    status: int
    body: bytes
    etag: str | None


class ObjectStore:
    """Lock objects under ``s3://bucket/prefix``; the ETag of each object this run wrote is its claim."""

    def __init__(self, settings: S3Settings) -> None:
        self.s3 = settings
        self.where = f"lock objects in s3://{settings.bucket}/{settings.prefix}"
        self.etags: dict[str, str] = {}  # table -> ETag of the lock object this process wrote last

    def _key(self, name: str) -> str:
        return self.s3.prefix + lock_file_name(name)

    def _call(self, method: str, key: str, body: bytes = b"", headers: dict[str, str] | None = None) -> Answer:
        url = self.s3.url(key)
        signed = sign(method, url, headers or {}, body, self.s3, dt.datetime.now(dt.UTC))
        request = urllib.request.Request(url, data=body if method == "PUT" else None, method=method, headers=signed)
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT_SECONDS) as response:
                return Answer(response.status, response.read(), response.headers.get("ETag"))
        except urllib.error.HTTPError as exc:
            answer = Answer(exc.code, exc.read(), None)
            if exc.code in (404, 409, 412):
                return answer
            raise ObjectStoreError(f"the table locks: {method} s3://{self.s3.bucket}/{key} answered {exc.code} "
                                   f"({_code(answer.body)}); check {LOCK_LOCATION} in the catalog's definition "
                                   "and that its S3 keys may read, write and delete there") from None
        except OSError as exc:
            raise ObjectStoreError(f"the table locks: {method} s3://{self.s3.bucket}/{key} failed ({exc}); check "
                                   f"{LOCK_LOCATION} in the catalog's definition and that its store answers") from None

    def acquire(self, name: str, me: Holder) -> Holder:
        for _ in range(3):
            answer = self._call("PUT", self._key(name), me.to_json().encode(), {"If-None-Match": "*"})
            if answer.status == 404:
                raise ObjectStoreError(f"cannot take the lock on table {name}: {self.where} answered 404 "
                                       f"({_code(answer.body)}); create bucket {self.s3.bucket} or fix "
                                       f"{LOCK_LOCATION} in the catalog's definition")
            if answer.status == 200 and answer.etag:
                self.etags[name] = answer.etag
                return me
            clear_dead(self, name)  # 412 (or 409: a concurrent create): someone holds it; refuse unless dead
        raise LockHeldError(f"could not take the lock on table {name} in {self.where}: it keeps changing hands")

    def refresh(self, name: str, old: Holder, new: Holder) -> bool:
        etag = self.etags.get(name)
        if etag is None:
            return False
        answer = self._call("PUT", self._key(name), new.to_json().encode(), {"If-Match": etag})
        if answer.status == 200 and answer.etag:
            self.etags[name] = answer.etag
            return True
        return False  # 412 or 404: taken over

    def release(self, name: str, me: Holder) -> None:
        etag = self.etags.pop(name, None)
        if etag is not None:
            self._call("DELETE", self._key(name), headers={"If-Match": etag})

    def find(self, name: str) -> Found | None:
        answer = self._call("GET", self._key(name))
        if answer.status == 404:
            return None
        raw = answer.body.decode("utf-8", "replace")
        raw_with_etag = f"{answer.etag or ''}\n{raw}"  # removal compares the ETag: exactly what was judged
        try:
            holder = Holder.from_json(raw, name)
        except (ValueError, TypeError):
            return Found(name, None, raw_with_etag, Verdict(False, "an unreadable lock object"))
        return Found(name, holder, raw_with_etag, judge(holder, time.time()))

    def remove(self, found: Found, *, force: bool) -> bool:
        etag = found.raw.split("\n", 1)[0]
        answer = self._call("DELETE", self._key(found.name), headers={"If-Match": etag} if etag else {})
        return answer.status in (200, 204)

    def names(self) -> list[str]:
        tables = []
        for key in self._list():
            found = self._call("GET", key)
            if found.status == 200:
                try:
                    tables.append(Holder.from_json(found.body.decode("utf-8", "replace"), "").table)
                except (ValueError, TypeError):
                    tables.append(key.rsplit("/", 1)[-1].removeprefix("lock-").removesuffix(".json"))
        return tables

    def _list(self) -> list[str]:
        """The lock objects' keys (the first thousand: ListObjectsV2's page)."""
        query = urllib.parse.urlencode({"list-type": "2", "prefix": self.s3.prefix + "lock-"})
        url = (f"{self.s3.endpoint}/{self.s3.bucket}?{query}" if self.s3.endpoint
               else f"https://{self.s3.bucket}.s3.{self.s3.region}.amazonaws.com/?{query}")
        signed = sign("GET", url, {}, b"", self.s3, dt.datetime.now(dt.UTC))
        try:
            with urllib.request.urlopen(urllib.request.Request(url, headers=signed),
                                        timeout=TIMEOUT_SECONDS) as response:
                text = response.read().decode("utf-8", "replace")
        except OSError as exc:
            raise ObjectStoreError(f"listing {self.where} failed: {exc}") from None
        return [html.unescape(k) for k in re.findall(r"<Key>([^<]+)</Key>", text) if k.endswith(".json")]

    def close(self) -> None:
        self.etags.clear()
