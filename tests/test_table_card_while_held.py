"""A card out of the shoe or shuffler while the table waits in ``malfunction``.

The table stops for a device failure or a lost link, but a card already on its way (drawn just
before the cable was pulled, and sent again by the shoe once the link is back) or one dealt
while the table waits is physically out. It is never passed over: it is counted where the
dealing order puts it, or the round is ruled on as the regulation says (docs/interpretations.md,
"a card out while the table is stopped"):

- held before the first card (bets stand): the card is the deal's first (89/2004 art. 6(2),
  78/2008 art. 6(3): it closes betting), so the failure that stopped the table came while
  dealing: the game's machine-failure rule (89/2004 art. 11(5), 78/2008 art. 11(4), 11/2008
  art. 9 by H11, 261/96/M by P3) decides whether the round is void or the deal goes on;
- Super Pan 9 before the dice are read: no seat is owed a card yet (261/96/M art. 2(2)), a card
  out of the dealing order (P5);
- the deal held (the game let the round stand): the card is the plan's next, and the deal goes
  on from it once the supervisor clears;
- the round already void, or settled: it joins no hand, journaled as an irregular event.
"""
import pytest

from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import draw, hand, kinds, nets, placed, rulings, table


def identity(device="shoe"):
    return ev.DeviceIdentity(device, "sim", "S1", "0001", "1.0", "ab" * 16, True)


def link_lost(t, device="shoe"):
    t.handle_device(ev.LinkLost(device=device, ts=1.0, reason="port closed"))


def link_back(t, device="shoe"):
    t.handle_device(ev.LinkRestored(device=device, ts=2.0, identity=identity(device)))


def dispensed(t, *cards):
    for c in cards:
        t.handle_device(ev.CardDispensed(device="shuffler", ts=0.0, card=Card.parse(c)))


def cards_shown(t):
    """The ``card`` events: who each card out was counted for."""
    return [(e.data["recipient"], e.data["count"]) for e in t.outbox if e.kind == "card"]


def opened(t):
    return {e.data["recipient"]: e.data["hand"] for e in t.outbox if e.kind == "hand_opened"}


# --- held before the first card --------------------------------------------------------------

@pytest.mark.parametrize("game,wager,article", [
    ("q-poker", "versus_croupier", "89/2004 art. 11(5)"),
    ("fortune-3-card-poker", "ante", "78/2008 art. 11(4)"),
])
def test_a_card_drawn_as_the_link_was_lost_before_bets_closed_is_the_first_card(game, wager,
                                                                                article):
    # The reproduction: one bet on box 2, the croupier draws, the shoe's cable is pulled before
    # the host reads the frame; the shoe sends it again once the link is back. The card is the
    # deal's first: it closes betting and is box 2's. The shoe failed with it on its way, a
    # failure while dealing: void under Q5/F7 round_void, every bet returned.
    t = table(game)
    t.command("place_bet", box=2, wager=wager, amount=10)
    link_lost(t)
    assert t.state == "malfunction" and t.round.void is None       # held: the bets stand
    link_back(t)
    draw(t, "As")
    assert cards_shown(t) == [("box 2", 1)]
    closed = [e.data for e in t.outbox if e.kind == "bets_closed"]
    assert closed and closed[-1]["by"] == "first card"
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"], r["article"]) == (
        "shoe_malfunction", "dealing", "round_void", article)
    assert "a card" in r["detail"]
    void = [e.data for e in t.outbox if e.kind == "round_void"][-1]
    assert void["returned"] == [{"box": 2, "wager": wager, "player": None, "amount": 10}]
    assert t.state == "malfunction"                 # the supervisor puts the shoe right
    t.command("clear_malfunction", role="supervisor")
    assert t.round.round_id == 2 and t.state == "shuffling"       # a new round, a new shuffle


def test_under_shoe_malfunction_continue_the_held_card_stays_box_2s_and_the_deal_goes_on():
    # Q5 continue: the cards in the shoe are sound; the card counted while the table waited is
    # box 2's first, and the deal goes on from the next card once the supervisor clears. The
    # table does not close betting on the next card and deal six more (box 2 would hold a card
    # the table never counted).
    t = table("q-poker", interpretations={"shoe_malfunction": "continue"})
    t.command("place_bet", box=2, wager="versus_croupier", amount=10)
    link_lost(t)
    link_back(t)
    draw(t, "As")
    assert cards_shown(t) == [("box 2", 1)] and t.round.void is None
    assert rulings(t)[-1]["remedy"] == "continue" and rulings(t)[-1]["phase"] == "dealing"
    assert t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing" and t.round.round_id == 1
    with pytest.raises(Exception, match="first card"):
        t.command("place_bet", box=3, wager="versus_croupier", amount=10)   # art. 6(2)
    draw(t, "Kd", "Ah", "Ks", "Ad", "Kc")           # croupier, box 2, croupier, box 2, croupier
    assert t.state == "player_decisions"
    assert opened(t) == {"box 2": ["As", "Ah", "Ad"]}
    t.command("decide", box=2, decision="play")
    assert nets(t)[(2, "versus_croupier")] == 20    # art. 9(7)(2): three of a kind 2 to 1


def test_a_card_dealt_while_held_for_the_box_sensors_starts_the_deal_and_waits_for_the_clear():
    # The sensors deal no card: no dealing machine failed, so nothing is ruled; the card is the
    # first card (its landing is watched as usual) and the deal goes on from it once the
    # supervisor clears.
    t = table("q-poker", box_sensors=True)
    t.command("place_bet", box=2, wager="versus_croupier", amount=10)
    link_lost(t, "sensors")
    assert t.state == "malfunction"
    link_back(t, "sensors")
    draw(t, "As")
    assert cards_shown(t) == [("box 2", 1)] and not rulings(t)
    placed(t, 2)                                    # it lands where it was dealt
    assert kinds(t)[-1] == "card_placed"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    for c, box in (("Kd", None), ("Ah", 2), ("Ks", None), ("Ad", 2), ("Kc", None)):
        draw(t, c)
        if box:
            placed(t, box)
    assert t.state == "player_decisions" and not rulings(t)
    assert opened(t) == {"box 2": ["As", "Ah", "Ad"]}


@pytest.mark.parametrize("reading,remedy", [("void", "round_void"), ("rectify", "rectify")])
def test_holdem_a_hole_card_drawn_while_held_posts_the_blinds_and_is_the_first(reading, remedy):
    # 11/2008 art. 6(1): hole cards one at a time from the left of the button. The shoe failed
    # with the first on its way: H11 (art. 9) rules it as a failure while dealing.
    t = table("texas-holdem", interpretations={"machine_failure": reading},
              holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    link_lost(t)
    link_back(t)
    draw(t, "As")
    assert "blinds" in kinds(t) and cards_shown(t)[0] == ("box 5", 1)
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"]) == ("shoe_malfunction", "dealing",
                                                            remedy)
    assert t.state == "malfunction"
    if reading == "void":
        void = [e.data for e in t.outbox if e.kind == "round_void"][-1]
        # the blinds back (art. 9(2)); heads-up, H4 literal: seat 5, left of the button,
        # posted the small blind, the button the big blind
        assert sorted((x["box"], x["amount"]) for x in void["returned"]) == [(2, 10), (5, 5)]
        return
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    draw(t, "Kd", "Ah", "Kc")
    assert t.state == "player_decisions"            # the preflop betting
    assert [e.data["recipient"] for e in t.outbox if e.kind == "card"] == \
        ["box 5", "box 2", "box 5", "box 2"]


def test_holdem_shuffler_a_card_asked_before_the_link_was_lost_is_dealt_after_the_clear():
    # Hold'em from the shuffler, H11 rectify: betting closed and a hole card was asked; the
    # link went (the hand is held for the supervisor); the shuffler then sends the card. It is
    # the first hole card, and after the clear the table deals on, not reopening betting.
    t = table("texas-holdem", "shuffler", interpretations={"machine_failure": "rectify"},
              holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    t.command("close_bets")
    link_lost(t, "shuffler")
    assert t.state == "malfunction" and t.round.void is None
    link_back(t, "shuffler")
    dispensed(t, "As")
    assert cards_shown(t) == [("box 5", 1)]
    mark = len(t.commands)
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "dealing"
    assert [c.action for c in t.commands[mark:]] == ["dispense_card"]
    dispensed(t, "Kd", "Ah", "Kc")
    assert t.state == "player_decisions"


HELD = {
    # game: (how the round is set up, the card's ruling and article under the defaults)
    "q-poker": ("shoe_malfunction", "89/2004 art. 11(5)"),
    "fortune-3-card-poker": ("shoe_malfunction", "78/2008 art. 11(4)"),
    "texas-holdem": ("shoe_malfunction", "11/2008 art. 9(2)"),
    "super-pan-9": ("wrong_order", "261/96/M interpretation P5 (dealing_error)"),
}


def bets(t):
    game = t.game.game_id
    if game == "texas-holdem":
        t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    elif game == "super-pan-9":
        t.command("set_banker", seat=1, capital=1000)
        t.command("place_bet", box=2, wager="seat", amount=100)
    else:
        t.command("place_bet", box=2, wager="ante" if game.startswith("fortune") else
                  "versus_croupier", amount=10)


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
@pytest.mark.parametrize("game", sorted(HELD))
def test_every_game_and_mode_a_card_out_while_the_round_is_held_is_never_passed_over(game, mode):
    # Held before the first card for the dealing device's lost link; a card out meanwhile (from
    # the shoe, or a card or hand the shuffler puts out). Under the default readings it is the
    # deal's first and the failure came while dealing (void), or in Super Pan 9, before the
    # dice, a card out of the dealing order (P5, void). Never an irregular event that leaves
    # the round as if it were not out.
    t = table(game, mode)
    bets(t)
    link_lost(t, mode)
    assert t.state == "malfunction" and t.round.void is None
    link_back(t, mode)
    if mode == "shoe":
        draw(t, "As")
    elif game == "texas-holdem":
        dispensed(t, "As")
    else:
        hand(t, "As", "Ah") if game == "super-pan-9" else hand(t, "As", "Ah", "Ad")
    irregularity, article = HELD[game]
    if mode == "shuffler" and irregularity == "shoe_malfunction":
        irregularity = "shuffler_malfunction"
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"], r["article"]) == (irregularity, "round_void", article)
    assert "irregular_event" not in kinds(t)
    if game != "super-pan-9":
        assert cards_shown(t)[0][0] == ("box 5" if game == "texas-holdem" else "box 2")
    assert t.round.void is not None and t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.round.round_id == 2


# --- Super Pan 9: before the dice --------------------------------------------------------------

def pan9_held(mode="shoe", **kw):
    t = table("super-pan-9", mode, **kw)
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="ana")
    device = "shoe" if mode == "shoe" else "shuffler"
    link_lost(t, device)
    assert t.state == "malfunction" and t.round.void is None
    link_back(t, device)
    return t


@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_pan9_a_card_out_before_the_dice_is_out_of_the_dealing_order_p5_void(mode):
    # 261/96/M art. 2(2): the dice say which seat receives the first cards; before they are
    # read no seat is owed one. P5 round_void: the round is void, every bet returned.
    t = pan9_held(mode)
    if mode == "shoe":
        draw(t, "9s")
    else:
        hand(t, "9s", "9h")
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"], r["article"]) == (
        "wrong_order", "round_void", "261/96/M interpretation P5 (dealing_error)")
    assert t.round.void is not None and not cards_shown(t)
    void = [e.data for e in t.outbox if e.kind == "round_void"][-1]
    assert void["returned"] == [{"box": 2, "wager": "seat", "player": "ana", "amount": 100}]
    assert t.state == "malfunction"


def test_pan9_rectify_takes_the_card_out_of_play_and_deals_from_the_next_after_the_dice():
    # P5 rectify: the card has no place in a plan the dice have not made yet; it is taken out
    # of play face down, never shown, and the deal starts from the next card after the shake.
    t = pan9_held(interpretations={"dealing_error": "rectify"})
    draw(t, "9s")
    r = rulings(t)[-1]
    assert (r["irregularity"], r["remedy"]) == ("wrong_order", "rectify")
    assert t.round.void is None and not cards_shown(t)
    aside = [e.data for e in t.outbox if e.kind == "card_set_aside"][-1]
    assert aside["recipient"] == "burn" and aside["cards"] == [None]
    assert "9s" not in str([e.to_json() for e in t.outbox])
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "bets_open"
    t.command("shake")
    # In play 1 (banker) and 2; counting 4 from the banker (one): 1, 2, 1, 2 -> seat 2 first.
    t.handle_device(ev.DiceResult(device="dice", ts=3.0, dice=(1, 1, 1, 1)))
    draw(t, "Ks", "9d", "Kh", "Kd")
    assert t.state == "settlement"
    assert nets(t)[(2, "seat")] == 95               # 9 against 0: even money less 5 % (art. 9)


# --- the deal held ----------------------------------------------------------------------------

def q_round(mode="shoe", **kw):
    t = table("q-poker", mode, **kw)
    t.command("place_bet", box=1, wager="versus_croupier", amount=10)
    t.command("place_bet", box=3, wager="versus_croupier", amount=20)
    return t


def test_a_card_drawn_while_the_deal_is_held_is_the_plans_next():
    # Q5 continue: the shoe failed while dealing and the round stands; the croupier's card out
    # meanwhile is the next of art. 7(1) (box 1, box 3, croupier, three times).
    t = q_round(interpretations={"shoe_malfunction": "continue"})
    draw(t, "As", "Kd")
    link_lost(t)
    assert t.state == "malfunction" and t.round.void is None
    link_back(t)
    draw(t, "2c")
    assert cards_shown(t)[-1] == ("croupier", 1)
    t.command("clear_malfunction", role="supervisor")
    draw(t, "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    assert t.state == "player_decisions"
    assert opened(t) == {"box 1": ["As", "Ah", "Ad"], "box 3": ["Kd", "Ks", "Kc"]}


def test_the_last_card_out_while_held_completes_the_deal_at_the_clear():
    t = q_round(interpretations={"shoe_malfunction": "continue"})
    draw(t, "As", "Kd", "2c", "Ah", "Ks", "3c", "Ad", "Kc")
    link_lost(t)
    link_back(t)
    draw(t, "4h")
    assert cards_shown(t)[-1] == ("croupier", 1) and t.state == "malfunction"
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "player_decisions"
    assert opened(t) == {"box 1": ["As", "Ah", "Ad"], "box 3": ["Kd", "Ks", "Kc"]}


def test_holdem_a_street_completed_while_held_opens_its_betting_at_the_clear():
    # H11 rectify: the hole cards are finished while the table waits; the preflop betting
    # comes at the clear. A card drawn meanwhile, with that betting still owed, joins no hand
    # (a wrong number of cards, 11/2008 art. 9(1)), as in the betting round itself.
    t = table("texas-holdem", interpretations={"machine_failure": "rectify"},
              holdem={"small_blind": 5, "big_blind": 10})
    t.command("seat_players", seats=[2, 5], stacks=[500, 500], button=2)
    draw(t, "As", "Kd", "Ah")
    link_lost(t)
    link_back(t)
    draw(t, "Kc")
    assert cards_shown(t)[-1] == ("box 2", 1)
    draw(t, "7d")
    assert rulings(t)[-1]["irregularity"] == "wrong_count"
    assert cards_shown(t)[-1] == ("box 2", 1)          # the extra card went to nobody
    t.command("clear_malfunction", role="supervisor")
    assert t.state == "player_decisions" and t._holdem.street == "preflop"


@pytest.mark.parametrize("reading,remedy", [("round_void", "round_void"),
                                            ("rectify", "rectify")])
def test_pan9_a_card_after_a_failure_ruled_before_the_first_card_is_a_failure_while_dealing(
        reading, remedy):
    # P3: a shoe that fails once the dice are read but before any card is a failure before
    # the first card (the round waits with the same dice). A card out then shows the deal had
    # begun: it is the plan's first, and the failure is ruled again as one while dealing.
    t = table("super-pan-9", interpretations={"machine_failure": reading})
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100)
    t.command("shake")
    t.handle_device(ev.DiceResult(device="dice", ts=2.0, dice=(1, 1, 1, 1)))
    link_lost(t)
    assert rulings(t)[-1]["phase"] == "shaking" and t.state == "malfunction"
    link_back(t)
    draw(t, "9s")
    assert cards_shown(t) == [("box 2", 1)]
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"]) == ("shoe_malfunction", "dealing",
                                                            remedy)
    if reading == "rectify":
        t.command("clear_malfunction", role="supervisor")
        draw(t, "Ks", "Kd", "Kh")                   # seat 2: 9s Ks (9); banker: Kd Kh (0)
        assert t.state == "settlement" and nets(t)[(2, "seat")] == 95


# --- the round already void ----------------------------------------------------------------

@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
def test_a_card_of_a_round_already_void_joins_no_hand_and_says_so(mode):
    t = q_round(mode)
    if mode == "shoe":
        draw(t, "As", "Kd")
    else:
        t.command("close_bets")
        hand(t, "As", "Ah", "Ad")
    link_lost(t, mode)
    assert t.round.void is not None and t.state == "malfunction"
    link_back(t, mode)
    shown = len(cards_shown(t))
    if mode == "shoe":
        draw(t, "2c")
    else:
        hand(t, "Kd", "Ks", "Kc")
    assert len(cards_shown(t)) == shown
    last = t.outbox[-1].data
    assert t.outbox[-1].kind == "irregular_event" and "void" in last["reason"]
    t.command("clear_malfunction", role="supervisor")
    assert t.round.round_id == 2


# --- a card the shoe could not read ------------------------------------------------------------

def misread(t):
    t.handle_device(ev.Misread(device="shoe", ts=0.0))


def test_a_card_the_shoe_could_not_read_is_the_plans_next_when_the_deal_goes_on():
    # The card left the shoe unread: it is out at the table all the same, the plan's next (an
    # unknown card, entered at the reveal), and the shoe failed while dealing (Q5). Under
    # continue the deal goes on from the card after it; the croupier's hand is not shifted.
    t = q_round(interpretations={"shoe_malfunction": "continue"})
    draw(t, "As", "Kd")
    misread(t)
    assert cards_shown(t)[-1] == ("croupier", 1)
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"]) == ("shoe_malfunction", "dealing",
                                                            "continue")
    t.command("clear_malfunction", role="supervisor")
    draw(t, "Ah", "Ks", "3c", "Ad", "Kc", "4h")
    assert t.state == "player_decisions"
    assert opened(t) == {"box 1": ["As", "Ah", "Ad"], "box 3": ["Kd", "Ks", "Kc"]}


def test_a_misread_sent_again_while_the_round_is_held_is_the_first_card():
    t = table("q-poker")
    t.command("place_bet", box=2, wager="versus_croupier", amount=10)
    link_lost(t)
    link_back(t)
    misread(t)
    assert cards_shown(t) == [("box 2", 1)]
    r = rulings(t)[-1]
    assert (r["irregularity"], r["phase"], r["remedy"]) == ("shoe_malfunction", "dealing",
                                                            "round_void")


def test_a_misread_as_betting_is_open_is_the_first_card_and_closes_betting():
    # 89/2004 art. 6(2): the first card out closes betting, read or not.
    t = table("q-poker")
    t.command("place_bet", box=2, wager="versus_croupier", amount=10)
    misread(t)
    assert cards_shown(t) == [("box 2", 1)]
    assert rulings(t)[-1]["article"] == "89/2004 art. 11(5)" and t.round.void is not None
