"""The way out a port found in use gives must work as given: the commands the message names
are run as written, through a shell, against a real program holding a real pseudo-terminal
(by a stable name with a space in it, as a symlink to the port)."""
import os
import re
import subprocess

import pytest

from drivers.transport import SerialTransport, TransportError

from test_link import run
from test_port_lock import hold, pty_nobody_reads, release


def commands(text):
    """The shell commands the message offers (in backquotes)."""
    return re.findall(r"`([^`]+)`", text)


@pytest.fixture
def held(tmp_path):
    """A port by a stable name with a space (a symlink, as /dev/serial/by-id names are),
    held open and locked by another program."""
    master, slave, name = pty_nobody_reads()
    link = str(tmp_path / "by id" / "usb-Acme Shoe_00421-if00")
    os.makedirs(os.path.dirname(link))
    os.symlink(name, link)
    holder = hold(link)
    yield link, holder
    release(holder)
    os.close(master)
    os.close(slave)


def in_use(link):
    """The problem the transport gives when it cannot open ``link``."""
    out = []

    async def main():
        try:
            await SerialTransport(link).open()
        except TransportError as exc:
            out.append(str(exc))
            return
        raise AssertionError("opened a port another program holds")
    run(main())
    return out[0]


@pytest.mark.parametrize("tool", ["fuser", "lsof"])
def test_the_command_the_message_gives_finds_the_holder_of_a_port_named_with_a_space(held, tool):
    # `fuser /tmp/.../by id/usb-Acme Shoe_00421-if00` looked up three other paths: the
    # command given had to be quoted for the shell to find the port at all.
    link, holder = held
    if subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True).returncode:
        pytest.skip(f"{tool} is not installed here")
    text = in_use(link)
    (cmd,) = [c for c in commands(text) if c.startswith(tool)]
    found = subprocess.run(["sh", "-c", cmd], capture_output=True, text=True, timeout=60)
    assert str(holder.pid) in found.stdout.split() or f" {holder.pid} " in found.stdout, \
        (cmd, found.stdout, found.stderr)


def test_the_message_gives_a_way_to_find_the_holder_without_fuser_or_lsof(held):
    # A Raspberry Pi image without psmisc and lsof: the message's only way out named tools
    # that are not there. It now gives one that needs neither, which finds the holder.
    link, holder = held
    text = in_use(link)
    others = [c for c in commands(text) if not c.startswith(("fuser", "lsof"))]
    assert others, text
    found = subprocess.run(["sh", "-c", others[0]], capture_output=True, text=True,
                           timeout=60, env={"PATH": "/usr/bin:/bin"})
    assert f"/proc/{holder.pid}/fd/" in found.stdout, (others[0], found.stdout, found.stderr)
