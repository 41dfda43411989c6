"""Event latency through the daemon: ``tablectl run`` as a separate process, event stream and all.

The simulated devices run in this process behind pseudo-terminals (controller.rig.Rig); the
daemon opens them through its real drivers, journals and rules, and publishes on its control
socket's event stream, to which a small listener process subscribes. Measured: from the
simulator's writing a card frame on the pty (``time.monotonic``, which is system-wide on Linux,
so the processes' clocks agree) to the ``card`` event arriving on the subscribed stream, stamped by
the listener, which does nothing else (the bench's own threads do not delay the stamp). Rounds are
Q Poker from the shoe, one card at a time, as a croupier draws them.

Baselines as for the in-process figure: a bare pty echo, and the frame's wire time. A third
baseline is the physical floor of a durable decision, measured in the same run: the pty
echo plus one journal commit (one ``fsync``), percentile for percentile (adding the two
percentiles slightly overstates the floor's tail, so the ratio against it is a fair one).
The fourth is that path itself with no controller in it (controller.bench.floor): a
do-nothing Python process reads the same kind of pty, makes one durable write and writes a
line to its own listener process. Its p99 against the wire time says whether any controller
can meet the target on this machine; the daemon against it is the controller's own cost.
"""
from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any

from .codec import frames
from .figures import PI_FACTOR, Figure, percentile, wire_time_s
from .floor import LISTENER, null_daemon
from .latency import journal_commit, pty_echo

NAME = "daemon"
TITLE = "Event latency through the daemon (tablectl run) to its event stream"
KEYS = ("daemon.card.p50", "daemon.card.p99", "daemon.card.p99_wire", "daemon.card.p50_floor",
        "daemon.card.p99_floor", "daemon.card.p50_null", "daemon.card.p99_null",
        "daemon.null.p99_wire", "daemon.paced.p50", "daemon.paced.p99")
# A card every 30 ms: quicker than any croupier deals, and long enough for the machine to go
# idle between cards, as it does at a table (the main figure deals back to back).
PACE_S = 0.03


def play_rounds(rig: Any, rounds: int, seed: int = 1, pace_s: float = 0.0) -> list[float]:
    """Q Poker rounds from the shoe through the daemon; one latency per card drawn. With
    ``pace_s`` each card waits that long after the previous one, as at a table, where the
    machine goes idle between cards; without, cards follow one another at once."""
    import select
    import subprocess
    import sys

    rng = random.Random(seed)
    shoe = rig.devices["shoe"]
    out: list[float] = []
    listener = subprocess.Popen([sys.executable, "-c", LISTENER, str(rig.control_path)],
                                stdout=subprocess.PIPE, text=True)
    try:
        if listener.stdout.readline() != "subscribed\n":
            raise RuntimeError("the stream listener could not subscribe")
        if rig.state() == "out_of_service":
            rig.must("open_table", "supervisor")
        for _ in range(rounds):
            st = rig.state()
            if st == "shuffling":
                shoe.load_deck(fresh=True)
                rig.must("deck_ready")
                rig.wait_state("bets_open")
            if shoe.status()["firmware"]["cards"] < 20:
                shoe.load_deck(fresh=True)
            for b in sorted(rng.sample(range(1, 8), rng.randint(1, 3))):
                rig.must("place_bet", box=b, wager="versus_croupier", amount=10)
            while rig.state() in ("bets_open", "bets_closed", "dealing"):
                if pace_s:
                    time.sleep(pace_s)
                drawn = time.monotonic()
                shoe.draw()
                ready, _, _ = select.select([listener.stdout], [], [], 10)
                if not ready:
                    raise TimeoutError("no card event on the daemon's stream")
                arrived = float(listener.stdout.readline())
                # From the moment the card's frame was written on the pty, as the echo
                # baseline; the firmware's own work before it (and a wait behind the previous
                # frame's acknowledgement) is the device's, not the controller's.
                written = shoe.sent("CardDrawn", since=drawn)
                if not written:
                    raise RuntimeError("the card event arrived with no card frame written")
                out.append(arrived - written[0][0])
            st = rig.wait_state("player_decisions", "settlement")
            if st == "player_decisions":
                view = rig.view()
                for bet in view["round"]["bets"]:
                    if bet["wager"] == "versus_croupier":
                        rig.command("decide", box=bet["box"], decision="play")
                rig.wait_state("settlement")
            rig.must("confirm_result")
            rig.must("next_round")
    finally:
        listener.kill()
        listener.wait()
    return out


def run(quick: bool = False) -> list[Figure]:
    from controller.logs import configure_logging
    from controller.rig import Rig

    rounds = 3 if quick else 250
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        commit = journal_commit(Path(tmp), 30 if quick else 200)
        with Rig(Path(tmp) / "rig", "q-poker", "shoe", seed=5, speed=1000.0) as rig:
            rig.start_devices()
            rig.start_controller()
            rig.wait_links()
            configure_logging("error", "json")
            lat = play_rounds(rig, rounds)
            paced = play_rounds(rig, 2 if quick else 40, seed=2, pace_s=PACE_S)
    frame = frames()["card"]
    echo = pty_echo(frame, 200 if quick else 5000)
    null = null_daemon(frame, 50 if quick else 3000)
    null_paced = null_daemon(frame, 20 if quick else 400, pause_s=PACE_S)
    wire = wire_time_s(len(frame))
    stats = {"samples": len(lat), "rounds": rounds, "p50_s": percentile(lat, 50),
             "p99_s": percentile(lat, 99), "max_s": max(lat), "wire_s": wire,
             "echo_p50_s": percentile(echo, 50), "echo_p99_s": percentile(echo, 99),
             "commit_p50_s": percentile(commit, 50), "commit_p99_s": percentile(commit, 99),
             "null_p50_s": percentile(null, 50), "null_p99_s": percentile(null, 99)}
    pace = {"pace_s": PACE_S, "samples": len(paced), "p50_s": percentile(paced, 50),
            "p99_s": percentile(paced, 99), "null_p50_s": percentile(null_paced, 50),
            "null_p99_s": percentile(null_paced, 99), "wire_s": wire}
    # On a Pi the controller's own part (what it adds to the do-nothing process) grows
    # tenfold; the machine's wake-up and the flush are in both and are not multiplied.
    paced50 = max(pace["p50_s"] - pace["null_p50_s"], 0.0)
    paced99 = max(pace["p99_s"] - pace["null_p99_s"], paced50)
    # The part that grows on a Pi: all but the flush. The two tails come from different runs,
    # so the p99 difference can undershoot the median one; it is never taken below it.
    cpu50 = max(stats["p50_s"] - stats["commit_p50_s"], 0.0)
    cpu99 = max(stats["p99_s"] - stats["commit_p99_s"], cpu50)
    note = "one journal commit plus the daemon's own work; that part grows tenfold on a Pi"
    floor = {p: stats[f"echo_{p}_s"] + stats[f"commit_{p}_s"] for p in ("p50", "p99")}
    stats.update(floor_p50_s=floor["p50"], floor_p99_s=floor["p99"])
    cpu = {"p50": cpu50, "p99": cpu99}
    paced_cpu = {"p50": paced50, "p99": paced99}

    def pair(key: str, title: str, base: dict[str, float], base_title: str, note: str,
             pi_of: dict[str, float], extra: dict[str, Any],
             value: dict[str, Any] = stats) -> list[Figure]:
        """The p50 and p99 figures of one comparison (the Pi part of each grows tenfold)."""
        return [Figure(key.format(p=p), title.format(p=p), value[f"{p}_s"], "s", base[p],
                       f"{base_title}, {p}", "lower",
                       pi=value[f"{p}_s"] + (PI_FACTOR - 1) * pi_of[p], pi_note=note,
                       extra=extra) for p in ("p50", "p99")]

    echo = {p: stats[f"echo_{p}_s"] for p in ("p50", "p99")}
    null = {p: stats[f"null_{p}_s"] for p in ("p50", "p99")}
    null_paced = {p: pace[f"null_{p}_s"] for p in ("p50", "p99")}
    flush_note = "the floor's flush does not shrink on a Pi; the rest grows"
    own_note = "the ratio is the controller's own work; it grows on a Pi"
    wake_note = ("each frame also wakes an idle machine; on a Pi its CPU governor and idle "
                 "states decide that part")
    return [
        *pair("daemon.card.{p}", "card frame to the daemon's event stream, {p}", echo,
              "bare pty echo", note, cpu, stats),
        Figure("daemon.card.p99_wire", "card frame via the daemon: p99 against the wire time",
               stats["p99_s"], "s", wire, f"{len(frame)} bytes at 115,200 baud", "lower",
               pi=stats["p99_s"] + (PI_FACTOR - 1) * cpu99,
               pi_note="target: below 1; the disk's flush decides", extra=stats),
        *pair("daemon.card.{p}_floor", "card frame via the daemon: {p} against the floor", floor,
              "pty echo + one journal commit", flush_note, cpu, stats),
        *pair("daemon.card.{p}_null", "card frame via the daemon: {p} against no controller", null,
              "the same path through a process with no controller in it", own_note, cpu,
              stats),
        Figure("daemon.null.p99_wire", "no controller at all: p99 against the wire time",
               stats["null_p99_s"], "s", wire, f"{len(frame)} bytes at 115,200 baud", "lower",
               pi=stats["null_p99_s"] + (PI_FACTOR - 1) * max(
                   stats["null_p99_s"] - stats["commit_p99_s"], 0.0),
               pi_note="where this is above 1, no controller meets the wire-time target "
               "on this machine's processes and disk", extra=stats),
        *pair("daemon.paced.{p}", "card frame via the daemon at a table's pace, {p}", null_paced,
              "the same path with no controller in it, at the same pace", wake_note,
              paced_cpu, pace, value=pace),
    ]
