"""The round's first hand (or card) asked of the shuffler fails inside the controller.

A ``command_refused`` with the reason ``controller-error`` says the driver could not carry the
command out (drivers/driver.py ``command_failed``): the request did not reach the shuffler,
which neither failed nor dealt. Before the first hand nothing of the round is out, so no
article on the shuffler's failure "while dealing" reaches it (89/2004 art. 11(5), 78/2008
art. 11(4), 11/2008 art. 9 with H11, 261/96/M P3): the round is held for the supervisor with
its bets (Hold'em: the blinds posted once; Super Pan 9: the same dice), as a shuffler failure
before any hand is asked is (tests/test_table_failure_before_the_deal.py), and at the clear the
request is made again.

On the runner and a real journal; a restart is a real recovery from the journal.
"""
import pytest

from controller.journal import Journal
from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import asked, bets_closed, shuffler_runner

C = Card.parse
GAMES = ["q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9"]
FAILED = ("shuffler {action}: the controller could not carry it out (boom); report this "
          "with the service's log, which holds the details")


def make(path, game):
    return shuffler_runner(path, game)




def of_kind(run, kind, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["table"])
            if r.payload.get("kind") == kind]


def first_asked(path, game):
    """Bets on the layout (Hold'em: the players seated), betting closed (Super Pan 9: the dice
    read) and the round's first hand or card asked of the shuffler."""
    run = make(path, game)
    bets_closed(run, game)
    assert asked(run)[-1] in ("dispense_hand", "dispense_card")
    return run


def controller_error(run):
    action = asked(run)[-1]
    run.device(ev.CommandRefused(device="shuffler", ts=2.0, action=action,
                                 reason="controller-error", text=FAILED.format(action=action)))
    return action


def deal_the_rest(run, game):
    """The shuffler deals every hand the table asks for; the round's deal completes."""
    cards = iter(["As", "Kd", "Ah", "Kc", "2s", "3s", "4s", "5d", "7c", "8h", "9d", "Jc"])
    for _ in range(12):
        if run.table.state not in ("bets_closed", "dealing"):
            return
        action = asked(run)[-1]
        if action == "dispense_card":
            run.device(ev.CardDispensed(device="shuffler", ts=3.0, card=C(next(cards))))
        else:
            assert action == "dispense_hand", asked(run)
            n = 2 if game == "super-pan-9" else 3
            run.device(ev.HandDispensed(device="shuffler", ts=3.0,
                                        cards=tuple(C(next(cards)) for _ in range(n))))


DEALT = {"q-poker": "player_decisions", "fortune-3-card-poker": "player_decisions",
         "texas-holdem": "player_decisions", "super-pan-9": "settlement"}
HELD_AT = {"q-poker": "bets_closed", "fortune-3-card-poker": "bets_closed",
           "texas-holdem": "bets_closed", "super-pan-9": "dealing"}


@pytest.mark.parametrize("game", GAMES)
def test_a_controller_error_of_the_first_hand_holds_the_round_and_it_is_asked_again(
        tmp_path, game):
    run = first_asked(tmp_path, game)
    bets = run.table.round.bets_json()
    action = controller_error(run)
    # Held for the supervisor with its bets: nothing dealt, nothing ruled, nothing returned.
    assert run.table.state == "malfunction" and run.table.round.void is None
    assert not of_kind(run, "round_void") and not list(run.journal.records(kinds=["decision"]))
    assert not list(run.journal.records(kinds=["round_close"]))
    assert run.table.round.bets_json() == bets
    shown = [r.payload for r in run.journal.records(kinds=["alarm"])
             if r.payload.get("kind") == "device_condition"][-1]
    assert shown["device"] == "shuffler" and "could not carry it out" in shown["what"]
    mark = run.journal.head()[0]
    assert asked(run, mark) == []                    # nothing asked while the table waits
    run.command("clear_malfunction", "supervisor")
    # Betting stays closed (Hold'em: blinds posted once; Super Pan 9: the dice stand), and
    # the request that never reached the shuffler is made again.
    assert run.table.state == HELD_AT[game]
    assert asked(run, mark) == [action]
    deal_the_rest(run, game)
    assert run.table.state == DEALT[game] and run.table.round.void is None
    assert len(of_kind(run, "bets_closed")) == 1
    assert len(of_kind(run, "blinds")) == (1 if game == "texas-holdem" else 0)
    assert not of_kind(run, "irregular_event") and not of_kind(run, "round_void")
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        assert j.verify().ok


@pytest.mark.parametrize("game", ["q-poker", "texas-holdem"])
def test_held_after_a_controller_error_a_restart_keeps_the_round_held(tmp_path, game):
    run = first_asked(tmp_path, game)
    action = controller_error(run)
    run.journal.close()
    again = make(tmp_path, game)
    again.recover()
    # The restart while held is no failure while dealing: no hand is asked or out.
    assert again.table.state == "malfunction" and again.table.round.void is None
    assert not list(again.journal.records(kinds=["round_close"]))
    mark = again.journal.head()[0]
    again.command("clear_malfunction", "supervisor")
    assert again.table.state == "bets_closed" and asked(again, mark) == [action]
    deal_the_rest(again, game)
    assert again.table.state == "player_decisions" and again.table.round.void is None


def test_the_hand_out_after_all_while_held_shows_the_deal_had_begun(tmp_path):
    # Should the request have left after all, its hand is out at the table: while the table
    # waits it is the deal's first, and the failure came while dealing after all
    # (89/2004 art. 11(5): void under the defaults), as for a card out while the table is
    # stopped (docs/interpretations.md).
    run = first_asked(tmp_path, "q-poker")
    controller_error(run)
    assert run.table.round.void is None
    run.device(ev.HandDispensed(device="shuffler", ts=3.0, cards=(C("As"), C("Ah"), C("Ad"))))
    assert [c["recipient"] for c in of_kind(run, "card")] == ["box 2"]
    ruling = [r.payload for r in run.journal.records(kinds=["decision"])][-1]
    assert (ruling["irregularity"], ruling["phase"], ruling["remedy"], ruling["article"]) == (
        "shuffler_malfunction", "dealing", "round_void", "89/2004 art. 11(5)")
    assert run.table.round.void is not None

