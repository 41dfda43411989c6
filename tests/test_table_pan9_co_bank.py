"""Super Pan 9 co-banking at the live table (261/96/M art. 5(5), with 5(3) and 2(5)).

The house and players of other seats may join the banker with a capital of their own, placed
before the dice are shaken; they are paid or collected in order after the banker, the house
last, and a co-banking player bets on no seat that round. Expected amounts are worked out by
hand from the articles, not copied from the code's output.
"""
import json

import pytest
from hypothesis import event, given, settings, strategies as st

from controller.errors import TablectlError
from controller.rules.base import MAX_AMOUNT
from controller.rules.cards import Card
from drivers import events as ev

from table_helpers import DEVICES, kinds, settlement, table

BANKER = ("4h", "2h")                  # 6 points
LOSERS = {2: ("2c", "3c"), 3: ("2d", "3d")}          # 5 points: the bank wins
WINNERS = {2: ("9s", "Kd"), 3: ("9c", "Td")}         # 9 points: the bank pays


def deal(t, seats, banker=1, device=None):
    """Shake (1, 1, 1, 2) and deal two consecutive cards a seat in the dice's order (art.
    2(2)-(3)); ``seats`` gives each seat in play its cards, the banker holds 4h 2h."""
    device = device or t.handle_device
    device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
    while t.state == "dealing":
        who = t.tracker.expected.deal.recipient.box
        for c in (BANKER if who == banker else seats[who]):
            device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c), face_up=False))


def bank_rows(t):
    return [(r["role"], r["name"], r["won"], r["commission"], r["net"])
            for r in settlement(t)["bank"]]


def wager_nets(t):
    return {(w["box"], w["player"]): w["net"] for w in settlement(t)["wagers"]}


def shared_bank(**kw):
    """Banker on seat 1 with 100; the house co-banks 500 (placed first), Eve 100 from seat 4;
    Ana bets 200 on seat 2 and Bo 150 on seat 3."""
    t = table("super-pan-9", **kw)
    t.command("set_banker", seat=1, capital=100)
    t.command("co_bank", house=True, capital=500)
    t.command("co_bank", player="Eve", seat=4, capital=100)
    t.command("place_bet", box=2, wager="seat", amount=200, player="Ana")
    t.command("place_bet", box=3, wager="seat", amount=150, player="Bo")
    return t


# --- settled as the rules say -----------------------------------------------------------------

def test_art_5_5_at_the_table_co_bankers_collect_in_order_after_the_banker_the_house_last():
    t = shared_bank()
    assert t.public_view()["round"]["co_bankers"] == [
        {"house": True, "capital": 500}, {"player": "Eve", "seat": 4, "capital": 100}]
    t.command("shake")
    deal(t, LOSERS)
    assert t.state == "settlement"
    # Seats in play 1 (banker), 2, 3; total 5 from the banker: seat 3 first, then 2 (art.
    # 2(3)). Bo's 150: the banker takes 100 (his whole capital, art. 5(3)), Eve 50. Ana's
    # 200: Eve 50 (her capital reached), the house 150. The house is last although its
    # capital was placed first (art. 5(5)). Commission 5 % on the players' shares (art. 9).
    assert bank_rows(t) == [("banker", "banker", 100, 5, 95), ("co_banker", "Eve", 100, 5, 95),
                            ("house", "house", 150, 0, 150)]
    assert wager_nets(t) == {(3, "Bo"): -150, (2, "Ana"): -200}
    doc = settlement(t)
    assert doc["bank_net"] == 190 and doc["house_net"] == 160 and doc["commission"] == 10
    # art. 5(4) carries the banker's own win into his second round, not the co-bankers'
    t.command("confirm_result")
    turn = t.public_view()["bank_turn"]
    assert (turn["first_capital"], turn["first_net"], turn["capital_floor"]) == (100, 95, 195)


def test_art_5_5_co_bankers_pay_beyond_the_bankers_capital_in_order_the_house_last():
    t = shared_bank()
    t.command("remove_bet", box=3, wager="seat", player="Bo")
    t.command("place_bet", box=3, wager="seat", amount=50, player="Bo")
    t.command("shake")
    deal(t, WINNERS)
    # Bo's 50 first: the banker pays 50. Ana's 200: the banker's last 50, Eve's 100, the
    # house 50. Alone, the banker's capital of 100 would have paid Ana only 50 (art. 5(3)).
    assert bank_rows(t) == [("banker", "banker", -100, 0, -100),
                            ("co_banker", "Eve", -100, 0, -100), ("house", "house", -50, 0, -50)]
    assert wager_nets(t) == {(3, "Bo"): 48, (2, "Ana"): 190}     # less 5 % commission, floor


def test_p10_counter_clockwise_orders_co_bankers_by_seat_from_the_bankers():
    for reading, order in (("as_placed", ["Eve", "Dee"]), ("counter_clockwise", ["Dee", "Eve"])):
        t = table("super-pan-9", interpretations={"co_banker_order": reading})
        t.command("set_banker", seat=1, capital=100)
        t.command("co_bank", player="Eve", seat=5, capital=100)
        t.command("co_bank", player="Dee", seat=7, capital=100)
        t.command("place_bet", box=2, wager="seat", amount=150, player="Ana")
        t.command("shake")
        deal(t, LOSERS)
        # Ana's 150: the banker 100, then 50 to the first co-banker in the reading's order
        # (counter-clockwise from seat 1: 8, 7, ..., so Dee on seat 7 before Eve on seat 5).
        rows = [(name, won) for _, name, won, _, _ in bank_rows(t)]
        assert rows == [("banker", 100), (order[0], 50), (order[1], 0)], reading


def test_a_co_bank_withdrawn_before_the_shake_leaves_the_bank_and_the_player_may_bet():
    t = shared_bank()
    mark = len(t.outbox)
    t.command("remove_co_bank", player="Eve")
    assert t.public_view()["round"]["co_bankers"] == [{"house": True, "capital": 500}]
    assert [e.to_json() for e in t.outbox[mark:]][0]["kind"] == "co_banker"
    t.command("place_bet", box=5, wager="seat", amount=10, player="Eve")
    t.command("remove_co_bank", house=True)
    assert t.round.co_bankers == []
    t.command("co_bank", house=True, capital=300)      # put in again, with another capital
    assert t.round.co_bankers == [{"house": True, "capital": 300}]


def test_the_co_bank_is_published_and_the_settlement_document_carries_it_as_placed():
    from controller.table import settle_doc
    t = shared_bank()
    events = [e.to_json() for e in t.outbox if e.kind == "co_banker"]
    assert [(e["house"], e["player"], e["seat"], e["capital"]) for e in events] == [
        (True, None, None, 500), (False, "Eve", 4, 100)]
    t.command("shake")
    deal(t, LOSERS)
    doc = settle_doc.build("super-pan-9", t)
    assert doc["co_bankers"] == [{"house": True, "capital": 500},
                                 {"player": "Eve", "seat": 4, "capital": 100}]
    assert doc["banker"]["capital"] == 100            # the banker's own capital (art. 5(3))


def test_a_round_without_co_bankers_settles_as_before():
    from controller.table import settle_doc
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=1000)
    t.command("place_bet", box=2, wager="seat", amount=100, player="Ana")
    t.command("shake")
    deal(t, LOSERS)
    assert "co_bankers" not in settle_doc.build("super-pan-9", t)
    assert [r[0] for r in bank_rows(t)] == ["banker"]
    assert t.public_view()["round"]["co_bankers"] == []


# --- refusals: named, with the way out, and nothing changed -----------------------------------

def refused(t, match, name="co_bank", role="dealer", **args):
    before = (t.state, len(t.outbox), json.dumps(t.public_view(), sort_keys=True))
    with pytest.raises(TablectlError, match=match):
        t.command(name, role=role, **args)
    assert (t.state, len(t.outbox), json.dumps(t.public_view(), sort_keys=True)) == before


def test_a_co_banking_player_may_not_bet_on_a_seat_and_a_bettor_may_not_co_bank_art_5_5():
    t = shared_bank()
    refused(t, r"Eve co-banks this round: a player who joins the bank may not bet on other "
            r"seats \(261/96/M art\. 5\(5\)\); withdraw the co-bank first \(remove_co_bank\)",
            "place_bet", box=5, wager="seat", amount=10, player="Eve")
    refused(t, r"Ana bets on seat 2: a player who joins the bank may not bet on other seats "
            r"\(261/96/M art\. 5\(5\)\); remove the bet \(remove_bet\) first, or Ana does not "
            r"co-bank", player="Ana", seat=6, capital=100)


@pytest.mark.parametrize("args,match", [
    ({"player": "Dee", "seat": 9, "capital": 100}, r"seat 9 does not exist: this table has "
     r"seats 1-8"),
    ({"player": "Dee", "seat": 0, "capital": 100}, r"seat 0 does not exist"),
    ({"player": "Dee", "seat": "4", "capital": 100}, r'seat "4" must be a seat number 1-8'),
    ({"player": "Dee", "seat": True, "capital": 100}, r"seat true must be a seat number"),
    ({"player": "Dee", "seat": 1, "capital": 100}, r"seat 1 is the banker's: co-banking "
     r"players sit at other seats \(261/96/M art\. 5\(5\)\); give the co-banker's own seat"),
    ({"player": "Dee", "capital": 0}, r"co-banker Dee's capital must be more than 0"),
    ({"player": "Dee", "capital": -5}, r"more than 0 chip units"),
    ({"player": "Dee", "capital": 1.5}, r"must be a whole number of chip units"),
    ({"player": "Dee", "capital": "100"}, r"must be a whole number of chip units"),
    ({"player": "Dee", "capital": True}, r"must be a whole number of chip units"),
    ({"player": "Dee", "capital": MAX_AMOUNT + 1}, r"too large"),
    ({"house": True, "capital": 200}, r"the house already co-banks 500 this round: art\. "
     r"5\(5\) gives it one capital, settled last; to change it, remove_co_bank house=true "
     r"and co-bank again"),
    ({"player": "Eve", "capital": 50}, r"Eve already co-banks 100 this round; to change the "
     r"capital, remove_co_bank and co-bank again with the whole capital"),
    ({"house": True, "player": "Dee", "capital": 100}, r"the house co-banks in its own name: "
     r"leave player and seat out"),
    ({"house": True, "seat": 5, "capital": 100}, r"leave player and seat out"),
    ({"capital": 100}, r"co_bank needs the co-banking player's name \(player\), or "
     r"house=true for the house's co-bank"),
    ({"house": "yes", "capital": 100}, r"house must be true or false"),
    ({"player": "house", "capital": 100}, r'"house" is how the settlement names'),
    ({"player": "Banker", "capital": 100}, r'"Banker" is how the settlement names'),
    ({"player": "box 3", "capital": 100}, r"how the settlement names a box's own bets"),
    ({"player": "  ", "capital": 100}, r"may not be empty"),
    ({"player": "Dee"}, r"co_bank needs capital"),
])
def test_a_co_bank_the_rules_would_not_settle_is_refused_when_given(args, match):
    refused(shared_bank(), match, **args)


def test_a_co_bank_is_taken_only_while_bets_are_open_after_the_banker_is_named():
    t = table("super-pan-9")
    t.command("place_bet", box=2, wager="seat", amount=100, player="Ana")
    refused(t, r"name the banker first \(set_banker\): co-bankers join the banker's capital "
            r"\(261/96/M art\. 5\(5\)\)", player="Eve", capital=100)
    t.command("set_banker", seat=1, capital=100)
    t.command("co_bank", player="Eve", capital=100)
    t.command("shake")
    assert t.state == "dice_shaking"
    # like a bet (art. 2(5)), and the refusal names the article
    refused(t, r"cannot take a co-bank while the table is in dice_shaking: .*after the banker "
            r"shakes the dice no bet may be placed, added to, removed or moved \(261/96/M "
            r"art\. 2\(5\)\)", player="Dee", capital=100)
    refused(t, r"cannot withdraw a co-bank while the table is in dice_shaking: .*art\. 2\(5\)",
            "remove_co_bank", player="Eve")
    q = table("q-poker")
    refused(q, r"Q Poker has no banker, so no co-bank", player="Eve", capital=100)


def test_remove_co_bank_names_who_co_banks_when_asked_for_someone_else():
    t = shared_bank()
    refused(t, r"Dee does not co-bank this round; the co-bankers are: the house, Eve",
            "remove_co_bank", player="Dee")
    refused(t, r"give player, or house=true, not both", "remove_co_bank", player="Eve",
            house=True)
    refused(t, r"remove_co_bank needs the co-banking player's name \(player\), or house=true",
            "remove_co_bank")
    t.command("remove_co_bank", house=True)
    refused(t, r"the house does not co-bank this round; the co-bankers are: Eve",
            "remove_co_bank", house=True)


def test_under_p10_counter_clockwise_a_co_banking_player_needs_a_seat():
    t = table("super-pan-9", interpretations={"co_banker_order": "counter_clockwise"})
    t.command("set_banker", seat=1, capital=100)
    refused(t, r"with co_banker_order=counter_clockwise co-banking players are settled by "
            r"seat from the banker's \(interpretation P10\); give Eve's seat",
            player="Eve", capital=100)
    t.command("co_bank", house=True, capital=100)       # the house is last either way


def test_the_banker_does_not_move_while_co_bankers_have_joined_him():
    t = shared_bank()
    refused(t, r"the house and Eve co-bank with the banker on seat 1 \(261/96/M art\. "
            r"5\(5\)\): withdraw the co-banks \(remove_co_bank\) before another seat takes the "
            r"bank", "set_banker", seat=5, capital=100)
    refused(t, r"withdraw the co-banks", "set_banker", seat=4, capital=100)   # Eve's seat
    t.command("set_banker", seat=1, capital=300)        # the banker adds to his capital
    assert (t.round.banker, t.round.capital) == (1, 300)
    t.command("remove_co_bank", player="Eve")
    refused(t, r"the house co-banks with the banker on seat 1", "set_banker", seat=5,
            capital=100)


def test_the_table_does_not_close_on_a_co_bank_left_on_the_layout():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=100)
    t.command("co_bank", player="Eve", capital=100)
    refused(t, r"co-bank capital is on the layout \(Eve\); return it \(remove_co_bank\) first",
            "close_table", role="supervisor")
    t.command("remove_co_bank", player="Eve")
    t.command("close_table", role="supervisor")
    assert t.state == "out_of_service"


# --- journaled before it is acted on, and rebuilt after a restart -----------------------------

def test_co_banks_are_journaled_and_come_back_after_a_restart(tmp_path):
    from controller.journal import Journal
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner

    def runner():
        t = Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=8, devices=DEVICES)
        return TableRunner(t, Journal.open(tmp_path / "j.db", "T1"))
    run = runner()
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("set_banker", seat=1, capital=100)
    before = len(run.journal)
    run.command("co_bank", house=True, capital=500)
    recs = list(run.journal.records(since=before))
    assert [r.kind for r in recs] == ["command", "table"]
    assert recs[0].payload["args"] == {"house": True, "capital": 500}
    assert recs[1].payload["kind"] == "co_banker"
    run.command("co_bank", player="Eve", seat=4, capital=100)
    run.command("co_bank", player="Dee", seat=6, capital=50)
    run.command("remove_co_bank", player="Dee")
    run.command("place_bet", box=2, wager="seat", amount=200, player="Ana")
    before = len(run.journal)
    with pytest.raises(TablectlError, match=r"art\. 5\(5\)"):
        run.command("place_bet", box=3, wager="seat", amount=150, player="Eve")
    assert [r.kind for r in run.journal.records(since=before)] == ["command", "refused"]
    run.command("place_bet", box=3, wager="seat", amount=150, player="Bo")
    co = run.table.public_view()["round"]["co_bankers"]
    run.journal.close()                                 # the process dies here

    run = runner()
    run.recover()
    t = run.table
    assert t.state == "bets_open" and t.public_view()["round"]["co_bankers"] == co
    run.command("shake")
    deal(t, LOSERS, device=run.device)
    assert t.state == "settlement"
    # the settlement, as journaled, shares the bank as before the restart
    settled = [r.payload for r in run.journal.records(kinds=["table"])
               if r.payload["kind"] == "settlement"]
    assert [(row["name"], row["net"]) for row in settled[-1]["bank"]] == [
        ("banker", 95), ("Eve", 95), ("house", 150)]


# --- the house's predetermined capital (art. 5(5); [pan9] house_co_bank_capital) --------------

def house_bank(capital=500):
    """Banker on seat 1 with 100; the house's capital predetermined at ``capital``."""
    t = table("super-pan-9", house_co_bank_capital=capital)
    t.command("set_banker", seat=1, capital=100)
    return t


def test_the_house_co_banks_with_its_predetermined_capital_when_none_is_typed():
    t = house_bank(500)
    t.command("co_bank", house=True)
    assert t.round.co_bankers == [{"house": True, "capital": 500}]
    shown = [e.to_json() for e in t.outbox if e.kind == "co_banker"][-1]
    assert (shown["house"], shown["capital"]) == (True, 500)
    # the round of the first test above, the house's 500 predetermined instead of typed:
    # settled alike (the house last although placed first)
    t.command("co_bank", player="Eve", seat=4, capital=100)
    t.command("place_bet", box=2, wager="seat", amount=200, player="Ana")
    t.command("place_bet", box=3, wager="seat", amount=150, player="Bo")
    t.command("shake")
    deal(t, LOSERS)
    assert bank_rows(t) == [("banker", "banker", 100, 5, 95), ("co_banker", "Eve", 100, 5, 95),
                            ("house", "house", 150, 0, 150)]
    assert [r["capital"] for r in settlement(t)["bank"]] == [100, 100, 500]


def test_a_capital_typed_for_the_house_must_be_the_predetermined_one():
    t = house_bank(500)
    refused(t, r"the house's co-bank capital is predetermined: 500 chip units \(\[pan9\] "
            r"house_co_bank_capital, 261/96/M art\. 5\(5\)\), not 300; leave capital out to "
            r"co-bank the 500, or change house_co_bank_capital in the table's configuration",
            house=True, capital=300)
    refused(t, r"the house's co-bank capital must be more than 0 chip units, got 0",
            house=True, capital=0)
    t.command("co_bank", house=True, capital=500)       # the same amount typed: taken
    assert t.round.co_bankers == [{"house": True, "capital": 500}]
    # a player's capital is his own: the house's predetermined one does not apply to it
    refused(t, r"co_bank needs capital: Eve's capital in chip units \(only the house's may be "
            r"left out, when the table's configuration predetermines it\)", player="Eve")
    t.command("co_bank", player="Eve", capital=70)
    assert t.round.co_bankers[-1] == {"player": "Eve", "seat": None, "capital": 70}


def test_without_a_predetermined_capital_the_house_capital_is_given_with_its_co_bank():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=100)
    refused(t, r"co_bank needs capital: the house's co-bank capital in chip units; or "
            r"predetermine it for the table as \[pan9\] house_co_bank_capital in its "
            r"configuration \(261/96/M art\. 5\(5\)\)", house=True)
    t.command("co_bank", house=True, capital=300)
    assert t.round.co_bankers == [{"house": True, "capital": 300}]


def test_a_table_is_not_given_a_house_capital_it_could_not_take():
    from controller.rules import get_game
    from controller.table import Table
    for capital, match in ((0, r"the house's co-bank capital must be more than 0"),
                           (MAX_AMOUNT + 1, r"too large"), ("500", r"whole number")):
        with pytest.raises(TablectlError, match=match):
            Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=8,
                  house_co_bank_capital=capital)
    with pytest.raises(TablectlError, match=r"Q Poker has no banker, so no house co-bank"):
        Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, house_co_bank_capital=500)


def test_the_house_capital_a_round_opened_with_stands_through_a_restart(tmp_path):
    from controller.journal import Journal
    from controller.rules import get_game
    from controller.table import Table
    from controller.table.runner import TableRunner

    def runner(capital):
        t = Table("T1", get_game("super-pan-9"), "shoe", layout_boxes=8, devices=DEVICES,
                  house_co_bank_capital=capital)
        return TableRunner(t, Journal.open(tmp_path / "j.db", "T1"))
    run = runner(500)
    run.command("open_table", role="supervisor")
    run.command("deck_ready")
    run.command("set_banker", seat=1, capital=100)
    before = len(run.journal)
    run.command("co_bank", house=True)
    recs = list(run.journal.records(since=before))
    # the command as given, and what the table took of it, both journaled before it counts
    assert [r.kind for r in recs] == ["command", "table"]
    assert recs[0].payload["args"] == {"house": True}
    assert (recs[1].payload["kind"], recs[1].payload["capital"]) == ("co_banker", 500)
    run.command("place_bet", box=2, wager="seat", amount=200, player="Ana")
    run.command("place_bet", box=3, wager="seat", amount=150, player="Bo")
    run.journal.close()                                 # the process dies here

    # restarted with the configuration changed: the round in play keeps the capital it
    # opened with (predetermined for it), as the journal says it was taken
    run = runner(800)
    run.recover()
    t = run.table
    assert t.state == "bets_open"
    assert t.public_view()["round"]["co_bankers"] == [{"house": True, "capital": 500}]
    run.command("remove_co_bank", house=True)
    run.command("co_bank", house=True)
    assert t.round.co_bankers == [{"house": True, "capital": 500}]
    with pytest.raises(TablectlError, match="predetermined: 500 chip units"):
        run.command("co_bank", house=True, capital=800)
    run.command("shake")
    deal(t, LOSERS, device=run.device)
    settled = [r.payload for r in run.journal.records(kinds=["table"])
               if r.payload["kind"] == "settlement"]
    assert [(row["name"], row["capital"], row["won"]) for row in settled[-1]["bank"]] == [
        ("banker", 100, 100), ("house", 500, 250)]
    # the next round opens with the capital now configured, and keeps it through a restart
    run.command("confirm_result")
    for cls in ("shoe", "dice"):                        # the next round waits for its devices
        run.device(ev.LinkUp(device=cls, ts=0.0, identity=ev.DeviceIdentity(
            cls, "sim", "R1", "0002", "1.0", "cd" * 16, cls == "shoe")))
    run.command("next_round")
    run.command("deck_ready")                           # a fresh deck every round (art. 2(1))
    run.command("set_banker", seat=1, capital=200)      # capital and win kept (art. 5(4))
    run.command("co_bank", house=True)
    assert t.round.co_bankers == [{"house": True, "capital": 800}]
    run.journal.close()
    run = runner(800)
    run.recover()
    assert run.table.public_view()["round"]["co_bankers"] == [{"house": True, "capital": 800}]


def test_no_snapshot_is_taken_of_a_round_holding_co_banks():
    t = table("super-pan-9")
    t.command("set_banker", seat=1, capital=100)
    t.command("co_bank", player="Eve", capital=100)
    assert t.snapshot() is None
    assert "co_banker" in kinds(t)


# --- whatever the table takes, the rules settle -----------------------------------------------

POOL = ["2c", "3c", "2d", "3d", "9s", "Kd", "9c", "Td", "5s", "6s", "7c", "8c", "Jh", "Qh"]


def deal_any(t):
    """Two consecutive cards to each seat in play in the dice's order, from POOL; the banker
    holds 4h 2h."""
    t.handle_device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
    pool = iter(POOL)
    while t.state == "dealing":
        who = t.tracker.expected.deal.recipient.box
        for c in (BANKER if who == t.round.banker else (next(pool), next(pool))):
            t.handle_device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c),
                                         face_up=False))


names, seats, chips = (st.sampled_from(["Ana", "Bo", "Eve", "Dee"]),
                       st.sampled_from([2, 3, 4, 5]), st.sampled_from([50, 100, 200]))
op = st.one_of(
    st.tuples(st.just("co_bank"), st.fixed_dictionaries({"player": names, "capital": chips},
                                                        optional={"seat": seats})),
    st.tuples(st.just("co_bank"), st.fixed_dictionaries({"house": st.just(True),
                                                         "capital": chips})),
    st.tuples(st.just("remove_co_bank"), st.one_of(st.fixed_dictionaries({"player": names}),
                                                   st.just({"house": True}))),
    st.tuples(st.just("place_bet"), st.fixed_dictionaries(
        {"box": seats, "wager": st.just("seat"), "amount": chips, "player": names})),
    st.tuples(st.just("remove_bet"), st.fixed_dictionaries(
        {"box": seats, "wager": st.just("seat"), "player": names})),
    st.tuples(st.just("set_banker"), st.fixed_dictionaries(
        {"seat": st.sampled_from([1, 2, 5]), "capital": chips})),
    # wrong inputs: the banker's seat, no seat, text for a number, a share's name, ...
    st.tuples(st.sampled_from(["co_bank", "remove_co_bank", "place_bet"]), st.dictionaries(
        st.sampled_from(["player", "seat", "capital", "house", "box", "amount"]),
        st.sampled_from([None, 1, 9, 0, -5, "50", "house", True]), max_size=4)),
)


@settings(max_examples=150, deadline=None)
@given(ops=st.lists(op, max_size=12),
       order=st.sampled_from(["as_placed", "counter_clockwise"]))
def test_whatever_co_banks_the_table_takes_the_rules_settle_and_a_refusal_changes_nothing(
        ops, order):
    t = table("super-pan-9", interpretations={"co_banker_order": order})
    t.command("set_banker", seat=1, capital=100)
    for name, args in ops:
        if name == "place_bet":
            args = {"wager": "seat", **args}
        before = (len(t.outbox), json.dumps(t.public_view(), sort_keys=True))
        try:
            t.command(name, **args)
        except TablectlError:
            assert (len(t.outbox), json.dumps(t.public_view(), sort_keys=True)) == before
    assert t.state == "bets_open"
    if not t.round.bet_boxes():
        return
    t.command("shake")
    deal_any(t)
    assert t.state == "settlement", kinds(t)
    doc = settlement(t)
    co = t.round.co_bankers
    players = [c["player"] for c in co if not c.get("house")]
    if order == "as_placed":        # art. 5(5): the players as placed, the house last
        assert [r["name"] for r in doc["bank"]] == ["banker", *players] + (
            ["house"] if len(players) < len(co) else [])
    assert all(abs(r["won"]) <= r["capital"] for r in doc["bank"])      # art. 5(3), 5(5)
    event("co-bankers settled: %d" % len(co))
