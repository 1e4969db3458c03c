"""scripts/system-deps.sh, run here as root as make install runs it on a fresh machine: make install asks only for
the tool's packages, make dev for the test servers too, and another process holding apt's lock is waited for
instead of failing the install. apt-get and dpkg are stand-ins on PATH that record what they were asked (nothing is
installed)."""

from __future__ import annotations

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "system-deps.sh"


def stand_ins(folder: Path, *, busy: int) -> dict[str, str]:
    """apt-get that answers 'Could not get lock' ``busy`` times, then succeeds, logging each call; dpkg that knows no
    package; java, npm, chromium and faketime absent (an empty PATH but for these and the shell's tools)."""
    folder.mkdir()
    (folder / "apt-get").write_text(f"""#!/bin/bash
echo "$*" >> {folder}/calls
n=$(cat {folder}/busy 2>/dev/null || echo {busy})
if [ "$n" -gt 0 ]; then echo $((n - 1)) > {folder}/busy
  echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2; exit 100; fi
""")
    (folder / "dpkg").write_text("#!/bin/bash\nexit 1\n")
    for tool in ("apt-get", "dpkg"):
        (folder / tool).chmod(0o755)
    for tool in ("bash", "grep", "cat", "ls", "sleep", "id", "dirname"):
        found = subprocess.run(["bash", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        if found and not (folder / tool).exists():
            (folder / tool).symlink_to(found)
    return {"PATH": str(folder), "TABLEPOLICY_APT_POLL": "0", "HOME": str(folder)}


def run(folder: Path, *args: str, busy: int = 0) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    env = stand_ins(folder, busy=busy)
    done = subprocess.run(["bash", str(SCRIPT), *args], capture_output=True, text=True, env=env, timeout=120)
    calls = (folder / "calls").read_text().splitlines() if (folder / "calls").exists() else []
    return done, calls


def test_install_asks_for_the_tools_packages_only_and_dev_for_the_test_servers(tmp_path: Path) -> None:
    tool, calls = run(tmp_path / "tool", "tool")
    assert tool.returncode == 0, tool.stderr
    [install] = [c for c in calls if " install " in f" {c} "]
    assert "openjdk-17-jre-headless" in install.split()  # no java on this PATH
    assert not {"postgresql", "chromium", "npm", "faketime"} & set(install.split())
    dev, calls = run(tmp_path / "dev", "dev")
    assert dev.returncode == 0, dev.stderr
    [install] = [c for c in calls if " install " in f" {c} "]
    assert {"nodejs", "npm", "chromium", "faketime"} <= set(install.split())  # (PostgreSQL: installed here)


def test_a_held_apt_lock_is_waited_for(tmp_path: Path) -> None:
    done, calls = run(tmp_path / "busy", "tool", "some-package", busy=2)
    assert done.returncode == 0, done.stderr
    assert done.stdout.count("apt is busy (another process holds its lock); waiting...") == 2
    assert len([c for c in calls if "update" in c.split()]) == 3  # twice refused, then done
    assert all("DPkg::Lock::Timeout=600" in c for c in calls)
