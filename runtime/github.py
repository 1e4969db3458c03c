"""The GitHub side of the policy workflows: one sticky pull-request comment, and the plan reviewed for a
merged commit. Standard library only; the API base comes from ``GITHUB_API_URL`` as on Actions runners
(tests point it at a stub on 127.0.0.1). The token is sent in a header and never printed.

    python -m runtime.github comment --pr 12 --file plan.md --marker tablepolicy-plan
    python -m runtime.github reviewed-plan --commit "$GITHUB_SHA" --workflow tablepolicy-plan.yml
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from compiler import jsontext

COMMENT_LIMIT = 65_536  # GitHub refuses longer comment bodies
PAGE = 100


class GitHubError(Exception):
    """A request the workflow needs failed; the message names it, never the token."""


@dataclass(frozen=True)
class GitHub:
    api: str
    repository: str
    token: str

    @classmethod
    def from_env(cls) -> GitHub:
        missing = [name for name in ("GITHUB_REPOSITORY", "GITHUB_TOKEN") if not os.environ.get(name)]
        if missing:
            raise GitHubError(f"not set: {', '.join(missing)} (the workflow passes them to this step)")
        api = os.environ.get("GITHUB_API_URL", "https://api.github.com").rstrip("/")
        return cls(api, os.environ["GITHUB_REPOSITORY"], os.environ["GITHUB_TOKEN"])

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.api}{path}", data=data, method=method, headers={
            "Accept": "application/vnd.github+json",
            "Authorization": f"Bearer {self.token}",
            "X-GitHub-Api-Version": "2022-11-28",
            **({"Content-Type": "application/json"} if data is not None else {}),
        })
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                text = response.read().decode()
        except urllib.error.HTTPError as exc:
            raise GitHubError(f"{method} {path}: HTTP {exc.code} {exc.reason}") from None
        except urllib.error.URLError as exc:
            raise GitHubError(f"{method} {path}: {exc.reason}") from None
        return jsontext.loads(text) if text else None

    def pages(self, path: str, key: str | None = None) -> list[Any]:
        """Every item of a paginated list (``key``: the list inside an object answer)."""
        items: list[Any] = []
        for page in range(1, 50):
            sep = "&" if "?" in path else "?"
            answer = self.request("GET", f"{path}{sep}per_page={PAGE}&page={page}")
            batch = answer[key] if key is not None else answer
            items += batch
            if len(batch) < PAGE:
                break
        return items


def marker_line(marker: str) -> str:
    return f"<!-- {marker} -->"


def fit(body: str, limit: int = COMMENT_LIMIT) -> str:
    """A body GitHub accepts: cut at a line boundary with a note when over the limit."""
    if len(body) <= limit:
        return body
    note = "\n\n… cut to fit GitHub's comment limit; the full plan is in the workflow's artifact.\n"
    cut = body[: limit - len(note)]
    return cut[: cut.rfind("\n") + 1] + note


def sticky_comment(github: GitHub, pr: int, body: str, marker: str) -> tuple[str, int]:
    """Create the pull request's comment carrying ``marker``, or update it: one comment, never two."""
    text = fit(f"{marker_line(marker)}\n{body}")
    repo = github.repository
    existing = [c for c in github.pages(f"/repos/{repo}/issues/{pr}/comments")
                if marker_line(marker) in (c.get("body") or "")]
    if existing:
        comment = existing[0]["id"]
        github.request("PATCH", f"/repos/{repo}/issues/comments/{comment}", {"body": text})
        return "updated", int(comment)
    created = github.request("POST", f"/repos/{repo}/issues/{pr}/comments", {"body": text})
    return "created", int(created["id"])


@dataclass(frozen=True)
class Reviewed:
    pr: int
    head_sha: str
    run_id: int


def reviewed_plan(github: GitHub, commit: str, workflow: str) -> Reviewed:
    """The pull request merged as ``commit`` and the successful plan run of its head commit."""
    repo = github.repository
    pulls = [p for p in github.request("GET", f"/repos/{repo}/commits/{commit}/pulls") if p.get("merged_at")]
    if not pulls:
        raise GitHubError(f"commit {commit[:12]} is not the merge of a pull request: nothing was reviewed, "
                          "so nothing is applied (policies reach main through pull requests)")
    pull = pulls[0]
    head = pull["head"]["sha"]
    query = urllib.parse.urlencode({"head_sha": head, "status": "success"})
    runs = github.request("GET", f"/repos/{repo}/actions/workflows/{workflow}/runs?{query}")["workflow_runs"]
    if not runs:
        raise GitHubError(f"no successful {workflow} run for the head {head[:12]} of pull request "
                          f"#{pull['number']}: its plan was never reviewed")
    newest = max(runs, key=lambda run: run["run_number"])
    return Reviewed(int(pull["number"]), head, int(newest["id"]))


def set_outputs(values: dict[str, str]) -> None:
    """Step outputs for later steps (``$GITHUB_OUTPUT``), and the same lines on stdout."""
    lines = "".join(f"{key}={value}\n" for key, value in values.items())
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(lines)
    sys.stdout.write(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m runtime.github", description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    comment = commands.add_parser("comment", help="create or update the pull request's sticky comment")
    comment.add_argument("--pr", type=int, required=True)
    comment.add_argument("--file", type=Path, required=True)
    comment.add_argument("--marker", default="tablepolicy-plan")
    reviewed = commands.add_parser("reviewed-plan", help="the pull request and plan run behind a merge commit")
    reviewed.add_argument("--commit", required=True)
    reviewed.add_argument("--workflow", default="tablepolicy-plan.yml")
    args = parser.parse_args(argv)
    try:
        github = GitHub.from_env()
        if args.command == "comment":
            body = args.file.read_text(encoding="utf-8") if args.file.exists() else (
                f"tablepolicy produced no output ({args.file} is missing): see the workflow log.\n")
            done, comment_id = sticky_comment(github, args.pr, body, args.marker)
            print(f"{done} comment {comment_id} on pull request #{args.pr}")
        else:
            found = reviewed_plan(github, args.commit, args.workflow)
            set_outputs({"pr": str(found.pr), "head_sha": found.head_sha, "run_id": str(found.run_id)})
    except GitHubError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
