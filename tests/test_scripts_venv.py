"""scripts/venv makes .venv from $PYTHON and refuses to reuse one made from another Python:
the bench's figures depend on which interpreter runs the daemon (docs/performance.md)."""
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _repo(tmp_path: Path) -> Path:
    """A tree holding only scripts/venv and a .venv without pip, made from this Python."""
    (tmp_path / "scripts").mkdir()
    shutil.copy2(ROOT / "scripts" / "venv", tmp_path / "scripts" / "venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(tmp_path / ".venv")],
                   check=True)
    return tmp_path


def _run(repo: Path, python: str) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", str(repo / "scripts" / "venv")], capture_output=True,
                          text=True, timeout=60, env={"PATH": "/usr/bin:/bin", "PYTHON": python})


def test_a_venv_made_from_another_python_is_refused_and_kept(tmp_path):
    repo = _repo(tmp_path)
    cfg = (repo / ".venv" / "pyvenv.cfg").read_text()
    other = repo / "other-python"       # answers as an interpreter installed elsewhere would
    other.write_text("#!/bin/sh\necho /opt/elsewhere/bin/python3.11\n")
    other.chmod(0o755)
    proc = _run(repo, str(other))
    assert proc.returncode == 2
    assert ".venv was made from" in proc.stderr and "/opt/elsewhere/bin/python3.11" in proc.stderr
    assert "rm -rf .venv" in proc.stderr
    assert (repo / ".venv" / "pyvenv.cfg").read_text() == cfg


def test_a_venv_without_pip_is_made_again_and_the_install_goes_on(tmp_path):
    # A first try without python3-venv leaves an interpreter and no pip: reused, every later
    # run stopped at "No module named pip" until .venv was removed by hand.
    repo = _repo(tmp_path)
    proc = _run(repo, sys.executable)
    assert ".venv has no pip" in proc.stderr and "making it again" in proc.stderr
    pip = subprocess.run([str(repo / ".venv" / "bin" / "python"), "-m", "pip", "--version"],
                         capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr
    # and the install ran: this tree holds no project, so it is pip that refuses it
    assert proc.returncode != 0 and "No module named pip" not in proc.stderr
    assert "pyproject.toml" in proc.stderr or "setup.py" in proc.stderr, proc.stderr
