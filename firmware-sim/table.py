"""The simulator's Python API: simulated devices running in a background thread.

A :class:`SimulatedTable` owns one asyncio loop in a daemon thread and any number of
:class:`SimulatedDevice` in it, each a firmware model behind the protocol's link layer behind a
pseudo-terminal, a TCP port or the pyusb backend. Every method is thread-safe and synchronous,
so plain pytest tests, the demo and the benchmarks use it alike; the loop never blocks on them.
``start_device`` is the one-device shortcut. See firmware-sim/README.md for the whole API.
"""
from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import os
import shutil
import tempfile
import threading
import time
from typing import Any, Callable

from controller.errors import TablectlError

from .faults import TRIGGER_KINDS, Fault, FaultSchedule, Trigger, make_fault
from .models import MODELS, SimulatorError
from .models.base import Emit
from .models.deck import DeckCard
from .runtime import MODELS_NAMES, DeviceRuntime, SimIdentity, firmware_hash
from .scenario import Scenario, load_scenario

TRANSPORTS = ("pty", "tcp", "usb")
DEVICE_CLASSES = tuple(MODELS)
_CALL_TIMEOUT = 10.0


def event_json(kind: str, fields: dict[str, Any]) -> dict[str, Any]:
    """An emitted event as JSON-ready data: cards as text (``As``, ``As#2`` for back id 2)."""
    out: dict[str, Any] = {"kind": kind}
    for k, v in fields.items():
        out[k] = _plain(v)
    return out


def _plain(v: Any) -> Any:
    if isinstance(v, DeckCard):
        return str(v)
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if isinstance(v, dict):
        return {k: _plain(x) for k, x in v.items()}
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    return str(v)


class _LoopThread:
    """An asyncio loop in a daemon thread, and a way to run a function in it."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self.thread = threading.Thread(target=self._main, name=name, daemon=True)
        self.thread.start()
        self._ready.wait()

    def _main(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.call_soon(self._ready.set)
        self.loop.run_forever()
        pending = asyncio.all_tasks(self.loop)
        for task in pending:
            task.cancel()
        self.loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
        self.loop.close()

    def in_loop(self) -> bool:
        return threading.current_thread() is self.thread

    def call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        """Run ``fn`` in the loop thread and return its result (or raise its exception)."""
        if self.in_loop():
            return fn(*args, **kw)
        fut: concurrent.futures.Future = concurrent.futures.Future()

        def run() -> None:
            try:
                fut.set_result(fn(*args, **kw))
            except BaseException as exc:        # handed to the caller's thread
                fut.set_exception(exc)
        self.loop.call_soon_threadsafe(run)
        return fut.result(_CALL_TIMEOUT)

    def stop(self) -> None:
        if self.loop.is_running():
            self.loop.call_soon_threadsafe(self.loop.stop)
        if not self.in_loop():
            self.thread.join(5)


class SimulatedDevice:
    """One simulated device. Get it from :meth:`SimulatedTable.add` or :func:`start_device`.

    ``port`` is what a host opens: the stable symlink of a pseudo-terminal (re-pointed across
    disconnects, like udev's /dev/serial/by-id links), a ``socket://127.0.0.1:N`` URL, or for USB
    a ``usb:1d50:6018:SERIAL`` description (use :meth:`spec` to get a ready DeviceSpec).
    """

    def __init__(self, table: "SimulatedTable", name: str, device_class: str, transport: str,
                 runtime: DeviceRuntime, port: Any) -> None:
        self.table = table
        self.name = name
        self.device_class = device_class
        self.transport = transport
        self.runtime = runtime
        self._port = port
        self._wake: asyncio.Event | None = None
        self._task: asyncio.Task | None = None
        self._cond = threading.Condition()
        self._emitted: list[tuple[float, str, dict[str, Any]]] = []
        # (time.monotonic() as the frame is written, message type, seq): when a frame really
        # left, which can be after its event (stop-and-wait queues it behind the previous
        # frame's acknowledgement). What a latency is measured from.
        self._sent: collections.deque[tuple[float, str, int]] = collections.deque(maxlen=4096)
        self._first_writes: dict[str, collections.deque[float]] = {}   # by message type
        self._written: collections.Counter[str] = collections.Counter()
        self._last_seq: dict[str, int] = {}
        self.error: BaseException | None = None

    # --- where it is ------------------------------------------------------------------

    @property
    def port(self) -> str:
        """The path or URL to put in DeviceSpec.port (stable across reconnects)."""
        return self._port.port

    @property
    def tty(self) -> str | None:
        """The pseudo-terminal's current /dev/pts/N (None when unplugged or not a pty)."""
        return getattr(self._port, "tty", None)

    @property
    def connected(self) -> bool:
        return self._port.connected

    @property
    def serial(self) -> str:
        return self.runtime.identity.serial

    @property
    def identity(self):
        """The identity a driver should report (drivers.events.DeviceIdentity)."""
        return self.runtime.identity.as_device_identity()

    def spec(self, **overrides: Any):
        """A drivers.spec.DeviceSpec that reaches this device through the real driver path."""
        from drivers.spec import DeviceSpec
        from .usb_backend import PRODUCT_ID, VENDOR_ID
        kw: dict[str, Any] = {"id": self.name, "device_class": self.device_class,
                              "codec": self.runtime.codec_name}
        if self.transport == "usb":
            kw.update(transport="usb", usb_vendor=VENDOR_ID, usb_product=PRODUCT_ID,
                      usb_serial=self.serial,
                      usb_backend="firmware_sim.usb_backend:get_backend")
        else:
            kw.update(transport="serial", port=self.port)
        kw.update(overrides)
        return DeviceSpec(**kw)

    # --- faults -----------------------------------------------------------------------

    def inject(self, fault: str, *, after_s: float | None = None, at_card: int | None = None,
               at_command: int | None = None, at_deck: int | None = None,
               at_shake: int | None = None, **args: Any) -> None:
        """Inject ``fault`` (see firmware_sim.faults.FAULTS) now, or arm it for a trigger:
        ``after_s`` seconds from the device's start, or the Nth card / host command / deck /
        shake (counted from the device's start, the first is 1)."""
        f = make_fault(fault, self.device_class, f"{self.name}", **args)
        triggers = {k: v for k, v in (("after_s", after_s), ("at_card", at_card),
                                      ("at_command", at_command), ("at_deck", at_deck),
                                      ("at_shake", at_shake)) if v is not None}
        if len(triggers) > 1:
            raise SimulatorError(f"{self.name}: {' and '.join(triggers)} both given; use one "
                                 "trigger")
        if triggers:
            kind, value = next(iter(triggers.items()))
            _check_trigger(kind, value)
            self.table._call(self._arm, Trigger(kind, value), f)
        else:
            self.table._call(self._now, self.runtime.inject, f)

    def reached(self, trigger: str) -> int:
        """How far the count of ``trigger`` (``at_card``, ``at_command``, ``at_deck`` or
        ``at_shake``) has gone since the device's start: a fault armed for that trigger must
        name a later one."""
        if trigger not in TRIGGER_KINDS or trigger == "after_s":
            raise SimulatorError(f"{self.name}: no count for {trigger!r}; use one of "
                                 f"{', '.join(k for k in TRIGGER_KINDS if k != 'after_s')}")
        return self.table._call(lambda: self.runtime.schedule.counters[trigger])

    def _arm(self, trigger: Trigger, fault: Fault) -> None:
        if fault.level == "device":
            self.runtime.model.check_fault(fault)
        if trigger.kind == "after_s":
            # Live, "after T seconds" means from now; the schedule counts from the start.
            trigger = Trigger("after_s", trigger.value + time.monotonic() - self.runtime.started)
        else:
            # Counts run from the device's start: one already reached would never come again.
            reached = self.runtime.schedule.counters[trigger.kind]
            if trigger.value <= reached:
                what = trigger.kind[3:]
                raise SimulatorError(
                    f"{self.name}: {trigger.kind} = {trigger.value:g} has already passed (the "
                    f"{what} count, from the device's start, is at {reached}); use "
                    f"{trigger.kind} = {reached + 1} or later, or inject the fault now")
        self.runtime.schedule.add(trigger, fault)
        self._poke()

    def disconnect(self, duration_s: float | None = None) -> None:
        """Unplug the device (for ``duration_s`` seconds, or until :meth:`reconnect`)."""
        self.inject("disconnect", duration_s=duration_s)

    def reconnect(self) -> None:
        self.inject("reconnect")

    def reboot(self) -> None:
        self.inject("reboot")

    # --- physical actions (the croupier's hands) ----------------------------------------

    def draw(self, face_up: bool = False) -> list[dict[str, Any]]:
        """Shoe: the croupier draws the next card (``face_up`` if it comes out face up).
        Returns the events the shoe reported, e.g. ``[{"kind": "card_drawn", "card": "As",
        "face_up": False}]``."""
        return self._act("shoe", "draw", face_up=face_up)

    def load_deck(self, cards: Any = None, *, cut_at: int | None = None,
                  fresh: bool = False) -> list[dict[str, Any]]:
        """Shoe or shuffler: the croupier loads the next deck (this exact order with ``cards``;
        a complete new pack with ``fresh``). A shoe may get a cut card ``cut_at`` cards in."""
        if self.device_class == "shoe":
            return self._act("shoe", "load_deck", cards, cut_at=cut_at, fresh=fresh)
        if cut_at is not None:
            raise SimulatorError("only a shoe takes a cut card")
        return self._act("shuffler", "load_deck", cards, fresh=fresh)

    def set_next_deck(self, cards: Any) -> None:
        """Shoe or shuffler: the next deck (next shuffle, next load) comes out in this order."""
        self._act(("shoe", "shuffler"), "set_next_deck", cards, timed=False)

    def place_card(self, box: int) -> list[dict[str, Any]]:
        """Box sensors: a card lands on box ``box`` (numbered from 1)."""
        return self._act("box-sensors", "place_card", box)

    def remove_card(self, box: int) -> list[dict[str, Any]]:
        return self._act("box-sensors", "remove_card", box)

    def clear_boxes(self) -> list[dict[str, Any]]:
        """Box sensors: the croupier collects the cards of every box."""
        return self._act("box-sensors", "clear_boxes")

    def open_door(self) -> list[dict[str, Any]]:
        return self._act(("shuffler", "shoe", "dice"), "open_door")

    def close_door(self) -> list[dict[str, Any]]:
        return self._act(("shuffler", "shoe", "dice"), "close_door")

    def open_lid(self) -> list[dict[str, Any]]:
        """Dice: the croupier opens the agitator's lid."""
        return self._act("dice", "open_lid")

    def close_lid(self) -> list[dict[str, Any]]:
        return self._act("dice", "close_lid")

    def clear_jam(self) -> list[dict[str, Any]]:
        return self._act(("shuffler", "shoe"), "clear_jam")

    def return_die(self) -> list[dict[str, Any]]:
        """Dice: the croupier puts a die that fell out back into the cup."""
        return self._act("dice", "return_die")

    def set_next_dice(self, values: Any) -> None:
        """Dice: the next shake shows exactly these faces."""
        self._act("dice", "set_next_dice", values, timed=False)

    def _act(self, classes: str | tuple[str, ...], action: str, *args: Any,
             timed: bool = True, **kw: Any) -> list[dict[str, Any]]:
        if isinstance(classes, str):
            classes = (classes,)
        if self.device_class not in classes:
            raise SimulatorError(f"{self.name} is a {self.device_class}; {action} is an action "
                                 f"of a {' or '.join(classes)}")

        def run() -> list[dict[str, Any]]:
            before = len(self._emitted)
            if timed:
                self.runtime.act(action, time.monotonic(), *args, **kw)
            else:
                getattr(self.runtime.model, action)(*args, **kw)
            self._poke()
            return [dict(f) for _, _, f in self._emitted[before:]]
        return self.table._call(run)

    # --- looking at it ----------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """Firmware state and counters, link state and counters, and where the port is."""
        def run() -> dict[str, Any]:
            st = self.runtime.status()
            st["firmware"] = _plain(st["firmware"])
            st.update(name=self.name, device_class=self.device_class,
                      transport=self.transport, port=self.port, tty=self.tty,
                      connected=self.connected, serial=self.serial)
            return st
        return self.table._call(run)

    def emitted(self, kind: str | None = None) -> list[dict[str, Any]]:
        """Every event the firmware has emitted so far (JSON-ready), oldest first."""
        with self._cond:
            return [dict(f, kind=k) for _, k, f in self._emitted if kind in (None, k)]

    def frames(self) -> list[tuple[float, str, str, int, str]]:
        """The recent frames on the wire: (time, "tx"|"rx", message, seq, note)."""
        return self.table._call(lambda: list(self.runtime.frames))

    def acknowledged(self) -> list[Any]:
        """The event messages the host acknowledged, oldest first (each once: a duplicate's
        acknowledgement does not count again)."""
        return self.table._call(lambda: list(self.runtime.acked))

    def wait_for(self, kind: str, count: int = 1, timeout: float = 10.0) -> list[dict[str, Any]]:
        """Block until the firmware has emitted ``count`` events of ``kind`` in all; return
        them. Raises SimulatorError after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                got = [dict(f, kind=k) for _, k, f in self._emitted if k == kind]
                if len(got) >= count:
                    return got
                left = deadline - time.monotonic()
                if left <= 0:
                    raise SimulatorError(f"{self.name}: {len(got)} of {count} {kind!r} events "
                                         f"after {timeout} s")
                self._cond.wait(left)

    def stop(self) -> None:
        """Stop this device (its port goes away). A device from start_device stops its
        table too."""
        self.table._stop_device(self)
        if self.table._owned_by is self:
            self.table.stop()

    def __enter__(self) -> "SimulatedDevice":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"<SimulatedDevice {self.name} ({self.device_class}) {self.transport} {self.port}>"

    # --- in the loop ------------------------------------------------------------------

    def _transmitted(self, kind: str, name: str, seq: int) -> None:
        now = time.monotonic()
        with self._cond:
            self._sent.append((now, name, seq))
            if seq == 0 or self._last_seq.get(name) != seq:     # not a retransmission
                self._last_seq[name] = seq
                self._written[name] += 1
                self._first_writes.setdefault(name, collections.deque(maxlen=4096)).append(now)

    def written_at(self, name: str, n: int) -> float | None:
        """When the ``n``-th frame (from 0) of message type ``name`` was first written, a
        retransmission not counted; None if it was not (or is too old to be kept)."""
        with self._cond:
            total = self._written[name]
            kept = self._first_writes.get(name, ())
            i = n - (total - len(kept))
            return kept[i] if 0 <= i < len(kept) else None

    def sent(self, name: str | None = None, since: float = 0.0) -> list[tuple[float, str, int]]:
        """The recent frames written to the wire, oldest first: (``time.monotonic()`` just
        before the write, message type, seq), of message type ``name`` if given, written
        after ``since`` (a ``time.monotonic()``)."""
        with self._cond:
            return [f for f in self._sent if name in (None, f[1]) and f[0] > since]

    def _record(self, now: float, e: Emit) -> None:
        with self._cond:
            self._emitted.append((now, e.kind, event_json(e.kind, e.fields)))
            self._cond.notify_all()

    def _now(self, fn: Callable[..., Any], *args: Any) -> Any:
        out = fn(*args, time.monotonic())
        self._poke()
        return out

    def _on_data(self, data: bytes) -> None:
        self.runtime.receive(data, time.monotonic())
        self._poke()

    def _poke(self) -> None:
        if self._wake is not None:
            self._wake.set()

    async def _run(self) -> None:
        self._wake = asyncio.Event()
        while True:
            try:
                now = time.monotonic()
                self.runtime.poll(now)
                delay = self.runtime.next_deadline(now) - time.monotonic()
            except Exception as exc:     # a bug must not stop the loop silently for the rest
                self.error = exc
                import traceback
                traceback.print_exc()
                delay = 0.5
            self._wake.clear()
            if delay > 0:
                try:
                    await asyncio.wait_for(self._wake.wait(), min(delay, 1.0))
                except asyncio.TimeoutError:
                    pass


def _check_trigger(kind: str, value: Any) -> None:
    if kind == "after_s":
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise SimulatorError(f"after_s = {value!r} must be seconds, 0 or more")
    elif isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise SimulatorError(f"{kind} = {value!r} must be a count from 1")


class SimulatedTable:
    """Several simulated devices in one background loop, with an optional control channel.

    ``seed`` and ``speed`` are the defaults of every device added; ``transport`` the default
    transport; ``scenario`` a scenario file path, a bundled scenario name or a parsed
    :class:`~firmware_sim.scenario.Scenario` whose device settings and faults apply to the
    devices added (``start_scenario_devices`` adds those it lists); ``control`` ``"tcp"``
    (127.0.0.1, a free port), ``"tcp:PORT"``, ``"unix:PATH"`` or None for no control channel.
    """

    def __init__(self, *, seed: int = 0, speed: float = 1.0, transport: str = "pty",
                 scenario: str | Scenario | None = None, control: str | None = None,
                 link_dir: str | None = None) -> None:
        if transport not in TRANSPORTS:
            raise SimulatorError(f"transport {transport!r} is unknown; use pty, tcp or usb")
        self.scenario = (load_scenario(scenario) if isinstance(scenario, (str, os.PathLike))
                         else scenario)
        sc = self.scenario
        self.seed = sc.seed if sc is not None and sc.seed is not None else seed
        self.speed = sc.speed if sc is not None and sc.speed is not None else speed
        if not self.speed > 0:
            raise SimulatorError(f"speed {speed!r} must be above 0")
        self.transport = transport
        self.devices: dict[str, SimulatedDevice] = {}
        self._owned_by: SimulatedDevice | None = None
        self._own_dir = link_dir is None
        self.link_dir = link_dir or tempfile.mkdtemp(prefix="tablectl-sim-")
        os.makedirs(self.link_dir, exist_ok=True)
        self._loop = _LoopThread("firmware-sim")
        self._stopped = False
        self.control_address: str | None = None
        self._control = None
        if control is not None:
            from .control import ControlServer
            self._control = ControlServer(self, control)
            try:
                self.control_address = self._call(self._control.start_sync)
            except BaseException:
                # Nothing of this table may outlive the error: not its loop thread (which
                # kept the process from ending), not the directory it made.
                self._control = None
                self.stop()
                raise

    # --- devices ----------------------------------------------------------------------

    def add(self, device_class: str, name: str | None = None, *, transport: str | None = None,
            seed: int | None = None, speed: float | None = None, deck: Any = None,
            codec: str = "tablectl", serial: str | None = None, recognises_cards: bool = True,
            dice: int = 4, boxes: int = 7, cut_at: int | None = None, tcp_port: int = 0,
            link: str | None = None) -> SimulatedDevice:
        """Start one simulated device and return it.

        ``name`` defaults to the class (``shuffler``, ``shoe``, ``dice``, ``box-sensors``);
        ``deck`` is an explicit first deck (cards as ``"As"``, ``"As#2"`` for a foreign back);
        ``codec`` the wire protocol (``tablectl`` or, for dice, ``dice-binary``); ``serial``
        the serial number (USB: how the host finds it); ``dice`` / ``boxes`` the number of dice
        in the cup / boxes watched; ``cut_at`` a shoe's cut card position; ``tcp_port`` a fixed
        TCP port (0: a free one); ``link`` the path of a pseudo-terminal's stable symlink
        (default: LINK_DIR/NAME)."""
        if device_class not in MODELS:
            raise SimulatorError(f"device class {device_class!r} is unknown; use one of "
                                 f"{', '.join(DEVICE_CLASSES)}")
        name = name or device_class
        if name in self.devices:
            raise SimulatorError(f"a device named {name!r} is already running; give another "
                                 "name")
        sc = self.scenario
        opts = dict(sc.devices.get(name, {})) if sc is not None else {}
        opts.pop("class", None)
        codec = opts.pop("codec", codec)
        transport = transport or opts.pop("transport", None) or self.transport
        opts.pop("transport", None)
        if transport not in TRANSPORTS:
            raise SimulatorError(f"transport {transport!r} is unknown; use pty, tcp or usb")
        if codec not in ("tablectl", "dice-binary") or (codec == "dice-binary"
                                                         and device_class != "dice"):
            raise SimulatorError(f"codec {codec!r} does not fit a {device_class}; use tablectl "
                                 "(or dice-binary for dice)")
        seed = seed if seed is not None else opts.pop("seed", self.seed)
        speed = speed if speed is not None else opts.pop("speed", self.speed)
        deck = deck if deck is not None else opts.pop("deck", None)
        serial = serial or opts.pop("serial", None) or _serial(device_class, name, seed,
                                                               transport)
        cut_at = cut_at if cut_at is not None else opts.pop("cut_at", None)
        recognises_cards = opts.pop("recognises_cards", recognises_cards)
        dice = opts.pop("dice", dice)
        boxes = opts.pop("boxes", boxes)
        tcp_port = opts.pop("tcp_port", tcp_port)
        link = link or opts.pop("link", None)

        schedule = FaultSchedule()
        immediate: list[Fault] = []
        if sc is not None:
            for sf in sc.faults_for(name, device_class):
                if sf.trigger is None:
                    immediate.append(sf.fault)
                else:
                    schedule.add(sf.trigger, sf.fault)

        kw: dict[str, Any] = {"seed": seed, "speed": speed, "schedule": schedule}
        if device_class in ("shuffler", "shoe"):
            kw.update(deck=deck, recognises_cards=recognises_cards)
            if device_class == "shoe":
                kw["cut_at"] = cut_at
        elif device_class == "dice":
            kw["dice"] = dice
        else:
            kw["boxes"] = boxes
        try:
            model = MODELS[device_class](**kw)
        except TablectlError:
            raise
        for trigger, f in [*((None, f) for f in immediate), *schedule.pending()]:
            if f.level == "device":
                try:
                    model.check_fault(f)
                except TablectlError as exc:
                    when = f" ({trigger})" if trigger is not None else ""
                    raise SimulatorError(f"{name}: the scenario's fault {f.name!r}{when}: "
                                         f"{exc}") from None
        units = {"dice": dice, "box-sensors": boxes}.get(device_class, 1)
        identity = SimIdentity(device_class, serial, model=MODELS_NAMES[device_class],
                               firmware_hash=firmware_hash(device_class),
                               recognises_cards=recognises_cards if device_class in (
                                   "shuffler", "shoe") else False, units=units)
        return self._call(self._start, name, device_class, transport, model, identity, codec,
                          tcp_port, link, immediate, seed)

    def _start(self, name, device_class, transport, model, identity, codec, tcp_port, link,
               immediate, seed) -> SimulatedDevice:
        loop = self._loop.loop
        holder: dict[str, SimulatedDevice] = {}

        def on_data(data: bytes) -> None:
            holder["dev"]._on_data(data)

        if transport == "pty":
            from .transports.pty import PtyPort
            port = PtyPort(loop, on_data, link or os.path.join(self.link_dir, name))
        elif transport == "tcp":
            from .transports.tcp import TcpPort
            port = TcpPort(loop, on_data, tcp_port)
        else:
            from .usb_backend import UsbPort
            port = UsbPort(loop, on_data, identity.serial, manufacturer=identity.vendor,
                           product=identity.model)
        now = time.monotonic()
        runtime = DeviceRuntime(model, identity, codec=codec, port=port, now=now,
                                link_seed=seed)
        dev = SimulatedDevice(self, name, device_class, transport, runtime, port)
        holder["dev"] = dev
        runtime.on_emit = dev._record
        runtime.on_transmit = dev._transmitted
        try:
            for f in immediate:
                runtime.inject(f, now)
        except BaseException:
            port.close()            # not started: its name and port are free again
            raise
        self.devices[name] = dev
        dev._task = loop.create_task(dev._run())
        return dev

    def start_scenario_devices(self) -> list[SimulatedDevice]:
        """Start every device the scenario's [devices.NAME] tables list."""
        if self.scenario is None:
            return []
        out = []
        for name in self.scenario.devices:
            if name not in self.devices:
                out.append(self.add(self.scenario.device_class(name) or name, name))
        return out

    def check_scenario(self) -> None:
        """Raise ScenarioError if a fault of the scenario reaches none of the devices started
        (a misspelt device name, a shoe fault with no shoe)."""
        if self.scenario is not None:
            self.scenario.check_devices({n: d.device_class for n, d in self.devices.items()})

    def __getitem__(self, name: str) -> SimulatedDevice:
        try:
            return self.devices[name]
        except KeyError:
            raise SimulatorError(f"no simulated device named {name!r}; running: "
                                 f"{', '.join(self.devices) or 'none'}") from None

    # --- lifetime ---------------------------------------------------------------------

    def _call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> Any:
        if self._stopped:
            raise SimulatorError("the simulator was stopped")
        return self._loop.call(fn, *args, **kw)

    def _stop_device(self, dev: SimulatedDevice) -> None:
        if self._stopped or self.devices.get(dev.name) is not dev:
            return

        def run() -> None:
            if dev._task is not None:
                dev._task.cancel()
            dev._port.close()
            self.devices.pop(dev.name, None)
        self._call(run)

    def stop(self) -> None:
        """Stop every device, the control channel and the loop thread. Idempotent."""
        if self._stopped:
            return
        for dev in list(self.devices.values()):
            self._stop_device(dev)
        if self._control is not None:
            self._call(self._control.stop_sync)
        self._stopped = True
        self._loop.stop()
        if self._own_dir:
            shutil.rmtree(self.link_dir, ignore_errors=True)

    def __enter__(self) -> "SimulatedTable":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    def __del__(self) -> None:       # a forgotten table must not leave its thread behind
        try:
            self.stop()
        except Exception:
            pass


def _serial(device_class: str, name: str, seed: int, transport: str) -> str:
    """A default serial number: the class, the seed and the name. USB devices of one process
    must differ (the host tells them apart by it), so a clash gets a counter."""
    short = {"shuffler": "SHF", "shoe": "SHO", "dice": "DIC", "box-sensors": "BOX"}[device_class]
    suffix = "" if name == device_class else "-" + name.upper()
    serial = f"SIM-{short}-{seed:05d}{suffix}"
    if transport == "usb":
        from .usb_backend import devices
        taken = {p.serial for p in devices()}
        n = 2
        base = serial
        while serial in taken:
            serial = f"{base}-{n}"
            n += 1
    return serial


def start_device(device_class: str, transport: str = "pty", seed: int = 0, speed: float = 1.0,
                 deck: Any = None, scenario: str | Scenario | None = None,
                 **options: Any) -> SimulatedDevice:
    """Start one simulated device in its own background thread; ``.stop()`` ends both.
    ``options`` are those of :meth:`SimulatedTable.add` (name, codec, serial, dice, boxes,
    cut_at, tcp_port, link, recognises_cards)."""
    table = SimulatedTable(seed=seed, speed=speed, transport=transport, scenario=scenario)
    try:
        dev = table.add(device_class, deck=deck, **options)
        table.check_scenario()
    except BaseException:
        table.stop()
        raise
    table._owned_by = dev
    return dev
