"""A croupier and supervisor for the real daemon (controller.rig.Rig), whatever its state.

The daemon runs as its own process; this plays rounds through its control socket and the
simulated devices, the way :class:`~controller.bench.live.LiveCroupier` does in-process: bets,
shoe draws or the shuffler's hands, the shake, decisions, results, and the supervisor's fixes
when the table calls for them. The crash tests kill the daemon under it at random moments, so
every call may fail; :meth:`RigCroupier.play_round` raises and the caller restarts the daemon.

The croupier never guesses how long the table takes: after each act it waits on the daemon's
stream for what the act causes (a card drawn: the table's word on that card; a shake: the
table's leaving ``dice_shaking``; any other step: a state change), up to :data:`PATIENCE_S`,
a ceiling a Raspberry Pi's daemon or a loaded machine stays far below. It does not act again
while its last act may still be on its way: a second card or shake would be one too many,
and the round would be voided or the next command refused in a state the table has already
left. A slower table only makes the croupier wait longer; a table stuck for the ceiling
still ends the round (the supervisor voids it) or the play (an error naming the state).
"""
from __future__ import annotations

import os
import random
import time
from typing import Any

from .rounds import LAYOUT, pan9_banker

ROUND_END = ("round_complete", "round_void")


def _slowness() -> float:
    raw = os.environ.get("TABLECTL_BENCH_SLOWNESS") or "1"
    try:
        return max(1.0, float(raw))
    except ValueError:
        raise ValueError(f"TABLECTL_BENCH_SLOWNESS={raw!r} is not a number; give how many "
                         "times slower than a developer's machine the table runs, e.g. 10 "
                         "on a Raspberry Pi") from None


# How much slower than a developer's machine the table may run (TABLECTL_BENCH_SLOWNESS; a
# Raspberry Pi is about 10): it multiplies every time below, the supervisor's stuck time and
# the round's deadline. No figure depends on it, only how long a stuck table is given.
SLOWNESS = _slowness()
# The longest wait for the table's answer to one act, in seconds: far beyond a Pi's
# milliseconds, so only a table that is stuck (or a daemon that is gone) reaches it.
PATIENCE_S = 30.0 * SLOWNESS
# How long the supervisor looks at a table that waits on its devices before putting them
# right (a fix and a supervisor's command follow, never a second card or shake).
LOOK_S = 1.0 * SLOWNESS
# After the agitator has put its dice down, the time its result frame may take to reach the
# table's state (a frame's wire time and the daemon's work: milliseconds, even on a Pi).
RESULT_S = 5.0 * SLOWNESS
# What a card drawn from the shoe leads to on the stream (the demo's croupier waits on the same).
CARD_ANSWER = ("card", "ruling", "irregular_event", "round_void", "device_condition", "state")


class RigCroupier:
    def __init__(self, rig: Any, seed: int = 0) -> None:
        self.rig, self.rng = rig, random.Random(seed)
        self.game = rig.game
        self.stuck: list[str] = []

    def _end_since(self, mark: int) -> str | None:
        """The first round end on the daemon's stream after its first ``mark`` events, or
        None. Only the events since ``mark`` are looked at: counting the ends over the
        whole stream at every step made each round slower than the last (a Super Pan 9
        round took 40 ms at the start of a bench and 100 ms 400 rounds later)."""
        for e in self.rig.events[mark:]:
            if e.get("kind") in ROUND_END:
                return e["kind"]
        return None

    def play_round(self, max_steps: int = 300, stuck_s: float = 6.0,
                   deadline_s: float = 40.0) -> str:
        """Play until a round ends and the table moves on; the round's end state. A table
        that stays in one state for ``stuck_s`` although its devices were put right is voided
        by the supervisor (counted in :attr:`stuck`); stuck is nothing new on the daemon's
        stream for that long, not one state held while cards come. Both times are multiplied by
        :data:`SLOWNESS`."""
        r = self.rig
        mark = len(r.events)
        betted = False
        stuck_s, deadline_s = stuck_s * SLOWNESS, deadline_s * SLOWNESS
        t_end = time.monotonic() + deadline_s
        since, last = time.monotonic(), None
        for _ in range(max_steps):
            view = r.view()
            st = view["state"]
            now = time.monotonic()
            if now > t_end:
                break
            # Stuck is nothing new on the stream: a slow table dealing card after card
            # stays in one state for long, and is not stuck.
            progress = (st, len(r.events))
            if progress != last:
                since, last = now, progress
            elif now - since > stuck_s and st not in ROUND_END + ("malfunction",
                                                                  "out_of_service"):
                self.stuck.append(st)
                self.fix()
                r.command("void_round", "supervisor",
                          reason=f"the table stayed in {st} with its devices working")
                since = time.monotonic()
            end = self._end_since(mark)
            if end is not None and st not in ROUND_END:
                return end
            mode = view["mode"]
            if st == "out_of_service":
                r.command("open_table", "supervisor")
            elif st == "shuffling":
                if mode == "shoe":
                    self.fix(("shoe",))
                    r.devices["shoe"].load_deck(fresh=True)
                    r.command("deck_ready")
                else:
                    self._wait_change(st, LOOK_S)
                    if r.state() == "shuffling":
                        self.fix()
                        r.command("clear_malfunction", "supervisor")
            elif st == "bets_open" and not betted and not (view.get("round") or {}).get("bets"):
                self.place_bets()
                betted = True
            elif st in ("bets_open", "bets_closed"):
                if self.game == "super-pan-9":
                    self._shake()
                elif mode == "shuffler":
                    if st == "bets_open":
                        r.command("close_bets")
                    self._wait_change(st, LOOK_S)
                else:
                    self._draw()
            elif st == "dealing":
                if mode == "shoe":
                    self._draw()
                else:
                    self._wait_change(st, LOOK_S)
                    if r.state() == "dealing":
                        self.fix()
            elif st == "dice_shaking":
                self._await_dice()
                if r.state() == "dice_shaking" and not self._agitator_busy():
                    # The shake was lost (a restarted daemon, a faulted agitator): the
                    # agitator is idle and no result has come; only now shake again.
                    self.fix()
                    r.command("shake")
            elif st == "player_decisions":
                self._decide(view)
            elif st == "croupier_reveal":
                self._wait_change(st, LOOK_S)
                if r.state() == st:
                    if mode == "shoe":
                        self._draw()
                    else:
                        self.fix()
            elif st == "settlement":
                r.command("confirm_result")
            elif st in ROUND_END:
                if not r.command("next_round").get("ok"):
                    self.fix()
                    r.command("clear_malfunction", "supervisor")
            elif st == "malfunction":
                self.fix()
                reply = r.command("clear_malfunction", "supervisor")
                if not reply.get("ok"):
                    if "void_round" in str(reply.get("error")):
                        # The table asks for it: the round cannot be settled from the record.
                        r.command("void_round", "supervisor",
                                  reason="the round cannot be settled from what was recorded")
                    time.sleep(0.05)
            else:
                self._wait_change(st)
        raise TimeoutError(f"the round did not end in {max_steps} steps or {deadline_s:g} s "
                           f"(table in {r.state()}, the last change on its stream "
                           f"{time.monotonic() - since:.1f} s ago)")

    def _wait_change(self, st: str, timeout: float = 0.3) -> None:
        """Wait until the table leaves ``st`` (a state change on its stream, or a view that
        says so), at most ``timeout`` s; waiting on the stream, not on a guess of its pace."""
        r = self.rig
        deadline = time.monotonic() + timeout
        while True:
            mark = r.mark()
            if r.state() != st or time.monotonic() >= deadline:
                return
            self._wait_for(("state",), mark, min(0.5, deadline - time.monotonic()))

    def _wait_for(self, kinds: tuple[str, ...], mark: int, timeout: float) -> bool:
        """Whether an event of ``kinds`` came on the stream after its first ``mark`` events
        within ``timeout`` s; looked at in half-second slices, so a daemon that has gone
        ends the wait at once (:meth:`_alive`)."""
        deadline = time.monotonic() + timeout
        while True:
            self._alive()
            try:
                self.rig.wait_event(lambda e: e.get("kind") in kinds, mark,
                                    min(0.5, max(0.0, deadline - time.monotonic())))
                return True
            except TimeoutError:
                if time.monotonic() >= deadline:
                    return False

    def _alive(self) -> None:
        """Raise at once when the daemon is gone: no wait outlives it (the crash tests kill
        it, and restart it when the round raises)."""
        proc = getattr(self.rig, "proc", None)
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"the daemon exited ({proc.returncode}) while the croupier "
                               "waited on the table")

    def _agitator_busy(self) -> bool:
        dice = self.rig.devices.get("dice")
        return dice is not None and dice.status()["firmware"].get("state") == "shaking"

    def _await_dice(self) -> None:
        """Wait for the table to leave ``dice_shaking``: as long as the agitator shakes (up
        to :data:`PATIENCE_S`), then :data:`RESULT_S` for its result to reach the table."""
        deadline = time.monotonic() + PATIENCE_S
        while self._agitator_busy() and time.monotonic() < deadline:
            self._wait_change("dice_shaking", min(0.5, deadline - time.monotonic()))
            if self.rig.state() != "dice_shaking":
                return
        self._wait_change("dice_shaking", RESULT_S)

    def _shake(self) -> None:
        """Ask for the shake once and wait for its outcome on the stream; a refusal (the
        table had moved on, or the agitator was not ready) is read again at the next step."""
        r = self.rig
        mark = r.mark()
        if not r.command("shake").get("ok"):
            self.fix()
            return
        if self._wait_for(("state",), mark, PATIENCE_S) and r.state() == "dice_shaking":
            self._await_dice()

    def place_bets(self) -> None:
        """The bets of a round as the croupier places them (a banker and two seats in Super
        Pan 9)."""
        r, rng = self.rig, self.rng
        layout = LAYOUT[self.game]
        if self.game == "super-pan-9":
            banker, bettors, capital = pan9_banker(r.view(),
                                                   rng.sample(range(1, layout + 1), 3))
            r.command("set_banker", seat=banker, capital=capital)
            for s in bettors:
                r.command("place_bet", box=s, wager="seat", amount=10, player=f"p{s}")
            return
        for b in sorted(rng.sample(range(1, layout + 1), rng.randint(1, 3))):
            if self.game == "q-poker":
                r.command("place_bet", box=b, wager="versus_croupier", amount=10)
            else:
                r.command("place_bet", box=b, wager="ante", amount=5, player=f"p{b}")

    def _draw(self) -> None:
        shoe = self.rig.devices["shoe"]
        st = shoe.status()
        if st["firmware"]["state"] == "empty":
            shoe.load_deck(fresh=True)
        elif st["firmware"]["state"] != "ready" or not st["connected"]:
            self.fix(("shoe",))
            return
        # Wait for the table's word on this card before anything else: drawing again while
        # it is on its way deals one card too many, which voids the round.
        r = self.rig
        mark = r.mark()
        shoe.draw()
        deadline = time.monotonic() + PATIENCE_S
        while time.monotonic() < deadline:
            if self._wait_for(CARD_ANSWER, mark, 0.5):
                return
            if not r.devices["shoe"].status()["connected"]:
                return                      # the card's frame waits for the link; fix() it
        raise TimeoutError(f"the table took no card in {PATIENCE_S:g} s after a draw (table "
                           f"in {r.state()})")

    def _decide(self, view: dict[str, Any]) -> None:
        rnd = view.get("round") or {}
        decided = {(d["box"], d["player"]) for d in rnd.get("decisions", [])}
        for bet in rnd.get("bets", []):
            key = (bet["box"], bet["player"])
            if bet["wager"] in ("versus_croupier", "ante") and key not in decided \
                    and bet["box"] not in rnd.get("void_boxes", []):
                decided.add(key)
                self.rig.command("decide", box=bet["box"], player=bet["player"],
                                 decision="play" if self.rng.random() < 0.7 else "fold")
        self._wait_change("player_decisions")

    def fix(self, only: tuple[str, ...] | None = None) -> None:
        """The supervisor puts every device back in working order."""
        for name, dev in self.rig.devices.items():
            if only and name not in only:
                continue
            if not dev.connected:
                dev.reconnect()
            dev.inject("resume")
            dev.inject("heartbeat_resume")
            fw = dev.status()["firmware"]
            s = str(fw.get("state", ""))
            if s == "jammed":
                dev.clear_jam()
            if fw.get("door_open") or s in ("door-open", "lid-open"):
                dev.close_door()
            if s == "die-out":
                dev.return_die()
            if s == "fault":
                dev.reboot()
