"""Event latency through the daemon: ``tablectl run`` as a separate process, event stream and all.

The simulated devices run in this process behind pseudo-terminals (controller.rig.Rig); the
daemon opens them through its real drivers, journals and rules, and publishes on its control
socket's event stream, to which a small listener process subscribes. Measured: from the
simulator's writing a frame on the pty (``time.monotonic``, which is system-wide on Linux, so
the processes' clocks agree) to the first decision on it arriving on the subscribed stream,
stamped by the listener, which does nothing else (the bench's own threads do not delay the
stamp). Three kinds of frame, as the issue of the target names them:

* **card**: Q Poker from the shoe, one card at a time, as a croupier draws them back to back
  (the ``card`` event); and again at a table's pace, a card every ``PACE_S``;
* **jam**: the shoe jams after the second card of a Q Poker round (the ``device_condition``
  event; the ruling, the round void under 89/2004 art. 11(5) and the state change are in the
  same commit);
* **dice**: the agitator's result in Super Pan 9 (the ``dice`` event), ``DICE_IDLE_S`` after
  the shake was asked, so the daemon has gone idle before it.

Baselines: a bare pty echo of each frame, and the frame's wire time. A third baseline is the
physical floor of a durable decision, measured in the same run: the pty echo plus one
journal commit (one ``fsync``), percentile for percentile (adding the two percentiles
slightly overstates the floor's tail, so the ratio against it is a fair one). The fourth is
that path itself with no controller in it (controller.bench.floor): a do-nothing Python
process reads the same kind of pty, makes one durable write and writes a line to its own
listener process. The cards and the do-nothing path are measured in turn, in ``BLOCKS``
blocks, so both meet the same minutes of a shared machine; so are the dice results and the
do-nothing path with a frame every ``DICE_IDLE_S``. The do-nothing path's p99 against the
wire time says whether any controller can meet the target on this machine; the daemon
against it is the controller's own cost.

Each frame's latency is also split at the journal's stamp of its input record
(controller.bench.split), read from the daemon's journal once it has stopped: the part up to
the stamp (pty, link, rules) against the wire time, the part after it (the commit's flush,
publishing, the socket) against one journal commit.
"""
from __future__ import annotations

import os
import random
import tempfile
import time
from pathlib import Path
from typing import Any, Iterator, NamedTuple

from controller.errors import TablectlError

from . import OPTIONS
from .codec import frames
from .figures import PI_FACTOR, Figure, percentile, wire_pi_note, wire_time_s
from .floor import Listener, null_daemon
from .latency import journal_commit, pty_echo
from .rigplay import PATIENCE_S, RigCroupier
from .split import journal_stamps, split

NAME = "daemon"
TITLE = "Event latency through the daemon (tablectl run) to its event stream"
KEYS = ("daemon.card.p50", "daemon.card.p99", "daemon.card.p99_wire",
        "daemon.card.own_p99_wire", "daemon.card.p50_floor", "daemon.card.p99_floor",
        "daemon.card.p50_null", "daemon.card.p99_null", "daemon.null.p99_wire",
        "daemon.paced.p50", "daemon.paced.p99", "daemon.dice.p50", "daemon.dice.p99",
        "daemon.dice.p99_wire", "daemon.dice.p99_null", "daemon.dice.own_p99_wire",
        "daemon.dice.null_p99_wire", "daemon.jam.p50", "daemon.jam.p99",
        "daemon.jam.p99_wire", *(f"daemon.{k}.p99_{part}" for k in ("card", "jam", "dice")
                                  for part in ("to_journal", "from_journal")))
# A card every 30 ms: quicker than any croupier deals, and long enough for the machine to go
# idle between cards, as it does at a table (the main figure deals back to back).
PACE_S = 0.03
# The back-to-back cards and the do-nothing path are measured in turn, in this many blocks.
BLOCKS = 5
# A dice result comes after the agitator's 4 s shake and 1 s settle, 5 ms at the simulator's
# speed of 1000: the daemon has gone idle, and the do-nothing path is timed after as long.
DICE_IDLE_S = 0.005
# Jams and dice results measured, each (a p99 over thousands of events; a Super Pan 9 round
# takes ~35 ms at the simulator's speed, so the dice are most of the bench's three minutes).
EVENTS = 2000


class Sample(NamedTuple):
    """One frame through the daemon: when the simulator wrote it on the pty, the sequence
    number its link gave it, and when its event reached the listener (``time.monotonic``)."""

    written: float
    seq: int
    arrived: float

    @property
    def latency(self) -> float:
        return self.arrived - self.written


def _since_written(device: Any, message: str, asked: float, arrived: float) -> Sample:
    """From the moment the event's frame was written on the pty (as the echo baseline) to its
    arrival on the stream: the firmware's own work before the write (and a wait behind the
    previous frame's acknowledgement) is the device's, not the controller's."""
    written = device.sent(message, since=asked)
    if not written:
        raise RuntimeError(f"an event arrived with no {message} frame written")
    return Sample(written[0][0], written[0][2], arrived)


def latencies(samples: list[Sample]) -> list[float]:
    """Each sample's latency, frame written to event arrived."""
    return [s.latency for s in samples]


def _ready_for_bets(rig: Any) -> None:
    """Open the table, and load a fresh deck when the round asks for one."""
    shoe = rig.devices["shoe"]
    if rig.state() == "out_of_service":
        rig.must("open_table", "supervisor")
    if rig.state() == "shuffling":
        shoe.load_deck(fresh=True)
        rig.must("deck_ready")
        rig.wait_state("bets_open", timeout=PATIENCE_S)
    if shoe.status()["firmware"]["cards"] < 20:
        shoe.load_deck(fresh=True)


def _versus_bets(rig: Any, rng: random.Random) -> None:
    for b in sorted(rng.sample(range(1, 8), rng.randint(1, 3))):
        rig.must("place_bet", box=b, wager="versus_croupier", amount=10)


def _q_poker_rounds(rig: Any, rounds: int, seed: int, kinds: str) -> Iterator[Listener]:
    """``rounds`` Q Poker rounds from the shoe, each yielded once its bets are placed, with a
    listener stamping the events of ``kinds`` on the daemon's stream."""
    rng = random.Random(seed)
    with Listener(rig.control_path, kinds) as listener:
        for _ in range(rounds):
            _ready_for_bets(rig)
            _versus_bets(rig, rng)
            yield listener


def play_rounds(rig: Any, rounds: int, seed: int = 1, pace_s: float = 0.0) -> list[Sample]:
    """Q Poker rounds from the shoe through the daemon; one :class:`Sample` per card drawn. With
    ``pace_s`` each card waits that long after the previous one, as at a table, where the
    machine goes idle between cards; without, cards follow one another at once."""
    shoe = rig.devices["shoe"]
    out: list[Sample] = []
    for listener in _q_poker_rounds(rig, rounds, seed, "card"):
        while rig.state() in ("bets_open", "bets_closed", "dealing"):
            if pace_s:
                time.sleep(pace_s)
            drawn = time.monotonic()
            shoe.draw()
            out.append(_since_written(shoe, "CardDrawn", drawn,
                                      listener.next("card", timeout=PATIENCE_S)))
        if rig.wait_state("player_decisions", "settlement",
                          timeout=PATIENCE_S) == "player_decisions":
            for bet in rig.view()["round"]["bets"]:
                if bet["wager"] == "versus_croupier":
                    rig.command("decide", box=bet["box"], decision="play")
            rig.wait_state("settlement", timeout=PATIENCE_S)
        rig.must("confirm_result")
        rig.must("next_round")
    return out


def play_jams(rig: Any, rounds: int, seed: int = 3) -> list[Sample]:
    """Q Poker rounds in which the shoe jams after the second card: one sample per jam, to
    the first decision on it (``device_condition``; the ruling, the round void under 89/2004
    art. 11(5) and the state change are in the same commit). The supervisor clears the jam
    and the malfunction, and the next round begins."""
    shoe = rig.devices["shoe"]
    out: list[Sample] = []
    for listener in _q_poker_rounds(rig, rounds, seed, "card,device_condition"):
        for _ in range(2):
            shoe.draw()
            listener.next("card", timeout=PATIENCE_S)
        asked = time.monotonic()
        shoe.inject("jam")
        out.append(_since_written(shoe, "Jam", asked,
                                  listener.next("device_condition", timeout=PATIENCE_S)))
        rig.wait_state("malfunction", timeout=PATIENCE_S)
        shoe.clear_jam()
        rig.must("clear_malfunction", "supervisor")
        if rig.state() == "round_void":
            rig.must("next_round")
    return out


def play_dice(rig: Any, rounds: int, seed: int = 4) -> list[Sample]:
    """Super Pan 9 rounds from the shoe through the daemon: one sample per shake, from the
    dice agitator's result frame to the ``dice`` event; the round is then dealt and settled
    by the bench's croupier (controller.bench.rigplay). A shake the table refuses because it
    has moved on is no sample: that round is played out and the next one measured, until
    ``rounds`` samples are taken or the refusals keep coming (TablectlError naming the last)."""
    croupier = RigCroupier(rig, seed)
    dice = rig.devices["dice"]
    out: list[Sample] = []
    refused: list[str] = []
    with Listener(rig.control_path, "dice") as listener:
        mark, taken = rig.mark(), 0
        while len(out) < rounds:
            _ready_for_bets(rig)
            croupier.place_bets()
            # The dice of shakes the croupier asked for itself (a round played out after a
            # refusal, a lost shake asked again) are passed over: the next stamp read must
            # be this shake's.
            seen = sum(1 for e in rig.events[mark:] if e.get("kind") == "dice")
            for _ in range(seen - taken):
                listener.next("dice", timeout=PATIENCE_S)
            taken = seen
            asked = time.monotonic()
            reply = rig.command("shake")
            if reply.get("ok"):
                out.append(_since_written(dice, "DiceResult", asked,
                                          listener.next("dice", timeout=PATIENCE_S)))
                taken += 1
            else:
                # The table had moved on (its refusal names the state it is in): no sample
                # of this round; the croupier plays it out from where it is, and the next
                # round is measured. Only a table that refuses again and again ends the run.
                refused.append(str(reply.get("error")))
                if len(refused) > max(3, rounds // 10):
                    raise TablectlError(f"the shake was refused {len(refused)} times, the "
                                        f"last: {refused[-1]}")
            croupier.play_round()
    return out


def _start(rig: Any) -> None:
    """Bring up ``rig``'s simulated devices, the daemon and their links (inside its ``with``,
    so a daemon that does not come up still has its devices stopped)."""
    from controller.logs import configure_logging

    rig.start_devices()
    rig.start_controller()
    rig.wait_links()
    configure_logging("error", "json")


def run(quick: bool = False) -> list[Figure]:
    from controller.rig import Rig

    rounds = 3 if quick else 250
    blocks = 1 if quick else BLOCKS
    fr = frames()
    cards: list[Sample] = []
    null: list[float] = []
    with tempfile.TemporaryDirectory(prefix="tablectl-bench-",
                                     dir=os.environ.get("TABLECTL_BENCH_DIR")) as tmp:
        commit = journal_commit(Path(tmp), 30 if quick else 200)
        with Rig(Path(tmp) / "rig", "q-poker", "shoe", seed=5, speed=1000.0,
                 cpu_wakeup_us=OPTIONS.cpu_wakeup_us) as rig:
            _start(rig)
            held = rig.holds_cpu_latency()
            # The daemon's cards and the do-nothing path's frames in turn, block by block, so
            # both meet the same minutes of a shared machine.
            for b in range(blocks):
                cards += play_rounds(rig, rounds // blocks, seed=1 + b)
                null += null_daemon(fr["card"], (50 if quick else 3000) // blocks)
            paced = latencies(play_rounds(rig, 2 if quick else 40, seed=20, pace_s=PACE_S))
            jam_samples = play_jams(rig, 3 if quick else EVENTS)
        # Read once the daemon has stopped: its journal is closed and checkpointed.
        shoe_stamps = journal_stamps(rig.journal_path, "shoe")
        splits = {"card": split(cards, shoe_stamps), "jam": split(jam_samples, shoe_stamps)}
        dice_samples: list[Sample] = []
        null_dice: list[float] = []
        with Rig(Path(tmp) / "dice", "super-pan-9", "shoe", seed=5, speed=1000.0,
                 cpu_wakeup_us=OPTIONS.cpu_wakeup_us) as rig:
            _start(rig)
            # The dice results and the do-nothing path after the same idle gap in turn, as
            # the cards: the machine's wake-up from idle changes from one minute to the next
            # by more than the controller's whole work, so both must meet the same minutes.
            for b in range(blocks):
                dice_samples += play_dice(rig, (3 if quick else EVENTS) // blocks, seed=4 + b)
                null_dice += null_daemon(fr["dice"], (20 if quick else EVENTS) // blocks,
                                         pause_s=DICE_IDLE_S)
        splits["dice"] = split(dice_samples, journal_stamps(rig.journal_path, "dice"))
    lat, jams, dice = latencies(cards), latencies(jam_samples), latencies(dice_samples)
    frame = fr["card"]
    echo = pty_echo(frame, 200 if quick else 5000)
    null_paced = null_daemon(frame, 20 if quick else 400, pause_s=PACE_S)
    wire = wire_time_s(len(frame))
    stats = {"samples": len(lat), "rounds": rounds, "blocks": blocks,
             "p50_s": percentile(lat, 50), "p99_s": percentile(lat, 99), "max_s": max(lat),
             "wire_s": wire,
             "echo_p50_s": percentile(echo, 50), "echo_p99_s": percentile(echo, 99),
             "commit_p50_s": percentile(commit, 50), "commit_p99_s": percentile(commit, 99),
             "null_p50_s": percentile(null, 50), "null_p99_s": percentile(null, 99),
             "cpu_wakeup_us": OPTIONS.cpu_wakeup_us, "daemon_held_cpu_wakeup": held}
    # What the controller adds to the do-nothing path at each percentile, both measured in
    # the same blocks (a difference of percentiles: an estimate of its share of the tail).
    stats.update(own_p50_s=max(stats["p50_s"] - stats["null_p50_s"], 0.0),
                 own_p99_s=max(stats["p99_s"] - stats["null_p99_s"], 0.0))
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
               pi_note=wire_pi_note(stats["p99_s"] + (PI_FACTOR - 1) * cpu99, wire),
               extra=stats),
        Figure("daemon.card.own_p99_wire",
               "card frame via the daemon: what the controller adds to the do-nothing path at "
               "p99, against the wire time", stats["own_p99_s"], "s", wire,
               f"{len(frame)} bytes at 115,200 baud", "lower",
               pi=PI_FACTOR * stats["own_p99_s"],
               pi_note="the controller's own work, all of which grows on a Pi", extra=stats),
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
        *_event_figures("dice", "dice result", dice, fr["dice"], commit, quick,
                        null_dice, DICE_IDLE_S, blocks),
        *_event_figures("jam", "shoe jam", jams, fr["jam"], commit, quick),
        *_split_figures("card", "card", splits["card"], frame, stats["commit_p99_s"]),
        *_split_figures("jam", "shoe jam", splits["jam"], fr["jam"], stats["commit_p99_s"]),
        *_split_figures("dice", "dice result", splits["dice"], fr["dice"],
                        stats["commit_p99_s"]),
    ]


def _split_figures(kind: str, what: str, sp: dict[str, Any], frame: bytes,
                   c99: float) -> list[Figure]:
    """The p99 of each part of ``kind``'s latency, split at its input record's journal stamp
    (controller.bench.split): up to the stamp against the frame's wire time; from the stamp to
    the stream against one journal commit (``c99``, its p99), the floor of that part."""
    wire = wire_time_s(len(frame))
    extra = {**sp, "wire_s": wire, "commit_p99_s": c99}
    to_j, from_j = sp["to_journal_p99_s"], sp["from_journal_p99_s"]
    return [
        Figure(f"daemon.{kind}.p99_to_journal",
               f"{what} frame via the daemon, up to its journal stamp (pty, link, rules): p99 "
               "against the wire time", to_j, "s", wire,
               f"{len(frame)} bytes at 115,200 baud", "lower", pi=PI_FACTOR * to_j,
               pi_note="all of it is the daemon's own work, which grows on a Pi", extra=extra),
        Figure(f"daemon.{kind}.p99_from_journal",
               f"{what} frame via the daemon, from its journal stamp to the stream (commit, "
               "publishing, socket): p99 against one journal commit", from_j, "s", c99,
               "one journal commit, p99", "lower",
               pi=from_j + (PI_FACTOR - 1) * max(from_j - c99, 0.0),
               pi_note="the flush is the disk's; the rest grows on a Pi", extra=extra),
    ]


def _event_figures(kind: str, what: str, lat: list[float], frame: bytes, commit: list[float],
                   quick: bool, null: list[float] | None = None,
                   idle_s: float = 0.0, blocks: int = 1) -> list[Figure]:
    """The figures of the dice or jam frames through the daemon: p50 and p99 against a bare
    pty echo of the frame, p99 against its wire time, and (dice) against the do-nothing path
    after the same idle gap, measured in turn with them in ``blocks`` blocks: the p99 against
    it, what the controller adds to it, and that path's own p99 against the wire time."""
    echo = pty_echo(frame, 200 if quick else 2000)
    wire = wire_time_s(len(frame))
    st: dict[str, Any] = {"samples": len(lat), "p50_s": percentile(lat, 50),
                          "p99_s": percentile(lat, 99), "max_s": max(lat), "wire_s": wire,
                          "frame_bytes": len(frame), "idle_before_s": idle_s,
                          "echo_p50_s": percentile(echo, 50), "echo_p99_s": percentile(echo, 99),
                          "commit_p50_s": percentile(commit, 50),
                          "commit_p99_s": percentile(commit, 99)}
    cpu = {p: max(st[f"{p}_s"] - st[f"commit_{p}_s"], 0.0) for p in ("p50", "p99")}
    note = "one journal commit plus the daemon's own work; that part grows tenfold on a Pi"
    out = [Figure(f"daemon.{kind}.{p}", f"{what} frame to the daemon's event stream, {p}",
                  st[f"{p}_s"], "s", st[f"echo_{p}_s"], f"bare pty echo, {p}", "lower",
                  pi=st[f"{p}_s"] + (PI_FACTOR - 1) * cpu[p], pi_note=note, extra=st)
           for p in ("p50", "p99")]
    out.append(Figure(f"daemon.{kind}.p99_wire",
                      f"{what} frame via the daemon: p99 against the wire time", st["p99_s"],
                      "s", wire, f"{len(frame)} bytes at 115,200 baud", "lower",
                      pi=st["p99_s"] + (PI_FACTOR - 1) * cpu["p99"],
                      pi_note=wire_pi_note(st["p99_s"] + (PI_FACTOR - 1) * cpu["p99"], wire),
                      extra=st))
    if null is not None:
        st.update(null_p50_s=percentile(null, 50), null_p99_s=percentile(null, 99),
                  null_samples=len(null), blocks=blocks)
        out.append(Figure(f"daemon.{kind}.p99_null",
                          f"{what} frame via the daemon: p99 against no controller after the "
                          "same idle gap", st["p99_s"], "s", st["null_p99_s"],
                          f"the same path through a process with no controller in it, a frame "
                          f"every {idle_s * 1e3:g} ms, p99", "lower",
                          pi=st["p99_s"] + (PI_FACTOR - 1) * max(
                              st["p99_s"] - st["null_p99_s"], 0.0),
                          pi_note="the ratio is the controller's own work and its wake-up "
                          "from idle; the work grows on a Pi", extra=st))
        # A difference of percentiles measured in the same blocks: an estimate of the
        # controller's share of the tail, as daemon.card.own_p99_wire.
        st["own_p99_s"] = max(st["p99_s"] - st["null_p99_s"], 0.0)
        out.append(Figure(f"daemon.{kind}.own_p99_wire",
                          f"{what} frame via the daemon: what the controller adds to the "
                          "do-nothing path after the same idle gap at p99, against the wire "
                          "time", st["own_p99_s"], "s", wire,
                          f"{len(frame)} bytes at 115,200 baud", "lower",
                          pi=PI_FACTOR * st["own_p99_s"],
                          pi_note="the controller's own work, all of which grows on a Pi",
                          extra=st))
        out.append(Figure(f"daemon.{kind}.null_p99_wire",
                          f"no controller, a frame every {idle_s * 1e3:g} ms: p99 against the "
                          f"{what} frame's wire time", st["null_p99_s"], "s", wire,
                          f"{len(frame)} bytes at 115,200 baud", "lower",
                          pi=st["null_p99_s"] + (PI_FACTOR - 1) * max(
                              st["null_p99_s"] - st["commit_p99_s"], 0.0),
                          pi_note="where this is above 1, no controller meets the wire-time "
                          "target after an idle gap on this machine's processes and disk",
                          extra=st))
    return out
