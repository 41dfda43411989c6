"""A configuration path that is not a regular file: a named pipe (reading it waits for a
writer that never comes, so `config check`, `tablectl run` and systemd's ExecStartPre hung
for good) or a device (/dev/null read as an empty configuration). Each is named at once, with
the way out, and nothing is read."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.errors import TablectlError
from controller.config import load_config

ROOT = Path(__file__).resolve().parents[1]


def tablectl(*args):
    # A short timeout: before, a named pipe held the command for good.
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=30)


@pytest.mark.parametrize("command", [("config", "check"), ("run", "--config")])
def test_a_configuration_that_is_a_named_pipe_is_named_not_waited_on(tmp_path, command):
    pipe = tmp_path / "table.toml"
    os.mkfifo(pipe)
    out = tablectl(*command, str(pipe))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"configuration {pipe} is a named pipe (FIFO), not a file" in out.stderr, out.stderr
    assert "table's TOML file" in out.stderr


def test_a_device_is_not_read_as_an_empty_configuration():
    with pytest.raises(TablectlError, match=r"is a character device, not a file") as info:
        load_config(os.devnull)
    assert "table's TOML file" in str(info.value)


def test_a_link_to_the_file_is_still_read(tmp_path):
    # A symlink to the real file (as an operator may keep /etc/tablectl/table.toml) is a file.
    real = ROOT / "docs" / "table.toml.example"
    link = tmp_path / "table.toml"
    link.symlink_to(real)
    assert load_config(link).table_id == load_config(real).table_id
