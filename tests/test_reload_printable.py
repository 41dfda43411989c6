"""What ``tablectl reload`` prints reaches a terminal (``systemctl reload`` shows it too), and
part of it is text the daemon did not make: the path of its table.toml, as the service was
started with it. A path holding an escape sequence or a right-to-left override was printed
raw by the reload's answer, while ``tablectl config check`` prints the same path escaped.
Through the real daemon (``tablectl run``, simulated devices on pseudo-terminals) and the
real command: every line it prints is printable (docs/controller.md, "Text from devices and
persons")."""
import subprocess
import sys

import pytest

from controller.rig import Rig
from test_reload_sync import REPO

pytestmark = pytest.mark.hil

RAW = "\x1b\x07\u202e"


def test_an_applied_and_a_refused_reload_print_the_files_path_escaped(tmp_path):
    rig = Rig(tmp_path / "rig", "q-poker", "shoe", seed=5)
    # the daemon given its file by a path holding escapes (a link to the rig's file: the
    # journal's path inside stays plain)
    where = tmp_path / "t\x1b[2J\x1b]0;x\x07\u202e"
    where.mkdir()
    (where / "table.toml").symlink_to(rig.config_path)
    rig.config_path = where / "table.toml"
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()

        def reload():
            return subprocess.run([sys.executable, "-m", "controller.cli", "reload",
                                   "--control", str(rig.control_path)], capture_output=True,
                                  text=True, cwd=REPO, timeout=90)

        applied = reload()
        assert applied.returncode == 0, applied.stderr
        assert "tablectl: reloaded" in applied.stdout and "\\x1b[2J" in applied.stdout
        assert not {ch for ch in RAW if ch in applied.stdout + applied.stderr}, applied.stdout

        rig.config_path.write_text(rig.config_path.read_text() + "\n[nonsense]\nx = 1\n")
        refused = reload()
        assert refused.returncode == 1, (refused.stdout, refused.stderr)
        assert "nonsense" in refused.stderr and "\\x1b[2J" in refused.stderr, refused.stderr
        assert not {ch for ch in RAW if ch in refused.stdout + refused.stderr}, refused.stderr
    finally:
        rig.stop()
