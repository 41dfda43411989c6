"""A journal that cannot be written: the daemon shows nothing of what it decided on an input
it could not journal (the tower light, the buzzer, the control socket's view, the API), and
stops. The journal fails for real: another writer holds it past the daemon's busy timeout
(the tower light on gpiozero's mock pins; everything else is the real daemon)."""
import asyncio
import json
import sqlite3

from gpiozero.pins.mock import MockFactory

from controller.config import parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service

CONFIG = """
[table]
id = "jf-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[gpio]
bounce_ms = 0
buzzer = 12

[gpio.buttons]
close_bets = 17

[gpio.light]
green = 13
amber = 26
red = 18

[journal]
path = "{journal}"
"""


async def _until(pred, timeout=10.0):
    deadline = asyncio.get_running_loop().time() + timeout
    while not pred():
        assert asyncio.get_running_loop().time() < deadline, "condition not reached"
        await asyncio.sleep(0.01)


async def _must(svc, name, role="dealer", **args):
    reply = await svc.submit(name, role, args)
    assert reply["ok"], reply


class _Held:
    """Another writer holding the journal: the daemon's next commit fails (busy)."""

    def __init__(self, svc, path):
        svc.journal._conn.execute("PRAGMA busy_timeout = 50")
        self.other = sqlite3.connect(path, isolation_level=None)
        self.other.execute("BEGIN IMMEDIATE")

    def release(self):
        if self.other is not None:
            self.other.execute("ROLLBACK")
            self.other.close()
            self.other = None


def _betting(tmp_path):
    return parse_text(CONFIG.format(journal=tmp_path / "j.db"))


def _journaled_commands(path):
    with Journal.open(path, readonly=True) as j:
        return [r.payload["name"] for r in j.records(kinds=["command"])] + [
            r.payload["event"]["button"] for r in j.records(kinds=["device"])
            if r.payload["event"]["kind"] == "button_pressed"]


def test_the_tower_light_does_not_show_what_a_failed_commit_decided(tmp_path):
    cfg = _betting(tmp_path)
    factory = MockFactory()
    green, amber, red, buzzer = (factory.pin(p) for p in (13, 26, 18, 12))

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await _until(lambda: svc.runner is not None and svc.panel is not None)
        await _must(svc, "open_table", "supervisor")
        await _must(svc, "deck_ready")
        await _must(svc, "place_bet", box=1, wager="versus_croupier", amount=10)
        await _until(lambda: green.state and not amber.state)      # bets open: green
        for pin in (green, amber, red, buzzer):
            pin.clear_states()
        held = _Held(svc, tmp_path / "j.db")
        try:
            factory.pin(17).drive_low()                  # close bets: its commit fails
            factory.pin(17).drive_high()
            code = await asyncio.wait_for(task, 30)
        finally:
            held.release()
        return code

    assert asyncio.run(scenario()) == 1
    # Bets were not closed in the journal: the light never said so (amber), nor anything else,
    # until the panel went dark at the stop.
    assert "close_bets" not in _journaled_commands(tmp_path / "j.db")
    assert not any(s.state for s in amber.states[1:])
    assert not any(s.state for s in red.states[1:])
    assert not any(s.state for s in buzzer.states[1:])
