"""The dealer's panel under attack: a button held across a start, two buttons at once, and a
tower light whose pins fail while the table runs (gpiozero's mock pin factory; everything
else is the real service loop and its journal)."""
import asyncio

from gpiozero.pins.mock import MockFactory, MockPin

from controller.config import GpioConfig, parse_text
from controller.journal import Journal
from controller.panel import Light, Panel
from controller.sdnotify import Notifier
from controller.service import Service

from service_helpers import until
from test_service_panel import CONFIG, _open, _press, _start

LAMPS = ("GPIO13", "GPIO26", "GPIO18")     # green, amber, red in test_service_panel.CONFIG


def _panel_events(path):
    with Journal.open(path, readonly=True) as j:
        return [(r.payload["event"]["kind"], r.payload["event"].get("button"))
                for r in j.records(kinds=["device"])
                if r.payload["event"]["device"] == "panel"]


def _lamp_failure():
    """A pin class whose lamp pins fail to be driven once ``failing["on"]`` is set (the pin
    library's own error, as lgpio gives on a Pi whose GPIO chip went away)."""
    failing = {"on": False}

    class FailingLamp(MockPin):
        def _set_state(self, value):
            if failing["on"] and self.info.name in LAMPS:
                raise OSError(5, "Input/output error")
            super()._set_state(value)
    return failing, FailingLamp


def test_a_lamp_that_cannot_be_driven_does_not_take_the_table_down(tmp_path):
    """The press is journaled and acted on; the light failing afterwards is logged with the way
    out and the service goes on taking inputs (it is not a traceback and a restart loop). Once
    the lamps can be driven again, the next input shows the table's signal."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    failing, pin_class = _lamp_failure()
    factory = MockFactory(pin_class=pin_class)
    lines = []

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        svc.log = _Recorder(svc.log, lines)
        task = asyncio.create_task(svc.run())
        clock = await _open(svc)
        table = svc.runner.table
        factory.pin(24).drive_low()                      # the supervisor's key on
        failing["on"] = True
        _press(factory, 23)                              # confirm: open the table
        await until(lambda: table.state == "shuffling")
        await asyncio.sleep(0.05)
        assert not task.done(), task.exception() if task.done() else None
        factory.pin(24).drive_high()
        clock.advance()
        _press(factory, 23)                              # confirm: the deck is in the shoe
        await until(lambda: table.state == "bets_open")
        assert not task.done()
        failing["on"] = False
        await svc.submit("place_bet", "dealer", {"box": 2, "wager": "versus_croupier",
                                                  "amount": 10})
        # The signal the failure left unshown is shown now (green: bets open).
        await until(lambda: factory.pin(13).state and not factory.pin(18).state)
        assert svc.panel.light is Light.READY
        svc.stop()
        return await task

    assert asyncio.run(scenario()) == 0
    errors = [kw for event, kw in lines if event == "tower light not set"]
    assert len(errors) == 1                              # said once, not once per input
    assert "OSError" in errors[0]["error"] and "tablectl panel check" in errors[0]["error"]
    assert ("tower light shown again", ) in [(e,) for e, _ in lines]
    presses = [e for e in _panel_events(tmp_path / "j.db") if e[0] == "button_pressed"]
    assert presses == [("button_pressed", "confirm")] * 2


def test_a_signal_that_failed_is_shown_again_when_asked_again(tmp_path):
    """Panel.show skips the signal already shown (one beep is one); a signal whose lamps failed
    was not shown, so asking for it again drives them again."""
    failing, pin_class = _lamp_failure()
    factory = MockFactory(pin_class=pin_class)
    gpio = GpioConfig(light={"green": 13, "amber": 26, "red": 18})
    with Panel(gpio, lambda e: None, pin_factory=factory) as panel:
        failing["on"] = True
        try:
            panel.show(Light.READY)
        except Exception:
            pass
        failing["on"] = False
        panel.show(Light.READY)
        assert factory.pin(13).state is True and panel.light is Light.READY


class _Recorder:
    """The service's logger, also keeping each event's name and fields for the test."""

    def __init__(self, log, lines):
        self._log, self._lines = log, lines

    def __getattr__(self, name):
        method = getattr(self._log, name)
        if name not in ("error", "warning", "info"):
            return method

        def record(event, *args, **kw):
            self._lines.append((event, kw))
            return method(event, *args, **kw)
        return record


def test_a_repeat_of_a_refused_press_is_not_journaled_as_following_one_acted_on(tmp_path):
    """The repeat guard counts from the last press of the button the panel reported, whether
    the table acted on it or refused it (the panel cannot know which): confirm refused (no
    key), then again at once, is a repeat. The journal's reason must not say the press before
    it was acted on: it was refused, and the record says what happened."""
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    factory = MockFactory()

    async def scenario():
        svc, task, clock = await _start(cfg, factory)
        _press(factory, 23)                    # confirm without the key: refused
        clock.advance(0.3)
        _press(factory, 23)                    # again at once: a repeat
        await asyncio.sleep(0)
        assert not (await svc.submit("close_bets", "dealer", {}))["ok"]   # both handled
        svc.stop()
        return await task

    assert asyncio.run(scenario()) == 0
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        irregular = [r.payload for r in j.records(kinds=["table"])
                     if r.payload["kind"] == "irregular_event"]
    assert [i["event"] for i in irregular] == ["button_pressed", "button_repeated"]
    assert "supervisor" in irregular[0]["reason"]
    repeat = irregular[1]["reason"]
    assert "300 ms" in repeat and "repeat_guard_ms" in repeat
    assert "acted on, within" not in repeat and "was acted on" not in repeat
    assert "acted on or refused" in repeat


API_KEYS = """
[api]
listen = "127.0.0.1"
port = 0

[api.tokens]
"""


def _with_api(journal):
    from controller.config import hash_token
    from test_api_support import TOKENS

    text = CONFIG.format(journal=journal) + API_KEYS + "".join(
        f'{role} = "{hash_token(tok)}"\n' for role, tok in TOKENS.items())
    return parse_text(text), {"Authorization": f"Bearer {TOKENS['display']}"}


async def _health(svc, headers):
    import aiohttp

    async with aiohttp.ClientSession() as http:
        r = await http.get(f"{svc.api.url}/api/health", headers=headers)
        assert r.status == 200
        return [d for d in (await r.json())["devices"] if d["device"] == "dealer panel"]


def test_a_panel_that_cannot_be_opened_is_shown_to_the_pit(tmp_path):
    """Another process holds a lamp's pin when the service starts: the table goes on without
    its panel (no buttons, no key switch, a dark tower light, which to the croupier reads as
    a table stopped). The pit display's health says so, with the pin library's words and the
    way out, not only the log."""
    busy = {"on": True}

    class BusyPin(MockPin):
        def __init__(self, factory, info):
            if busy["on"] and info.name == "GPIO18":
                raise OSError("GPIO busy")
            super().__init__(factory, info)

    cfg, display = _with_api(tmp_path / "j.db")
    factory = MockFactory(pin_class=BusyPin)

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.api is not None or task.done())
        assert svc.panel is None
        entries = await _health(svc, display)
        svc.stop()
        return entries, await task

    entries, code = asyncio.run(scenario())
    assert code == 0
    assert len(entries) == 1, entries
    entry = entries[0]
    assert entry["class"] == "panel" and entry["conditions"] == ["panel_unavailable"]
    assert "GPIO busy" in entry["problem"] and "no other process holds the pins" in entry["problem"]
    assert "tower light" in entry["problem"]


def test_a_tower_light_that_fails_is_shown_to_the_pit_until_it_works_again(tmp_path):
    cfg, display = _with_api(tmp_path / "j.db")
    failing, pin_class = _lamp_failure()
    factory = MockFactory(pin_class=pin_class)

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.api is not None and svc.panel is not None)
        svc.panel.clock = clock = _Clock()
        assert await _health(svc, display) == []          # nothing to tell
        factory.pin(24).drive_low()                        # the supervisor's key on
        failing["on"] = True
        _press(factory, 23)                                # confirm: open the table
        await until(lambda: svc.runner.table.state == "shuffling")
        failed = await _health(svc, display)
        failing["on"] = False
        factory.pin(24).drive_high()
        clock.now += 2
        _press(factory, 23)                                # confirm: the deck is ready
        await until(lambda: svc.runner.table.state == "bets_open")
        await until(lambda: factory.pin(13).state)
        after = await _health(svc, display)
        svc.stop()
        return failed, after, await task

    failed, after, code = asyncio.run(scenario())
    assert code == 0
    assert len(failed) == 1 and failed[0]["conditions"] == ["light_failed"]
    assert "OSError" in failed[0]["problem"] and "waiting" in failed[0]["problem"]
    assert after == []


class _Clock:
    def __init__(self):
        self.now = 1000.0

    def __call__(self):
        return self.now
