"""Footprint of the daemon: start to ready, memory after an hour of rounds, CPU while idle.

* ``footprint.ready``: from ``exec`` of ``tablectl run`` to the ``READY=1`` datagram it sends
  on ``NOTIFY_SOCKET`` (what systemd waits for with ``Type=notify``): configuration loaded,
  journal opened and recovered, devices opening. The bench binds the datagram socket itself.
  Baseline: a bare interpreter's start (``python -c pass``).
* ``footprint.rss``: the daemon's resident memory after an hour-equivalent of rounds, played
  through it with the simulator at high speed (a brisk table plays about 60 rounds an hour;
  every heartbeat, event and journal record of those rounds goes through the daemon).
  Baseline: its resident memory when it said ready.
* ``footprint.idle_cpu``: the daemon's CPU while the table waits (links up, heartbeats
  flowing, no round), as a share of one core. Baseline: one core (100 %).
"""
from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from . import OPTIONS
from .figures import PI_FACTOR, Figure, cpu_seconds, open_fds, rss_mib

NAME = "footprint"
TITLE = "Footprint: start to READY=1, memory after an hour of rounds, idle CPU"
KEYS = ("footprint.ready", "footprint.rss", "footprint.idle_cpu")
ROUNDS_PER_HOUR = 60


def bare_interpreter(n: int) -> float:
    best = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        best.append(time.perf_counter() - t0)
    return sorted(best)[len(best) // 2]


def start_to_ready(config: Path, workdir: Path, timeout: float = 30.0
                   ) -> tuple[subprocess.Popen, float]:
    """Start ``tablectl run`` with a NOTIFY_SOCKET of our own; the process and the seconds
    until it sent READY=1."""
    path = workdir / "notify.sock"
    if path.exists():
        path.unlink()
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(str(path))
    sock.settimeout(timeout)
    env = dict(os.environ, NOTIFY_SOCKET=str(path), PYTHONUNBUFFERED="1")
    env.pop("WATCHDOG_USEC", None)
    control = workdir / "control.sock"
    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "run", "--config",
                             str(config), "--control", str(control)],
                            stdout=open(workdir / "daemon.log", "ab"), stderr=subprocess.STDOUT,
                            env=env)
    try:
        while True:
            data = sock.recv(4096)
            if b"READY=1" in data.split(b"\n"):
                return proc, time.perf_counter() - t0
    except socket.timeout:
        proc.kill()
        proc.wait()
        raise TimeoutError(f"tablectl run sent no READY=1 in {timeout} s; see "
                           f"{workdir / 'daemon.log'}") from None
    finally:
        sock.close()


def idle_cpu(pid: int, seconds: float) -> float:
    """Percent of one core ``pid`` used over ``seconds``."""
    c0, t0 = cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    return 100 * (cpu_seconds(pid) - c0) / (time.monotonic() - t0)


def play(rig: Any, rounds: int, seed: int = 2) -> None:
    """Q Poker rounds from the shoe through the daemon, as fast as they can be played."""
    from .daemon import play_rounds
    play_rounds(rig, rounds, seed)


def run(quick: bool = False) -> list[Figure]:
    from controller.rig import Rig

    rounds = 4 if quick else ROUNDS_PER_HOUR
    bare = bare_interpreter(3 if quick else 7)
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        with Rig(Path(tmp) / "rig", "q-poker", "shoe", seed=9, speed=1000.0,
                 cpu_wakeup_us=OPTIONS.cpu_wakeup_us) as rig:
            rig.start_devices()
            proc, ready = start_to_ready(rig.config_path, rig.dir)
            try:
                rig.attach(proc, 10.0)
                rig.wait_links()
                time.sleep(0.5)
                rss_ready, fds_ready = rss_mib(proc.pid), open_fds(proc.pid)
                cpu = idle_cpu(proc.pid, 2.0 if quick else 15.0)
                play(rig, rounds)
                rss_after, fds_after = rss_mib(proc.pid), open_fds(proc.pid)
            finally:
                rig.kill(signal.SIGTERM)
    cpu_note = "heartbeats of every device; a tenfold share of a Pi core"
    return [
        Figure("footprint.ready", "tablectl run: exec to READY=1 on NOTIFY_SOCKET", ready, "s",
               bare, "bare interpreter start (python -c pass)", "lower",
               pi_note="mostly imports; well inside the unit's 60 s start timeout "
                       "(TimeoutStartSec)",
               extra={"bare_interpreter_s": bare}),
        Figure("footprint.rss", f"resident memory after {rounds} rounds (an hour-equivalent "
               "at 60 rounds an hour)" if not quick else f"resident memory after {rounds} rounds",
               rss_after, "MiB", rss_ready, "resident memory at READY", "lower",
               pi=rss_after, pi_note="the same on a Pi (memory does not scale with speed); a "
               "Pi has 1-8 GiB",
               extra={"rounds": rounds, "rss_ready_mib": rss_ready, "rss_after_mib": rss_after,
                      "fds_ready": fds_ready, "fds_after": fds_after}),
        Figure("footprint.idle_cpu", "CPU while idle (links up, no round)", cpu, "%",
               100.0, "one core", "lower", pi=min(100.0, cpu * PI_FACTOR), pi_note=cpu_note,
               extra={"seconds": 2.0 if quick else 15.0}),
    ]
