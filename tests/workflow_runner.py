"""A local runner for the GitHub Actions workflows under ``.github/workflows``: runs one job's steps in
order, as a runner would, so tests exercise the real workflow files rather than a copy of their commands.

What it does like GitHub: ``${{ }}`` expressions (contexts github, env, secrets, steps, job, runner,
vars; operators ``== != && || !``; ``success() failure() always() cancelled() contains() startsWith()``),
step ``if:`` conditions with ``success()`` as the default, ``run:`` steps in ``bash -eo pipefail`` with
``GITHUB_OUTPUT`` / ``GITHUB_ENV`` (read into the later steps' environment) / ``GITHUB_STEP_SUMMARY`` files,
workflow/job/step ``env`` layered.
What it stands in for: ``actions/checkout`` (the workspace is the checkout), ``setup-python`` and
``setup-java`` (this machine's venv and Java), ``upload-artifact`` / ``download-artifact`` (a local
artifact folder), and steps whose id the caller lists in ``skip`` (the ``pip install .`` step: the test
runs the tool installed from this very checkout).

    python tests/workflow_runner.py .github/workflows/tablepolicy-plan.yml plan --workspace DIR
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<op>==|!=|&&|\|\||<=|>=|[!()\[\],.<>])"
                   r"|(?P<name>[A-Za-z_][A-Za-z0-9_-]*))")


@dataclass
class StepResult:
    name: str
    outcome: str  # success | failure | skipped
    outputs: dict[str, str] = field(default_factory=dict)
    log: str = ""
    exported: dict[str, str] = field(default_factory=dict)  # what the step wrote to GITHUB_ENV


@dataclass
class JobResult:
    steps: list[StepResult]

    @property
    def success(self) -> bool:
        return all(s.outcome != "failure" for s in self.steps)

    def step(self, name: str) -> StepResult:
        return next(s for s in self.steps if s.name == name)

    @property
    def log(self) -> str:
        return "\n".join(f"--- {s.name} [{s.outcome}]\n{s.log}" for s in self.steps)


class _Evaluator:
    """GitHub's expression language, the part the workflows use."""

    def __init__(self, text: str, contexts: dict[str, Any], status: str) -> None:
        self.tokens = [m for m in TOKEN.finditer(text) if m.group(0).strip()]
        if sum(len(m.group(0)) for m in self.tokens) != len(text.rstrip()) and text.strip():
            raise ValueError(f"cannot parse expression: {text!r}")
        self.at, self.contexts, self.status = 0, contexts, status

    def peek(self) -> str | None:
        return self.tokens[self.at].group(0).strip() if self.at < len(self.tokens) else None

    def take(self) -> re.Match[str]:
        self.at += 1
        return self.tokens[self.at - 1]

    def parse(self) -> Any:
        value = self.or_()
        if self.peek() is not None:
            raise ValueError(f"unexpected {self.peek()!r}")
        return value

    def or_(self) -> Any:
        value = self.and_()
        while self.peek() == "||":
            self.take()
            right = self.and_()
            value = value or right
        return value

    def and_(self) -> Any:
        value = self.compare()
        while self.peek() == "&&":
            self.take()
            right = self.compare()
            value = value and right
        return value

    def compare(self) -> Any:
        value = self.unary()
        while self.peek() in ("==", "!="):
            op = self.take().group(0).strip()
            right = self.unary()
            equal = _loose(value) == _loose(right)
            value = equal if op == "==" else not equal
        return value

    def unary(self) -> Any:
        if self.peek() == "!":
            self.take()
            return not self.unary()
        return self.primary()

    def primary(self) -> Any:
        token = self.take()
        if token.group("str") is not None:
            return token.group("str")[1:-1].replace("''", "'")
        if token.group("num") is not None:
            return float(token.group("num"))
        if token.group(0).strip() == "(":
            value = self.or_()
            self.take()
            return value
        name = token.group("name")
        if name in ("true", "false", "null"):
            return {"true": True, "false": False, "null": None}[name]
        if self.peek() == "(":
            return self.call(name)
        value: Any = self.contexts.get(name, {})
        while self.peek() in (".", "["):
            if self.take().group(0).strip() == ".":
                key = self.take().group(0).strip()
            else:
                key = self.or_()
                self.take()
            value = value.get(key, "") if isinstance(value, dict) else ""
        return value

    def call(self, name: str) -> Any:
        self.take()
        args = []
        while self.peek() != ")":
            args.append(self.or_())
            if self.peek() == ",":
                self.take()
        self.take()
        match name:
            case "always":
                return True
            case "success":
                return self.status == "success"
            case "failure":
                return self.status == "failure"
            case "cancelled":
                return False
            case "contains":
                return str(args[1]).lower() in str(args[0]).lower()
            case "startsWith":
                return str(args[0]).lower().startswith(str(args[1]).lower())
        raise ValueError(f"function {name}() is not emulated")


def _loose(value: Any) -> Any:
    """GitHub compares loosely: case-insensitive text, and null (a variable or secret nobody set) equal to ''."""
    if value is None:
        return ""
    return value.lower() if isinstance(value, str) else value


def evaluate(text: str, contexts: dict[str, Any], status: str = "success") -> Any:
    return _Evaluator(text, contexts, status).parse()


def substitute(text: str, contexts: dict[str, Any], status: str = "success") -> str:
    def one(match: re.Match[str]) -> str:
        value = evaluate(match.group(1), contexts, status)
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, float) and value.is_integer():
            return str(int(value))
        return "" if value is None else str(value)

    return EXPRESSION.sub(one, str(text))


def _condition(text: str | bool | None, contexts: dict[str, Any], status: str) -> bool:
    if text is None:
        return status == "success"
    if isinstance(text, bool):
        return text
    inner = EXPRESSION.fullmatch(text.strip())
    return bool(evaluate(inner.group(1) if inner else text, contexts, status))


def run_job(
    workflow: Path,
    job: str,
    *,
    workspace: Path,
    artifacts: Path,
    secrets: dict[str, str],
    github: dict[str, Any],
    skip: frozenset[str] = frozenset(),
    extra_env: dict[str, str] | None = None,
) -> JobResult:
    document = yaml.safe_load(workflow.read_text(encoding="utf-8"))
    spec = document["jobs"][job]
    contexts: dict[str, Any] = {"github": github, "secrets": secrets, "vars": {}, "steps": {}, "env": {},
                                "runner": {"os": "Linux", "temp": tempfile.gettempdir()}, "job": {}}
    env: dict[str, str] = {}
    for layer in (document.get("env") or {}, spec.get("env") or {}):
        for key, value in layer.items():
            contexts["env"] = env
            env[key] = substitute(value, contexts)
    results: list[StepResult] = []
    status = "success"
    for index, step in enumerate(spec["steps"], start=1):
        name = step.get("name") or step.get("id") or step.get("uses") or f"step {index}"
        step_env = {**env, **{k: substitute(v, {**contexts, "env": env}, status)
                              for k, v in (step.get("env") or {}).items()}}
        contexts["env"] = step_env
        if not _condition(step.get("if"), contexts, status):
            results.append(StepResult(name, "skipped"))
            _record(contexts, step, results[-1])
            continue
        if step.get("id") in skip:
            result = StepResult(name, "success", log="(skipped by the local runner)")
        elif "uses" in step:
            result = _uses(step, name, contexts, status, workspace, artifacts)
        else:
            result = _run(step, name, contexts, status, step_env, workspace, github, extra_env or {})
        results.append(result)
        _record(contexts, step, result)
        env.update(result.exported)  # GITHUB_ENV: for the steps after it
        if result.outcome == "failure" and not step.get("continue-on-error"):
            status = "failure"
    return JobResult(results)


def _record(contexts: dict[str, Any], step: dict[str, Any], result: StepResult) -> None:
    if step.get("id"):
        contexts["steps"][step["id"]] = {"outcome": result.outcome, "conclusion": result.outcome,
                                         "outputs": result.outputs}


def _run(step: dict[str, Any], name: str, contexts: dict[str, Any], status: str, step_env: dict[str, str],
         workspace: Path, github: dict[str, Any], extra_env: dict[str, str]) -> StepResult:
    script = substitute(step["run"], contexts, status)
    with tempfile.TemporaryDirectory() as scratch:
        files = {key: Path(scratch) / key.lower() for key in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_STEP_SUMMARY")}
        for path in files.values():
            path.touch()
        env = {**os.environ, **extra_env, **step_env, **{k: str(v) for k, v in files.items()},
               "GITHUB_WORKSPACE": str(workspace), "GITHUB_SHA": str(github.get("sha", "")),
               "GITHUB_REPOSITORY": str(github.get("repository", "")), "CI": "true", "GITHUB_ACTIONS": "true"}
        proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=workspace,
                              env=env, capture_output=True, text=True, timeout=900)
        outputs = _key_values(files["GITHUB_OUTPUT"].read_text(encoding="utf-8"))
        exported = _key_values(files["GITHUB_ENV"].read_text(encoding="utf-8"))
    return StepResult(name, "success" if proc.returncode == 0 else "failure", outputs, proc.stdout + proc.stderr,
                      exported)


def _key_values(text: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for line in text.splitlines():
        if "=" in line:
            key, value = line.split("=", 1)
            out[key] = value
    return out


def _uses(step: dict[str, Any], name: str, contexts: dict[str, Any], status: str, workspace: Path,
          artifacts: Path) -> StepResult:
    action = step["uses"].split("@")[0]
    given = {k: substitute(v, contexts, status) for k, v in (step.get("with") or {}).items()}
    if action in ("actions/checkout", "actions/setup-python", "actions/setup-java"):
        return StepResult(name, "success", log=f"({action}: this machine's checkout and tools)")
    if action == "actions/upload-artifact":
        target = artifacts / given["name"]
        paths = [workspace / p.strip() for p in given["path"].splitlines() if p.strip()]
        present = [p for p in paths if p.exists()]
        if not present and given.get("if-no-files-found", "warn") == "error":
            return StepResult(name, "failure", log=f"no files at {given['path']}")
        target.mkdir(parents=True, exist_ok=True)
        for path in present:
            shutil.copy2(path, target / path.name)
        return StepResult(name, "success", log=f"uploaded {[p.name for p in present]} as {given['name']}")
    if action == "actions/download-artifact":
        source = artifacts / given["name"]
        if not source.is_dir():
            return StepResult(name, "failure", log=f"Unable to download artifact(s): {given['name']} not found")
        for path in source.iterdir():
            shutil.copy2(path, workspace / path.name)
        return StepResult(name, "success", log=f"downloaded {given['name']}")
    return StepResult(name, "failure", log=f"{action} is not emulated by the local runner")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("workflow", type=Path)
    parser.add_argument("job")
    parser.add_argument("--workspace", type=Path, default=Path.cwd())
    parser.add_argument("--artifacts", type=Path, default=Path(".artifacts"))
    parser.add_argument("--github", default="{}", help="the github context as JSON")
    parser.add_argument("--secrets", default="{}", help="secrets as JSON")
    parser.add_argument("--skip", action="append", default=[], help="step ids to skip")
    args = parser.parse_args()
    result = run_job(args.workflow, args.job, workspace=args.workspace, artifacts=args.artifacts,
                     secrets=json.loads(args.secrets), github=json.loads(args.github), skip=frozenset(args.skip))
    print(result.log)
    return 0 if result.success else 1


if __name__ == "__main__":
    sys.exit(main())
