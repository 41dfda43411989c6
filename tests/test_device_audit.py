"""What a faulty shuffler or shoe says that the table must not take at its word.

On the runner and a real journal (table_helpers.shuffler_runner): the device events are the
ones the drivers put on the queue (drivers/events.py).
"""
from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import asked, shuffler_runner

C = Card.parse


def published(run, kind, since=0):
    return [r.payload for r in run.journal.records(since=since, kinds=["table"])
            if r.payload.get("kind") == kind]


def checked(ts):
    """The shuffler's deck check: a whole deck."""
    return ev.DeckCheckResult(device="shuffler", ts=ts, count=52, cards=(), missing=(),
                              extra=(), duplicate=(), deck_ids=(), card_deck_ids=())


def dealt_to_decisions(run):
    """Fortune 3 Card Poker by shuffler: one ante on box 1, both hands out."""
    run.command("open_table", "supervisor")
    run.device(checked(0.05))
    run.device(ev.ShuffleDone(device="shuffler", ts=0.1, count=52))
    run.command("place_bet", box=1, wager="ante", amount=10)
    run.command("close_bets")
    for cards in (("As", "Kd", "Qh"), ("2c", "3c", "4c")):
        run.device(ev.HandDispensed(device="shuffler", ts=1.0,
                                    cards=tuple(C(c) for c in cards)))
    assert run.table.state == "player_decisions"


def test_a_shuffle_done_nobody_asked_for_is_not_the_next_rounds_shuffle(tmp_path):
    # The shuffler says again that a deck is shuffled while the round's cards are out (its
    # report of the last shuffle sent again under a new session's number, or a firmware that
    # shuffles on its own): the deck the next round is dealt from is still to be gathered,
    # checked and shuffled, so the next round waits for that shuffle.
    run = shuffler_runner(tmp_path, "fortune-3-card-poker")
    dealt_to_decisions(run)
    run.device(ev.ShuffleDone(device="shuffler", ts=2.0, count=52))
    #X assert published(run, "irregular_event")[-1]["event"] == "shuffle_done"
    run.command("decide", box=1, decision="play")
    run.command("confirm_result")
    before = len(asked(run))
    run.command("next_round")
    assert run.table.state == "shuffling"
    run.device(checked(3.0))
    assert "shuffle" in asked(run)[before - 1:]


def test_a_shuffle_done_in_shoe_mode_does_not_stand_for_the_croupiers_deck(tmp_path):
    # Dealt by shoe, the cut card came out: the next round needs the croupier's fresh deck
    # (deck_ready), whatever the idle shuffler beside the table says of its own.
    run = shuffler_runner(tmp_path, "q-poker")
    run.command("switch_mode", "supervisor", mode="shoe")
    run.command("open_table", "supervisor")
    run.command("deck_ready")
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.command("close_bets")
    run.device(ev.CutCardReached(device="shoe", ts=0.5))
    for i, c in enumerate(("As", "2c", "Kd", "3c", "Qh", "4c")):
        run.device(ev.CardDrawn(device="shoe", ts=1.0 + i, card=C(c), face_up=False))
    assert run.table.state == "player_decisions"
    run.device(ev.ShuffleDone(device="shuffler", ts=8.0, count=52))
    run.command("decide", box=1, decision="fold")
    if run.table.state == "settlement":
        run.command("confirm_result")
    run.command("next_round")
    assert run.table.state == "shuffling"


def test_a_hand_out_of_the_shuffler_before_the_deal_has_the_deck_shuffled_again(tmp_path):
    # A hand nobody asked for, with no bet on the layout: it joins no hand, and the deck
    # shuffled for the round is short of it. The round was dealt from that deck all the same;
    # it is checked and shuffled again first (the check counts what was gathered back).
    run = shuffler_runner(tmp_path, "fortune-3-card-poker")
    run.command("open_table", "supervisor")
    run.device(checked(0.1))
    run.device(ev.ShuffleStarted(device="shuffler", ts=0.2))
    run.device(ev.ShuffleDone(device="shuffler", ts=0.3, count=52))
    assert asked(run) == ["deck_check", "shuffle"] and run.table.state == "bets_open"
    before = len(asked(run))
    run.device(ev.HandDispensed(device="shuffler", ts=1.0,
                                cards=tuple(C(c) for c in ("As", "Ks", "Qs"))))
    assert published(run, "irregular_event")[-1]["event"] == "hand_dispensed"
    assert asked(run)[before:] == ["deck_check"]
    run.command("place_bet", box=1, wager="ante", amount=10)
    run.command("close_bets")
    assert "dispense_hand" not in asked(run)[before:]
    run.device(checked(2.0))
    assert asked(run)[-1] == "shuffle"
    run.device(ev.ShuffleDone(device="shuffler", ts=3.0, count=52))
    assert asked(run)[-1] == "dispense_hand"
