"""A table on the bench: simulated devices on pseudo-terminals and the real controller process.

:class:`Rig` starts the firmware simulator's devices behind pseudo-terminals, writes a
``table.toml`` that points the controller at them, starts ``tablectl run`` as a separate process
(the real driver path: pyserial over the ptys), and talks to it through its control socket. The
demo and the hardware-in-the-loop tests both use it; the croupier's physical actions (drawing
from the shoe, clearing a jam) go through the simulator.
"""
from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

from controller.errors import TablectlError

LAYOUT = {"q-poker": 7, "fortune-3-card-poker": 7, "super-pan-9": 8, "texas-holdem": 10}
# A Hold'em bench table's [holdem] unless the caller gives its own (docs/configuration.md).
HOLDEM = {"small_blind": 1, "big_blind": 2, "structure": "no-limit", "rake_percent": 0}


class Rig:
    """Simulated devices plus one controller process, in ``workdir``."""

    def __init__(self, workdir: str | Path, game: str, mode: str = "shoe", *, seed: int = 0,
                 speed: float = 200.0, box_sensors: bool = False, table_id: str = "bench-1",
                 interpretations: dict[str, str] | None = None,
                 holdem: dict[str, Any] | None = None,
                 cpu_wakeup_us: int | None = None) -> None:
        self.dir = Path(workdir).resolve()     # the config names the journal absolutely
        self.dir.mkdir(parents=True, exist_ok=True)
        self.game, self.mode, self.seed, self.speed = game, mode, seed, speed
        self.box_sensors = box_sensors
        self.table_id = table_id
        self.interpretations = interpretations or {}
        # [holdem] of a Hold'em table: HOLDEM with the caller's keys over it
        self.holdem = {**HOLDEM, **(holdem or {})} if game == "texas-holdem" else None
        self.cpu_wakeup_us = cpu_wakeup_us      # [service] cpu_wakeup_us; None: the default
        self.config_path = self.dir / "table.toml"
        self.journal_path = self.dir / "journal.db"
        self.control_path = self.dir / "control.sock"
        self.log_path = self.dir / "controller.log"
        self.sim: Any = None
        self.devices: dict[str, Any] = {}
        self.proc: subprocess.Popen | None = None
        self.events: list[dict[str, Any]] = []
        self._cond = threading.Condition()
        self._ctl: Any = None
        self._sub: socket.socket | None = None
        self.on_event: Callable[[dict[str, Any]], None] | None = None

    # --- devices ------------------------------------------------------------------------
    def start_devices(self) -> None:
        from firmware_sim.table import SimulatedTable

        self.sim = SimulatedTable(seed=self.seed, speed=self.speed,
                                  link_dir=str(self.dir / "links"))
        classes = ["shoe", "shuffler"]
        if self.game == "super-pan-9":
            classes.append("dice")
        if self.box_sensors:
            classes.append("box-sensors")
        for cls in classes:
            opts: dict[str, Any] = {}
            if cls == "box-sensors":
                opts["boxes"] = LAYOUT[self.game]
            self.devices[cls] = self.sim.add(cls, link=str(self.dir / f"tty-{cls}"), **opts)
        self.write_config()

    def write_config(self) -> None:
        lines = ["[table]", f'id = "{self.table_id}"', f'game = "{self.game}"',
                 f'mode = "{self.mode}"', f"boxes = {LAYOUT[self.game]}", ""]
        if self.interpretations:
            lines.append("[interpretations]")
            lines += [f'{k} = "{v}"' for k, v in self.interpretations.items()]
            lines.append("")
        if self.holdem is not None:
            lines.append("[holdem]")
            lines += [f"{k} = {json.dumps(v)}" for k, v in self.holdem.items()]
            lines.append("")
        for cls, dev in self.devices.items():
            lines += [f"[devices.{cls}]", f'class = "{cls}"', 'transport = "serial"',
                      f'port = "{dev.port}"', ""]
        if self.cpu_wakeup_us is not None:
            lines += ["[service]", f"cpu_wakeup_us = {self.cpu_wakeup_us}", ""]
        lines += ["[journal]", f'path = "{self.journal_path}"', "",
                  "[logging]", 'level = "info"', 'format = "json"', ""]
        self.config_path.write_text("\n".join(lines))

    # --- the controller process --------------------------------------------------------
    def start_controller(self, timeout: float = 20.0,
                         env: dict[str, str] | None = None) -> None:
        """Start ``tablectl run``; ``env`` adds variables (e.g. NOTIFY_SOCKET)."""
        if self.control_path.exists():
            self.control_path.unlink()
        base = dict(os.environ, PYTHONUNBUFFERED="1")
        base.pop("NOTIFY_SOCKET", None)
        env = {**base, **(env or {})}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "controller.cli", "run", "--config", str(self.config_path),
             "--control", str(self.control_path)],
            stdout=open(self.log_path, "ab"), stderr=subprocess.STDOUT, env=env)
        self.attach(self.proc, timeout)

    def attach(self, proc: subprocess.Popen, timeout: float = 20.0) -> None:
        """Take on a ``tablectl run`` started elsewhere with this rig's configuration and
        control socket (the footprint bench starts it to time its READY=1): wait for its
        control socket, then connect and subscribe."""
        self.proc = proc
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise TablectlError(f"the controller exited with {self.proc.returncode}; "
                                    f"see {self.log_path}")
            if self.control_path.exists():
                try:
                    self._connect()
                    break
                except OSError:
                    pass
            if time.monotonic() > deadline:
                raise TablectlError(f"the controller did not come up in {timeout} s; "
                                    f"see {self.log_path}")
            time.sleep(0.05)

    def holds_cpu_latency(self) -> bool:
        """Whether the controller process holds a CPU wake-up latency request open
        (controller.cpu_latency)."""
        from controller.cpu_latency import held_by

        return self.proc is not None and held_by(self.proc.pid)

    def _connect(self) -> None:
        ctl = socket.socket(socket.AF_UNIX)
        ctl.connect(str(self.control_path))
        self._ctl = ctl.makefile("rw")
        sub = socket.socket(socket.AF_UNIX)
        sub.connect(str(self.control_path))
        sub.sendall(b'{"subscribe": true}\n')
        self._sub = sub
        threading.Thread(target=self._read_events, args=(sub.makefile("r"),),
                         daemon=True).start()

    def _read_events(self, f: Any) -> None:
        try:
            for line in f:
                doc = json.loads(line)
                if "kind" not in doc:
                    continue
                with self._cond:
                    self.events.append(doc)
                    self._cond.notify_all()
                if self.on_event is not None:
                    self.on_event(doc)
        except (OSError, ValueError):
            pass

    def request(self, doc: dict[str, Any]) -> dict[str, Any]:
        self._ctl.write(json.dumps(doc) + "\n")
        self._ctl.flush()
        line = self._ctl.readline()
        if not line:
            raise TablectlError("the controller closed its control socket")
        return json.loads(line)

    def command(self, name: str, role: str = "dealer", **args: Any) -> dict[str, Any]:
        """Send a command; the controller's answer (``ok`` False with ``error`` if refused)."""
        return self.request({"command": name, "role": role, "args": args})

    def must(self, name: str, role: str = "dealer", **args: Any) -> dict[str, Any]:
        reply = self.command(name, role, **args)
        if not reply.get("ok"):
            raise TablectlError(f"{name} refused: {reply.get('error')}")
        return reply

    def view(self) -> dict[str, Any]:
        return self.request({"query": "view"})["view"]

    def state(self) -> str:
        return self.view()["state"]

    # --- waiting on the event stream -----------------------------------------------------
    def mark(self) -> int:
        with self._cond:
            return len(self.events)

    def wait_event(self, pred: Callable[[dict[str, Any]], bool], since: int = 0,
                   timeout: float = 15.0) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self._cond:
            while True:
                for e in self.events[since:]:
                    if pred(e):
                        return e
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError(f"no such event within {timeout} s; last: "
                                       f"{[e['kind'] for e in self.events[-8:]]}")
                self._cond.wait(left)

    def open_with_deck(self, deck: list[str]) -> None:
        """Start the simulated devices and the daemon, open the table, load ``deck`` into the
        simulated shoe and say it is ready: the table waits for bets."""
        self.start_devices()
        self.start_controller()
        self.wait_links()
        self.must("open_table", "supervisor")
        self.devices["shoe"].load_deck(deck)
        self.must("deck_ready")
        self.wait_state("bets_open")

    def wait_state(self, *states: str, since: int = 0, timeout: float = 15.0) -> str:
        """Wait until the table is in one of ``states`` (by its published state changes)."""
        deadline = time.monotonic() + timeout
        while True:
            # The state changes looked for are those after the state is asked: an older one
            # (the table went there before, and left) would wake this loop at once, again and
            # again, and each look would walk the whole stream.
            mark = self.mark()
            st = self.state()
            if st in states:
                return st
            if time.monotonic() > deadline:
                raise TimeoutError(f"table in {st}, not {states}")
            try:
                self.wait_event(lambda e: e["kind"] == "state" and e.get("dest") in states,
                                max(since, mark),
                                timeout=min(0.5, max(0.01, deadline - time.monotonic())))
            except TimeoutError:
                pass

    def wait_links(self, timeout: float = 15.0) -> None:
        """Wait until every device is linked to the running controller process: its link
        up (or restored) journaled since that process started, and not shown lost since.
        (The view alone will not do after a restart: rebuilt from the journal, it shows the
        devices the last process had linked as up before this one has opened a port.)"""
        deadline = time.monotonic() + timeout
        want = set(self.devices)
        while True:
            ups = {d for d, v in self.view()["devices"].items() if v["link"] == "up"}
            ups &= self._linked_since_start()
            if want <= ups:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"devices not linked: {sorted(want - ups)}")
            time.sleep(0.05)

    def _linked_since_start(self) -> set[str]:
        """The devices whose link came up (or was restored) in the running process, by its
        journal: after the process's ``start`` record (which names its pid)."""
        from controller.journal import Journal

        assert self.proc is not None
        with Journal.open(self.journal_path, readonly=True) as j:
            until = None
            while True:
                rec = j.last(kind="service", until=until)
                if rec is None:
                    return set()
                p = rec.payload if isinstance(rec.payload, dict) else {}
                if p.get("event") == "start":
                    if p.get("pid") != self.proc.pid:
                        return set()        # an earlier process's: this one's is not written
                    break
                until = rec.seq - 1
            linked = set()
            for r in j.records(since=rec.seq, kinds=["device"]):
                event = r.payload.get("event") if isinstance(r.payload, dict) else None
                if isinstance(event, dict) and event.get("kind") in ("link_up",
                                                                      "link_restored"):
                    linked.add(str(event.get("device")))
            return linked

    # --- stopping -----------------------------------------------------------------------
    def kill(self, sig: int = signal.SIGKILL) -> int:
        assert self.proc is not None
        self.proc.send_signal(sig)
        rc = self.proc.wait(20)
        self._close_sockets()
        return rc

    def _close_sockets(self) -> None:
        for s in (self._sub,):
            try:
                if s is not None:
                    s.close()
            except OSError:
                pass
        try:
            if self._ctl is not None:
                self._ctl.close()
        except OSError:
            pass
        self._ctl = self._sub = None

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.kill(signal.SIGTERM)
        self._close_sockets()
        if self.sim is not None:
            self.sim.stop()
            self.sim = None

    def __enter__(self) -> "Rig":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()
