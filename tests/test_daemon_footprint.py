"""What the real daemon loads: a table with no HTTP API configured does not carry the web
stack (aiohttp and what it brings, several MiB of a Raspberry Pi's memory), however its
control socket is used, refused input included."""
import signal
from pathlib import Path

import pytest

from controller.rig import Rig

pytestmark = pytest.mark.hil


def mapped_files(pid: int) -> set[str]:
    """The files mapped into a process: its shared libraries and compiled extensions."""
    with open(f"/proc/{pid}/maps") as f:
        return {line.split(None, 5)[5].strip() for line in f if len(line.split(None, 5)) == 6}


def test_a_table_without_the_http_api_never_loads_the_web_stack(tmp_path):
    with Rig(tmp_path, "q-poker", "shuffler", seed=3) as rig:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        assert "[api]" not in Path(rig.config_path).read_text()
        rig.must("open_table", "supervisor")
        rig.view()
        # Input the control socket refuses goes through the same JSON checks as the API's.
        for line in ('{"query": "view", "query": "view"}', '[' * 200, '{"command": 5}'):
            rig._ctl.write(line + "\n")
            rig._ctl.flush()
            assert '"ok": false' in rig._ctl.readline().replace('"ok":false', '"ok": false')
        web = sorted(p for p in mapped_files(rig.proc.pid)
                     if "/aiohttp/" in p or "/multidict/" in p or "/yarl/" in p)
        assert web == [], web
        assert rig.kill(signal.SIGTERM) == 0
