"""What the daemon logs when something fails as it stops names the error's kind and what to
check: a timeout says nothing of itself (``str(TimeoutError())`` is empty), and a log line
``error=""`` left the person reading it with nothing. The daemon (``Service``) in this process
with a simulated shoe on a pseudo-terminal; its stop gives the device no time to close."""
import asyncio
import io
import json

import pytest

from controller.config import parse_text
from controller.errors import error_text
from controller.logs import configure_logging
from controller.sdnotify import Notifier
from controller.service import Service
from firmware_sim import start_device
from test_api_support import reset_logging

pytestmark = pytest.mark.hil

CONFIG = """
[table]
id = "T1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"

[devices.shoe]
class = "shoe"
port = "{port}"
"""


def test_a_device_close_that_times_out_is_logged_with_its_kind_and_what_to_check(tmp_path):
    dev = start_device("shoe", speed=200.0, seed=3)
    out = io.StringIO()
    configure_logging("info", "json", out)
    try:
        svc = Service(parse_text(CONFIG.format(journal=tmp_path / "j.db", port=dev.port)),
                      notifier=Notifier(None), open_panel=False)
        svc.device_close_s = 0          # no time at all: the close times out

        async def main():
            task = asyncio.create_task(svc.run())
            while svc.runner is None or not svc._ready:
                assert not task.done(), task.result()
                await asyncio.sleep(0.01)
            svc.stop()
            return await asyncio.wait_for(task, 30)

        assert asyncio.run(main()) == 0
    finally:
        reset_logging()
        dev.stop()
    lines = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    (failed,) = [d for d in lines if d["event"] == "device close failed"]
    assert failed["device"] == "shoe"
    assert failed["error"].startswith("TimeoutError: ")
    assert "check" in failed["error"] and "cable" in failed["error"]


@pytest.mark.parametrize("exc, words", [
    (TimeoutError(), "TimeoutError: no answer in the time allowed; check the link"),
    (OSError(5, "Input/output error"), "OSError: [Errno 5] Input/output error; check the link"),
    (RuntimeError(), "RuntimeError: it gave no details; check the link"),
])
def test_an_error_in_words_never_says_nothing(exc, words):
    assert error_text(exc, "the link") == words
