"""The GPIO panel on gpiozero's mock pin factory: inputs become events on the asyncio queue,
signals drive the lamps and the buzzer."""
import asyncio
import json
import threading
import time

import pytest
from gpiozero.pins.mock import MockFactory

from controller.config import GpioConfig
from controller.errors import TablectlError
from controller.inputs import ButtonPressed, KeySwitched
from controller.panel import COLOURS, Light, Panel
from drivers.events import CardPlaced, CardRemoved, event_from_json

from gpio_helpers import closed_switch

GPIO = GpioConfig(
    buttons={"close_bets": 17, "misdeal": 27, "exposed_card": 22, "confirm": 23},
    key_switch=24, box_sensors=(5, 6, 12), light={"green": 13, "amber": 26, "red": 18},
    buzzer=19, bounce_ms=0)


@pytest.fixture
def factory():
    f = MockFactory()
    yield f
    f.reset()


def wait_for(predicate, what, timeout=5.0):
    """Poll for a state a background thread produces (a deadline, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            pytest.fail(f"never saw {what}")
        time.sleep(0.01)


def run_with_queue(factory, actions):
    """Open a panel on a real asyncio loop; run ``actions(factory)`` in another thread (as
    gpiozero's callbacks do); return the events that arrived on the queue."""
    async def main():
        queue = asyncio.Queue()
        with Panel.for_queue(GPIO, queue, pin_factory=factory, announce_key=False) as panel:
            count = await asyncio.to_thread(actions, factory)
            events = [await asyncio.wait_for(queue.get(), 5) for _ in range(count)]
            await asyncio.sleep(0)
            assert queue.empty()
            return events, panel
    return asyncio.run(main())


def test_buttons_become_events(factory):
    def press(f):
        assert threading.current_thread() is not threading.main_thread()
        for pin in (17, 27, 22, 23):
            f.pin(pin).drive_low()
            f.pin(pin).drive_high()
        return 4
    events, _ = run_with_queue(factory, press)
    assert [e.button for e in events] == ["close_bets", "misdeal", "exposed_card", "confirm"]
    assert all(isinstance(e, ButtonPressed) and e.device == "panel" for e in events)


def test_key_switch_and_state(factory):
    def turn(f):
        f.pin(24).drive_low()
        f.pin(24).drive_high()
        return 2
    events, _ = run_with_queue(factory, turn)
    assert events == [KeySwitched(device="panel", ts=events[0].ts, on=True),
                      KeySwitched(device="panel", ts=events[1].ts, on=False)]
    with Panel(GPIO, lambda e: None, pin_factory=factory) as panel:
        assert panel.key_on is False
        factory.pin(24).drive_low()
        assert panel.key_on is True


def test_the_keys_position_is_reported_when_the_panel_opens(factory):
    """Turning the key is reported as it happens; where the key is when the panel opens (the
    supervisor's key left on over a restart, or turned off while the service was down) is
    reported once at open, so the table does not go by what it last heard."""
    got = []
    key_on = MockFactory(pin_class=closed_switch(24))   # the key is on before the panel opens
    try:
        with Panel(GPIO, got.append, pin_factory=key_on):
            assert [(type(e), e.on) for e in got] == [(KeySwitched, True)]
    finally:
        key_on.reset()
    got.clear()
    with Panel(GPIO, got.append, pin_factory=factory):  # off at the next start
        assert [(type(e), e.on) for e in got] == [(KeySwitched, False)]
    got.clear()
    with Panel(GpioConfig(buttons={"misdeal": 27}), got.append, pin_factory=factory):
        assert got == []                        # no key switch fitted: nothing to report


def test_box_sensors(factory):
    def cards(f):
        f.pin(6).drive_low()    # a card lands on box 2
        f.pin(12).drive_low()   # and on box 3
        f.pin(6).drive_high()   # box 2's card is taken away
        return 3
    events, panel = run_with_queue(factory, cards)
    assert [(type(e), e.box, e.device) for e in events] == [
        (CardPlaced, 2, "box-sensors"), (CardPlaced, 3, "box-sensors"),
        (CardRemoved, 2, "box-sensors")]


def test_occupied_boxes(factory):
    with Panel(GPIO, lambda e: None, pin_factory=factory) as panel:
        assert panel.occupied_boxes() == ()
        factory.pin(5).drive_low()
        factory.pin(12).drive_low()
        assert panel.occupied_boxes() == (1, 3)


def test_active_high_sensors(factory):
    gpio = GpioConfig(box_sensors=(5,), sensors_active_low=False, bounce_ms=0)
    got = []
    with Panel(gpio, got.append, pin_factory=factory):
        factory.pin(5).drive_high()
    assert got and isinstance(got[0], CardPlaced) and got[0].box == 1


def test_panel_events_round_trip_json(factory):
    for event in (ButtonPressed(device="panel", ts=1.0, button="misdeal"),
                  KeySwitched(device="panel", ts=2.0, on=True)):
        assert event_from_json(json.loads(json.dumps(event.to_json()))) == event
    with pytest.raises(ValueError, match="unknown button"):
        ButtonPressed(device="panel", ts=1.0, button="deal")


def lamps(factory):
    return {c: factory.pin(p).state for c, p in GPIO.light.items()}


def toggled(pin, since):
    states = {s.state for s in pin.states[since:]}
    return states == {True, False}


def test_steady_signals(factory):
    with Panel(GPIO, lambda e: None, pin_factory=factory) as panel:
        assert lamps(factory) == {"green": False, "amber": False, "red": False}
        panel.show(Light.READY)
        assert lamps(factory) == {"green": True, "amber": False, "red": False}
        panel.show(Light.WAITING)
        assert lamps(factory) == {"green": False, "amber": True, "red": False}
        panel.show("out_of_service")
        assert lamps(factory) == {"green": False, "amber": False, "red": True}
        assert panel.light is Light.OUT_OF_SERVICE and COLOURS[panel.light] == "red"
        panel.show(Light.OFF)
        assert lamps(factory) == {"green": False, "amber": False, "red": False}


def test_malfunction_blinks_red_and_sounds_until_changed(factory):
    with Panel(GPIO, lambda e: None, pin_factory=factory, blink_s=0.02) as panel:
        red, green, buzzer = factory.pin(18), factory.pin(13), factory.pin(19)
        mark_red, mark_buzz = len(red.states), len(buzzer.states)
        panel.show(Light.MALFUNCTION)
        wait_for(lambda: toggled(red, mark_red) and len(red.states) - mark_red >= 4,
                 "the red lamp blinking")
        wait_for(lambda: toggled(buzzer, mark_buzz), "the buzzer sounding")
        assert green.state is False
        panel.show(Light.READY)
        assert (red.state, green.state, buzzer.state) == (False, True, False)
        settled = len(red.states)
        time.sleep(0.1)  # blinking stopped: no further changes of the red lamp
        assert len(red.states) == settled


def test_void_is_red_with_one_beep(factory):
    with Panel(GPIO, lambda e: None, pin_factory=factory) as panel:
        buzzer = factory.pin(19)
        mark = len(buzzer.states)
        panel.show(Light.VOID)
        assert lamps(factory)["red"] is True
        wait_for(lambda: toggled(buzzer, mark) and buzzer.state is False, "one beep")
        assert [s.state for s in buzzer.states[mark:]] == [True, False]


def test_action_blinks_amber_and_silence(factory):
    with Panel(GPIO, lambda e: None, pin_factory=factory, blink_s=0.02) as panel:
        amber = factory.pin(26)
        mark = len(amber.states)
        panel.show(Light.ACTION)
        wait_for(lambda: toggled(amber, mark), "the amber lamp blinking")
        panel.show(Light.MALFUNCTION)
        panel.show(Light.MALFUNCTION, silenced=True)   # the alarm silenced: the buzzer only
        assert factory.pin(19).state is False and panel.light is Light.MALFUNCTION
        red = factory.pin(18)
        mark = len(red.states)
        wait_for(lambda: toggled(red, mark), "the red lamp still blinking")


def test_partial_panel_and_close_releases_pins(factory):
    gpio = GpioConfig(buttons={"misdeal": 27}, light={"red": 18})
    got = []
    panel = Panel(gpio, got.append, pin_factory=factory).open()
    panel.show(Light.READY)   # no green lamp fitted: nothing lit, no error
    assert factory.pin(18).state is False
    assert panel.key_on is None and panel.occupied_boxes() == ()
    panel.close()
    # The pins are free again: a new panel can claim them.
    Panel(gpio, got.append, pin_factory=factory).open().close()


def test_pin_in_use_is_a_clear_error(factory):
    first = Panel(GpioConfig(buttons={"misdeal": 27}), lambda e: None,
                  pin_factory=factory).open()
    try:
        with pytest.raises(TablectlError, match="GPIO pins cannot be used"):
            Panel(GpioConfig(buttons={"confirm": 23}, light={"red": 27}), lambda e: None,
                  pin_factory=factory).open()
        # Nothing was left claimed by the failed panel: pin 23 is free.
        Panel(GpioConfig(buttons={"confirm": 23}), lambda e: None,
              pin_factory=factory).open().close()
    finally:
        first.close()


def test_a_pin_the_pin_library_refuses_is_a_clear_error_and_frees_the_others():
    """On a Pi, lgpio refuses a pin another process holds with its own error ("GPIO busy"), not
    one of gpiozero's: the panel still says what is wrong and how to fix it, and releases the
    pins it had claimed before it."""
    from gpiozero.pins.mock import MockFactory, MockPin

    class BusyPin(MockPin):
        def __init__(self, factory, info):
            if info.name == "GPIO18":
                raise OSError("GPIO busy")
            super().__init__(factory, info)

    busy = MockFactory(pin_class=BusyPin)
    try:
        gpio = GpioConfig(buttons={"confirm": 23}, light={"red": 18})
        with pytest.raises(TablectlError, match="GPIO busy.*no other process holds the pins"):
            Panel(gpio, lambda e: None, pin_factory=busy).open()
        # Pin 23 was claimed before 18 failed, and was released.
        Panel(GpioConfig(buttons={"confirm": 23}), lambda e: None, pin_factory=busy).open().close()
    finally:
        busy.reset()


# --- tablectl panel check -------------------------------------------------------------------

def test_panel_check_prints_inputs_and_cycles_the_light(factory):
    import io
    from controller.panel_cli import run_check

    out = io.StringIO()

    def wiring_test():
        # Wait until the check is listening, then press, turn and place like an installer.
        wait_for(lambda: "press each button" in out.getvalue(), "the prompt")
        factory.pin(27).drive_low()
        factory.pin(27).drive_high()
        factory.pin(24).drive_low()
        factory.pin(5).drive_low()

    worker = threading.Thread(target=wiring_test)
    worker.start()
    seen = run_check(GPIO, 1.0, out, pin_factory=factory, step_s=0.1)
    worker.join()
    text = out.getvalue()
    assert "button misdeal pressed" in text and "key switch on" in text
    assert "card placed on box 1" in text and len(seen) == 3
    for signal in ("ready (green)", "waiting (amber)", "malfunction (red)"):
        assert f"tower light: {signal}" in text
    assert text.rstrip().endswith("done: 3 inputs")
    assert lamps(factory) == {"green": False, "amber": False, "red": False}  # left dark


def test_panel_check_needs_a_panel(tmp_path):
    import subprocess
    import sys
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "T1"\ngame = "q-poker"\nboxes = 7\n'
                      '[devices.shoe]\nclass = "shoe"\nport = "/dev/x"\n')
    out = subprocess.run([sys.executable, "-m", "controller.cli", "panel", "check", "--config",
                          str(config)], capture_output=True, text=True)
    assert out.returncode == 2 and "no [gpio] section" in out.stderr


@pytest.mark.parametrize("seconds", ["0", "-1", "nan", "inf"])
def test_panel_check_needs_a_finite_listening_time(tmp_path, seconds):
    """--seconds nan or inf would listen for ever: refused like 0, before a pin is claimed."""
    import subprocess
    import sys
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "T1"\ngame = "q-poker"\nboxes = 7\n'
                      '[devices.shoe]\nclass = "shoe"\nport = "/dev/x"\n'
                      '[gpio.buttons]\nconfirm = 23\n')
    out = subprocess.run([sys.executable, "-m", "controller.cli", "panel", "check", "--config",
                          str(config), "--seconds", seconds], capture_output=True, text=True,
                         timeout=60, env={**__import__("os").environ,
                                          "GPIOZERO_PIN_FACTORY": "mock"})
    assert out.returncode == 2 and "--seconds must be a number of seconds greater than 0" \
        in out.stderr


def test_no_gpio_here_is_a_clear_error():
    """Off a Pi (no pin factory can load) the panel says what to do, it does not crash."""
    import subprocess
    import sys
    code = ("from controller.panel import Panel; from controller.config import GpioConfig; "
            "Panel(GpioConfig(buttons={'misdeal': 27}), print).open()")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "GPIOZERO_PIN_FACTORY": "nonesuch"})
    assert "TablectlError" in out.stderr and "GPIOZERO_PIN_FACTORY=mock" in out.stderr


def test_events_after_the_loop_closed_are_dropped(factory):
    async def main():
        queue = asyncio.Queue()
        return Panel.for_queue(GPIO, queue, pin_factory=factory).open()
    panel = asyncio.run(main())  # the loop is closed now
    try:
        factory.pin(27).drive_low()  # must not raise in gpiozero's thread
    finally:
        panel.close()


def test_lgpio_gets_a_writable_directory_when_the_working_one_is_not(tmp_path, monkeypatch):
    """``import lgpio`` makes and opens its notification pipe in the working directory (or
    $LG_WD) and fails where it cannot write: `sudo -u tablectl tablectl panel check` run from
    a technician's home or clone. The panel points LG_WD at a private directory instead."""
    import os
    import sys

    from controller import panel as panel_module

    monkeypatch.delenv("LG_WD", raising=False)
    monkeypatch.delitem(sys.modules, "lgpio", raising=False)
    monkeypatch.chdir(tmp_path)
    # A writable working directory (the service's state directory): left as it is.
    assert panel_module.lgpio_work_dir() is None and "LG_WD" not in os.environ
    # One the user may not write (tested as root here, who may write anything).
    monkeypatch.setattr(panel_module.os, "access", lambda path, mode: False)
    made = panel_module.lgpio_work_dir()
    assert made is not None and os.environ["LG_WD"] == made
    assert os.path.isdir(made) and (os.stat(made).st_mode & 0o777) == 0o700
    os.rmdir(made)
    # An LG_WD the operator gave is theirs; so is an lgpio already loaded.
    monkeypatch.setenv("LG_WD", "/somewhere")
    assert panel_module.lgpio_work_dir() is None and os.environ["LG_WD"] == "/somewhere"
    monkeypatch.delenv("LG_WD")
    monkeypatch.setitem(sys.modules, "lgpio", object())
    assert panel_module.lgpio_work_dir() is None and "LG_WD" not in os.environ


def test_panel_prepares_lgpio_only_for_the_default_pin_factory(factory, monkeypatch):
    from controller import panel as panel_module

    calls = []
    monkeypatch.setattr(panel_module, "lgpio_work_dir", lambda: calls.append(1))
    Panel(GPIO, print, pin_factory=factory).open().close()
    assert calls == []
    code = ("import controller.panel as p; calls = []; p.lgpio_work_dir = lambda: calls.append(1);"
            "from controller.config import GpioConfig;"
            "p.Panel(GpioConfig(buttons={'misdeal': 27}), print).open().close(); print(calls)")
    import subprocess
    import sys
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env={**__import__("os").environ, "GPIOZERO_PIN_FACTORY": "mock"})
    assert out.returncode == 0 and out.stdout.strip() == "[1]", out.stderr


def test_the_same_signal_again_beeps_no_more(factory):
    """The daemon shows the light after every input it handles: a signal already shown is
    left as it is, so one beep is one, not one per card, button or command that follows."""
    with Panel(GPIO, lambda e: None, pin_factory=factory, blink_s=0.02) as panel:
        buzzer, amber = factory.pin(19), factory.pin(26)
        mark = len(buzzer.states)
        panel.show(Light.ACTION)
        wait_for(lambda: toggled(buzzer, mark) and buzzer.state is False, "one beep")
        for _ in range(3):
            panel.show(Light.ACTION)
        wait_for(lambda: len(amber.states) > 6, "the amber lamp still blinking")
        time.sleep(0.5)   # a beep is 0.3 s on: any second one has begun by now
        assert [s.state for s in buzzer.states[mark:]] == [True, False]
        # The supervisor silenced a malfunction: the next input does not start it again ...
        panel.show(Light.MALFUNCTION)
        wait_for(lambda: buzzer.state is True, "the buzzer sounding")
        panel.show(Light.MALFUNCTION, silenced=True)
        silenced = len(buzzer.states)
        panel.show(Light.MALFUNCTION, silenced=True)
        time.sleep(0.3)
        assert len(buzzer.states) == silenced and buzzer.state is False
        # ... a new alarm (the table no longer says silenced) does.
        panel.show(Light.MALFUNCTION)
        wait_for(lambda: buzzer.state is True, "the buzzer sounding again")


def test_a_panel_opened_again_shows_its_signal_afresh(factory):
    panel = Panel(GPIO, lambda e: None, pin_factory=factory).open()
    panel.show(Light.READY)
    panel.close()                  # every pin released, the lamps dark
    assert panel.light is Light.OFF
    panel.open()
    try:
        panel.show(Light.READY)
        assert lamps(factory)["green"] is True
    finally:
        panel.close()


# --- the repeat guard -----------------------------------------------------------------------

class Clock:
    def __init__(self) -> None:
        self.now = 50.0

    def __call__(self) -> float:
        return self.now


def test_a_button_pressed_again_within_the_repeat_guard_is_a_repeat_not_a_press(factory):
    """One deliberate action, one press per step: the same button again within
    gpio.repeat_guard_ms of its last press is reported as a repeat (journaled, ignored by
    the table); after the interval, or another button, is a press."""
    from controller.panel import ButtonRepeated

    got, clock = [], Clock()
    gpio = GpioConfig(buttons={"confirm": 23, "misdeal": 27}, bounce_ms=0,
                      repeat_guard_ms=1000)
    with Panel(gpio, got.append, pin_factory=factory, clock=clock):
        def press(pin):
            factory.pin(pin).drive_low()
            factory.pin(pin).drive_high()
        press(23)
        clock.now += 0.3
        press(23)                      # a bounce / double press: a repeat
        clock.now += 0.3
        press(27)                      # another button: a press of its own
        clock.now += 0.5
        press(23)                      # 1.1 s after its last press: deliberate
        clock.now += 0.999
        press(23)
    assert [(type(e).__name__, e.button) for e in got] == [
        ("ButtonPressed", "confirm"), ("ButtonRepeated", "confirm"),
        ("ButtonPressed", "misdeal"), ("ButtonPressed", "confirm"),
        ("ButtonRepeated", "confirm")]
    assert [e.after_ms for e in got if isinstance(e, ButtonRepeated)] == [300, 999]
    repeat = got[1]
    assert repeat.device == "panel" and event_from_json(repeat.to_json()) == repeat


def test_a_repeat_guard_of_zero_takes_every_press(factory):
    got, clock = [], Clock()
    gpio = GpioConfig(buttons={"confirm": 23}, bounce_ms=0, repeat_guard_ms=0)
    with Panel(gpio, got.append, pin_factory=factory, clock=clock):
        for _ in range(3):
            factory.pin(23).drive_low()
            factory.pin(23).drive_high()
    assert [type(e).__name__ for e in got] == ["ButtonPressed"] * 3


def test_panel_check_words_a_repeat_as_a_repeat():
    from controller.inputs import ButtonRepeated
    from controller.panel_cli import describe_input

    text = describe_input(ButtonRepeated(device="panel", ts=1.0, button="confirm", after_ms=80))
    assert text == "button confirm pressed again after 80 ms (a repeat)"
