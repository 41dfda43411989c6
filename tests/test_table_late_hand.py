"""A hand asked of the shuffler before a failure or a restart that did leave it, under the
readings that keep the round (Hold'em H11 ``rectify``, Super Pan 9 P3 ``rectify``).

The round is held for the supervisor. The hand (or card) asked before is out at the table and
comes while the table waits: it is taken into the deal as the plan's next, as any card out
while the table is stopped (docs/interpretations.md), and at the clear the shuffler is asked for
what is still owed, not again for what arrived. Every physical hand is counted once.

On the runner and a real journal: a restart is a real recovery from the journal.
"""
import pytest

from controller.journal import Journal
from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import asked, deck_checked, shuffler_runner, status_answer

C = Card.parse


def make(path, game):
    return shuffler_runner(path, game, machine_failure="rectify")




def shown(run, since=0):
    """Who each card out was counted for, and how many cards, in the journal's order."""
    return [(r.payload["recipient"], r.payload["count"])
            for r in run.journal.records(since=since, kinds=["table"])
            if r.payload.get("kind") == "card"]


def irregular(run):
    return [r.payload for r in run.journal.records(kinds=["table"])
            if r.payload.get("kind") == "irregular_event"]


def opened(run, path, game):
    """Open the table, its deck checked and shuffled."""
    run.command("open_table", "supervisor")
    run.device(deck_checked(0.05))
    run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    assert run.table.state == "bets_open"
    return run


def seat_2_asked(run):
    """Super Pan 9: the banker at seat 1, ana's bet on seat 2 and the dice thrown so seat 2
    is dealt first: its hand is asked of the shuffler."""
    run.command("set_banker", seat=1, capital=1000)
    run.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    run.command("shake")
    run.device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 1)))


def fail(run, path, game, how):
    """The shuffler fails, or the controller restarts (a recovery from the journal)."""
    if how == "jam":
        run.device(ev.Jam(device="shuffler", ts=5.0, where="exit"))
        return run
    run.journal.close()
    again = make(path, game)
    again.recover()
    return again


@pytest.mark.parametrize("how", ["jam", "restart"])
def test_pan9_p3_rectify_the_hand_asked_before_comes_while_held_and_is_the_seats(tmp_path,
                                                                                  how):
    game = "super-pan-9"
    run = opened(make(tmp_path, game), tmp_path, game)
    seat_2_asked(run)
    assert asked(run)[-1] == "dispense_hand"
    run = fail(run, tmp_path, game, how)
    assert run.table.state == "malfunction" and run.table.round.void is None
    mark = run.journal.head()[0]
    run.device(ev.HandDispensed(device="shuffler", ts=6.0, cards=(C("9s"), C("Ks"))))
    assert shown(run, mark) == [("box 2", 2)] and not irregular(run)
    assert asked(run, mark) == []                    # nothing asked while the table waits
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["dispense_hand"]     # the banker's, not seat 2's again
    run.device(ev.HandDispensed(device="shuffler", ts=7.0, cards=(C("Kh"), C("Kd"))))
    assert shown(run, mark) == [("box 2", 2), ("box 1", 2)]
    assert run.table.state == "settlement" and not irregular(run)
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        assert j.verify().ok


@pytest.mark.parametrize("first", [True, False], ids=["first_card", "third_card"])
@pytest.mark.parametrize("how", ["jam", "restart"])
def test_holdem_h11_rectify_the_card_asked_before_comes_while_held_and_is_the_next(
        tmp_path, how, first):
    game = "texas-holdem"
    run = opened(make(tmp_path, game), tmp_path, game)
    run.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    run.command("close_bets")
    order = ["box 5", "box 2", "box 5", "box 2"]     # from the left of the button, art. 6(1)
    cards = ["As", "Kd", "Ah", "Kc"]
    out = 0 if first else 2
    for c in cards[:out]:
        run.device(ev.CardDispensed(device="shuffler", ts=1.0, card=C(c)))
    assert asked(run)[-1] == "dispense_card"
    run = fail(run, tmp_path, game, how)
    assert run.table.state == "malfunction" and run.table.round.void is None
    mark = run.journal.head()[0]
    run.device(ev.CardDispensed(device="shuffler", ts=6.0, card=C(cards[out])))
    assert shown(run, mark) == [(order[out], 1)] and not irregular(run)
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["dispense_card"]     # the next hole card, once
    for c in cards[out + 1:]:
        run.device(ev.CardDispensed(device="shuffler", ts=7.0, card=C(c)))
    assert [r for r, _ in shown(run)] == order
    assert run.table.state == "player_decisions" and run.table._holdem.street == "preflop"
    blinds = [r for r in run.journal.records(kinds=["table"])
              if r.payload.get("kind") == "blinds"]
    assert len(blinds) == 1 and not irregular(run)


# The hand asked before the failure or restart comes only after the supervisor's clear. The
# table cannot tell from its journal whether that request left, so at the clear it asks the
# shuffler's status: dispensing, the hand is on its way and is the one asked (nothing asked
# again); idle or ready, nothing is coming and the hand is asked again. Either way one hand
# comes out for each the plan holds: none is dealt to a recipient it was not asked for, and
# none is left over at the end.

def cards_out(run):
    return sum(c for _, c in shown(run))


def rulings_since(run, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["decision"])]


@pytest.mark.parametrize("how", ["jam", "restart"])
def test_pan9_p3_rectify_the_hand_asked_before_comes_after_the_clear_and_is_the_seats(
        tmp_path, how):
    game = "super-pan-9"
    run = opened(make(tmp_path, game), tmp_path, game)
    seat_2_asked(run)
    run = fail(run, tmp_path, game, how)
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"]            # not the seat's hand a second time
    status_answer(run, "dispensing", ts=6.5)
    assert asked(run, mark) == ["status"]            # it is on its way: wait for it
    run.device(ev.HandDispensed(device="shuffler", ts=7.0, cards=(C("9s"), C("Ks"))))
    assert shown(run, mark) == [("box 2", 2)]
    assert asked(run, mark) == ["status", "dispense_hand"]      # the banker's
    run.device(ev.HandDispensed(device="shuffler", ts=8.0, cards=(C("Kh"), C("Kd"))))
    assert shown(run, mark) == [("box 2", 2), ("box 1", 2)]
    assert run.table.state == "settlement" and run.table.round.void is None
    # Two hands asked for two in the plan: nothing more will come out.
    assert asked(run).count("dispense_hand") == 2
    assert not irregular(run) and not rulings_since(run, mark)
    with Journal.open(tmp_path / "journal.db", readonly=True) as j:
        assert j.verify().ok


@pytest.mark.parametrize("how", ["jam", "restart"])
def test_pan9_p3_rectify_a_count_only_shuffler_leaves_no_hand_over_to_void_the_round(
        tmp_path, how):
    # Asked twice, the second hand would come once the deal is complete, while the round
    # waits for its cards to be entered at the reveal, and be ruled a card beyond the plan
    # (P5 round_void): the round void for a hand the table asked for twice.
    game = "super-pan-9"
    run = opened(make(tmp_path, game), tmp_path, game)
    run.device(ev.LinkUp(device="shuffler", ts=0.2, identity=ev.DeviceIdentity(
        device_class="shuffler", vendor="v", model="m", serial="S1", firmware_version="1",
        firmware_hash="00", recognises_cards=False)))
    seat_2_asked(run)
    run = fail(run, tmp_path, game, how)
    run.command("clear_malfunction", "supervisor")
    status_answer(run, "dispensing", ts=6.5)
    for ts in (7.0, 8.0):
        run.device(ev.HandDispensed(device="shuffler", ts=ts, cards=(None, None)))
    assert run.table.state == "croupier_reveal" and run.table.round.void is None
    assert asked(run).count("dispense_hand") == 2


@pytest.mark.parametrize("how", ["jam", "restart"])
def test_pan9_p3_rectify_the_hand_that_never_left_is_asked_again_after_the_status(tmp_path,
                                                                                   how):
    game = "super-pan-9"
    run = opened(make(tmp_path, game), tmp_path, game)
    seat_2_asked(run)
    run = fail(run, tmp_path, game, how)
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    status_answer(run, "ready", ts=6.5)
    assert asked(run, mark) == ["status", "dispense_hand"]      # seat 2's, again
    run.device(ev.HandDispensed(device="shuffler", ts=7.0, cards=(C("9s"), C("Ks"))))
    run.device(ev.HandDispensed(device="shuffler", ts=8.0, cards=(C("Kh"), C("Kd"))))
    assert shown(run, mark) == [("box 2", 2), ("box 1", 2)]
    assert run.table.state == "settlement" and not irregular(run)


@pytest.mark.parametrize("first", [True, False], ids=["first_card", "third_card"])
@pytest.mark.parametrize("how", ["jam", "restart"])
def test_holdem_h11_rectify_the_card_asked_before_comes_after_the_clear_and_is_the_next(
        tmp_path, how, first):
    game = "texas-holdem"
    run = opened(make(tmp_path, game), tmp_path, game)
    run.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    run.command("close_bets")
    order = ["box 5", "box 2", "box 5", "box 2"]
    cards = ["As", "Kd", "Ah", "Kc"]
    out = 0 if first else 2
    for c in cards[:out]:
        run.device(ev.CardDispensed(device="shuffler", ts=1.0, card=C(c)))
    run = fail(run, tmp_path, game, how)
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"]
    status_answer(run, "dispensing", ts=6.5)
    for c in cards[out:]:
        run.device(ev.CardDispensed(device="shuffler", ts=7.0, card=C(c)))
    assert [r for r, _ in shown(run)] == order
    assert run.table.state == "player_decisions" and run.table._holdem.street == "preflop"
    # One card asked for each hole card: no card comes out into the preflop betting.
    assert asked(run).count("dispense_card") == 4
    assert not irregular(run) and not rulings_since(run, mark)


def test_a_status_refused_for_want_of_a_link_is_asked_again_when_the_link_is_up(tmp_path):
    game = "super-pan-9"
    run = opened(make(tmp_path, game), tmp_path, game)
    seat_2_asked(run)
    run = fail(run, tmp_path, game, "jam")
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    run.device(ev.CommandRefused(device="shuffler", ts=6.2, action="status",
                                 reason="not-connected", text="not connected"))
    assert asked(run, mark) == ["status"]            # nothing to go on: no hand asked
    run.device(ev.LinkUp(device="shuffler", ts=6.4, identity=ev.DeviceIdentity(
        device_class="shuffler", vendor="v", model="m", serial="S1", firmware_version="1",
        firmware_hash="00", recognises_cards=True)))
    assert asked(run, mark) == ["status", "status"]
    status_answer(run, "ready", ts=6.5)
    assert asked(run, mark) == ["status", "status", "dispense_hand"]


def test_a_failure_while_the_status_is_awaited_asks_it_again_at_the_next_clear(tmp_path):
    game = "super-pan-9"
    run = opened(make(tmp_path, game), tmp_path, game)
    seat_2_asked(run)
    run = fail(run, tmp_path, game, "jam")
    run.command("clear_malfunction", "supervisor")
    status_answer(run, "dispensing", ts=6.5)
    run.device(ev.Jam(device="shuffler", ts=6.6, where="exit"))      # the hand stopped
    assert run.table.state == "malfunction" and run.table.round.void is None
    mark = run.journal.head()[0]
    run.command("clear_malfunction", "supervisor")
    assert asked(run, mark) == ["status"]
    status_answer(run, "ready", ts=7.5)
    assert asked(run, mark) == ["status", "dispense_hand"]
