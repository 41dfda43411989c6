"""The table gets going again after a device is put right, without a supervisor voiding the
round: a condition raised outside dealing is cleared where the table stands, a request a failed
device refused or lost is asked again, a die back in the cup is shaken again (261/96/M art.
2(4)), a dice agitator failing after the dice are read leaves the deal alone, and a card the
shuffler dealt but could not read is a machine failure while dealing (the game's article)."""
import pytest

from controller.errors import TablectlError
from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import draw, hand, nets, rulings, table


def ident(cls: str, reads: bool = True) -> ev.DeviceIdentity:
    return ev.DeviceIdentity(cls, "sim", "m1", "s1", "1.0", "ab" * 16, recognises_cards=reads)


def actions(t, since: int = 0) -> list[str]:
    return [c.action for c in t.commands[since:]]


def deal_pan9(t, give) -> None:
    """Seat 2 receives 2c 3c (5 points), the banker on seat 1 receives 4h 2h (6 points), in
    the order the dice gave (261/96/M art. 2(2)-(3))."""
    for _ in range(2):
        who = t.tracker.expected.deal.recipient
        give(("2c", "3c") if who.box == 2 else ("4h", "2h"))


# --- 1. a jam or malfunction outside dealing ---------------------------------------------

def test_a_jam_after_the_deal_is_cleared_by_the_supervisor_where_the_table_stands():
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")        # box 1 three aces; croupier 5 high
    assert t.state == "player_decisions"
    t.handle_device(ev.Jam(device="shoe", ts=1.0, where="exit"))
    assert t.state == "player_decisions"               # every card is out: the round goes on
    t.command("decide", box=1, decision="play")
    t.command("confirm_result")
    assert t.state == "round_complete"
    with pytest.raises(TablectlError, match="jam"):
        t.command("next_round")                        # the jammed shoe stops the next round
    with pytest.raises(TablectlError, match="supervisor"):
        t.command("clear_malfunction", role="dealer")
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "round_complete"                 # nothing else changed
    assert not t.blocking_conditions()
    with pytest.raises(TablectlError, match="nothing to clear"):
        t.command("clear_malfunction", role="supervisor")
    t.command("next_round")
    assert t.state == "bets_open"


def test_a_dice_malfunction_at_settlement_is_cleared_without_disturbing_the_round():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
    deal_pan9(t, lambda cards: draw(t, *cards))         # seat 2: 5; banker: 6
    assert t.state == "settlement"
    t.handle_device(ev.Malfunction(device="dice", ts=2.0, code=7, text="motor"))
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "settlement"
    assert nets(t)[(2, "seat")] == -100                # art. 7: 5 loses to 6
    t.command("confirm_result")
    t.command("next_round")
    assert t.state in ("shuffling", "bets_open")


# --- 2. a shuffler put right before bets close: its deck is shuffled again -----------------

def test_a_shuffler_jammed_before_bets_close_shuffles_again_and_deals_once_put_right():
    t = table("q-poker", "shuffler")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.handle_device(ev.Jam(device="shuffler", ts=1.0))
    assert t.state == "malfunction" and t.round.void is None       # the bets stand
    mark = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open"
    # The jam cost the shuffler the order it had made: the deck is checked and shuffled again.
    asked = actions(t, mark)
    assert asked and asked[0] in ("deck_check", "shuffle")
    if asked[0] == "deck_check":
        t.handle_device(ev.DeckCheckResult(device="shuffler", ts=2.0, count=52))
        assert actions(t, mark)[-1] == "shuffle"
    mark = len(t.commands)
    t.command("close_bets")
    assert actions(t, mark) == []                      # no hand asked of a shuffle under way
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=3.0, count=52))
    assert actions(t, mark) == ["dispense_hand"]
    hand(t, "As", "Ah", "Ad")
    hand(t, "2c", "5d", "9h")
    t.command("decide", box=1, decision="play")
    assert nets(t)[(1, "versus_croupier")] == 5        # 89/2004 art. 9(5): half the bet


def test_a_shuffler_door_opened_before_the_shake_asks_again_once_closed_pan9():
    t = table("super-pan-9", "shuffler")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.handle_device(ev.DoorOpened(device="shuffler", ts=1.0))
    assert t.state == "malfunction"
    with pytest.raises(TablectlError, match="door"):
        t.command("clear_malfunction", role="supervisor")
    assert t.state == "malfunction"
    t.handle_device(ev.DoorClosed(device="shuffler", ts=2.0))
    mark = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open"
    assert set(actions(t, mark)) & {"deck_check", "shuffle"}
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing"
    mark = len(t.commands)
    t.handle_device(ev.DeckCheckResult(device="shuffler", ts=3.5, count=52))
    t.handle_device(ev.ShuffleDone(device="shuffler", ts=4.0, count=52))
    assert actions(t, mark)[-1] == "dispense_hand"


# --- 3. a die out of the cup: the banker shakes again ------------------------------------

def test_a_die_out_of_the_cup_is_shaken_again_by_the_banker_art_2_4():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    mark = len(t.commands)
    t.handle_device(ev.DieOutOfCup(device="dice", ts=1.0, die=2))
    assert t.state == "dice_shaking" and t.round.void is None
    assert rulings(t)[-1]["article"] == "261/96/M art. 2(4)"
    assert actions(t, mark) == []          # no shake into a cup a die is missing from
    t.command("shake")                     # the die is back: the banker shakes (art. 2(2))
    assert actions(t, mark) == ["shake"]
    t.handle_device(ev.ShakeStarted(device="dice", ts=2.0))
    with pytest.raises(TablectlError):
        t.command("shake")                 # one reshake per ruling
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing"


def test_the_shake_is_not_given_twice_without_a_reshake_ruling():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    with pytest.raises(TablectlError, match="shak"):
        t.command("shake")


# --- 4. the dice agitator failing after the dice are read ---------------------------------

@pytest.mark.parametrize("failure", [
    ev.LinkLost(device="dice", ts=2.0, reason="unplugged"),
    ev.DoorOpened(device="dice", ts=2.0),
    ev.Malfunction(device="dice", ts=2.0, code=3, text="motor"),
])
def test_the_dice_failing_while_the_shuffler_deals_leaves_the_deal_alone(failure):
    t = table("super-pan-9", "shuffler")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
    assert t.state == "dealing"
    t.handle_device(failure)
    assert t.state == "dealing"
    ruling = rulings(t)[-1]
    assert ruling["irregularity"] == "dice_malfunction" and ruling["remedy"] == "continue"
    assert ruling["article"].startswith("261/96/M")
    deal_pan9(t, lambda cards: hand(t, *cards))         # seat 2: 5; banker: 6
    assert t.state == "settlement"
    assert nets(t)[(2, "seat")] == -100
    t.command("confirm_result")
    with pytest.raises(TablectlError, match="dice"):
        t.command("next_round")            # no shake with a failed agitator


# --- 5. a card the shuffler dealt but could not read ---------------------------------------

@pytest.mark.parametrize("game,article", [("q-poker", "89/2004 art. 11(5)"),
                                          ("fortune-3-card-poker", "78/2008 art. 11(4)")])
def test_a_card_a_reading_shuffler_could_not_read_is_a_failure_while_dealing(game, article):
    t = table(game, "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident("shuffler")))
    wager = "versus_croupier" if game == "q-poker" else "ante"
    t.command("place_bet", box=1, wager=wager, amount=10)
    t.command("close_bets")
    t.handle_device(ev.HandDispensed(device="shuffler", ts=1.0,
                                     cards=(Card.parse("As"), None, Card.parse("Ad"))))
    assert t.round.void is not None
    assert rulings(t)[-1]["irregularity"] == "shuffler_malfunction"
    assert rulings(t)[-1]["article"] == article
    assert t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state in ("shuffling", "bets_open")


def test_a_card_a_reading_shuffler_could_not_read_voids_super_pan_9_p3():
    t = table("super-pan-9", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident("shuffler")))
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
    t.handle_device(ev.HandDispensed(device="shuffler", ts=2.0, cards=(None, Card.parse("3c"))))
    assert t.round.void is not None
    assert rulings(t)[-1]["article"].startswith("261/96/M")


def test_a_count_only_shuffler_leaves_the_cards_to_be_entered_at_the_reveal():
    t = table("q-poker", "shuffler")
    t.handle_device(ev.LinkUp(device="shuffler", ts=0.0, identity=ident("shuffler", False)))
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("close_bets")
    t.handle_device(ev.HandDispensed(device="shuffler", ts=1.0, cards=(None, None, None)))
    t.handle_device(ev.HandDispensed(device="shuffler", ts=1.0, cards=(None, None, None)))
    assert t.round.void is None
    t.command("decide", box=1, decision="play")
    assert t.state == "croupier_reveal"
    t.command("enter_cards", recipient="box 1", cards="As Ah Ad")
    t.command("enter_cards", recipient="croupier", cards="Kc Kd 2h")
    assert t.state == "settlement"


# --- the journal: what is asked again survives a restart ---------------------------------

def test_a_shuffle_asked_again_is_still_awaited_after_a_restart(tmp_path):
    from controller.journal import Journal
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner
    from table_helpers import DEVICES

    def runner():
        journal = Journal.open(tmp_path / "j.db", "T1")
        return TableRunner(Table("T1", get_game("q-poker"), "shuffler", layout_boxes=7,
                                 devices=DEVICES), journal), journal

    run, journal = runner()
    run.command("open_table", role="supervisor")
    run.device(ev.DeckCheckResult(device="shuffler", ts=0.0, count=52))
    run.device(ev.ShuffleDone(device="shuffler", ts=0.0, count=52))
    run.command("place_bet", box=1, wager="versus_croupier", amount=10)
    run.device(ev.Jam(device="shuffler", ts=1.0))
    run.command("clear_malfunction", role="supervisor")
    asked = [r.payload["action"] for r in journal.records(kinds=["device_command"])]
    assert asked[-1] in ("deck_check", "shuffle")        # journaled like every command
    journal.close()

    run, journal = runner()                              # the controller restarts
    run.recover()
    assert run.table.state == "bets_open" and run.table.round.bets
    before = len(list(journal.records(kinds=["device_command"])))
    run.command("close_bets")                            # the shuffle is still awaited
    assert not list(journal.records(kinds=["device_command"]))[before:]
    run.device(ev.DeckCheckResult(device="shuffler", ts=2.0, count=52))
    run.device(ev.ShuffleDone(device="shuffler", ts=3.0, count=52))
    after = [r.payload["action"] for r in journal.records(kinds=["device_command"])][before:]
    assert after[-1] == "dispense_hand"


def test_the_supervisors_confirm_button_clears_a_jam_that_stops_the_next_round():
    from controller.inputs import ButtonPressed, KeySwitched
    t = table("q-poker")
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    draw(t, "As", "2c", "Ah", "3c", "Ad", "5d")
    t.handle_device(ev.Jam(device="shoe", ts=1.0))
    t.command("decide", box=1, decision="fold")
    t.command("confirm_result")
    press = ButtonPressed(device="panel", ts=2.0, button="confirm")
    t.handle_device(press)                          # the dealer: next round, refused
    assert t.state == "round_complete"
    assert [e for e in t.outbox if e.kind == "irregular_event"][-1].data["event"] == "button_pressed"
    t.handle_device(KeySwitched(device="panel", ts=3.0, on=True))
    t.handle_device(press)                          # the supervisor: the jam is cleared
    assert t.state == "round_complete" and not t.blocking_conditions()
    t.handle_device(press)                          # then the next round
    assert t.state == "bets_open"
