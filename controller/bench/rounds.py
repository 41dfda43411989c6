"""A scripted croupier that plays whole rounds on a table with synthetic device events.

Used where the devices are not the subject (the core and journal throughput figures, the
soak's machine-only part): it builds the same typed events a driver would put on the queue
(drivers.events) and feeds them with the croupier's commands to any *target* with
``command(name, role, **args)``, ``device(event)``, ``state`` and ``view()``. :class:`TableTarget`
adapts a bare :class:`~controller.table.Table`, :class:`RunnerTarget` a
:class:`~controller.table.runner.TableRunner` (journal first). :class:`Recorder` keeps every
input as the journal would hold it, so a run can be replayed through another target.
"""
from __future__ import annotations

import random
from typing import Any

from controller.errors import TablectlError
from drivers import events as ev

LAYOUT = {"q-poker": 7, "fortune-3-card-poker": 7, "super-pan-9": 8, "texas-holdem": 10}
DEVICES = {"shoe": "shoe", "shuffler": "shuffler", "dice": "dice"}
GAMES = ("q-poker", "fortune-3-card-poker", "super-pan-9")
# Texas Hold'em is played by this croupier too (seats, blinds, every betting round), but kept
# out of GAMES, which the soak and the fault matrix extend each in their own way.
ALL_GAMES = GAMES + ("texas-holdem",)
HOLDEM = {"small_blind": 5, "big_blind": 10, "structure": "no-limit", "rake": 5}


def make_table(game: str, mode: str = "shoe", table_id: str = "bench-1") -> Any:
    """A table as the daemon builds it, with the three devices (and, for Texas Hold'em, the
    stakes of :data:`HOLDEM`)."""
    from controller.rules import get_game
    from controller.table import Table

    return Table(table_id, get_game(game), mode, layout_boxes=LAYOUT[game], devices=DEVICES,
                 holdem=HOLDEM if game == "texas-holdem" else None)


def pan9_banker(view: dict[str, Any], seats: list[int],
                capital: int = 1000) -> tuple[int, list[int], int]:
    """Super Pan 9: the banker's seat, the seats that bet and the banker's capital, as a
    croupier keeping 261/96/M art. 5 sets them from the table's ``bank_turn`` (public view).

    The first of ``seats`` takes the bank, unless it has banked two rounds in a row (art.
    5(1)) or the bank would pass to it though it did not bet in the previous round (art.
    5(2)): the bank then stays with the seat holding it, or passes to the first player in turn
    who bet in the previous round (``takers``), those before him declining. Two other seats
    bet. A banker keeping the bank after a winning first round puts at least capital plus win
    (art. 5(4)).
    """
    turn = view.get("bank_turn") or {}
    held, takers = turn.get("seat"), turn.get("takers")
    banker = seats[0]
    if held is not None and banker != held and takers is not None and banker not in takers:
        banker = held
    if held is not None and banker == held and not turn.get("may_keep", True):
        banker = takers[0] if takers else seats[1]
    bettors = [s for s in seats if s != banker][:2]
    floor = turn.get("capital_floor") if held == banker else None
    return banker, bettors, max(capital, floor or 0)


class TableTarget:
    """A bare table machine: no journal (the core figure)."""

    def __init__(self, table: Any) -> None:
        self.table = table

    @property
    def state(self) -> str:
        return self.table.state

    def view(self) -> dict[str, Any]:
        return self.table.public_view()

    def command(self, name: str, role: str = "dealer", **args: Any) -> None:
        self.table.command(name, role=role, **args)
        self.table.outbox.clear()
        self.table.commands.clear()

    def device(self, event: ev.DeviceEvent) -> None:
        self.table.handle_device(event)
        self.table.outbox.clear()
        self.table.commands.clear()


class RunnerTarget(TableTarget):
    """A table runner: every input journaled before the machine sees it."""

    def __init__(self, runner: Any) -> None:
        super().__init__(runner.table)
        self.runner = runner

    def command(self, name: str, role: str = "dealer", **args: Any) -> None:
        self.runner.command(name, role, **args)

    def device(self, event: ev.DeviceEvent) -> None:
        self.runner.device(event)


class Recorder(TableTarget):
    """A bare table that also keeps every input record (``inputs``) in order."""

    def __init__(self, table: Any) -> None:
        super().__init__(table)
        self.inputs: list[dict[str, Any]] = []

    def command(self, name: str, role: str = "dealer", **args: Any) -> None:
        self.inputs.append({"source": "command", "name": name, "role": role, "args": args})
        super().command(name, role, **args)

    def device(self, event: ev.DeviceEvent) -> None:
        self.inputs.append({"source": "device", "event": event.to_json()})
        super().device(event)


class Croupier:
    """Plays rounds in shoe mode on ``target`` with a seeded deck and seeded bets."""

    def __init__(self, target: Any, game: str, seed: int = 0) -> None:
        from controller.rules.cards import full_deck

        self.t, self.game, self.rng = target, game, random.Random(seed)
        self.deck = full_deck()
        self.shoe: list[Any] = []
        self.events = 0

    def _device(self, event: ev.DeviceEvent) -> None:
        self.events += 1
        self.t.device(event)

    def open(self) -> None:
        if self.t.state == "out_of_service":
            self.t.command("open_table", "supervisor")

    def _draw(self) -> None:
        if not self.shoe:
            self.shoe = self.rng.sample(self.deck, len(self.deck))
        self._device(ev.CardDrawn(device="shoe", ts=0.0, card=self.shoe.pop(), face_up=False))

    def play_round(self) -> str:
        """One whole round; returns the state it ended in."""
        t, rng = self.t, self.rng
        if t.state == "shuffling" or len(self.shoe) < 30:
            # A fresh deck whenever the shoe runs low: no card twice in one round.
            self.shoe = self.rng.sample(self.deck, len(self.deck))
        if t.state == "shuffling":
            t.command("deck_ready")
        if self.game == "texas-holdem":
            return self._holdem_round()
        boxes = sorted(rng.sample(range(1, LAYOUT[self.game] + 1), rng.randint(1, 3)))
        if self.game == "q-poker":
            for b in boxes:
                t.command("place_bet", box=b, wager="versus_croupier", amount=2 * rng.randint(1, 9))
        elif self.game == "fortune-3-card-poker":
            for b in boxes:
                t.command("place_bet", box=b, wager="ante", amount=rng.randint(1, 9),
                          player=f"p{b}")
        else:
            banker, bettors, capital = pan9_banker(
                t.view(), rng.sample(range(1, LAYOUT[self.game] + 1), 3))
            t.command("set_banker", seat=banker, capital=capital)
            for s in bettors:
                t.command("place_bet", box=s, wager="seat", amount=10, player=f"p{s}")
            t.command("shake")
            self._device(ev.ShakeStarted(device="dice", ts=0.0))
            self._device(ev.DiceResult(device="dice", ts=0.0,
                                       dice=tuple(rng.randint(1, 6) for _ in range(4))))
        for _ in range(60):
            if t.state not in ("bets_open", "bets_closed", "dealing"):
                break
            self._draw()
        if t.state == "player_decisions":
            for d in self.pending():
                t.command("decide", box=d["box"], decision="play" if rng.random() < 0.7
                          else "fold", player=d["player"])
        return self._close_round()

    def _holdem_round(self) -> str:
        """Two to four players with fresh stacks; each acts from the legal actions the table
        offers (mostly check or call, sometimes a minimum bet or raise, now and then a fold)
        until the hand is settled."""
        t, rng = self.t, self.rng
        seats = sorted(rng.sample(range(1, LAYOUT[self.game] + 1), rng.randint(2, 4)))
        t.command("seat_players", seats=seats, stacks=[500] * len(seats))
        for _ in range(200):
            st = t.state
            if st in ("bets_open", "bets_closed", "dealing"):
                self._draw()
            elif st == "player_decisions":
                h = t.view()["holdem"]
                legal = {a["action"]: a for a in h["legal"]}
                roll = rng.random()
                if roll < 0.1 and "fold" in legal and "check" not in legal:
                    t.command("holdem_action", seat=h["to_act"], action="fold")
                elif roll < 0.25 and ("raise" in legal or "bet" in legal):
                    a = legal.get("raise") or legal["bet"]
                    t.command("holdem_action", seat=h["to_act"], action=a["action"],
                              amount=a["min_to"])
                else:
                    action = next(a for a in ("check", "call", "allin", "fold") if a in legal)
                    t.command("holdem_action", seat=h["to_act"], action=action)
            else:
                break
        return self._close_round()

    def _close_round(self) -> str:
        """Confirm a settled result and open the next round; the state the round ended in."""
        t = self.t
        if t.state == "settlement":
            t.command("confirm_result")
        if t.state in ("round_complete", "round_void"):
            end = t.state
            t.command("next_round")
            return end
        return t.state

    def pending(self) -> list[dict[str, Any]]:
        """The decisions the table waits for, from its public view."""
        view = self.t.view()
        rnd = view.get("round") or {}
        decided = {(d["box"], d["player"]) for d in rnd.get("decisions", [])}
        out = []
        for bet in rnd.get("bets", []):
            key = (bet["box"], bet["player"])
            if bet["wager"] in ("versus_croupier", "ante") and key not in decided \
                    and bet["box"] not in rnd.get("void_boxes", []):
                out.append({"box": bet["box"], "player": bet["player"]})
                decided.add(key)
        return out


def record_rounds(game: str, rounds: int, seed: int = 0) -> list[dict[str, Any]]:
    """The input records of ``rounds`` rounds of ``game`` (shoe mode), from opening the table."""
    rec = Recorder(make_table(game))
    c = Croupier(rec, game, seed)
    c.open()
    for _ in range(rounds):
        end = c.play_round()
        if end not in ("round_complete", "round_void"):
            raise TablectlError(f"{game}: the scripted round ended in {end}")
    return rec.inputs
