"""Helpers for the table-machine tests: build tables and feed them device events."""
from __future__ import annotations

from pathlib import Path

import pytest

from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

DEVICES = {"shoe": "shoe", "shuffler": "shuffler", "dice": "dice", "sensors": "box-sensors"}
LAYOUT = {"q-poker": 7, "fortune-3-card-poker": 7, "super-pan-9": 8, "texas-holdem": 10}


def table(game: str, mode: str = "shoe", **kw) -> Table:
    t = Table("T1", get_game(game), mode, layout_boxes=kw.pop("layout", LAYOUT[game]),
              devices=DEVICES, **kw)
    t.command("open_table", role="supervisor")
    ready(t)
    return t


def shuffler_runner(path: Path, game: str, **interpretations: str) -> TableRunner:
    """A journaled table dealt by the shuffler, with Hold'em's blinds and the integrity
    monitor; what it asks of the devices is kept in ``run.sent`` instead of being sent."""
    table = Table("T1", get_game(game), "shuffler", layout_boxes=LAYOUT[game], devices=DEVICES,
                  interpretations=interpretations or None,
                  holdem={"small_blind": 5, "big_blind": 10} if game == "texas-holdem" else None,
                  integrity=IntegrityMonitor(deck_per_round=game == "super-pan-9"))
    run = TableRunner(table, Journal.open(path / "journal.db", "T1"))
    run.sent = []
    run.send = run.sent.append
    return run


def bets_closed(run: TableRunner, game: str) -> None:
    """On ``shuffler_runner``'s table: opened, the deck checked and shuffled, one bet of 10 on
    box 2 (Hold'em: seats 2 and 5 with 500 each; Super Pan 9: a banker with 1,000 and a bet of
    100, the dice read), and betting closed."""
    run.command("open_table", "supervisor")
    run.device(deck_checked(0.05))
    run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    assert run.table.state == "bets_open"
    if game == "texas-holdem":
        run.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
        run.command("close_bets")
    elif game == "super-pan-9":
        run.command("set_banker", seat=1, capital=1000)
        run.command("place_bet", box=2, wager="seat", amount=100, player="ana")
        run.command("shake")
        run.device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 1)))
    else:
        wager = "versus_croupier" if game == "q-poker" else "ante"
        run.command("place_bet", box=2, wager=wager, amount=10, player="ana")
        run.command("close_bets")


@pytest.fixture
def faulty(monkeypatch):
    """The table's handling of a device's malfunction has a bug: the report lands the table in
    malfunction as the controller's own fault (whatever state it was in). A test module takes
    it by importing it."""
    def broken(self, e):
        raise RuntimeError("handler bug")
    from controller.table.machine import Table as Machine
    monkeypatch.setattr(Machine, "_on_malfunction", broken)


def asked(run: TableRunner, since: int = 0) -> list[str]:
    """What the table asked of its devices (journaled ``device_command``), in order."""
    return [r.payload["action"] for r in run.journal.records(since=since,
                                                               kinds=["device_command"])]


def status_answer(run: TableRunner, state: str, ts: float = 0.0) -> None:
    """The shuffler answers the table's last status request (the driver names the request
    its report answers: drivers/shuffler.py StatusAnswer)."""
    from drivers.shuffler import StatusAnswer

    ask = [r.payload["ask"] for r in run.journal.records(kinds=["device_command"])
           if r.payload["action"] == "status"][-1]
    run.device(StatusAnswer(device="shuffler", ts=ts, state=state, ask=ask))


def ready(t: Table) -> None:
    """Get the deck ready the way the mode does it."""
    if t.state != "shuffling":
        return
    if t.mode.value == "shoe":
        t.command("deck_ready")
    else:
        if t._deck_check == "asked":
            # The shuffler answers in the protocol's order: the deck check the table asked
            # for, then the shuffle asked on its result.
            t.handle_device(deck_checked())
        t.handle_device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))


def deck_checked(ts: float = 0.0, count: int = 52) -> ev.DeckCheckResult:
    """The shuffler's answer to the table's deck check: a whole deck, no card named."""
    return ev.DeckCheckResult(device="shuffler", ts=ts, count=count, cards=(), missing=(),
                              extra=(), duplicate=(), deck_ids=(), card_deck_ids=())


def draw(t: Table, *cards: str, face_up: bool = False) -> None:
    for c in cards:
        t.handle_device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c), face_up=face_up))


def hand(t: Table, *cards: str) -> None:
    t.handle_device(ev.HandDispensed(device="shuffler", ts=0.0,
                                     cards=tuple(Card.parse(c) for c in cards)))


def placed(t: Table, box: int) -> None:
    t.handle_device(ev.CardPlaced(device="sensors", ts=0.0, box=box))


def kinds(t: Table) -> list[str]:
    return [e.kind for e in t.outbox]


def rulings(t: Table) -> list[dict]:
    return [e.to_json() for e in t.outbox if e.kind == "ruling"]


def settlement(t: Table) -> dict:
    docs = [e.to_json() for e in t.outbox if e.kind == "settlement"]
    assert docs, f"no settlement; state {t.state}, events {kinds(t)}"
    return docs[-1]


def nets(t: Table) -> dict[tuple[int, str], int]:
    return {(w["box"], w["wager"]): w["net"] for w in settlement(t)["wagers"]}
