"""The shuffler's deck check in shuffler mode: the table asks for it when the deck is gathered
(the round's end), shuffles only after its result is journaled, and so a card missing from
the deck is named every round (Super Pan 9 art. 2(1): a full deck every round)."""
import random

import pytest

from controller.integrity import IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card, full_deck
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT

C = Card.parse
DECK = full_deck()
LOST = C("9d")
SHORT = [c for c in DECK if c != LOST]        # a card fell on the floor while gathering


class Shuffler:
    """A scripted card-recognising shuffler (and dice agitator) answering the table's
    commands in order, as the simulator's firmware does, with a deck of ``cards``."""

    def __init__(self, run, cards, seed=1):
        self.run, self.cards, self.rng = run, list(cards), random.Random(seed)
        self.order: list[Card] = []
        self.inbox: list = []                 # commands sent (after journaling), unanswered
        self.status = "ready"                 # what a status request is answered with

    def send(self, command):
        # A command reaches a device only once the journal holds it.
        held = [r.payload for r in self.run.journal.records(kinds=["device_command"])]
        assert command.to_json() in held, command
        self.inbox.append(command)

    def answer(self, limit=100):
        """Answer every command waiting, and those they lead to."""
        for _ in range(limit):
            if not self.inbox:
                return
            c = self.inbox.pop(0)
            dev = "dice" if c.device_class == "dice" else "shuffler"
            out = {
                "deck_check": lambda: [ev.DeckCheckResult(
                    device=dev, ts=0.0, count=len(self.cards), cards=tuple(self.cards),
                    missing=tuple(x for x in DECK if x not in self.cards), deck_ids=(1,))],
                "shuffle": lambda: [ev.ShuffleStarted(device=dev, ts=0.0),
                                    ev.ShuffleDone(device=dev, ts=0.0, count=len(self.cards))],
                "dispense_hand": lambda: [ev.HandDispensed(
                    device=dev, ts=0.0, cards=tuple(self.take(c.args["n"])),
                    deck_ids=(1,) * c.args["n"])],
                "dispense_card": lambda: [ev.CardDispensed(device=dev, ts=0.0,
                                                           card=self.take(1)[0], deck_id=1)],
                "shake": lambda: [ev.ShakeStarted(device=dev, ts=0.0),
                                  ev.DiceResult(device=dev, ts=0.0, dice=(1, 1, 1, 2))],
                "status": lambda: [ev.Status(device=dev, ts=0.0, state=self.status)],
            }[c.action]()
            if c.action == "shuffle":
                self.order = self.rng.sample(self.cards, len(self.cards))
            for e in out:
                self.run.device(e)
        raise AssertionError("the table and the shuffler never settle")

    def take(self, n):
        got, self.order = self.order[:n], self.order[n:]
        return got


def make(tmp_path, game="super-pan-9", cards=DECK):
    table = Table("T1", get_game(game), "shuffler", layout_boxes=LAYOUT[game],
                  devices=DEVICES,
                  integrity=IntegrityMonitor(deck_per_round=game == "super-pan-9"))
    run = TableRunner(table, Journal.open(tmp_path / "journal.db", "T1"))
    dev = Shuffler(run, cards)
    run.send = dev.send
    return run, dev


def actions(run, since=0):
    return [r.payload["action"] for r in run.journal.records(since=since,
                                                               kinds=["device_command"])]


IDENT = ev.DeviceIdentity("shuffler", "sim", "S1", "0001", "1.0", "ab" * 16, True)
DICE = ev.DeviceIdentity("dice", "sim", "D1", "0003", "1.0", "ef" * 16, False)


def restarted(tmp_path, game="super-pan-9"):
    """The controller started again on the same journal, recovered: (runner, shuffler)."""
    again = Table("T1", get_game(game), "shuffler", layout_boxes=LAYOUT[game], devices=DEVICES,
                  integrity=IntegrityMonitor(deck_per_round=game == "super-pan-9"))
    run = TableRunner(again, Journal.open(tmp_path / "journal.db", "T1"))
    dev = Shuffler(run, DECK)
    run.send = dev.send
    run.recover()
    return run, dev


def pan9_round(run, dev, banker=1):
    """One Super Pan 9 round from bets open to the result confirmed, two of seats 1 to 3 betting.
    A seat that bet in the previous round banks a new turn each round, so no bank rule of
    261/96/M art. 5(1), 5(2), 5(4) stands in the way."""
    run.command("set_banker", seat=banker, capital=1000)
    for seat in [s for s in (1, 2, 3) if s != banker][:2]:
        run.command("place_bet", box=seat, wager="seat", amount=100, player=f"p{seat}")
    run.command("shake")
    dev.answer()
    assert run.table.state == "settlement"
    run.command("confirm_result")


def test_pan9_missing_card_named_every_round_and_shuffle_waits_for_the_journaled_check(
        tmp_path):
    run, dev = make(tmp_path, cards=SHORT)
    run.command("open_table", "supervisor")
    # The first deck is checked before its first shuffle.
    assert actions(run) == ["deck_check"] and run.table.state == "shuffling"
    dev.answer()
    assert run.table.state == "bets_open"
    for i in range(3):
        pan9_round(run, dev, banker=(1, 2)[i % 2])
        assert run.table.state == "round_complete"
        assert actions(run)[-1] == "deck_check"         # the deck is gathered: checked now
        dev.answer()
        run.command("next_round")
        assert actions(run)[-1] == "shuffle"            # checked already: no wait
        dev.answer()
        assert run.table.state == "bets_open"
    pan9_round(run, dev, banker=2)
    dev.answer()
    alarms = [r.payload for r in run.journal.records(kinds=["integrity"])
              if r.payload["record"] == "alarm"]
    assert [(a["kind"], a["cards"]) for a in alarms] == [("missing_card", ["9d"])] * 5
    assert len({a["deck"] for a in alarms}) == 5          # one per round's deck
    # In the journal: every shuffle is commanded after a deck check's result, which came
    # after the check was commanded.
    seen = []
    for r in run.journal.records(kinds=["device_command", "device"]):
        if r.kind == "device_command":
            seen.append(r.payload["action"])
        elif r.payload["event"]["kind"] == "deck_check_result":
            seen.append("result")
    checked = [a for a in seen if a in ("deck_check", "result", "shuffle")]
    assert checked[:3] == ["deck_check", "result", "shuffle"]
    for i, a in enumerate(checked):
        if a == "shuffle":
            assert checked[i - 2:i] == ["deck_check", "result"], checked
    # The display was told, without the card.
    shown = [r.payload for r in run.journal.records(kinds=["table"])
             if r.payload.get("kind") == "integrity_alarm"]
    assert len(shown) == 5 and all("9d" not in s["display"] for s in shown)
    run.journal.close()


def test_a_deck_short_of_many_cards_is_one_line_on_the_display_and_every_card_journaled(
        tmp_path):
    """A wrong or half-gathered deck: the supervisor sees one alarm with the count (not a
    screenful of identical lines), the journal names each card missing."""
    lost = DECK[:12]
    run, dev = make(tmp_path, cards=[c for c in DECK if c not in lost])
    run.command("open_table", "supervisor")
    dev.answer()
    journaled = [r.payload for r in run.journal.records(kinds=["integrity"])
                 if r.payload["record"] == "alarm"]
    assert sorted(a["cards"][0] for a in journaled) == sorted(str(c) for c in lost)
    shown = [r.payload for r in run.journal.records(kinds=["table"])
             if r.payload.get("kind") == "integrity_alarm"]
    assert len(shown) == 1, shown
    assert shown[0]["alarm"] == "missing_card" and shown[0]["count"] == 12
    assert "12 cards missing" in shown[0]["display"]
    assert not any(str(c) in shown[0]["display"] for c in lost)
    run.journal.close()


def test_a_quick_next_round_waits_only_for_the_check_in_progress(tmp_path):
    run, dev = make(tmp_path)
    run.command("open_table", "supervisor")
    dev.answer()
    pan9_round(run, dev)
    mark = run.journal.head()[0]
    run.command("next_round")                  # before the check's result
    assert run.table.state == "shuffling" and actions(run, mark) == []
    dev.answer()                               # the result comes: the shuffle follows
    assert actions(run, mark) == ["shuffle"] and run.table.state == "bets_open"
    run.journal.close()


BEGIN = {   # the commands that get a round's cards out of the shuffler
    "q-poker": [("place_bet", {"box": 1, "wager": "versus_croupier", "amount": 2}),
                ("close_bets", {})],
    "fortune-3-card-poker": [("place_bet", {"box": 1, "wager": "ante", "amount": 2,
                                            "player": "p1"}), ("close_bets", {})],
    "texas-holdem": [("seat_players", {"seats": [1, 2], "stacks": [100, 100], "button": 1}),
                     ("close_bets", {})],
    "super-pan-9": [("set_banker", {"seat": 1, "capital": 1000}),
                    ("place_bet", {"box": 2, "wager": "seat", "amount": 100, "player": "p2"}),
                    ("shake", {})],
}


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker", "texas-holdem",
                                  "super-pan-9"])
def test_every_game_checks_the_gathered_deck_in_shuffler_mode(tmp_path, game):
    run, dev = make(tmp_path, game, cards=SHORT)
    run.command("open_table", "supervisor")
    dev.answer()
    assert run.table.state == "bets_open"
    for name, args in BEGIN[game]:
        run.command(name, **args)
    dev.answer()                                # cards of the deck are out
    assert run.table.state in ("player_decisions", "settlement")
    run.command("void_round", "supervisor", reason="the round is called off")
    assert run.table.state == "round_void" and actions(run)[-1] == "deck_check"
    dev.answer()
    alarms = [r.payload for r in run.journal.records(kinds=["integrity"])
              if r.payload["record"] == "alarm"]
    # At the opening, and again for the deck gathered after the round.
    assert [(a["kind"], a["cards"]) for a in alarms] == [("missing_card", ["9d"])] * 2
    assert alarms[0]["deck"] != alarms[1]["deck"]
    run.journal.close()


def test_shoe_mode_asks_for_no_deck_check():
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES)
    t.command("open_table", role="supervisor")
    t.command("deck_ready")
    t.command("place_bet", box=1, wager="versus_croupier", amount=2)
    t.command("void_round", role="supervisor", reason="x")
    t.command("next_round")
    assert t.commands == []


def test_a_hand_on_its_way_is_not_interrupted_by_the_check(tmp_path):
    run, dev = make(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    dev.answer()
    run.command("place_bet", box=1, wager="versus_croupier", amount=2)
    run.command("close_bets")
    assert actions(run)[-1] == "dispense_hand"
    mark = run.journal.head()[0]
    run.command("void_round", "supervisor", reason="the croupier saw a card fall")
    assert run.table.state == "round_void" and actions(run, mark) == []
    dev.answer()                               # the hand comes out, then the check
    assert actions(run, mark) == ["deck_check"]
    run.journal.close()


def test_a_check_whose_answer_may_be_lost_is_asked_again(tmp_path):
    run, dev = make(tmp_path, "q-poker")
    run.command("open_table", "supervisor")
    dev.answer()
    run.command("place_bet", box=1, wager="versus_croupier", amount=2)
    run.command("void_round", "supervisor", reason="x")
    assert actions(run)[-1] == "deck_check"
    dev.inbox.clear()                           # the link drops before the result
    run.device(ev.LinkLost(device="shuffler", ts=1.0, reason="port vanished"))
    run.device(ev.LinkRestored(device="shuffler", ts=2.0, identity=IDENT))
    mark = run.journal.head()[0]
    run.command("next_round")
    assert actions(run, mark) == ["deck_check"]  # checked first, then shuffled
    dev.answer()
    assert actions(run, mark) == ["deck_check", "shuffle"]
    assert run.table.state == "bets_open"
    run.journal.close()


def test_after_a_restart_while_waiting_for_the_check_it_is_asked_again(tmp_path):
    run, dev = make(tmp_path)
    run.command("open_table", "supervisor")
    dev.answer()
    pan9_round(run, dev)
    run.command("next_round")
    assert run.table.state == "shuffling"
    run.journal.close()                         # the controller stops before the result
    run2, dev2 = restarted(tmp_path)
    again = run2.table
    assert again.state == "shuffling"
    mark = run2.journal.head()[0]
    run2.device(ev.LinkUp(device="shuffler", ts=0.0, identity=IDENT))
    assert actions(run2, mark) == ["deck_check"]
    dev2.answer()
    assert actions(run2, mark) == ["deck_check", "shuffle"] and again.state == "bets_open"
    run2.journal.close()


def test_a_check_asked_before_a_restart_is_asked_again_before_the_shuffle(tmp_path):
    run, dev = make(tmp_path)
    run.command("open_table", "supervisor")
    dev.answer()
    pan9_round(run, dev)
    assert run.table.state == "round_complete" and actions(run)[-1] == "deck_check"
    run.journal.close()                         # stopped before the result came
    run2, dev2 = restarted(tmp_path)
    again = run2.table
    assert again.state == "round_complete"
    run2.device(ev.LinkUp(device="shuffler", ts=0.0, identity=IDENT))
    run2.device(ev.LinkUp(device="dice", ts=0.0, identity=DICE))
    mark = run2.journal.head()[0]
    run2.command("next_round")
    assert actions(run2, mark) == ["deck_check"]
    dev2.answer()
    assert actions(run2, mark) == ["deck_check", "shuffle"] and again.state == "bets_open"
    run2.journal.close()


def test_the_check_before_a_restart_answers_late_and_its_shuffle_is_refused(tmp_path):
    """Both checks answer after a restart: the one asked before it (the device kept its
    result) and the one asked again. The shuffle asked on the first result is refused (the
    device is busy with the second check); the second result asks for it again, and the
    table opens its bets (found by the SIGKILL soak: it waited in `shuffling` for good)."""
    run, dev = make(tmp_path)
    run.command("open_table", "supervisor")
    dev.answer()
    pan9_round(run, dev)
    run.command("next_round")
    assert run.table.state == "shuffling" and actions(run)[-1] == "deck_check"
    first = dev.inbox.pop()                     # on its way to the device when it stopped
    run.journal.close()
    run2, dev2 = restarted(tmp_path)
    again = run2.table
    mark = run2.journal.head()[0]
    run2.device(ev.LinkUp(device="shuffler", ts=0.0, identity=IDENT))
    assert actions(run2, mark) == ["deck_check"]
    second = dev2.inbox.pop()
    assert first.action == second.action == "deck_check"
    result = ev.DeckCheckResult(device="shuffler", ts=0.0, count=52, cards=tuple(DECK),
                                missing=(), deck_ids=(1,))
    run2.device(result)                         # the first check's result, kept by the device
    assert actions(run2, mark) == ["deck_check", "shuffle"]
    dev2.inbox.clear()                          # refused: the device is checking again
    run2.device(result)                         # the second check's result
    assert actions(run2, mark) == ["deck_check", "shuffle", "shuffle"]
    dev2.answer()
    assert again.state == "bets_open"
    run2.journal.close()
