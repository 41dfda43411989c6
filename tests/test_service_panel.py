"""The daemon's panel: GPIO buttons and the key switch drive the table, the tower light follows
it (gpiozero's mock pin factory; everything else real: the service loop and its journal)."""
import asyncio

from gpiozero.pins.mock import MockFactory

from controller.config import parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service

from gpio_helpers import closed_switch
from service_helpers import until

CONFIG = """
[table]
id = "panel-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[gpio]
key_switch = 24
bounce_ms = 0

[gpio.buttons]
close_bets = 17
misdeal = 27
exposed_card = 22
confirm = 23

[gpio.light]
green = 13
amber = 26
red = 18

[journal]
path = "{journal}"
"""


def _press(factory, pin):
    factory.pin(pin).drive_low()
    factory.pin(pin).drive_high()


class Clock:
    """The panel's time source, moved on by the test: a deliberate press comes after the
    repeat guard's interval (gpio.repeat_guard_ms, 1 s by default), a repeat within it."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float = 2.0) -> None:
        self.now += seconds


async def _open(svc):
    """Wait for the service's table and panel; give the panel a clock the test moves on."""
    await until(lambda: svc.runner is not None and svc.panel is not None)
    clock = Clock()
    svc.panel.clock = clock
    return clock


async def _start(cfg, factory):
    """Start the service on the panel's mock pins and wait for the panel to open: (the
    service, its task, the panel's clock)."""
    svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
    task = asyncio.create_task(svc.run())
    clock = await _open(svc)
    return svc, task, clock


async def _to_bets_open(svc, factory, clock):
    """Open the table and its first round with the key and confirm, and bet 10 on box 2."""
    table = svc.runner.table
    factory.pin(24).drive_low()                       # the supervisor's key on
    _press(factory, 23)                               # confirm: open the table
    await until(lambda: table.state == "shuffling")
    factory.pin(24).drive_high()
    clock.advance()
    _press(factory, 23)                               # confirm: the deck is in the shoe
    await until(lambda: table.state == "bets_open")
    reply = await svc.submit("place_bet", "dealer", {"box": 2, "wager": "versus_croupier",
                                                      "amount": 10})
    assert reply["ok"], reply


def test_the_supervisors_key_left_on_over_a_start_acts_at_once(tmp_path):
    """The key is on when the service starts: confirm opens the table without turning the
    key off and on again."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory(pin_class=closed_switch(24))   # the supervisor's key is on

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.runner is not None and svc.panel is not None)
        table = svc.runner.table
        assert table.state == "out_of_service"
        _press(factory, 23)                              # confirm: open the table
        await until(lambda: table.state == "shuffling")
        svc.stop()
        await task

    asyncio.run(scenario())


def test_buttons_and_key_switch_drive_the_table_and_the_light_follows(tmp_path):
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        table = svc.runner.table
        assert table.state == "out_of_service"
        assert factory.pin(18).state                     # red: out of service
        _press(factory, 23)                              # confirm without the key: refused
        await asyncio.sleep(0.1)
        assert table.state == "out_of_service"
        factory.pin(24).drive_low()                      # the supervisor's key on
        clock.advance()
        _press(factory, 23)                              # confirm: open the table
        await until(lambda: table.state == "shuffling")
        factory.pin(24).drive_high()
        clock.advance()
        _press(factory, 23)                              # confirm: the deck is in the shoe
        await until(lambda: table.state == "bets_open")
        await until(lambda: factory.pin(13).state and not factory.pin(18).state)  # green
        await svc.submit("place_bet", "dealer", {"box": 2, "wager": "versus_croupier",
                                                  "amount": 10})
        _press(factory, 17)                              # close bets
        await until(lambda: table.state == "bets_closed")
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        buttons = [r.payload["event"]["button"] for r in j.records(kinds=["device"])
                   if r.payload["event"]["kind"] == "button_pressed"]
        assert buttons == ["confirm", "confirm", "confirm", "close_bets"]
        refused = [r for r in j.records(kinds=["table"])
                   if r.payload["kind"] == "irregular_event"]
        assert "supervisor" in refused[0].payload["reason"]


def test_confirm_pressed_twice_quickly_moves_the_table_one_step(tmp_path):
    """After a void in shoe mode, confirm goes to the next round; a second press at once (a
    bounce, an impatient double press) is a repeat, ignored and journaled as such: it does
    not declare a deck shuffled that was not."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        table = svc.runner.table
        await _to_bets_open(svc, factory, clock)
        clock.advance()
        _press(factory, 17)                              # close bets
        await until(lambda: table.state == "bets_closed")
        assert (await svc.submit("void_round", "supervisor", {"reason": "a test"}))["ok"]
        assert table.state == "round_void"
        clock.advance()
        _press(factory, 23)                              # confirm: the next round ...
        clock.advance(0.2)
        _press(factory, 23)                              # ... and at once again: a repeat
        await asyncio.sleep(0)                           # both presses are on the queue
        # A command queued behind them is answered once both were handled (refused: the
        # table is shuffling).
        assert not (await svc.submit("close_bets", "dealer", {}))["ok"]
        assert table.state == "shuffling"                # the new deck is not declared ready
        clock.advance()
        _press(factory, 23)                              # a deliberate press: it is
        await until(lambda: table.state == "bets_open")
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        events = [r.payload["event"] for r in j.records(kinds=["device"])
                  if r.payload["event"]["device"] == "panel"]
        kinds = [(e["kind"], e.get("button")) for e in events]
        assert kinds[-3:] == [("button_pressed", "confirm"), ("button_repeated", "confirm"),
                              ("button_pressed", "confirm")]
        assert events[-2]["after_ms"] == 200
        irregular = [r.payload for r in j.records(kinds=["table"])
                     if r.payload["kind"] == "irregular_event"
                     and r.payload.get("event") == "button_repeated"]
        assert len(irregular) == 1
