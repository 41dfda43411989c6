"""The daemon: one table, its devices, its panel and its journal, on one asyncio queue.

Every input becomes one item on one queue: device events from the drivers, panel events from
GPIO (gpiozero's threads put them on the queue thread-safely), and commands from the local
control socket. The main loop takes them one at a time and hands them to the
:class:`~controller.table.runner.TableRunner`, which writes each to the journal before the
machine acts and writes the machine's decisions before anything is published, lit or sent to a
device. The loop pings the systemd watchdog; SIGTERM stops it cleanly after the item in hand,
with the journal closed properly. On each turn it also looks at the wall clock against the
monotonic clock (controller/clock_watch.py) and journals a step of it, as it does a start
whose clock is behind the journal (docs/journal.md, *The clock*). A reload (``systemctl reload``:
``tablectl reload`` on the control socket, or SIGHUP) re-reads table.toml and puts its console
tokens in force, journaled first (:meth:`Service._reload`).

A device event is acknowledged to its device only once it is journaled (the drivers are opened
in confirm mode): the journal keeps, with each event, the device's serial number, the link
session and the frame's sequence number, and each session as a ``link`` record, so that after a
crash the links resume the devices' sessions and a frame journaled but not yet acknowledged is
recognised when the device sends it again (docs/protocol.md 3.6, docs/journal.md).

The control socket (``--control PATH``, a Unix socket, mode 0600: only the service user and
root reach it) speaks JSON lines. A request is ``{"command": NAME, "role": ROLE, "args": {...}}``
(answered ``{"ok": true}`` or ``{"ok": false, "error": "..."}``), ``{"query": "view"}`` (the
public view), ``{"subscribe": true}`` (every public event from then on, one per line) or
``{"reload": true}`` (a reload of table.toml, answered once done with its outcome and its
``config_reload`` record: :meth:`Service.reload_request`). It carries only public events: no
card face down at the table ever goes through it, nor any console token.
"""
from __future__ import annotations

import asyncio
import dataclasses
import json
import logging
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from controller import __version__
from controller.access import reason
from controller.clock_watch import (CLOCK_BEHIND, CLOCK_STEP, HEALTH_NAME, Behind, ClockWatch,
                                    Step, boot_behind, run_start, seconds)
from controller.config import TableConfig
from controller.cpu_latency import DEVICE as CPU_LATENCY_DEVICE
from controller.cpu_latency import OFF as CPU_WAKEUP_OFF
from controller.cpu_latency import CpuLatency
from controller.errors import TablectlError, error_text
from controller.inputs import TIMER, ButtonPressed, WaitOver
from controller.journal import Journal, Kind
from controller.journal_head import (Head, HeadError, HeadWriter, head_path, mismatch,
                                     read_head)
from controller.journal_head import check as check_head
from controller.logs import bind, get_logger
from controller.panel_health import HEALTH_NAME as PANEL_HEALTH
from controller.panel_health import LIGHT_FAILED, NOT_OPENED, PanelHealth
from controller.rules import get_game
from controller.sdnotify import STOP_SEND_TIMEOUT_S, Notifier
from controller.shown import shown
from controller.start_time import journal_bytes, phase_budget
from controller.strict_json import first_twice, nesting, pairs, plain
from controller.table import Table
from controller.table.machine import Command
from controller.table.runner import ReplayDiverged, TableRunner
from controller.table.secrecy import PublicEvent, reads_as_card, redact_device_event, scrub
from controller.tower import buzzer_silenced, tower_light
from drivers import events as ev
from drivers.driver import Delivery, DeviceRefused
from drivers.link import LinkDown

if TYPE_CHECKING:       # controller.api (aiohttp) is imported only by a table that reloads
    from controller.api.reload import Outcome

# The journal kind of a link session's mark (drivers.link.SessionMemory.mark()).
LINK_KIND = "link"
# A burst of device events already waiting is journaled in one commit of at most this many.
GROUP_MAX = 64
API_RETRY_S = 5.0              # how often the console's address is tried again after a failure
API_RETRY_LOG_EVERY = 12       # a failure logged again once a minute, not every attempt
SUBSCRIBER_BACKLOG = 1 << 20   # bytes of events a control-socket listener may leave unread
# The journal's WAL is checkpointed when the table is quiet (no input for CHECKPOINT_QUIET_S)
# once CHECKPOINT_AFTER commits wait in it, so SQLite's own checkpoint (every 1,000 pages) does
# not fall inside the commit of some card. A table that is never quiet for that long still has
# a moment when no card is due: a round has just ended (the croupier collects and pays), and
# then CHECKPOINT_AFTER_ROUND commits are enough. Only a table with neither gets SQLite's.
CHECKPOINT_QUIET_S = 0.02
CHECKPOINT_AFTER = 32
CHECKPOINT_AFTER_ROUND = 8
ROUND_ENDS = ("round_complete", "round_void", "round_not_played")
# The exit status of a start whose journal does not replay to what was played (sysexits'
# EX_DATAERR). Starting again cannot mend it, so the unit does not restart on it
# (RestartPreventExitStatus); every other failure exits 1 and is restarted.
EXIT_UNRECOVERABLE = 65
# How long the stop waits for each device to close: one that will not must not hold it.
DEVICE_CLOSE_S = 2.0


def integrity_monitor(cfg: TableConfig) -> Any:
    """The table's deck-integrity monitor from ``[integrity]``: the decks per shoe, the
    table's back ids (a card of another is foreign), the sentinel's false-alarm level, and a
    fresh deck every round in Super Pan 9 (261/96/M art. 2(1))."""
    return _monitor(_integrity_settings(cfg))


def table_settings(cfg: TableConfig) -> dict[str, Any]:
    """What the table machine is built with, as JSON: the ``table`` of the ``config`` record.
    A round opened under these settings names that record (``round_open`` ``config``), and
    recovery rebuilds the round from them (:func:`build_table`), whatever the file says by
    then. Raises TablectlError for a configuration the table cannot be built with."""
    devices = {spec.id: spec.device_class for spec in cfg.devices.values()}
    sensors = any(c == "box-sensors" for c in devices.values()) or bool(
        cfg.gpio and cfg.gpio.box_sensors)
    if cfg.gpio and cfg.gpio.box_sensors:
        devices.setdefault("box-sensors", "box-sensors")
    game = get_game(cfg.game)
    follows = getattr(game, "limits_follow", None) or {}
    limits = {}
    for wager in getattr(game, "wagers", None) or ():
        lo, hi = cfg.limits.for_wager(follows.get(wager, wager))  # the Play: the Ante's
        limits[wager] = [lo or 0, hi or 0]
    if cfg.holdem is None and cfg.game == "texas-holdem":
        # the blinds posted at the table are the house's (11/2008 art. 4(3)): never a default
        raise TablectlError("a texas-holdem table needs its blinds, structure and rake: "
                            "add a [holdem] section to the configuration "
                            "(docs/configuration.md)")
    return {"game": cfg.game, "mode": cfg.mode.value, "layout_boxes": cfg.boxes,
            "interpretations": dict(game.resolve_interpretations(cfg.interpretations)),
            "devices": devices, "box_sensors": sensors, "limits": limits,
            "holdem": cfg.holdem.table_options() if cfg.holdem is not None else None,
            "integrity_action": cfg.integrity_alarm,
            "house_co_bank_capital": cfg.pan9.house_co_bank_capital if cfg.pan9 else None,
            "integrity": _integrity_settings(cfg)}


def _integrity_settings(cfg: TableConfig) -> dict[str, Any]:
    ids = cfg.integrity_deck_ids
    return {"decks": cfg.integrity_decks, "deck_ids": list(ids) if ids is not None else None,
            "alpha": cfg.integrity_alpha, "deck_per_round": cfg.game == "super-pan-9"}


def build_table(table_id: str, settings: Mapping[str, Any]) -> Table:
    """The table machine, with its integrity monitor, from :func:`table_settings` (those of
    this start, or those journaled for the round a restart rebuilds)."""
    limits = {w: (int(lo), int(hi)) for w, (lo, hi) in settings["limits"].items()}
    return Table(table_id, get_game(settings["game"]), settings["mode"],
                 layout_boxes=settings["layout_boxes"],
                 interpretations=settings["interpretations"], devices=settings["devices"],
                 box_sensors=settings["box_sensors"], limits=limits, holdem=settings["holdem"],
                 integrity=_monitor(settings["integrity"]),
                 integrity_action=settings["integrity_action"],
                 house_co_bank_capital=settings["house_co_bank_capital"])


def _monitor(integrity: Mapping[str, Any]) -> Any:
    from controller.integrity.monitor import IntegrityConfig, IntegrityMonitor

    ids = integrity["deck_ids"]
    return IntegrityMonitor(IntegrityConfig(
        decks=integrity["decks"], deck_ids=frozenset(ids) if ids is not None else None,
        alpha=integrity["alpha"], deck_per_round=integrity["deck_per_round"]))


_WAKE = object()    # on the queue: look at _stopping (and ping the watchdog); not an input


# What the pit and the operator must look at: logged as warnings (journald's priority 4).
WARNING_EVENTS = frozenset({"ruling", "round_void", "irregular_event", "controller_fault",
                            "device_condition", "device_replaced", "device_refused"})


def public_log_level(kind: str) -> str:
    """The log level of a published event of ``kind``: a warning for what went wrong at the
    table (a ruling, a void, a device's condition, a unit swapped), info for the rest."""
    return "warning" if kind in WARNING_EVENTS else "info"


def _own_name(value: Any) -> Any:
    """A device's own name that reads as a card (a serial "5s"), marked as the device's, as
    the table marks a ``device_replaced`` identity: published text that spells a card is
    refused as a face-down card's."""
    return f"{value} (as the device names it)" if isinstance(value, str) \
        and reads_as_card(value) else value


@dataclass
class _CommandItem:
    name: str
    role: str
    args: dict[str, Any]
    done: asyncio.Future = field(repr=False, default=None)  # type: ignore[assignment]


class Service:
    """``tablectl run``. Build with the loaded configuration, then ``await run()``."""

    def __init__(self, config: TableConfig, *, control: str | Path | None = None,
                 notifier: Notifier | None = None, pin_factory: Any = None,
                 open_panel: bool = True, clock: Any = time) -> None:
        self.config = config
        # The journal's clock (time_ns, monotonic_ns), which the clock watch reads too: a
        # test sets the time every record is stamped with here.
        self.clock = clock
        self.clock_watch: ClockWatch | None = None
        self.control_path = Path(control) if control else None
        self.notifier = notifier or Notifier.from_env()
        self.pin_factory = pin_factory
        self.open_panel = open_panel
        self.log = get_logger("service")
        self.queue: asyncio.Queue = asyncio.Queue()
        self.drivers: dict[str, Any] = {}
        self.panel: Any = None
        self.panel_health = PanelHealth()    # the panel's fault, for the pit's health
        self.subscribers: set[asyncio.StreamWriter] = set()   # the control socket's stream
        self._lines: list[bytes] = []     # the stream's lines of the commit being published
        self._stopping = asyncio.Event()
        self._tasks: set[asyncio.Task] = set()
        self.runner: TableRunner | None = None
        self.failed: str | None = None      # why the service stopped on its own (exit 1)
        # Per-event debug lines cost a redaction and a JSON encoding: only when asked for.
        self.debug = logging.getLogger().isEnabledFor(logging.DEBUG)
        self.journal: Journal | None = None
        self.api: Any = None
        self._quiet: asyncio.Handle | None = None        # the checkpoint to come
        self._round_ended = False                         # an input just ended a round
        self._last_input = 0.0
        self._checkpointed = 0                            # runner.commits at the last one
        self._ticker: asyncio.TimerHandle | None = None   # the main loop's idle wake-up
        self._pinged = time.monotonic()   # when WATCHDOG=1 last went (_ping_watchdog)
        self.cpu_latency: CpuLatency | None = None        # the PM QoS request held, if any
        self._api_app: Any = None           # the console's application, once built
        self._ready = False                 # READY=1 sent: a reload may be done
        self._reload_asked = False          # SIGHUP came while starting
        self.head_file = head_path(config.journal_path)  # the daemon's own anchor
        self._head: Head | None = None      # as found at start (None: no head file)
        self._held = False                  # the journal is not to be written (its head)
        self._heads: HeadWriter | None = None
        self._up = asyncio.Event()          # set with _ready: a reload request waits for it
        self._not_opened: dict[str, int] = {}   # device -> its last device_not_opened record

    # --- life cycle -------------------------------------------------------------------------
    async def run(self) -> int:
        cfg = self.config
        bind(table=cfg.table_id)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop, sig.name)
        # SIGHUP (systemctl reload): the console's tokens from table.toml again. Caught from
        # the first moment: its default action would end the process, and with it the round.
        loop.add_signal_handler(signal.SIGHUP, self.reload)
        if self.control_path is not None:
            self._check_control()       # refused before the journal or a device is touched
        # SQLite takes back what a crash left in the WAL, and an older journal gets its
        # indexes rebuilt: both read as much as the journal holds.
        self._extend_start("opening the journal")
        try:
            self._head = read_head(self.head_file)
        except HeadError as exc:
            return self._hold(str(exc))
        if self._head is not None and self._head.seq and not Path(cfg.journal_path).exists():
            # Opening would make an empty journal in its place.
            return self._hold(mismatch(self.head_file, self._head, cfg.table_id,
                                       Path(cfg.journal_path), None, ""))
        held = self._check_head_untouched()
        if held:
            return self._hold(held)
        self.journal = Journal.open(cfg.journal_path, cfg.table_id, clock=self.clock)
        self._heads = HeadWriter(self.head_file, on_error=self._head_not_written)
        try:
            held = self._check_head()
            if held:
                return self._hold(held)
            return await self._run()
        finally:
            await self._shutdown()

    def _check_head_untouched(self) -> str:
        """:meth:`_check_head` on a reader that writes nothing, before the journal is opened
        for writing: a writer's connection, closed, copies the WAL into the main file, so a
        start refused after opening one would change the journal kept as the evidence of
        the loss it reports. A journal this reader cannot open is left to the writer's
        open, which names the problem in its own words."""
        if self._head is None:
            return ""
        try:
            with Journal.open(self.config.journal_path, readonly=True, untouched=True) as j:
                return check_head(j, self.head_file, self._head)
        except TablectlError:
            return ""

    def _check_head(self) -> str:
        """Why the journal does not hold the head the daemon last wrote down, or ''. Checks
        the chain from that record to the journal's end: what was written since (a round at
        most, and what a crash left), read before anything is appended."""
        assert self.journal is not None
        return "" if self._head is None else check_head(self.journal, self.head_file,
                                                        self._head)

    def _hold(self, why: str) -> int:
        """Stop before anything of this start is written: the journal lost records it had,
        or its head cannot be trusted; a restart cannot mend it (EXIT_UNRECOVERABLE)."""
        self._held = True
        self.failed = why
        self.log.error("journal does not hold what the daemon last wrote down; not started",
                       why=why)
        return EXIT_UNRECOVERABLE

    def _current_head(self) -> Head | None:
        """The journal's last record, to write down: every record up to it is on disk."""
        if self._held or self.journal is None or (
                self.runner is not None and self.runner.broken is not None):
            return None
        try:
            seq, digest = self.journal.head()
        except TablectlError:
            return None
        return Head(self.config.table_id, seq, digest)

    def _head_not_written(self, exc: OSError) -> None:
        # The journal is the record; the head only guards it: said, never fatal.
        self.log.warning("journal head not written down", path=str(self.head_file),
                         error=str(exc))

    async def _run(self) -> int:
        cfg = self.config
        settings = table_settings(cfg)
        table = build_table(cfg.table_id, settings)
        behind, stopped, resumed = self._watch_start()
        start = {"event": "start", "pid": os.getpid(), "boot_id": self.clock_watch.boot,
                 # The daemon's own anchor as found and checked (null: none was found).
                 "head": None if self._head is None else {"seq": self._head.seq,
                                                          "hash": self._head.hash}}
        if resumed is not None:
            # The boot's clock_behind still shown: the next start of the boot finds it here.
            start["clock_behind"] = resumed
        self.journal.append(Kind.SERVICE.value, start, source="service")
        if stopped is not None:
            # Measured from the last record before the stop: the step across it, exactly.
            rec = self.journal.append(CLOCK_STEP, stopped.payload(), source="service")
            self.log.warning("wall clock stepped while the service was stopped",
                             direction="forward" if stopped.step_ns > 0 else "back",
                             step=seconds(stopped.step_ns), step_ns=stopped.step_ns,
                             record=rec.seq)
        if resumed is not None:
            self.log.warning("wall clock still behind the journal, as at an earlier start of "
                             "this boot", clock_behind=resumed)
        if behind is not None:
            # Journaled before anything else of this start is acted on; the table plays on
            # (an operator runs while NTP catches up), the pit sees it in the health.
            rec = self.journal.append(CLOCK_BEHIND, behind.payload(), source="service")
            self.log.warning("wall clock behind the journal: it went back across the restart",
                             behind_s=round(behind.behind_ns / 1e9, 3),
                             last_record=behind.last_seq, record=rec.seq)
        # What a regulator asks of a round: which configuration (its file's SHA-256, every
        # setting in force, each interpretation as resolved with its default) and which
        # version of the controller ruled on it. ``table`` is what the table is built with:
        # each round names this record, and a restart rebuilds the round from it.
        config = self.journal.append(Kind.CONFIG.value,
                                     {**cfg.to_json(), "interpretations": dict(
                                         table.interpretations), "version": __version__,
                                      "table": settings},
                                     source="service")
        self.runner = TableRunner(table, self.journal, publish=self._publish, send=self._send,
                                  published=self._published, settings=settings,
                                  config_seq=config.seq,
                                  build=lambda s: build_table(cfg.table_id, s),
                                  reconfigured=self._reconfigured)
        # The replay from the last round's snapshot, and the integrity monitor's deck, which
        # may have begun long before it.
        self._extend_start("recovering the table from the journal")
        try:
            report = self.runner.recover()
        except ReplayDiverged as exc:
            # The journal does not replay to what was played: nothing is acted on (no device
            # opened, no input taken); the alarm is journaled and the stop says why.
            self.failed = str(exc)
            self.log.error("recovery stopped: the journal cannot be replayed", why=self.failed)
            return EXIT_UNRECOVERABLE
        change = report.get("configuration")
        if change:
            self.log.warning("configuration changed: the round in play goes on as it was "
                             "played; the new configuration takes effect from the next round",
                             round=report.get("round"), changed=change["changed"])
        self.log.info("recovered", **{k: v for k, v in report.items() if k != "configuration"})
        table = self.runner.table
        self._hold_cpu_latency()
        self._open_devices()
        if self.control_path is not None:
            await self._open_control()
        await self._open_api()
        self._show_light()
        self.notifier.ready(f"table {cfg.table_id}: {table.state}")
        self.log.info("ready", state=table.state, game=table.game.game_id,
                      mode=table.mode.value)
        self._ready = True
        self._up.set()
        if self._reload_asked:
            self.reload()
        await self._main_loop()
        return 1 if self.failed else 0

    def _watch_start(self) -> tuple[Behind | None, Step | None, int | None]:
        """The clock watch's first look, against the journal's last record (before this start
        writes any): what it found behind, the step while the daemon was stopped (the last
        record of this boot), and the record of this boot's clock_behind shown again (still
        behind it), or None for each. A last record that cannot be read is left to the
        recovery, which names the damage."""
        watch = self.clock_watch = ClockWatch(self.clock)
        try:
            last = self.journal.last()
            began = run_start(self.journal, last)
        except TablectlError:
            last = began = None
        behind = watch.start(last.seq if last else None, last.wall_ns if last else None)
        if last is None or began is None or began.payload.get("boot_id") != watch.boot:
            return behind, None, None
        stopped = watch.across_stop(last.seq, last.wall_ns, last.mono_ns,
                                    began.payload.get("boot_id"))
        resumed = None
        try:
            # The boot's warning, carried by the last start, or written by the run it began
            for rec in boot_behind(self.journal, began):
                earlier = Behind.from_payload(rec.payload)
                if earlier is not None and watch.resume(earlier):
                    resumed = rec.seq
        except TablectlError:
            pass
        return behind, stopped, resumed

    def _watch_clock(self) -> None:
        """One look at the wall clock against the monotonic clock (every turn of the main
        loop: each input, each watchdog tick). A step is journaled at once, before the input
        in hand, so an auditor can correct the records stamped before it
        (docs/journal.md)."""
        watch = self.clock_watch
        if watch is None or self.journal is None or (
                self.runner is not None and self.runner.broken is not None):
            return
        was_behind = watch.behind is not None
        step = watch.check()
        if step is not None:
            r = self.runner.table.round if self.runner is not None else None
            try:
                rec = self.journal.append(CLOCK_STEP, step.payload(),
                                          str(r.round_id) if r is not None else None,
                                          source="service")
            except TablectlError as exc:
                # As for any record the service writes: the journal is what failed.
                if self.failed is None:
                    self.failed = (f"the journal could not be written ({exc}); the wall "
                                   "clock's step was not recorded. Restart the service")
                    self.log.error("journal write failed; stopping", why=self.failed)
                self.stop("journal write failure")
                return
            self.log.warning("wall clock stepped", direction="forward" if step.step_ns > 0
                             else "back", step=seconds(step.step_ns), step_ns=step.step_ns,
                             record=rec.seq)
        if was_behind and watch.behind is None:
            self.log.info("wall clock caught up with the journal")

    def _extend_start(self, phase: str) -> None:
        """Before a start phase whose time grows with the journal: ask systemd for the time
        it may take (controller/start_time.py), so a long journal does not get a healthy
        start killed by the unit's TimeoutStartSec. Shown by ``systemctl status`` meanwhile.
        A no-op without NOTIFY_SOCKET."""
        if not self.notifier.enabled:
            return
        size = journal_bytes(self.config.journal_path)
        self.notifier.extend_timeout(phase_budget(size),
                                     f"starting: {phase} ({size / 1e6:.1f} MB)")

    def _reconfigured(self, change: dict[str, Any]) -> None:
        """The configuration of this start has taken effect: the round just opened is the
        first played under it."""
        self.log.warning("configuration in force from this round", **change)

    def _hold_cpu_latency(self) -> None:
        """Keep the CPUs out of idle states slow to leave while the table runs ([service]
        cpu_wakeup_us, controller.cpu_latency). Without it the table still runs, only each
        frame waits longer for a CPU to wake: the log says why and how to fix it."""
        us = self.config.cpu_wakeup_us
        if us == CPU_WAKEUP_OFF:
            return
        try:
            self.cpu_latency = CpuLatency.hold(us, self.cpu_latency_device)
            self.log.info("cpu wake-up latency held", cpu_wakeup_us=us)
        except TablectlError as exc:
            self.log.warning("cpu wake-up latency not held", error=str(exc))

    def stop(self, why: str = "stop") -> None:
        """Finish the item in hand, then stop (SIGTERM, SIGINT)."""
        if not self._stopping.is_set():
            self.log.info("stopping", signal=why)
            self.notifier.stopping(f"stopping on {why}")
            self._stopping.set()
            self.queue.put_nowait(_WAKE)

    # --- reload (SIGHUP, or {"reload": true} on the control socket) ----------------------------
    def reload(self) -> dict[str, Any] | None:
        """SIGHUP (``kill -HUP``): re-read table.toml and put its console tokens in force, without
        stopping the table (:meth:`_reload`, which the control socket's ``{"reload": true}``
        runs too). Returns the ``config_reload`` record's payload, or None when none was
        journaled (asked while starting: done once ready; the service stopping; the journal
        failing)."""
        if not self._ready:
            self._reload_asked = True
            self.log.info("reload asked while starting: done once the table is ready")
            return None
        return self._reload("SIGHUP").record

    async def reload_request(self) -> dict[str, Any]:
        """``{"reload": true}`` on the control socket (``tablectl reload``, the unit's
        ExecReload): the reload done as SIGHUP does it, answered with its outcome
        (:meth:`controller.api.reload.Outcome.reply`). Asked while starting, it waits until
        the table is ready, as a SIGHUP then does."""
        from controller.api.reload import Outcome

        if not self._ready:
            up = asyncio.ensure_future(self._up.wait())
            stopping = asyncio.ensure_future(self._stopping.wait())
            try:
                await asyncio.wait({up, stopping}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                up.cancel()
                stopping.cancel()
            if not self._ready:
                return Outcome(None, error=self._stopping_text()).reply()
        return self._reload("control socket").reply()

    def _stopping_text(self) -> str:
        why = f" ({self.failed})" if self.failed else ""
        return (f"the service is stopping{why}: nothing was reloaded; it reads "
                f"{self.config.path} when it starts again (systemctl status tablectl)")

    def _reload(self, via: str) -> Outcome:
        """The one reload, of SIGHUP and of the control socket alike: the file checked as
        ``tablectl config check`` checks it; with a mistake nothing changes and the problems
        are logged and journaled. Otherwise the ``config_reload`` record (the roles whose token
        changed, was added or removed, and the keys of other settings that differ from those in
        force: they wait for a restart, as a change of table.toml always has) is journaled
        first, then the tokens take effect: a token replaced or removed is refused from then on
        and its event streams are ended (controller.api.reload). systemd hears RELOADING=1,
        then READY=1 with the outcome as STATUS.

        Returns the :class:`controller.api.reload.Outcome`. Nothing in it awaits: two reloads
        asked at once (a SIGHUP and a request, two requests) are done one after the other on
        the event loop, the second reading the file after the first put it in force."""
        from controller.api.reload import KIND, Outcome, refusal

        if self._stopping.is_set() or self.journal is None or self.runner is None or \
                self.runner.broken is not None:
            self.log.warning("reload ignored: the service is stopping", asked_by=via)
            return Outcome(None, error=self._stopping_text())
        # The commands accepted before the reload was asked (their tokens checked against
        # those in force) are carried out, and journaled, first: none of them, nor anything
        # it does, comes after the record of the reload that may replace its token.
        taken = self._serve_waiting()
        if self._stopping.is_set() or self.runner.broken is not None:
            self.log.warning("reload ignored: the service is stopping", asked_by=via)
            return Outcome(None, error=self._stopping_text())
        cfg = self.config
        self.log.info("reload asked", asked_by=via, inputs_first=taken)
        self.notifier.reloading(f"table {cfg.table_id}: reloading {cfg.path}")
        new, record = self._reread()
        r = self.runner.table.round
        try:
            rec = self.journal.append(KIND, record, str(r.round_id) if r is not None else None,
                                      source="service")
        except TablectlError as exc:
            # As for any record the service writes: the journal is what failed, and nothing
            # the record was for is done.
            why = (f"the journal could not be written ({exc}); the reload of {cfg.path} was "
                   "not recorded, so nothing of it was applied. Restart the service")
            if self.failed is None:
                self.failed = why
                self.log.error("journal write failed; stopping", why=self.failed)
            self.stop("journal write failure")
            return Outcome(None, error=why)
        if new is None:
            self._reload_refused(record, rec.seq)
            return Outcome(record, rec.seq, refusal(record))
        self._reload_applied(new, record, rec.seq)
        return Outcome(record, rec.seq)

    def _reread(self) -> tuple[TableConfig | None, dict[str, Any]]:
        """The file checked as ``tablectl config check`` checks it (its keys, then the table
        its journal belongs to), and the ``config_reload`` record to journal: the new
        configuration and ``applied``, or None and ``refused`` with every problem."""
        from controller.api.reload import problems_json, restart_keys, role_changes
        from controller.config import ConfigError, load_config
        from controller.config_cli import check_journal_table

        path = self.config.path
        try:
            if path is None:
                raise TablectlError("the service was started on no file (a test's own "
                                    "configuration): there is none to read again")
            new = load_config(path)
            check_journal_table(new, str(path))
        except ConfigError as exc:
            try:
                text = path.read_text(encoding="utf-8") if path is not None else None
            except (OSError, UnicodeDecodeError):
                text = None
            return None, {"outcome": "refused", "path": str(path),
                          "problems": problems_json(exc.problems, text)}
        except TablectlError as exc:     # not there, not readable, not UTF-8
            return None, {"outcome": "refused", "path": str(path),
                          "problems": [{"key": "(file)", "line": None, "reason": str(exc),
                                        "fix": ""}]}
        before, after = self.config.api.tokens, new.api.tokens
        restart = restart_keys(self.config, new)
        if self._api_app is None and before != after:
            # The console was off at start (no tokens): it is started by a start, not here.
            restart = sorted([*restart, "api.tokens"])
            after = before
        return new, {"outcome": "applied", "path": str(path), "digest": new.digest,
                     "roles": role_changes(before, after), "restart": restart}

    def _reload_applied(self, new: TableConfig, record: dict[str, Any], seq: int) -> None:
        from controller.api.app import use_tokens
        from controller.config_cli import service_notes

        cfg = self.config
        roles, restart = record["roles"], record["restart"]
        ended = 0
        if self._api_app is not None:
            self.config = dataclasses.replace(cfg, api=dataclasses.replace(
                cfg.api, tokens=dict(new.api.tokens)))
            ended = use_tokens(self._api_app, self.config.api)
        self.log.info("configuration reloaded: the console tokens in force are the file's",
                      record=seq, **{f"tokens_{k}": v for k, v in roles.items()},
                      streams_ended=ended)
        if restart:
            self.log.warning("settings changed in the file take effect at the next start "
                             "(the round in play keeps its own), not on a reload",
                             keys=restart, record=seq)
        for note in [*new.warnings, *service_notes(new)]:
            self.log.info("configuration note", note=note)
        told = [f"{k} {', '.join(v)}" for k, v in roles.items() if v]
        status = f"table {cfg.table_id}: tokens reloaded ({'; '.join(told) or 'none changed'})"
        if restart:
            status += f"; needs a restart: {', '.join(restart)}"
        self.notifier.ready(status)

    def _reload_refused(self, record: dict[str, Any], seq: int) -> None:
        from controller.api.reload import problem_text

        problems = record["problems"]
        self.log.error("reload refused: the configuration in force is unchanged; fix the "
                       "file and reload again", path=record["path"], record=seq,
                       problems=[problem_text(p) for p in problems])
        self.notifier.ready(f"table {self.config.table_id}: reload refused, {len(problems)} "
                            f"problem{'s' if len(problems) != 1 else ''} in "
                            f"{record['path']} (tablectl config check); the configuration in "
                            "force is unchanged")

    async def _open_api(self) -> None:
        """The console API and pit display (controller.api), when [api.tokens] are set."""
        if not self.config.api.tokens:
            self.log.info("console api off: no [api.tokens] configured")
            return
        try:
            from controller.api.app import create_app
            from controller.api.serve import ApiServer

            # The clock watch beside the devices: the health shows a clock behind the journal.
            # And the panel's fault, if any: the pit sees a table left without it.
            extra = {HEALTH_NAME: self.clock_watch} if self.clock_watch else {}
            if self.config.gpio is not None:
                extra[PANEL_HEALTH] = self.panel_health
            parts = {**self.drivers, **extra} if extra else self.drivers
            app = create_app(self.runner, self.config, drivers=parts,
                             submit=lambda name, role, args: self.submit(name, role, args))
            self._api_app = app
        except (TablectlError, ImportError) as exc:
            # The table goes on without its console; the log says why.
            self.log.error("console api not started", error=str(exc))
            return
        try:
            self.api = await ApiServer.start(app, self.config)
        except OSError as exc:
            # The address may come later (a network still coming up at boot, a port another
            # process lets go): the table goes on and the console is tried again.
            self.log.error("console api not started; trying again", error=str(exc),
                           every_s=API_RETRY_S)
            task = asyncio.create_task(self._retry_api(app, ApiServer))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _retry_api(self, app: Any, server: Any) -> None:
        failures = 1
        while not self._stopping.is_set():
            await asyncio.sleep(API_RETRY_S)
            try:
                self.api = await server.start(app, self.config)
            except OSError as exc:
                failures += 1
                if failures % API_RETRY_LOG_EVERY == 0:
                    self.log.error("console api still not started", error=str(exc),
                                   attempts=failures)
                continue
            self.log.info("console api started", attempts=failures + 1)
            return

    async def _shutdown(self) -> None:
        if self._quiet is not None:
            self._quiet.cancel()
            self._quiet = None
        # A console held back is taken again with the stop, recorded before the stop's own
        # record, which is the last of this run.
        if self._api_app is not None:
            from controller.api.app import THROTTLE
            self._api_app[THROTTLE].close()
        # Journaled first: the light going dark, the devices' links closing and the streams
        # ending show the table stopped, and the journal says so before anything does.
        self._journal_stop()
        if self.api is not None:
            try:
                await self.api.close()
            except Exception as exc:
                self.log.warning("console api close failed", error=error_text(
                    exc, "the console's address ([api] listen, port); the stop goes on"))
        for t in list(self._tasks):
            t.cancel()
        for d in self.drivers.values():
            try:
                await asyncio.wait_for(d.close(), self.device_close_s)
            except Exception as exc:  # a device that will not close must not block the stop
                port = d.link.transport.name
                self.log.warning("device close failed", device=d.spec.id, error=error_text(
                    exc, f"the device's cable, power and port ({port}); the stop goes on, "
                         "and the port is let go as the process ends"),
                    waited_s=self.device_close_s)
        if self.panel is not None:
            self.panel.close()
            await asyncio.sleep(0)      # a press handed over just before the close is queued
        while not self.queue.empty():
            self._not_taken(self.queue.get_nowait())
        if self._control_server is not None:
            self._control_server.close()
            for writer in list(self.subscribers):   # the listeners see the stream end
                writer.close()
            self.subscribers.clear()
            if self.control_path and self.control_path.exists():
                self.control_path.unlink()
        if self.journal is not None:
            if self._heads is not None:
                self._heads.close(self._current_head())
            self.journal.close()
        if self.cpu_latency is not None:
            self.cpu_latency.release()
        # A STOPPING=1 the manager had no room for: nothing after this would carry it.
        if not await self.notifier.send_kept():
            self.log.warning("the service manager was not told of the stop; its notify queue "
                             "stayed full", waited_s=STOP_SEND_TIMEOUT_S)
        self.log.info("stopped")

    def _journal_stop(self) -> None:
        if self.journal is None or self._held:
            return
        stop: dict[str, Any] = {"event": "stop"}
        if self.failed:
            stop["failed"] = self.failed
        try:
            self.journal.append(Kind.SERVICE.value, stop, source="service")
        except TablectlError as exc:     # the journal is what failed: say so, still stop
            self.log.error("the stop could not be journaled", error=str(exc))

    _control_server: asyncio.AbstractServer | None = None
    cpu_latency_device = CPU_LATENCY_DEVICE    # where the PM QoS request is written
    device_close_s = DEVICE_CLOSE_S            # how long the stop waits for each device

    # --- inputs -----------------------------------------------------------------------------
    def _open_devices(self) -> None:
        from drivers.factory import open_driver

        for spec in self.config.devices.values():
            # The search back for the device's last event has no index to take.
            self._extend_start(f"finding {spec.id}'s last link session in the journal")
            self.drivers[spec.id] = open_driver(
                spec, self.queue, confirm=True, memory=self._session_memory(spec.id),
                on_session=lambda mark, device=spec.id: self._journal_session(device, mark),
                on_refused=self._journal_refused, on_opening=self._journal_opening)
        if self.config.gpio is not None and self.open_panel:
            from controller.panel import Panel
            try:
                self.panel = Panel.for_queue(self.config.gpio, self.queue,
                                             pin_factory=self.pin_factory).open()
            except TablectlError as exc:
                self.panel_health.fault(NOT_OPENED, f"{exc}. The table goes on without its "
                                        "buttons, key switch, box sensors and tower light "
                                        "until the service is restarted")
                self.log.error("panel not available", error=str(exc))

    def _session_memory(self, device: str) -> Any:
        """The device's last link session as the journal holds it, to resume it: its mark
        and the sequence number of the last event journaled in it (the only frame the device
        may still hold unacknowledged: it sends one at a time)."""
        from drivers.link import SessionMemory

        assert self.journal is not None
        mark = self.journal.last(kind=LINK_KIND, source=device)
        if mark is None or not isinstance(mark.payload, dict):
            return None
        p = mark.payload
        # Looked for after the mark only: its session's events come after it, and a device
        # event has no index (a device silent since its mark costs a walk that far, no more).
        last = self.journal.last(kind=Kind.DEVICE.value, source=device, since=mark.seq)
        got = last.payload.get("link") if last is not None and isinstance(
            last.payload, dict) else None
        seqs = (int(got["seq"]),) if isinstance(got, dict) and got.get(
            "session") == p.get("session") else ()
        try:
            return SessionMemory(str(p["serial"]), str(p["firmware_hash"]), str(p["session"]),
                                 seqs, int(p["tx_reserved"]))
        except (KeyError, TypeError, ValueError):
            self.log.warning("link record not understood: new session", device=device)
            return None

    def _journal_session(self, device: str, mark: dict[str, Any]) -> None:
        """Called by a link before a session serves anything: durable before it returns."""
        assert self.journal is not None
        try:
            self.journal.append(LINK_KIND, {"device": device, **mark}, source=device)
        except TablectlError as exc:
            # The link sends nothing the record was for (the raise tells it), but the table
            # believes its command went: stop, as for a failed commit of the table's own, and
            # the restart asks the device again from the journal.
            if self.failed is None:
                self.failed = (f"the journal could not be written ({exc}); {device}'s link "
                               "record was not written, so nothing it was for was sent. "
                               "Restart the service: it rebuilds the table from the journal")
                self.log.error("journal write failed; stopping", why=self.failed)
            self.stop("journal write failure")
            raise

    def _journal_refused(self, refusal: dict[str, Any]) -> None:
        """Called by a link before it shows or logs a device it refuses at link-up (once per
        distinct refusal until the device links): journaled as ``device_refused``, durable
        before it returns, then published for the pit. The record of truth says that an
        unapproved firmware, a unit of another class or two units giving one serial number
        were plugged into the table, when, and what each said of itself."""
        assert self.journal is not None
        r = self.runner.table.round if self.runner is not None else None
        device = refusal.get("device")
        try:
            rec = self.journal.append(Kind.DEVICE_REFUSED.value, refusal,
                                      str(r.round_id) if r is not None else None,
                                      source="service")
        except TablectlError as exc:
            # The device is refused all the same (the link does not link it); the journal is
            # what failed, and a table whose journal cannot be written must stop.
            if self.failed is None:
                self.failed = (f"the journal could not be written ({exc}); {device} was "
                               "refused at link-up but the refusal was not recorded. Restart "
                               "the service")
                self.log.error("journal write failed; stopping", why=self.failed)
            self.stop("journal write failure")
            raise
        self.log.info("device refusal journaled", device=device, reason=refusal.get("reason"),
                      record=rec.seq)
        if self.runner is None or self.runner.broken is not None:
            return
        table = self.runner.table
        data = {k: ({n: _own_name(v) for n, v in val.items()} if isinstance(val, dict)
                    else _own_name(val)) for k, val in refusal.items()}
        try:
            self.runner.publish(PublicEvent("device_refused", table.table_id,
                                            r.round_id if r is not None else None,
                                            table.state, data))
            self._published()
        except Exception:  # noqa: BLE001 - it is journaled: the link must not tell it again
            self.log.exception("device refusal not published", device=device)

    def _journal_opening(self, opened: bool, record: dict[str, Any]) -> None:
        """Called by a link whose device could not be opened for its grace (once per class
        of cause: ``device_not_opened``), and when it opens at last (``device_opened``, with
        the record of its last ``not_opened``): durable before it returns, before the link
        logs it. An auditor who sees a table without its round for an hour reads here that
        its shoe could not be opened, why, and the way out."""
        assert self.journal is not None
        device = str(record.get("device"))
        kind = Kind.DEVICE_OPENED if opened else Kind.DEVICE_NOT_OPENED
        if opened:
            record = {**record, "not_opened": self._not_opened.get(device)}
        r = self.runner.table.round if self.runner is not None else None
        try:
            rec = self.journal.append(kind.value, record,
                                      str(r.round_id) if r is not None else None,
                                      source="service")
        except TablectlError as exc:
            # The journal is what failed: a table whose journal cannot be written stops.
            if self.failed is None:
                self.failed = (f"the journal could not be written ({exc}); that {device} "
                               f"{'opened' if opened else 'could not be opened'} was not "
                               "recorded. Restart the service")
                self.log.error("journal write failed; stopping", why=self.failed)
            self.stop("journal write failure")
            raise
        if opened:
            self._not_opened.pop(device, None)
        else:
            self._not_opened[device] = rec.seq
        self.log.info(f"{kind.value} journaled", device=device, record=rec.seq,
                      cause=record.get("cause"))

    async def _main_loop(self) -> None:
        # The queue is awaited bare (no task, no wait set, no timeout per input: each costs
        # more than the rest of the hop between a frame and its decision). A repeating timer
        # puts _WAKE on it, so the watchdog is pinged while the table is idle; stop() does too.
        period = self.notifier.watchdog_period() or 1.0
        self._pinged = time.monotonic()
        self._tick(period, first=True)
        try:
            await self._serve_queue(period)
        finally:
            if self._ticker is not None:
                self._ticker.cancel()
                self._ticker = None

    def _tick(self, period: float, first: bool = False) -> None:
        if not first:
            self.queue.put_nowait(_WAKE)
        self._ticker = asyncio.get_running_loop().call_later(period, self._tick, period)

    async def _serve_queue(self, period: float) -> None:
        while not self._stopping.is_set():
            item = await self.queue.get()
            self._ping_watchdog(period, now=item is _WAKE)
            self._serve(item)

    def _ping_watchdog(self, period: float, now: bool = False) -> None:
        """WATCHDOG=1 when half a period has gone by since the last ping (or ``now``): before
        each input the main loop takes, and before each one a reload carries out first, so
        a long backlog drained without returning to the event loop does not outlast
        WatchdogSec."""
        at = time.monotonic()
        if now or at - self._pinged >= period / 2:
            self.notifier.watchdog()
            self._pinged = at

    def _serve(self, item: Any) -> None:
        """One item of the queue, as the main loop takes it: the clock looked at, the input
        handled (with the device events waiting behind it), the stop if its commit failed."""
        if not self._stopping.is_set():
            self._watch_clock()
        if self._stopping.is_set():
            self._not_taken(item)
            return
        if item is not _WAKE:
            self._take(item)
            self._arm_checkpoint()
        # Looked at on the idle wake-up too: a record of the console's own (a hold) may
        # have failed its commit with no input behind it.
        if self.runner is not None and self.runner.broken is not None:
            # The table in memory is ahead of its journal: only a restart, which
            # rebuilds it from the journal, may go on (systemd restarts the unit).
            self.log.error("journal write failed; stopping", why=self.runner.broken)
            self.failed = self.runner.broken
            self.stop("journal write failure")

    def _serve_waiting(self) -> int:
        """Every input on the queue now (a command the console accepted, a device event),
        handled in its order before what comes next: a reload journals its record after
        them, so the journal's order is the order they came in. Returns how many turns of
        the queue that took (a turn takes a burst of device events together)."""
        waiting = self.queue.qsize()
        served = 0
        period = self.notifier.watchdog_period() or 1.0
        while served < waiting and not self.queue.empty() and not self._stopping.is_set():
            # The event loop is not returned to until the last: the pings go from here.
            self._ping_watchdog(period)
            self._serve(self.queue.get_nowait())
            served += 1
        return served

    def _arm_checkpoint(self) -> None:
        """After an input: note when it came, and once enough commits wait in the WAL, have
        _quiet_checkpoint look for the table's next quiet moment; after an input that ended a
        round, checkpoint as soon as its outputs are out."""
        loop = asyncio.get_running_loop()
        self._last_input = loop.time()
        ended, self._round_ended = self._round_ended, False
        if self.runner is None:
            return
        waiting = self.runner.commits - self._checkpointed
        if ended and waiting >= CHECKPOINT_AFTER_ROUND:
            # No card is due before the next round is dealt: now, once this input's outputs
            # are out, instead of waiting for a quiet moment a busy table may never have.
            if self._quiet is not None:
                self._quiet.cancel()
            self._quiet = loop.call_soon(self._checkpoint)
        elif self._quiet is None and waiting >= CHECKPOINT_AFTER:
            self._quiet = loop.call_later(CHECKPOINT_QUIET_S, self._quiet_checkpoint)

    def _quiet_checkpoint(self) -> None:
        loop = asyncio.get_running_loop()
        quiet = loop.time() - self._last_input
        if quiet < CHECKPOINT_QUIET_S or not self.queue.empty():
            self._quiet = loop.call_later(max(CHECKPOINT_QUIET_S - quiet, 0.001),
                                          self._quiet_checkpoint)
            return
        self._checkpoint()

    def _checkpoint(self) -> None:
        self._quiet = None
        if self._stopping.is_set() or self.journal is None or self.runner is None or \
                self.runner.broken is not None:
            return
        self._checkpointed = self.runner.commits
        try:
            self.journal.checkpoint()
        except TablectlError as exc:    # closed, or the disk: the next commit will say so
            self.log.warning("journal checkpoint not done", error=str(exc))
            return
        head = self._current_head()
        if head is not None and self._heads is not None:
            self._heads.note(head)

    def _not_taken(self, item: Any) -> None:
        """Log a dealer's press the stop leaves untaken (on the queue once a stop was asked
        for): the table never saw it, and the dealer may have to press it again after the
        restart. Other inputs left are the devices' own, read again as they link up."""
        if isinstance(item, ButtonPressed):
            self.log.warning("button press not taken: the service was stopping",
                             button=item.button, device=item.device)

    def _take(self, first: Any) -> None:
        """Handle ``first`` and the device events already waiting behind it, as one group
        commit (at most GROUP_MAX): a burst of frames costs one journal flush, and nothing
        of it is acknowledged, published or sent before that flush. A command is handled on
        its own, so its reply is its own."""
        assert self.runner is not None
        group = [first]
        if not isinstance(first, _CommandItem):
            while len(group) < GROUP_MAX and not self.queue.empty():
                nxt = self.queue.get_nowait()
                if nxt is _WAKE:
                    continue
                if isinstance(nxt, _CommandItem):
                    self._handle_group(group)
                    group = [nxt]
                    break
                group.append(nxt)
        self._handle_group(group)

    def _handle_group(self, group: list[Any]) -> None:
        assert self.runner is not None
        try:
            if isinstance(group[0], _CommandItem):
                # Not batched: its reply must not say "ok" before its commit succeeded.
                self._handle(group[0])
            else:
                with self.runner.batch():
                    for item in group:
                        try:
                            self._handle(item)
                        except TablectlError as exc:   # refused; journaled as such
                            self.log.info("input refused", error=scrub(str(exc)))
        except Exception:   # journal or I/O trouble: say so (the loop stops if it must)
            self.log.exception("input not handled")
        self._show_light()

    def _handle(self, item: Any) -> None:
        assert self.runner is not None
        if isinstance(item, _CommandItem):
            try:
                self.runner.command(item.name, item.role, **item.args)
                result: dict[str, Any] = {"ok": True, "state": self.runner.table.state}
            except TablectlError as exc:
                error = scrub(str(exc))   # a rule's error may name cards still face down
                self.log.info("command refused", command=item.name, role=item.role,
                              error=error)
                result = {"ok": False, "error": error}
            if item.done is not None and not item.done.done():
                item.done.set_result(result)
        elif isinstance(item, Delivery):
            if self.debug:
                self.log.debug("device event", **redact_device_event(item.event.to_json()))
            # Acknowledged to the device once journaled, whatever follows. An event that did
            # not reach the disk is never acknowledged: the device keeps it (the link passes
            # its resends on no more) and sends it again to the restarted daemon.
            self.runner.device(item.event, link=item.receipt.to_json(), durable=item.confirm)
        elif isinstance(item, ev.DeviceEvent):
            if self.debug:
                self.log.debug("device event", **redact_device_event(item.to_json()))
            self.runner.device(item)

    # --- outputs ------------------------------------------------------------------------------
    def _publish(self, e: PublicEvent) -> None:
        doc = e.to_json()
        bind(round=str(e.round) if e.round is not None else None)
        if e.kind in ROUND_ENDS:
            self._round_ended = True
        if self.subscribers:
            self._lines.append(json.dumps(doc).encode() + b"\n")
        # The log line is written once the subscribers' writers have run: the event stream
        # does not wait for the log (the journal, already written, is the record of truth).
        try:
            asyncio.get_running_loop().call_soon(self._log_public, e.kind, doc)
        except RuntimeError:        # no loop (a test driving the service by hand)
            self._log_public(e.kind, doc)

    def _published(self) -> None:
        """A commit's events are all published: write their lines to the stream together."""
        if self._lines:
            lines, self._lines = self._lines, []
            self._stream(b"".join(lines))

    def _stream(self, line: bytes) -> None:
        # Written here, in the hop that made the events durable (no queue, no task between),
        # a commit's lines in one write per listener: the socket takes them at once. A
        # listener that stops reading is cut off once SUBSCRIBER_BACKLOG bytes wait for it,
        # so it can hold neither the table nor memory.
        for writer in list(self.subscribers):
            if writer.is_closing():
                self.subscribers.discard(writer)
            elif writer.transport.get_write_buffer_size() > SUBSCRIBER_BACKLOG:
                self.subscribers.discard(writer)
                self.log.warning("event stream subscriber cut off: it stopped reading",
                                 waiting=writer.transport.get_write_buffer_size())
                # Aborted, not closed: a close would wait for it to read what is pending.
                writer.transport.abort()
            else:
                writer.write(line)

    def _log_public(self, kind: str, doc: dict[str, Any]) -> None:
        level = public_log_level(kind)
        # "event" is the log line's own name: an event's field of that name is logged as
        # "event_" rather than raising a TypeError after the journal already holds it.
        getattr(self.log, level)(kind, **{("event_" if k == "event" else k): v
                                          for k, v in doc.items()
                                          if k not in ("kind", "table", "round")})

    def _send(self, c: Command) -> None:
        if c.device_class == TIMER:
            self._wait(c)
            return
        spec = self.config.device(c.device_class)
        driver = self.drivers.get(spec.id) if spec else None
        if driver is None:
            self.log.warning("no device for command", device_class=c.device_class,
                             action=c.action)
            return
        method = getattr(driver, c.action, None)
        if method is None:
            self.log.error("driver has no such command", device=spec.id, action=c.action)
            driver.command_failed(c.action, TablectlError(
                f"the {spec.device_class} driver has no command {c.action!r}"))
            return

        async def call() -> None:
            try:
                await method(**c.args)
            except (DeviceRefused, LinkDown) as exc:
                # The queue has it already: the refusal (command_refused) or the loss
                # (link_lost), which the table rules on.
                self.log.warning("device refused", device=spec.id, action=c.action,
                                 error=error_text(exc, "the device's health and its log"))
            except Exception as exc:  # noqa: BLE001 - whatever it is, the table must hear of it
                # Nothing else tells the table, which would wait for ever for what it asked.
                self.log.exception("device command failed", device=spec.id, action=c.action,
                                   error=error_text(exc, "the traceback below, and report "
                                                         "it with this log"))
                driver.command_failed(c.action, exc)
        task = asyncio.ensure_future(call())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _wait(self, c: Command) -> None:
        """The table's ``wait`` (it has no clock): once ``after_s`` has passed, its end comes
        back on the queue as a WaitOver input, journaled before the table acts on it. A wait
        not over when the service stops is lost; the restarted table asks again."""
        args = {k: c.args[k] for k in ("what", "about", "ask", "after_s") if k in c.args}

        def over() -> None:
            if not self._stopping.is_set():
                self.queue.put_nowait(WaitOver(device=TIMER, ts=time.monotonic(), **args))

        asyncio.get_running_loop().call_later(max(0.0, float(args.get("after_s", 0))), over)

    def _show_light(self) -> None:
        if self.panel is None or self.runner is None:
            return
        if self.runner.broken is not None:
            # A commit failed: the table in memory holds what the journal does not. The
            # light keeps the last signal the journal vouches for until the panel closes.
            return
        try:
            table = self.runner.table
            self.panel.show(tower_light(table), silenced=buzzer_silenced(table))
        except TablectlError as exc:
            # The input is journaled and acted on; only the lamp on the table is wrong. The
            # table goes on (the pit display's light is right), said once until it works again.
            if self.panel_health.condition != LIGHT_FAILED:
                self.panel_health.fault(LIGHT_FAILED, f"{exc}; the lamp on the table may show "
                                        "another signal than the table's (this display's)")
                self.log.error("tower light not set", error=str(exc))
            return
        if self.panel_health.condition == LIGHT_FAILED:
            self.panel_health.clear(LIGHT_FAILED)
            self.log.info("tower light shown again", signal=self.panel.light.value)

    # --- control socket -----------------------------------------------------------------------
    _CONTROL_WAY_OUT = ("create it, or give another --control path (under systemd, "
                        "RuntimeDirectory=tablectl creates /run/tablectl)")

    def _check_control(self) -> None:
        """Refuse, at start, a control socket path that cannot be bound: its directory missing
        or not writable, something other than a socket in its place, a path too long."""
        path = self.control_path
        assert path is not None
        where = f"control socket {path}"
        parent = path.parent
        try:
            if not parent.is_dir():
                what = "is not a directory" if parent.exists() else "does not exist"
                raise TablectlError(f"{where}: the directory {parent} {what}; "
                                    f"{self._CONTROL_WAY_OUT}")
            if not os.access(parent, os.W_OK | os.X_OK):
                raise TablectlError(f"{where}: the directory {parent} cannot be written by "
                                    "this user; run as the service user, or give another "
                                    "--control path (under systemd, RuntimeDirectory=tablectl "
                                    "creates /run/tablectl for it)")
            if (path.exists() or path.is_symlink()) and not path.is_socket():
                raise TablectlError(f"{where}: {path} exists and is not a socket (it is left "
                                    "as it is); give another --control path")
        except OSError as exc:
            raise TablectlError(f"{where} cannot be used: {reason(exc)}"
                                "; give another --control path") from None
        if len(os.fsencode(str(path))) > 108:   # sun_path, as Python's bind checks it
            raise TablectlError(f"{where}: the path is longer than the 108 bytes a Unix "
                                "socket's path may have; give a shorter --control path (e.g. "
                                "/run/tablectl/control.sock)")

    async def _open_control(self) -> None:
        path = self.control_path
        assert path is not None
        old = os.umask(0o177)
        try:
            if path.is_socket():        # a stale socket of an earlier run
                path.unlink()
            self._control_server = await asyncio.start_unix_server(self._client, str(path))
        except OSError as exc:          # what changed since the check at start
            raise TablectlError(f"control socket {path} cannot be opened: "
                                f"{reason(exc)}; make sure its "
                                "directory exists and can be written, or give another "
                                "--control path") from None
        finally:
            os.umask(old)

    async def submit(self, name: str, role: str, args: dict[str, Any]) -> dict[str, Any]:
        """Queue one command behind the events already waiting; the machine's answer."""
        fut = asyncio.get_running_loop().create_future()
        await self.queue.put(_CommandItem(name, role, dict(args), fut))
        return await fut

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while not reader.at_eof():
                line = await _request_line(reader)
                if line == b"":
                    break
                problem = None
                if line is None:
                    problem = (f"the request is longer than the {CONTROL_LINE_KIB} KiB a line may "
                               "be; send one shorter JSON object per line")
                else:
                    req, problem = _parse_request(line)
                if problem is None:
                    problem = _one_request(req)
                if problem is not None:
                    writer.write(json.dumps({"ok": False, "error": problem}).encode() + b"\n")
                    await writer.drain()
                    continue
                if req.get("subscribe"):
                    writer.write(b'{"ok": true, "subscribed": true}\n')
                    await writer.drain()
                    self.subscribers.add(writer)
                    # From now on the client only listens (_stream writes to it); what it
                    # sends is not read as requests. Its closing ends the subscription.
                    while await reader.read(4096):
                        pass
                    break
                if "reload" in req:
                    # Answered once the reload is done: its outcome, never what was asked
                    # (a request holding anything more is refused without repeating it).
                    # Imported here: controller.api (aiohttp) only for a table that asks.
                    from controller.api.reload import request_problem
                    problem = request_problem(req)
                    reply = {"ok": False, "error": problem} if problem else \
                        await self.reload_request()
                elif req.get("query") == "view" and self.runner.broken is not None:
                    # The table in memory is ahead of its journal: not shown.
                    reply = {"ok": False, "error": f"the table is stopping: "
                                                   f"{self.runner.broken}"}
                elif req.get("query") == "view":
                    reply = {"ok": True, "view": self.runner.table.public_view()}
                elif "command" in req and not isinstance(req.get("args") or {}, dict):
                    reply = {"ok": False, "error": "\"args\" must be an object of the command's "
                             "parameters, e.g. {\"command\": \"place_bet\", \"role\": "
                             "\"dealer\", \"args\": {\"box\": 3, \"wager\": \"ante\", "
                             "\"amount\": 10}}"}
                elif "command" in req and (not isinstance(req["command"], str) or not
                                           isinstance(req.get("role", "dealer"), str)):
                    key = "command" if not isinstance(req["command"], str) else "role"
                    reply = {"ok": False, "error": f"\"{key}\" must be text, such as "
                             + ("{\"command\": \"close_bets\"}" if key == "command" else
                                "{\"role\": \"dealer\"}")
                             + f"; got {shown(req[key])}"}
                elif "command" in req:
                    reply = await self.submit(str(req["command"]), str(req.get("role", "dealer")),
                                              req.get("args") or {})
                else:
                    reply = {"ok": False, "error": "give \"command\", \"query\": \"view\", "
                             "\"subscribe\": true or \"reload\": true"}
                writer.write(json.dumps(reply).encode() + b"\n")
                await writer.drain()
        except (ConnectionError, asyncio.CancelledError):
            pass
        finally:
            self.subscribers.discard(writer)
            writer.close()


# --- the control socket's requests ------------------------------------------------------------

# The longest request line: the limit of asyncio's StreamReader, which the control socket's
# server keeps at its default.
CONTROL_LINE_KIB = 64
CONTROL_NESTING = 3             # {"args": {"stacks": {"1": 500}}}: as the console API allows
_ONE_OBJECT = ("a request is one JSON object per line, e.g. {\"command\": \"close_bets\", "
               "\"role\": \"dealer\"}")


async def _request_line(reader: asyncio.StreamReader) -> bytes | None:
    """The next line (b"" at the end), or None for a line beyond the reader's limit,
    read to its end and dropped, so that its tail is not taken for a request of its own."""
    too_long = False
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:          # the end, maybe mid-line
            line = exc.partial
        except asyncio.LimitOverrunError as exc:
            await reader.readexactly(exc.consumed)          # drop what is held, read on
            too_long = True
            continue
        return None if too_long else line


REQUEST_KINDS = ("command", "query", "subscribe", "reload")


def _one_request(req: Mapping[str, Any]) -> str | None:
    """Why a request asks more than one thing (a command and a view, a subscription and a
    reload), which would do one and drop the other without a word; None if it does not."""
    asked = [k for k in REQUEST_KINDS if k in req]
    if len(asked) < 2:
        return None
    return ("one request a line: this one gives " + " and ".join(f'"{k}"' for k in asked)
            + "; send each as its own line")


def _parse_request(line: bytes) -> tuple[dict[str, Any], str | None]:
    """The request of one line, or the problem with it (nothing acted on). A key given twice
    is refused as the console API refuses it: JSON keeps the last, and which was meant
    cannot be told."""
    try:
        req = json.loads(line, object_pairs_hook=pairs)
    except RecursionError:
        return {}, (f"the request nests lists and objects too deep to read; a request nests "
                    f"at most {CONTROL_NESTING} deep, such as {{\"command\": \"seat_players\", "
                    "\"args\": {\"stacks\": {\"1\": 500}}}")
    except ValueError:
        return {}, _ONE_OBJECT
    if not isinstance(req, dict):
        return {}, _ONE_OBJECT
    depth = nesting(req)
    if depth > CONTROL_NESTING:
        return {}, (f"the request nests lists and objects {depth} deep; a request nests at "
                    f"most {CONTROL_NESTING} deep, such as {{\"command\": \"seat_players\", "
                    "\"args\": {\"stacks\": {\"1\": 500}}}")
    twice = first_twice(req, shown=scrub)
    if twice:
        return {}, (f"the request gives {twice}; JSON would keep only the last, and which one "
                    "was meant cannot be told: give each key once")
    return plain(req), None
