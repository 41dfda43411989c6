"""A dealer's press that comes once a stop was asked for is not taken, and the log says so.

The service finishes the item in hand and stops (SIGTERM): a press still waiting on its queue,
or made before the panel lets its pins go, is never given to the table. It was dropped with no
trace, so a dealer who pressed close_bets as the service stopped could not learn from the log
that nothing was taken. Each such press is logged once, naming the button (gpiozero's mock
pin factory; the service loop, its journal and its logging real).
"""
import asyncio
import json

from gpiozero.pins.mock import MockFactory

from controller.config import parse_text
from controller.journal import Journal

from test_api_support import captured_logs
from test_service_panel import CONFIG, _press, _start


def test_a_press_after_the_stop_was_asked_for_is_logged_once_as_not_taken(tmp_path):
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        svc.stop()
        _press(factory, 17)                              # close bets, as the service stops
        clock.advance()
        _press(factory, 23)                              # confirm
        await task

    with captured_logs() as stream:
        asyncio.run(scenario())
    lines = [json.loads(line) for line in stream.getvalue().splitlines()]
    dropped = [line for line in lines if line.get("event", "").startswith("button press")]
    assert [(d["button"], d["level"]) for d in dropped] == [("close_bets", "warning"),
                                                             ("confirm", "warning")], dropped
    assert all("stopping" in d["event"] and "not taken" in d["event"] for d in dropped)
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        assert not [r for r in j.records(kinds=["device"])
                    if r.payload["event"]["kind"] == "button_pressed"]
