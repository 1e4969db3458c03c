"""The GitHub side of the policy workflows: one sticky pull-request comment, and the plan reviewed for a
merged commit. Standard library only; the API base comes from ``GITHUB_API_URL`` as on Actions runners
(tests point it at a stub on 127.0.0.1). The token is sent in a header and never printed.

    tablepolicy github comment --pr 12 --file plan.md --marker tablepolicy-plan
    tablepolicy github reviewed-plan --commit "$GITHUB_SHA" --workflow tablepolicy-plan.yml
    tablepolicy github apply-failed --pr 12 --commit "$GITHUB_SHA" --step download=failure ...
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

from tablepolicy.compiler import jsontext

COMMENT_LIMIT = 65_536  # GitHub refuses longer comment bodies
PAGE = 100


class GitHubError(Exception):
    """A request the workflow needs failed; the message names it, never the token. ``pr``: the pull request
    concerned, when known (the failure is then reported on it)."""

    def __init__(self, message: str, pr: int | None = None) -> None:
        super().__init__(message)
        self.pr = pr


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
                          f"#{pull['number']}: its plan was never reviewed", pr=int(pull["number"]))
    newest = max(runs, key=lambda run: run["run_number"])
    return Reviewed(int(pull["number"]), head, int(newest["id"]))


def artifact_state(github: GitHub, run_id: str, name: str) -> str:
    """``present``, ``expired`` or ``missing``: what became of the artifact ``name`` of the run ``run_id``."""
    query = urllib.parse.urlencode({"name": name})
    answer = github.request("GET", f"/repos/{github.repository}/actions/runs/{run_id}/artifacts?{query}")
    found = [a for a in answer.get("artifacts", []) if a.get("name") == name]
    if not found:
        return "missing"
    return "expired" if all(a.get("expired") for a in found) else "present"


def apply_failed(github: GitHub, args: argparse.Namespace) -> int:
    """Comment on the pull request why the apply job failed, what ran and how to resume."""
    from .cd_feedback import ApplyJob, apply_failure

    outcomes = dict(item.split("=", 1) for item in args.step)
    state = ""
    if outcomes.get("download") == "failure" and args.run_id:
        state = artifact_state(github, args.run_id, args.artifact)
    report = None
    if args.report.exists():
        try:
            report = jsontext.loads(args.report.read_text(encoding="utf-8"))
        except ValueError:
            report = None
    log = args.log.read_text(encoding="utf-8", errors="replace") if args.log.exists() else ""
    body = apply_failure(ApplyJob(args.commit, outcomes, args.artifact, state, args.reviewed_error,
                                  report if isinstance(report, dict) else None, log, args.run_id))
    done, comment_id = sticky_comment(github, args.pr, body, "tablepolicy-apply")
    print(f"{done} comment {comment_id} on pull request #{args.pr}")
    return 0


def set_outputs(values: dict[str, str]) -> None:
    """Step outputs for later steps (``$GITHUB_OUTPUT``), and the same lines on stdout."""
    lines = "".join(f"{key}={value}\n" for key, value in values.items())
    target = os.environ.get("GITHUB_OUTPUT")
    if target:
        with open(target, "a", encoding="utf-8") as out:
            out.write(lines)
    sys.stdout.write(lines)


def main(argv: list[str] | None = None, prog: str = "tablepolicy github") -> int:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    comment = commands.add_parser("comment", help="create or update the pull request's sticky comment")
    comment.add_argument("--pr", type=int, required=True)
    comment.add_argument("--file", type=Path, required=True)
    comment.add_argument("--errors", type=Path, help="the command's stderr: shown when it ended with an error")
    comment.add_argument("--marker", default="tablepolicy-plan")
    reviewed = commands.add_parser("reviewed-plan", help="the pull request and plan run behind a merge commit")
    reviewed.add_argument("--commit", required=True)
    reviewed.add_argument("--workflow", default="tablepolicy-plan.yml")
    failed = commands.add_parser("apply-failed", help="say on the pull request why the apply job failed")
    failed.add_argument("--pr", type=int, required=True)
    failed.add_argument("--commit", required=True)
    failed.add_argument("--step", action="append", default=[], metavar="ID=OUTCOME",
                        help="each step's outcome (install, reviewed, download, apply)")
    failed.add_argument("--run-id", default="", help="the reviewed plan run")
    failed.add_argument("--artifact", default="", help="the reviewed plan's artifact name")
    failed.add_argument("--reviewed-error", default="")
    failed.add_argument("--report", type=Path, default=Path("apply-report.json"))
    failed.add_argument("--log", type=Path, default=Path("apply.log"))
    args = parser.parse_args(argv)
    try:
        github = GitHub.from_env()
        if args.command == "comment":
            body = args.file.read_text(encoding="utf-8") if args.file.exists() else ""
            errors = args.errors.read_text(encoding="utf-8", errors="replace") if (
                args.errors is not None and args.errors.exists()) else ""
            if not body and not errors:
                errors = f"tablepolicy produced no output ({args.file} is missing or empty): see the workflow log."
            from .cd_feedback import plan_comment

            done, comment_id = sticky_comment(github, args.pr, plan_comment(body, errors), args.marker)
            print(f"{done} comment {comment_id} on pull request #{args.pr}")
        elif args.command == "apply-failed":
            return apply_failed(github, args)
        else:
            try:
                found = reviewed_plan(github, args.commit, args.workflow)
            except GitHubError as exc:  # the pull request still hears why nothing was applied
                set_outputs({"pr": str(exc.pr or ""), "error": str(exc)})
                raise
            set_outputs({"pr": str(found.pr), "head_sha": found.head_sha, "run_id": str(found.run_id)})
    except GitHubError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
