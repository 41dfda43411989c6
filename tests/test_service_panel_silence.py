"""The daemon silences the tower light's buzzer: the croupier's silence button (a mock pin) or
the supervisor's silence_buzzer, journaled before the buzzer pin goes quiet; an alarm not
silenced yet sounds it again (gpiozero's mock pins; the service loop and its journal real)."""
import asyncio
import time

from gpiozero.pins.mock import MockFactory

from controller.config import parse_text
from controller.journal import Journal
from controller.sdnotify import Notifier
from controller.service import Service
from controller.tower import buzzer_silenced
from drivers import events as ev

from gpio_helpers import idle_high
from service_helpers import journal_only, linked, until
from test_service_panel import _press

RED, BUZZER, SILENCE = 18, 19, 16
# A Q Poker table whose shoe is not plugged in, with the panel of a relay board that switches
# on a low input.
CONFIG = journal_only("{journal}", table="silence-1") + """
[devices.shoe]
class = "shoe"
transport = "serial"
port = "{absent}"

[gpio]
bounce_ms = 0
buzzer = 19
light_active_low = true
buzzer_active_low = true

[gpio.buttons]
silence = 16

[gpio.light]
green = 13
amber = 26
red = 18
"""


def _quiet_for(pin, seconds):
    """``pin`` stays high (an active-low buzzer silent) for ``seconds``; the repeating
    buzzer would have sounded within one of its cycles (0.2 s on, 0.8 s off)."""
    mark = len(pin.states)
    time.sleep(seconds)
    return pin.state is True and len(pin.states) == mark


def test_the_silence_button_and_the_supervisor_silence_the_buzzer_and_a_new_alarm_sounds(
        tmp_path):
    cfg = parse_text(CONFIG.format(absent=tmp_path / "tty-absent", journal=tmp_path / "j.db"))
    factory = MockFactory(pin_class=idle_high(13, 26, RED, BUZZER))
    at_silence = []

    async def scenario():
        svc = Service(cfg, pin_factory=factory, notifier=Notifier(None))
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.runner is not None and svc.panel is not None)
        show = svc.panel.show

        def watched(light, silenced=False):
            # What the journal holds at the moment the buzzer is told to go quiet.
            if silenced and not svc.panel.silenced:
                at_silence.append(svc.journal.last(kind="table").payload["kind"])
            show(light, silenced)
        svc.panel.show = watched
        table, buzzer, red = svc.runner.table, factory.pin(BUZZER), factory.pin(RED)
        await linked(svc, "shoe")
        assert (await svc.submit("open_table", "supervisor", {}))["ok"]
        svc.queue.put_nowait(ev.Jam(device="shoe", ts=1.0, where="exit"))
        await until(lambda: buzzer.state is False)           # the alarm sounds (low)
        _press(factory, SILENCE)                             # the croupier's button
        await until(lambda: buzzer_silenced(table))
        await until(lambda: buzzer.state is True)
        mark_red = len(red.states)
        assert await asyncio.to_thread(_quiet_for, buzzer, 1.2)
        assert len(red.states) > mark_red                    # the red lamp still blinks
        svc.queue.put_nowait(ev.DoorOpened(device="shoe", ts=2.0))   # a new alarm
        await until(lambda: buzzer.state is False)
        reply = await svc.submit("silence_buzzer", "supervisor", {})
        assert reply["ok"], reply
        await until(lambda: buzzer.state is True)
        assert await asyncio.to_thread(_quiet_for, buzzer, 1.2)
        refused = await svc.submit("silence_buzzer", "supervisor", {})
        assert not refused["ok"] and "already silenced" in refused["error"]
        svc.stop()
        await task

    asyncio.run(scenario())
    assert at_silence == ["buzzer_silenced", "buzzer_silenced"]
    for pin in (13, 26, RED, BUZZER):
        assert factory.pin(pin).state is True                # left off (high) at the stop
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        silenced = [r.payload for r in j.records(kinds=["table"])
                    if r.payload["kind"] == "buzzer_silenced"]
        # the jam held the table (shuffling) in malfunction: both sound the buzzer
        assert [(s["role"], s["by"], s["alarms"]) for s in silenced] == [
            ("dealer", "button", ["malfunction", "shoe: jam"]),
            ("supervisor", "console", ["malfunction", "shoe: door_open", "shoe: jam"])]
        pressed = [r for r in j.records(kinds=["device"])
                   if r.payload["event"].get("button") == "silence"]
        assert len(pressed) == 1 and pressed[0].source == "panel"
