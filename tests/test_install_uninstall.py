"""docs/install.md's Uninstall removes what systemd/install.sh installs, and keeps what the
regulator needs kept (the journal, the configuration)."""
import os
import re
import shlex
import subprocess
from pathlib import Path, PurePosixPath

ROOT = Path(__file__).resolve().parents[1]


def uninstall_removes():
    """Every path the Uninstall block's `rm` lines name."""
    doc = (ROOT / "docs" / "install.md").read_text()
    block = re.search(r"## Uninstall\n\n```sh\n(.*?)```", doc, re.S).group(1)
    removed = set()
    for command in block.replace("\\\n", " ").splitlines():
        words = shlex.split(command, comments=True)
        if words[:2] == ["sudo", "rm"]:
            removed |= {PurePosixPath(w) for w in words[2:] if not w.startswith("-")}
    return removed


def test_uninstall_removes_every_installed_file_and_keeps_the_record(tmp_path):
    root = tmp_path / "root"
    run = subprocess.run(["bash", str(ROOT / "systemd" / "install.sh")],
                         env={**os.environ, "DESTDIR": str(root)}, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    installed = {PurePosixPath("/" + str(p.relative_to(root))) for p in root.rglob("*")
                 if p.is_file()}
    script = (ROOT / "systemd" / "install.sh").read_text()
    prefix = re.search(r"^PREFIX=(\S+)$", script, re.M).group(1)
    link = re.search(r'^ln -sf \S+ (\S+)$', script, re.M).group(1)
    installed |= {PurePosixPath(prefix) / "venv/bin/tablectl", PurePosixPath(link)}
    removed = uninstall_removes()
    kept = PurePosixPath("/etc/tablectl")
    for path in installed:
        if path.is_relative_to(kept):
            assert not any(path.is_relative_to(r) for r in removed), path
            continue
        assert any(path == r or path.is_relative_to(r) for r in removed), \
            f"{path} is installed and docs/install.md's Uninstall leaves it"
    assert not any(PurePosixPath("/var/lib/tablectl").is_relative_to(r) or
                   r.is_relative_to("/var/lib/tablectl") for r in removed)
    # drop-ins made with `systemctl edit tablectl` go with the unit
    assert PurePosixPath("/etc/systemd/system/tablectl.service.d") in removed
