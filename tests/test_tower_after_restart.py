"""The tower light after a restart: amber while a device the round needs has not linked again.

After a restart of the controller the table is rebuilt from the journal, and the view shows a
device known from it as ``connecting`` until it links to the running process. Green would tell
the croupier to go on (take bets, deal) with the shoe or shuffler the round needs not yet
there; no condition was found on it either, so red (the supervisor is needed) would be wrong:
the light shows waiting (amber) while such a device is connecting, and the state's colour as
soon as it links. A device the mode does not need changes nothing. The GPIO panel and the
pit page (the API's ``light``) ask the same rule (controller/tower.py).
"""
import asyncio
import json
import signal
import urllib.request

import pytest
from gpiozero.pins.mock import MockFactory

from controller.config import parse_text
from controller.journal import Journal
from controller.panel import Light
from controller.rules import get_game
from controller.rules.cards import Card
from controller.sdnotify import Notifier
from controller.service import Service
from controller.table import Table
from controller.table.runner import TableRunner
from controller.tower import light_json, tower_light
from drivers import events as ev

import rig_helpers
from service_helpers import until
from table_helpers import DEVICES, LAYOUT, deck_checked, shuffler_runner
from test_api_support import free_port

SHUFFLER = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)
SHOE = ev.DeviceIdentity("shoe", "sim", "R1", "0002", "1.0", "cd" * 16, True)


def shoe_runner(path, **interpretations):
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=LAYOUT["q-poker"], devices=DEVICES,
              interpretations=interpretations or None)
    return TableRunner(t, Journal.open(path / "journal.db", "T1"))


def test_betting_open_after_a_restart_waits_while_the_shuffler_is_connecting(tmp_path):
    run = shuffler_runner(tmp_path, "q-poker")
    run.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.device(deck_checked())
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    assert run.table.state == "bets_open" and tower_light(run.table) is Light.READY
    run.journal.close()

    again = shuffler_runner(tmp_path, "q-poker")
    again.recover()
    t = again.table
    assert t.state == "bets_open"
    assert t.public_view()["devices"]["shuffler"]["link"] == "connecting"
    assert tower_light(t) is Light.WAITING                  # not green: the shuffler is away
    assert light_json(t) == {"signal": "waiting", "colour": "amber", "buzzer": "off"}
    # The shoe is not needed at a table dealt by the shuffler: its link changes nothing.
    again.device(ev.LinkUp(device="shuffler", ts=0.0, identity=SHUFFLER))
    assert t.public_view()["devices"]["shoe"]["link"] == "connecting"
    assert tower_light(t) is Light.READY
    again.journal.close()


def test_dealing_after_a_restart_waits_while_the_shoe_is_connecting(tmp_path):
    """Q5 shoe_malfunction=continue: the restart while dealing holds the round for the
    supervisor (red); once he clears it the deal goes on, amber until the shoe is back."""
    run = shoe_runner(tmp_path, shoe_malfunction="continue")
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.command("close_bets")
    run.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("As")))
    assert run.table.state == "dealing" and tower_light(run.table) is Light.READY
    run.journal.close()

    again = shoe_runner(tmp_path, shoe_malfunction="continue")
    again.recover()
    t = again.table
    assert t.state == "malfunction" and tower_light(t) is Light.MALFUNCTION
    again.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    assert tower_light(t) is Light.WAITING
    again.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    assert tower_light(t) is Light.READY
    again.journal.close()


def test_a_link_lost_across_the_restart_stays_red_not_amber(tmp_path):
    """A condition found on a needed device is the supervisor's (red); waiting is only for a
    device of which nothing is known but that it has not linked again."""
    run = shoe_runner(tmp_path)
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.device(ev.LinkLost(device="shoe", ts=0.0, reason="unplugged"))
    run.journal.close()

    again = shoe_runner(tmp_path)
    again.recover()
    assert again.table.public_view()["devices"]["shoe"]["link"] == "lost"
    assert tower_light(again.table) is Light.MALFUNCTION
    again.journal.close()


# --- the GPIO panel, through the service (gpiozero's mock pins) ------------------------------

PANEL = """
[table]
id = "panel-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[gpio.light]
green = 13
amber = 26
red = 18

[journal]
path = "{journal}"
"""
GREEN, AMBER, RED = 13, 26, 18


def test_the_panels_lamp_is_amber_after_a_restart_until_the_shoe_links(tmp_path):
    cfg = parse_text(PANEL.format(journal=tmp_path / "j.db"))

    async def run(factory, then):
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.runner is not None and svc.panel is not None and svc._ready)
        try:
            await then(svc)
        finally:
            svc.stop()
            await task

    def lamp(factory):
        return {c for c, pin in (("green", GREEN), ("amber", AMBER), ("red", RED))
                if factory.pin(pin).state}

    async def first(svc):
        svc.queue.put_nowait(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
        await until(lambda: "shoe" in svc.runner.table.identities)
        for name, role in (("open_table", "supervisor"), ("deck_ready", "dealer")):
            assert (await svc.submit(name, role, {}))["ok"]
        assert svc.runner.table.state == "bets_open"
        await until(lambda: lamp(factory1) == {"green"})

    async def second(svc):
        assert svc.runner.table.state == "bets_open"
        await until(lambda: lamp(factory2) == {"amber"})
        svc.queue.put_nowait(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
        await until(lambda: lamp(factory2) == {"green"})

    factory1, factory2 = MockFactory(), MockFactory()
    asyncio.run(run(factory1, first))
    asyncio.run(run(factory2, second))


# --- the real daemon: the pit page's light (/api/table, /api/health) --------------------------

TOKEN = "tok-d-" + "5" * 26


class ApiRig(rig_helpers.ApiRig):
    tokens = {"dealer": TOKEN}


def api(rig, path):
    req = urllib.request.Request(f"http://127.0.0.1:{rig.port}{path}",
                                 headers={"Authorization": f"Bearer {TOKEN}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


def api_up(rig):
    try:
        return api(rig, "/api/health")["ok"]
    except OSError:
        return False


def wait_for(pred, what, timeout=20.0):
    import time
    deadline = time.monotonic() + timeout
    while not pred():
        if time.monotonic() > deadline:
            raise TimeoutError(what)
        time.sleep(0.05)


@pytest.mark.hil
def test_the_daemon_restarted_with_the_shoe_unplugged_shows_amber_until_it_links(tmp_path):
    rig = ApiRig(tmp_path, "q-poker", "shoe", seed=3)
    rig.port = free_port()
    try:
        rig.open_with_deck([c for c in ("As", "Kd", "Qh", "2c", "3c", "4c")])
        wait_for(lambda: api_up(rig), "the API is up")
        assert api(rig, "/api/table")["light"]["colour"] == "green"
        rig.kill(signal.SIGKILL)
        rig.devices["shoe"].disconnect()        # its port is gone while the daemon is down
        rig.start_controller()
        wait_for(lambda: api_up(rig), "the API is up again")
        table = api(rig, "/api/table")
        assert table["state"] == "bets_open"
        assert table["view"]["devices"]["shoe"]["link"] == "connecting"
        assert table["light"] == {"signal": "waiting", "colour": "amber", "buzzer": "off"}
        assert api(rig, "/api/health")["light"]["colour"] == "amber"
        rig.devices["shoe"].reconnect()
        rig.wait_links()
        wait_for(lambda: api(rig, "/api/table")["light"]["colour"] == "green",
                 "green once the shoe is linked")
        assert api(rig, "/api/health")["light"]["colour"] == "green"
        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
    finally:
        rig.stop()


def test_a_spare_of_a_class_left_unplugged_does_not_hold_the_light_once_one_is_up(tmp_path):
    """Two shoes configured, a spare kept unplugged beside the one in use: once the one in
    use has linked, the table waits on no shoe. The spare is shown connecting in the view;
    the light is the state's."""
    devices = {**DEVICES, "shoe-2": "shoe"}

    def runner():
        t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=LAYOUT["q-poker"],
                  devices=devices)
        return TableRunner(t, Journal.open(tmp_path / "journal.db", "T1"))

    run = runner()
    run.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    assert run.table.state == "bets_open"
    run.journal.close()

    again = runner()
    again.recover()
    t = again.table
    assert t.state == "bets_open" and tower_light(t) is Light.WAITING   # no shoe linked yet
    again.device(ev.LinkUp(device="shoe", ts=0.0, identity=SHOE))
    view = t.public_view()["devices"]
    assert view["shoe"]["link"] == "up" and view["shoe-2"]["link"] == "connecting"
    assert t.devices_connecting() == [] and tower_light(t) is Light.READY
    again.journal.close()
