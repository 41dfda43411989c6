"""The dealer panel on GPIO (gpiozero): buttons, key switch, box sensors, tower light, buzzer.

Inputs become typed events handed to ``sink`` — for the daemon, the controller's asyncio queue
through :meth:`Panel.for_queue`, which is thread-safe (gpiozero calls back from its own
threads; the event is put on the queue with ``loop.call_soon_threadsafe``):

- a button press: :class:`controller.inputs.ButtonPressed` (``device="panel"``); the same
  button again within ``gpio.repeat_guard_ms`` of its last press (acted on or refused: the
  panel cannot know) is a :class:`controller.inputs.ButtonRepeated` instead (a bounce or a
  double press: journaled, not acted on)
- the key switch: :class:`controller.inputs.KeySwitched` (``on`` True/False), also once when
  the panel opens, with the key's position then (``announce_key=False`` leaves that out)
- box sensor N: :class:`drivers.events.CardPlaced` / ``CardRemoved`` (``device="box-sensors"``,
  ``box=N``, box 1 being the first pin of ``gpio.box_sensors``)

The tower light shows one :class:`Light` at a time (:meth:`Panel.show`): green steady when the
table is ready, amber when it waits (steady) or needs the croupier (blinking, one beep), red when
a round is void (steady, one beep), the table is out of service (steady) or a device failed
(blinking, buzzer until the signal changes or the alarm is silenced: ``show(..., silenced=True)``,
which the daemon passes once the table journaled the silence, controller.tower).

Pins come from gpiozero's pin factory: lgpio on a Raspberry Pi (the Pi 5 included), the mock
factory in tests (``GPIOZERO_PIN_FACTORY=mock`` or ``pin_factory=MockFactory()``).
"""
from __future__ import annotations

import asyncio
import atexit
from dataclasses import dataclass
import os
import shutil
import sys
import tempfile
import threading
import time
from enum import StrEnum
from typing import Any, Callable, ClassVar

from controller.config import GpioConfig
from controller.errors import TablectlError, error_text
from controller.inputs import PANEL, ButtonPressed, ButtonRepeated, KeySwitched
from drivers.events import CardPlaced, CardRemoved, DeviceEvent

BOX_SENSORS = "box-sensors"




def lgpio_work_dir() -> str | None:
    """Give lgpio a directory it can write, when the working directory is not one.

    lgpio (gpiozero's pin factory on a Raspberry Pi) makes its notification pipe, and
    ``import lgpio`` then opens it, in the working directory, or in ``$LG_WD`` when that is
    set; where the directory cannot be written the import fails (``FileNotFoundError:
    '.lgd-nfy-3'``) and gpiozero has no pin factory. The service runs in its state directory,
    which it owns; ``sudo -u tablectl tablectl panel check`` runs wherever the technician stood
    (a home directory, the clone of the repository), which the service user cannot write.
    There, ``LG_WD`` is pointed at a fresh private directory (lgpio also moves the process
    into it), removed when the process ends. Returns that directory, or None when nothing was
    changed."""
    if "LG_WD" in os.environ or "lgpio" in sys.modules:
        return None
    try:
        if os.access(os.getcwd(), os.W_OK | os.X_OK):
            return None
    except OSError:          # the working directory was removed: lgpio would fall back on /tmp
        pass
    path = tempfile.mkdtemp(prefix="tablectl-lgpio-")
    os.environ["LG_WD"] = path
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


class Light(StrEnum):
    """What the tower light says."""

    OFF = "off"
    READY = "ready"                    # green steady: bets open / round running normally
    WAITING = "waiting"                # amber steady: waiting for a device, a shuffle, a result
    ACTION = "action"                  # amber blinking, one beep: the croupier must act/confirm
    VOID = "void"                      # red steady, one beep: the round is void
    MALFUNCTION = "malfunction"        # red blinking, buzzer: a device failed, call the supervisor
    OUT_OF_SERVICE = "out_of_service"  # red steady: the table is closed until a supervisor acts


# lamp -> "on" | "blink"; buzzer: None, "once" or "repeat"
_SIGNALS: dict[Light, tuple[dict[str, str], str | None]] = {
    Light.OFF: ({}, None),
    Light.READY: ({"green": "on"}, None),
    Light.WAITING: ({"amber": "on"}, None),
    Light.ACTION: ({"amber": "blink"}, "once"),
    Light.VOID: ({"red": "on"}, "once"),
    Light.MALFUNCTION: ({"red": "blink"}, "repeat"),
    Light.OUT_OF_SERVICE: ({"red": "on"}, None),
}
# What to look at when a lamp or the buzzer cannot be driven.
_LIGHT_CHECK = ("the tower light's wiring and [gpio] in table.toml; with the service stopped, "
                "tablectl panel check cycles every signal")
COLOURS = {Light.OFF: "off", Light.READY: "green", Light.WAITING: "amber", Light.ACTION: "amber",
           Light.VOID: "red", Light.MALFUNCTION: "red", Light.OUT_OF_SERVICE: "red"}


class Panel:
    """The panel's inputs and outputs. Create, then :meth:`open`; :meth:`close` at the end.

    ``sink`` receives every input event (from gpiozero's threads: it must be thread-safe);
    ``clock`` (also the attribute :attr:`clock`, which may be replaced) stamps the events
    and times the repeat guard (monotonic seconds, like the drivers' ``ts``).
    """

    def __init__(self, gpio: GpioConfig, sink: Callable[[DeviceEvent], Any], *,
                 pin_factory: Any = None, clock: Callable[[], float] = time.monotonic,
                 blink_s: float = 0.5, announce_key: bool = True) -> None:
        self.gpio = gpio
        self._announce_key = announce_key
        self._sink = sink
        self._factory = pin_factory
        self.clock = clock
        self._last_press: dict[str, float] = {}     # button -> its last press, not a repeat
        self._blink_s = blink_s
        self._devices: list[Any] = []
        self._buttons: dict[str, Any] = {}
        self._key: Any = None
        self._sensors: list[Any] = []
        self._lamps: dict[str, Any] = {}
        self._buzzer: Any = None
        self._light = Light.OFF
        self._silenced = False
        self._lock = threading.Lock()

    @classmethod
    def for_queue(cls, gpio: GpioConfig, queue: asyncio.Queue,
                  loop: asyncio.AbstractEventLoop | None = None, **kwargs: Any) -> "Panel":
        """A panel that puts its events on ``queue`` of ``loop`` (the running loop by
        default), safely from any thread."""
        loop = loop or asyncio.get_running_loop()

        def put(event: DeviceEvent) -> None:
            try:
                loop.call_soon_threadsafe(queue.put_nowait, event)
            except RuntimeError:
                pass  # the loop has closed: the daemon is gone, nobody to tell

        return cls(gpio, put, **kwargs)

    # --- life cycle -------------------------------------------------------------------------

    def open(self) -> "Panel":
        """Claim the pins and start reporting inputs. TablectlError (nothing claimed) when
        a pin cannot be had."""
        from gpiozero import Buzzer, Button, DigitalInputDevice, LED

        if self._factory is None:
            lgpio_work_dir()     # before gpiozero loads its default pin factory
        bounce = self.gpio.bounce_ms / 1000 or None
        kw = {"pin_factory": self._factory}
        try:
            for name, pin in self.gpio.buttons.items():
                b = self._claim(Button(pin, pull_up=self.gpio.pull_up, bounce_time=bounce, **kw))
                b.when_pressed = self._pressed(name)
                self._buttons[name] = b
            if self.gpio.key_switch is not None:
                self._key = self._claim(Button(self.gpio.key_switch, pull_up=self.gpio.pull_up,
                                               bounce_time=bounce, **kw))
                self._key.when_pressed = self._keyed(True)
                self._key.when_released = self._keyed(False)
            for n, pin in enumerate(self.gpio.box_sensors, start=1):
                s = self._claim(DigitalInputDevice(pin, pull_up=self.gpio.sensors_active_low,
                                                   bounce_time=bounce, **kw))
                s.when_activated = self._sensed(n, True)
                s.when_deactivated = self._sensed(n, False)
                self._sensors.append(s)
            # Opened off: gpiozero sets the pin to its inactive level as it makes it an
            # output (high for a relay board that switches on low), before any signal.
            for colour, pin in self.gpio.light.items():
                self._lamps[colour] = self._claim(LED(
                    pin, active_high=not self.gpio.light_active_low, initial_value=False, **kw))
            if self.gpio.buzzer is not None:
                self._buzzer = self._claim(Buzzer(
                    self.gpio.buzzer, active_high=not self.gpio.buzzer_active_low,
                    initial_value=False, **kw))
        except Exception as exc:   # gpiozero's errors, and the pin library's own (lgpio's
            self.close()           # "GPIO busy" when another process holds a pin)
            raise TablectlError(
                f"the panel's GPIO pins cannot be used ({type(exc).__name__}: {exc}); on a "
                "Raspberry Pi check [gpio] in table.toml, that the service user is in the "
                "gpio group and that no other process holds the pins (stop the service before "
                "tablectl panel check); elsewhere remove [gpio] or set "
                "GPIOZERO_PIN_FACTORY=mock") from None
        if self._key is not None and self._announce_key:
            # Turning the key is an edge; its position when the panel opens is not. The
            # table (restarted, or recovered from a journal in which the key was last turned
            # the other way) learns where the key is now.
            self._emit(KeySwitched(device=PANEL, ts=self.clock(), on=bool(self._key.is_pressed)))
        return self

    def _claim(self, device: Any) -> Any:
        self._devices.append(device)
        return device

    def close(self) -> None:
        """Turn the outputs off and release every pin."""
        # Off first, at the inactive level of each output's polarity: gpiozero's close only
        # makes the pin an input (lgpio: floating, no pull), so the lamp goes dark at the
        # level the configuration says is off, not at whatever the line drifts to.
        for output in [*self._lamps.values(), self._buzzer]:
            try:
                if output is not None:
                    output.off()
            except Exception:  # closing must never stop the shutdown
                pass
        for device in reversed(self._devices):
            try:
                device.close()
            except Exception:  # closing must never stop the shutdown
                pass
        self._devices.clear()
        self._buttons.clear()
        self._sensors.clear()
        self._lamps.clear()
        self._key = self._buzzer = None
        self._light = Light.OFF      # the lamps are dark: the next signal is shown afresh
        self._silenced = False

    def __enter__(self) -> "Panel":
        return self.open()

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # --- inputs -----------------------------------------------------------------------------

    def _emit(self, event: DeviceEvent) -> None:
        self._sink(event)

    def _pressed(self, name: str) -> Callable[[], None]:
        guard_s = self.gpio.repeat_guard_ms / 1000

        def handler() -> None:
            now = self.clock()
            with self._lock:
                last = self._last_press.get(name)
                repeat = last is not None and 0 <= now - last < guard_s
                if not repeat:
                    self._last_press[name] = now   # a repeat does not prolong the guard
            if repeat:
                self._emit(ButtonRepeated(device=PANEL, ts=now, button=name,
                                          after_ms=round((now - last) * 1000)))
            else:
                self._emit(ButtonPressed(device=PANEL, ts=now, button=name))
        return handler

    def _keyed(self, on: bool) -> Callable[[], None]:
        def handler() -> None:
            self._emit(KeySwitched(device=PANEL, ts=self.clock(), on=on))
        return handler

    def _sensed(self, box: int, placed: bool) -> Callable[[], None]:
        cls = CardPlaced if placed else CardRemoved

        def handler() -> None:
            self._emit(cls(device=BOX_SENSORS, ts=self.clock(), box=box))
        return handler

    @property
    def key_on(self) -> bool | None:
        """Whether the supervisor's key is turned on now (None: no key switch fitted). The
        position at :meth:`open` and every change arrive as KeySwitched events."""
        return None if self._key is None else bool(self._key.is_pressed)

    def occupied_boxes(self) -> tuple[int, ...]:
        """Boxes whose sensor senses a card now (box 1 first)."""
        return tuple(n for n, s in enumerate(self._sensors, start=1) if s.is_active)

    # --- outputs ----------------------------------------------------------------------------

    @property
    def light(self) -> Light | None:
        """The signal shown now (None: the last one asked for could not be shown)."""
        return self._light

    @property
    def silenced(self) -> bool:
        """Whether the buzzer is kept quiet for the signal shown (its alarm was silenced)."""
        return self._silenced

    def show(self, light: Light | str, silenced: bool = False) -> None:
        """Show one signal on the tower light (and sound the buzzer where it says so, unless
        ``silenced``: the alarm was silenced, its light stays). The signal already shown is
        left as it is: the daemon calls this after every input, and a beep must not start
        again with each card or button; only the buzzer follows a change of ``silenced``.
        TablectlError when a lamp or the buzzer cannot be driven; the next call tries again."""
        light = Light(light)
        with self._lock:
            if light is self._light and silenced == self._silenced:
                return
            try:
                if light is self._light:
                    self._sound(light, silenced)     # the lamps are right: the buzzer only
                else:
                    self._drive(light, silenced)
            except Exception as exc:
                self._light = None   # not shown: the same signal asked again is driven again
                raise TablectlError(f"the tower light cannot show {light.value} "
                                    f"({error_text(exc, _LIGHT_CHECK)})") from None
            self._light, self._silenced = light, silenced

    def _drive(self, light: Light, silenced: bool) -> None:
        """Set every lamp and the buzzer to ``light``'s pattern."""
        lamps, _ = _SIGNALS[light]
        for colour, led in self._lamps.items():
            how = lamps.get(colour)
            if how == "blink":
                led.blink(on_time=self._blink_s, off_time=self._blink_s, background=True)
            elif how == "on":
                led.on()
            else:
                led.off()
        self._sound(light, silenced)

    def _sound(self, light: Light, silenced: bool) -> None:
        buzz = None if silenced else _SIGNALS[light][1]
        if self._buzzer is not None:
            if buzz == "once":
                self._buzzer.beep(on_time=0.3, off_time=0.1, n=1, background=True)
            elif buzz == "repeat":
                self._buzzer.beep(on_time=0.2, off_time=0.8, n=None, background=True)
            else:
                self._buzzer.off()

    def beep(self, times: int = 1) -> None:
        """Short beeps, e.g. to acknowledge a button."""
        if self._buzzer is not None:
            self._buzzer.beep(on_time=0.1, off_time=0.1, n=times, background=True)
