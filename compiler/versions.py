"""Which tablepolicy versions a policy repository accepts: ``required_version`` in ``policies/_rules.yaml``, as
Terraform's ``required_version``. A comma-separated list of clauses, each an operator and a dotted version
(PEP 440's release segments; ``==0.1.*`` matches a prefix; a bare version is ``==``); every clause must hold.

>>> accepts(">=0.1, <0.2", "0.1.3"), accepts("~=0.2.0", "0.3.0"), accepts("==0.1.*", "0.1.7")
(True, False, True)
"""

from __future__ import annotations

import re

CLAUSE = re.compile(r"[ \t]*(===|==|!=|~=|>=|<=|>|<)?[ \t]*v?([0-9]+(?:\.[0-9]+)*)(\.\*)?[ \t]*")  # no operator: ==


class VersionSpecError(ValueError):
    """A required_version that does not parse; the message shows the form."""


def _release(version: str) -> tuple[int, ...]:
    """The release segment: ``0.1.0rc1`` -> (0, 1, 0); trailing zeros do not count (0.1 == 0.1.0)."""
    match = re.match(r"[0-9]+(?:\.[0-9]+)*", version.strip().lstrip("v"))
    if match is None:
        raise VersionSpecError(f"not a version: {version!r}")
    parts = [int(p) for p in match.group(0).split(".")]
    while len(parts) > 1 and parts[-1] == 0:
        parts.pop()
    return tuple(parts)


def parse(spec: str) -> list[tuple[str, tuple[int, ...], bool]]:
    """The clauses of ``spec``: (operator, release, prefix match)."""
    clauses = []
    for text in spec.split(","):
        match = CLAUSE.fullmatch(text)
        if match is not None and match.group(1) is None:
            match = CLAUSE.fullmatch(f"=={text.strip()}")
        if match is None or (match.group(3) and match.group(1) not in ("==", "!=")):
            raise VersionSpecError(f"{text.strip()!r} is not a version clause: write an operator (>=, <, ==, !=, ~=) "
                                   "and a version, clauses joined by commas, e.g. \">=0.1, <0.2\"")
        raw = tuple(int(p) for p in match.group(2).split("."))
        if match.group(1) == "~=" and len(raw) < 2:
            raise VersionSpecError(f"{text.strip()!r}: ~= needs at least two parts, e.g. ~=0.1")
        clauses.append((match.group(1), raw if match.group(3) or match.group(1) == "~=" else _release(match.group(2)),
                        bool(match.group(3))))
    return clauses


def accepts(spec: str, version: str) -> bool:
    """Whether ``version`` keeps every clause of ``spec``."""
    have = _release(version)
    for operator, want, prefix in parse(spec):
        if prefix:
            same = (have + (0,) * len(want))[:len(want)] == want
            ok = same if operator == "==" else not same
        elif operator == "~=":
            ok = have >= _release(".".join(map(str, want))) and (have + (0,) * len(want))[:len(want) - 1] == want[:-1]
        else:
            ok = {"==": have == want, "===": have == want, "!=": have != want, ">=": have >= want,
                  "<=": have <= want, ">": have > want, "<": have < want}[operator]
        if not ok:
            return False
    return True
