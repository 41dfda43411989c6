"""``tablectl demo``: every game on simulated devices, through the real controller, on screen.

For each game and dealing mode, :func:`run_demo` starts the simulated devices on
pseudo-terminals and the real ``tablectl run`` process connected to them (controller.rig), then
a scripted croupier plays rounds: marks bets, draws cards from the shoe or lets the shuffler
deal, shakes the dice, records the players' decisions and confirms results. With faults, some
rounds meet an irregularity (a card out face up, a jam, a die not flat, a device unplugged,
a misdeal) and the croupier and the supervisor do what the table asks. Every event the
controller publishes is shown as it happens; the run ends with a summary and each journal
verified.

What the screen shows is the controller's public stream: no card appears before the table
reveals it.
"""
from __future__ import annotations

import os
import random
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from controller.access import reason
from controller.bench.rounds import pan9_banker
from controller.errors import TablectlError
from controller.rig import LAYOUT, Rig

GAMES = ("q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9")
MODES = ("shoe", "shuffler")
TITLES = {"q-poker": "Q Poker (89/2004)", "fortune-3-card-poker": "Fortune 3 Card Poker (78/2008)",
          "super-pan-9": "Super Pan 9 (261/96/M)", "texas-holdem": "Texas Hold'em (11/2008)"}
# The demo's Hold'em table ([holdem] in its table.toml): stacks of 200 are twenty big blinds,
# and pots grow enough for the 5 % commission of art. 16 to show in whole chips.
HOLDEM = {"small_blind": 5, "big_blind": 10, "structure": "no-limit", "rake_percent": 5}

LABEL = 15       # width of the hand labels: "box 10 (banker)", "croupier", "board"
AMOUNTS = 24     # where a settlement line's amounts start: after "box 1  versus_croupier"

# The faults the scripted table meets, in turn, per mode.
FAULTS = {
    "shoe": ("croupier_face_up", "misdeal", "shoe_jam"),
    "shuffler": ("shuffler_jam", "link_lost"),
}
DICE_FAULTS = ("die_not_flat",)
# The first fault each table meets, so that one run shows every kind of ruling.
FIRST_FAULT = {("q-poker", "shoe"): "croupier_face_up", ("q-poker", "shuffler"): "link_lost",
               ("fortune-3-card-poker", "shoe"): "croupier_face_up",
               ("fortune-3-card-poker", "shuffler"): "shuffler_jam",
               ("texas-holdem", "shoe"): "croupier_face_up",
               ("texas-holdem", "shuffler"): "shuffler_jam",
               ("super-pan-9", "shoe"): "die_not_flat", ("super-pan-9", "shuffler"): "link_lost"}


def fault_pool(game: str, mode: str) -> list[str]:
    pool = list(FAULTS[mode]) + (list(DICE_FAULTS) if game == "super-pan-9" else [])
    first = FIRST_FAULT.get((game, mode), pool[0])
    return [first] + [f for f in pool if f != first]


@dataclass
class Tally:
    game: str
    mode: str
    settled: int = 0
    void: list[str] = field(default_factory=list)
    rulings: list[str] = field(default_factory=list)
    house_net: int = 0
    journal: str = ""
    journal_ok: bool = False


class Screen:
    """Prints the public events of one table as they arrive. Every hand is labelled with
    whose it is: a box, the croupier's, the board, or (Super Pan 9) the banker's seat."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.banker: int | None = None      # Super Pan 9: the banker's seat this round

    def __call__(self, e: dict[str, Any]) -> None:
        line = self.format(e)
        if line:
            print(line, file=self.out, flush=True)

    @staticmethod
    def _cards(hand: list[Any]) -> str:
        return " ".join(c if c else "··" for c in hand)

    def _who(self, recipient: str) -> str:
        """``box 7 (banker)`` for the banker's seat, else the recipient as the table names it
        (``box 3``, ``croupier``, ``board``)."""
        if self.banker is not None and recipient == f"box {self.banker}":
            return f"{recipient} (banker)"
        return recipient

    def format(self, e: dict[str, Any]) -> str | None:
        k = e["kind"]
        if k == "bets_closed" and not e["bets"]:
            return None
        if k == "bets_closed":
            bets = ", ".join(f"box {b['box']} {b['wager']} {b['amount']}" for b in e["bets"])
            return f"    bets closed ({e['by']}): {bets}"
        if k == "banker":
            self.banker = e["seat"]
            return f"    banker at box {e['seat']}, capital {e['capital']}"
        if k == "co_banker":
            who = "the house" if e.get("house") else \
                f"{e['player']}" + (f" at box {e['seat']}" if e.get("seat") else "")
            return (f"    co-bank: {who}, capital {e['capital']}" if e["capital"]
                    else f"    co-bank withdrawn: {who}")
        if k == "dice":
            return f"    dice {' '.join(map(str, e['dice']))} = {e['total']}"
        if k == "reshake":
            return f"    the banker shakes again ({e['article']})"
        if k in ("hand_opened", "hand_revealed"):
            return f"    {self._who(e['recipient']):<{LABEL}} {self._cards(e['hand'])}"
        if k == "card_exposed":
            return f"    card exposed: {self._who(e['recipient'])} {e['card']}"
        if k == "card_set_aside":
            return f"    set aside face up: {self._cards(e['cards'])} ({e['article']})"
        if k == "blinds":
            posted = ", ".join(f"box {p['box']} {p['action'].replace('_', ' ')} {p['to']}"
                               for p in e["posted"])
            return f"    button at box {e['button']}; {posted}"
        if k == "action":
            amount = f" {e['to']}" if e["action"] in ("bet", "raise", "allin") else ""
            return f"    box {e['box']} {e['action']}{amount} (pot {e['pot']})"
        if k == "card" and e["recipient"] == "board" and all(e["hand"]) \
                and len(e["hand"]) in (3, 4, 5):
            return f"    {'board':<{LABEL}} {self._cards(e['hand'])}"
        if k == "decision":
            who = f" ({e['player']})" if e.get("player") else ""
            return f"    box {e['box']}{who} {'plays' if e['decision'] == 'play' else 'folds'}"
        if k == "ruling":
            return (f"  ! {e['irregularity'].replace('_', ' ')}: {e['remedy'].replace('_', ' ')}"
                    f" [{e['article']}] {e['reason']}")
        if k == "settlement":
            lines = []
            for w in e["wagers"]:
                lines.append(f"    {'box ' + str(w['box']):<7}{w['wager']:<{AMOUNTS - 7}}"
                             f"stake   {w['stake']:>5}  {w['outcome']:<5} {w['net']:+d}")
            for b in e.get("bank") or ():      # Super Pan 9: the bank's side, house apart
                if b["role"] == "house":
                    continue
                who = self._who(f"box {b['seat']}") if b["role"] == "banker" and b.get("seat") \
                    else f"{b.get('name') or b.get('player')} (co-banker)"
                outcome = "win" if b["net"] > 0 else "lose" if b["net"] < 0 else "push"
                lines.append(f"    {who:<{AMOUNTS}}capital {b['capital']:>5}  {outcome:<5} "
                             f"{b['net']:+d}")
            if e.get("commission"):
                lines.append(f"    commission {e['commission']}")
            lines.append(f"    house {e['house_net']:+d}")
            return "\n".join(lines)
        if k == "round_void":
            back = ", ".join(f"box {b['box']} {b['wager']} {b['amount']}" for b in e["returned"])
            return f"  ✗ ROUND VOID [{e['article']}]; returned: {back or 'no bet'}"
        if k == "device_condition" and e.get("what"):
            return f"  ! {e['device']}: {e['what']}"
        if k == "state" and e["dest"] == "malfunction":
            return "  ! table in malfunction: the supervisor is called"
        if k == "malfunction_cleared":
            return "    supervisor cleared the malfunction"
        if k == "mode":
            return f"    the table now deals by {e['mode']}"
        return None


class Croupier:
    """The scripted croupier and supervisor of one table."""

    def __init__(self, rig: Rig, rng: random.Random, out: TextIO) -> None:
        self.rig, self.rng, self.out = rig, rng, out
        self.game = rig.game

    # --- one round --------------------------------------------------------------------
    def play_round(self, number: int, fault: str | None) -> None:
        r = self.rig
        self.ready()
        self.start = r.mark()
        mode = r.view()["mode"]
        print(f"  round {number} ({mode}){' — fault: ' + fault.replace('_', ' ') if fault else ''}",
              file=self.out, flush=True)
        self.bets()
        if fault in ("die_not_flat", "die_out_of_cup"):
            r.devices["dice"].inject(fault, die=self.rng.randrange(4))
        self.deal(mode, fault)
        self.finish()

    def ready(self) -> None:
        r = self.rig
        for _ in range(5):      # a rebooted device may drop its link once more
            if r.state() != "malfunction":
                break
            self.supervisor_fixes()
        st = r.state()
        if st == "shuffling":
            if r.view()["mode"] == "shoe":
                r.devices["shoe"].load_deck(fresh=True)
                r.must("deck_ready")
            r.wait_state("bets_open", timeout=20)

    def bets(self) -> None:
        r, rng = self.rig, self.rng
        boxes = sorted(rng.sample(range(1, LAYOUT[self.game] + 1), rng.randint(1, 3)))
        if self.game == "q-poker":
            for b in boxes:
                r.must("place_bet", box=b, wager="versus_croupier", amount=2 * rng.randint(1, 10))
                if rng.random() < 0.5:
                    r.must("place_bet", box=b, wager="pair_bonus", amount=rng.randint(1, 5))
        elif self.game == "fortune-3-card-poker":
            for b in boxes:
                r.must("place_bet", box=b, wager="ante", amount=rng.randint(1, 10),
                       player=f"p{b}")
                if rng.random() < 0.5:
                    r.must("place_bet", box=b, wager="pair_plus", amount=rng.randint(1, 5),
                           player=f"p{b}")
        elif self.game == "texas-holdem":
            seats = sorted(rng.sample(range(1, LAYOUT[self.game] + 1), rng.randint(2, 4)))
            r.must("seat_players", seats=seats, stacks=[200] * len(seats))
        else:
            # 261/96/M art. 5(5): now and then a banker of small capital is joined by a player
            # of a free seat and the house, who pay or collect, in that order, what his
            # capital cannot; a co-banker bets on no seat
            co_bank = rng.random() < 0.4
            banker, bettors, capital = pan9_banker(
                r.view(), rng.sample(range(1, LAYOUT[self.game] + 1), 3),
                capital=40 if co_bank else 1000)
            r.must("set_banker", seat=banker, capital=capital)
            for s in bettors:
                r.must("place_bet", box=s, wager="seat", amount=10 * rng.randint(1, 10),
                       player=f"p{s}")
            free = [s for s in range(1, LAYOUT[self.game] + 1) if s != banker
                    and s not in bettors]
            if co_bank and free:
                s = rng.choice(free)
                r.must("co_bank", player=f"c{s}", seat=s, capital=10 * rng.randint(2, 6))
                r.must("co_bank", house=True, capital=200)

    def deal(self, mode: str, fault: str | None) -> None:
        r = self.rig
        done = ("player_decisions", "settlement", "round_void", "malfunction", "croupier_reveal")
        mark = r.mark()
        if self.game == "super-pan-9":
            r.must("shake")
            # The shuffler may put every hand out before the state is first looked at (a busy
            # machine): a table already past the deal has nothing left to deal here.
            st = r.wait_state("dealing", *done, timeout=20)
            if st != "dealing":
                return
        elif mode == "shuffler":
            mark = r.mark()
            r.must("close_bets")
        else:
            mark = r.mark()
        if mode == "shuffler":
            if fault in ("shuffler_jam", "link_lost", "shuffler_malfunction"):
                # the fault strikes once the first hand (or card) is out
                r.wait_event(lambda e: e["kind"] == "card", since=mark)
                shuffler = r.devices["shuffler"]
                if fault == "shuffler_jam":
                    shuffler.inject("jam")
                elif fault == "link_lost":
                    shuffler.disconnect(duration_s=0.5)
                else:
                    shuffler.inject("malfunction", code=7, text="motor stalled")
            r.wait_state(*done, timeout=20)
            return
        self.draw_until(done, fault)

    def draw_until(self, done: tuple[str, ...], fault: str | None) -> None:
        """Shoe: the croupier draws card after card until the table stops dealing."""
        r = self.rig
        shoe = r.devices["shoe"]
        drawn = 0
        while True:
            view = r.view()
            if view["state"] in done:
                return
            if view["state"] not in ("bets_open", "bets_closed", "dealing"):
                r.wait_state(*done, timeout=10)
                return
            expected = (view.get("expected") or {}).get("recipient")
            if fault == "misdeal" and drawn == 2:
                r.must("misdeal")
                continue
            if fault in ("shoe_jam", "shoe_door_open") and drawn == 3:
                if fault == "shoe_jam":
                    shoe.inject("jam")
                else:
                    shoe.open_door()
                r.wait_state("malfunction", timeout=10)
                return
            if fault == "croupier_reports_exposed" and drawn == 2:
                r.must("exposed_card", recipient=str(self._last_recipient))
                fault = None
                continue
            banker = (self.game == "super-pan-9" and view["round"] is not None
                      and expected == f"box {self._banker(view)}")
            croupier = expected == "croupier" or banker or (
                self.game == "texas-holdem" and str(expected).startswith("box"))
            player = str(expected).startswith("box") and not banker
            face_up = (fault == "croupier_face_up" and croupier and drawn < 8) or (
                fault == "player_face_up" and player)
            if face_up:
                fault = None
            mark = r.mark()
            shoe.draw(face_up=face_up)
            drawn += 1
            got = r.wait_event(lambda e: e["kind"] in ("card", "ruling", "irregular_event",
                                                       "round_void"), since=mark)
            if got["kind"] == "card":
                expected = got["recipient"]
            self._last_recipient = expected
            if "box-sensors" in r.devices and str(expected).startswith("box"):
                box = int(str(expected).split()[1])
                if fault == "unbet_box":
                    bet = {b["box"] for b in view["round"]["bets"]}
                    box = min(set(range(1, LAYOUT[self.game] + 1)) - bet)
                    fault = None
                elif fault == "wrong_box":
                    others = sorted({b["box"] for b in view["round"]["bets"]} - {box})
                    if others:
                        box, fault = others[0], None
                mark = r.mark()
                r.devices["box-sensors"].place_card(box)
                r.wait_event(lambda e: e["kind"] in ("card_placed", "ruling", "irregular_event"),
                             since=mark)

    @staticmethod
    def _banker(view: dict[str, Any]) -> int | None:
        return (view.get("round") or {}).get("banker")

    def holdem_betting(self) -> str:
        """Hold'em: the players act in turn (mostly check or call) and the streets follow."""
        r = self.rig
        done = ("settlement", "round_void", "malfunction")
        while True:
            view = r.view()
            st = view["state"]
            if st in done:
                return st
            if st == "dealing":
                if view["mode"] == "shoe":
                    self.draw_until(done + ("player_decisions",), None)
                else:
                    r.wait_state("player_decisions", *done, timeout=20)
                continue
            if st != "player_decisions":
                return r.wait_state(*done, timeout=20)
            h = view["holdem"]
            legal = {a["action"]: a for a in h["legal"]}
            roll = self.rng.random()
            if "check" in legal:
                choice, amount = ("bet", legal["bet"]["min_to"]) if (
                    roll < 0.2 and "bet" in legal) else ("check", None)
            elif roll < 0.15 and "fold" in legal:
                choice, amount = "fold", None
            elif roll < 0.3 and "raise" in legal:
                choice, amount = "raise", legal["raise"]["min_to"]
            else:
                choice, amount = ("call", None) if "call" in legal else ("allin", None)
            mark = r.mark()
            r.must("holdem_action", seat=h["to_act"], action=choice, amount=amount)
            r.wait_event(lambda e: e["kind"] == "action", since=mark)

    def finish(self) -> None:
        r = self.rig
        st = r.wait_state("player_decisions", "settlement", "round_void", "malfunction",
                          timeout=20)
        if st == "player_decisions" and self.game == "texas-holdem":
            st = self.holdem_betting()
        if st == "player_decisions":
            pending = r.wait_event(lambda e: e["kind"] == "decisions_open",
                                   since=self.start)["pending"]
            view = r.view()
            decided = {(d["box"], d["player"]) for d in view["round"]["decisions"]}
            for p in pending:
                if (p["box"], p["player"]) in decided:
                    continue
                choice = "play" if self.rng.random() < 0.7 else "fold"
                r.must("decide", box=p["box"], decision=choice, player=p["player"])
            st = r.wait_state("settlement", "round_void", "malfunction")
        if st == "settlement":
            r.must("confirm_result")
        elif st == "malfunction":
            self.supervisor_fixes()
            return
        r.must("next_round")

    def supervisor_fixes(self) -> None:
        """The supervisor puts the device right and clears the malfunction."""
        r = self.rig
        for name, dev in r.devices.items():
            st = dev.status()
            fw = st.get("firmware") or {}
            state = str(fw.get("state", st.get("state", "")))
            if state == "jammed":
                dev.clear_jam()
            elif state == "fault":
                mark = r.mark()
                dev.reboot()             # a malfunction is cleared only by a restart
                r.wait_event(lambda e: e["kind"] == "device_link" and e["device"] == name
                             and e["link"] == "up", since=mark)
            elif "door" in state or "lid" in state or fw.get("door_open"):
                dev.close_door()
            if not dev.connected:
                dev.reconnect()
        deadline = time.monotonic() + 15
        while True:
            mark = r.mark()
            reply = r.command("clear_malfunction", "supervisor")
            if reply.get("ok"):
                r.wait_event(lambda e: e["kind"] == "malfunction_cleared", since=mark)
                return
            if time.monotonic() > deadline:
                raise TablectlError(f"the malfunction could not be cleared: {reply['error']}")
            time.sleep(0.1)


def run_demo(games: tuple[str, ...] = GAMES, modes: tuple[str, ...] = MODES, rounds: int = 2,
             faults: bool = True, seed: int = 1, out: TextIO = sys.stdout,
             workdir: str | Path | None = None, speed: float = 200.0) -> list[Tally]:
    """Play ``rounds`` rounds of each game in each mode; return one tally per table."""
    rng = random.Random(seed)
    tallies: list[Tally] = []
    base = _workdir(workdir)
    for game in games:
        for mode in modes:
            tally = Tally(game, mode)
            tallies.append(tally)
            print(f"\n═══ {TITLES[game]} — {mode} ═══", file=out, flush=True)
            try:
                rig = Rig(base / f"{game}-{mode}", game, mode, seed=rng.randrange(1 << 30),
                          speed=speed, table_id=f"demo-{game}-{mode}"[:60],
                          holdem=HOLDEM if game == "texas-holdem" else None)
            except OSError as exc:
                where = base / f"{game}-{mode}"
                if isinstance(exc, FileExistsError):
                    raise TablectlError(f"the table's folder {where} cannot be created: a file "
                                        "of that name is in the way; remove it, or give --dir "
                                        "another directory") from None
                raise TablectlError(f"the table's folder {where} cannot be created: "
                                    f"{reason(exc)}; give --dir a "
                                    "directory that can be written, or leave --dir out (a "
                                    "new temporary folder)") from None
            if game == "texas-holdem":
                print(f"    blinds {HOLDEM['small_blind']}/{HOLDEM['big_blind']}, "
                      f"{HOLDEM['structure']}, commission {HOLDEM['rake_percent']} % of each "
                      "pot (11/2008 art. 5, 11, 16)", file=out, flush=True)
            screen = Screen(out)
            try:
                rig.start_devices()
                rig.start_controller()
                rig.wait_links()
                rig.on_event = screen
                rig.must("open_table", "supervisor")
                croupier = Croupier(rig, random.Random(rng.randrange(1 << 30)), out)
                pool = fault_pool(game, mode)
                for n in range(1, rounds + 1):
                    fault = pool[(n // 2 - 1) % len(pool)] if faults and n % 2 == 0 else None
                    croupier.play_round(n, fault)
                rig.on_event = None
                rig.kill(15)
            except TimeoutError as exc:
                raise TablectlError(f"the {game} table ({mode}) stopped answering: {exc}; "
                                    f"its log and journal are in {rig.dir}") from None
            finally:
                rig.on_event = None
                rig.stop()
            _tally(rig, tally)
    _summary(tallies, out)
    return tallies


def _workdir(workdir: str | Path | None) -> Path:
    """The folder the demo's tables go in: ``--dir`` (created if missing) or a new temporary
    one. Refuses, before anything starts, a path that is not a directory this user may write."""
    way_out = "give --dir a directory that can be written, or leave --dir out (a new " \
              "temporary folder)"
    if not workdir:
        try:
            return Path(tempfile.mkdtemp(prefix="tablectl-demo-"))
        except OSError as exc:
            raise TablectlError(f"a temporary folder cannot be created in "
                                f"{tempfile.gettempdir()}: {reason(exc)}"
                                "; give --dir a directory that can be written") from None
    base = Path(workdir)
    doing = "created"
    try:
        if base.exists() and not base.is_dir():
            raise TablectlError(f"--dir {base} is a file, not a directory; {way_out}")
        base.mkdir(parents=True, exist_ok=True)
        doing = "written"
        os.rmdir(tempfile.mkdtemp(prefix=".tablectl-demo-probe-", dir=base))
    except OSError as exc:
        raise TablectlError(f"--dir {base} cannot be {doing}: "
                            f"{reason(exc)}; {way_out}") from None
    return base


def _tally(rig: Rig, tally: Tally) -> None:
    from controller.journal import Journal

    with Journal.open(rig.journal_path, readonly=True) as j:
        report = j.verify()
        tally.journal_ok = report.ok
        tally.journal = str(rig.journal_path)
        for rec in j.records(kinds=["round_close"]):
            if rec.payload.get("outcome") == "void":
                tally.void.append(rec.payload.get("article") or "")
            elif rec.payload.get("outcome") == "settled":   # not a round closed before play
                tally.settled += 1
        for rec in j.records(kinds=["decision"]):
            tally.rulings.append(f"{rec.payload['irregularity']} → {rec.payload['remedy']} "
                                 f"[{rec.article}]")
        for rec in j.records(kinds=["table"]):
            if rec.payload.get("kind") == "settlement":
                tally.house_net += int(rec.payload.get("house_net", 0))


def _summary(tallies: list[Tally], out: TextIO) -> None:
    print("\n═══ summary ═══", file=out)
    for t in tallies:
        voids = f", void {len(t.void)} ({'; '.join(sorted(set(t.void)))})" if t.void else ""
        print(f"  {TITLES[t.game]:<32} {t.mode:<8} settled {t.settled}{voids}; house "
              f"{t.house_net:+d}; journal {'verified' if t.journal_ok else 'BROKEN'}", file=out)
        for r in t.rulings:
            print(f"      {r}", file=out)
    ok = all(t.journal_ok for t in tallies)
    print(f"  journals: {'every hash chain verifies' if ok else 'a journal does not verify'}"
          f" ({tallies[0].journal.rsplit('/', 2)[0] if tallies else ''})", file=out, flush=True)
