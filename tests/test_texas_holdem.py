"""Texas Hold'em Poker (11/2008) article by article: material and seats, the button, the deal,
irregularities, the interpretation register and the settlement of hand histories, through the
module and through ``tablectl rules``."""
import json
import random
import re
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from controller.cli import main
from controller.rules import get_game
from controller.rules.base import (BOARD, BURN, Irregularity, Mode, Phase, PlanRequest,
                                   Remedy, box)
from controller.rules.cards import full_deck
from controller.rules.errors import RuleError
from controller.rules.holdem_betting import BettingRules, HandState
from controller.rules.texas_holdem import GAME, initial_button, next_button

DOCS = Path(__file__).resolve().parent.parent / "docs"


def plan(boxes, button=None, mode=Mode.SHOE, layout=None, **interp):
    return GAME.dealing_plan(PlanRequest(boxes=tuple(boxes), mode=mode, button=button,
                                         layout_boxes=layout, interpretations=interp))


def run_cli(args, stdin=None, capsys=None, monkeypatch=None):
    if stdin is not None:
        import io
        monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


# -- art. 1-2: material, seats, button ---------------------------------------------------------
def test_registered_under_its_game_id():
    assert get_game("texas-holdem") is GAME
    assert GAME.regulation == "11/2008"


def test_art_2_1_2_ten_player_seats_or_more():
    GAME.check_layout(10)
    GAME.check_layout(12)                              # 2(2): the house may have more
    with pytest.raises(RuleError, match=r"10 player seats .*art\. 2\(1\)"):
        GAME.check_layout(9)
    with pytest.raises(RuleError, match="do not exist"):
        plan([2, 11])                                  # seat 11 on a ten-seat table
    assert plan([2, 11], layout=11)[0].recipient == box(11)


def test_art_2_3_at_least_two_players():
    with pytest.raises(RuleError, match=r"at least 2 players .*art\. 2\(3\)"):
        plan([4])


def test_art_1_1_one_deck_limits_the_players_on_a_big_table():
    plan(range(1, 23), layout=22)                      # 44 hole + 3 burns + 5 board = 52
    with pytest.raises(RuleError, match="at most 22 players"):
        plan(range(1, 24), layout=23)


@pytest.mark.parametrize("seats", [23, 40, 1_000_000])
def test_art_1_1_2_2_a_layout_one_deck_cannot_deal_in_full_is_refused(seats):
    """Art. 2(2) lets the house have more than 10 player seats, and art. 1(1)(3) gives the
    table one 52-card deck, which deals two hole cards each, three burns and five board cards
    to at most 22 players: a 23rd seat is one whose player could never be dealt once the
    others are full, so a layout of more is refused, with the bound and its articles."""
    GAME.check_layout(22)
    with pytest.raises(RuleError) as refused:
        GAME.check_layout(seats)
    said = str(refused.value)
    assert f"{seats} player seats" in said and "at most 22 players" in said
    assert "art. 1(1)(3)" in said and "art. 2(2)" in said and "10 to 22" in said
    with pytest.raises(RuleError, match="at most 22 players"):
        plan([1, 2], layout=seats)                     # nor is a hand planned on it


def test_art_1_2_button_starts_left_of_the_croupier_and_moves_clockwise():
    assert initial_button([3, 5, 9]) == 3              # seat 1 side: the lowest seat
    assert next_button(3, [3, 5, 9]) == 5
    assert next_button(9, [3, 5, 9]) == 3              # round the table
    assert next_button(5, [3, 9]) == 9                 # the button's player has left
    # one full orbit visits every player once
    seen, b = [], 3
    for _ in range(3):
        b = next_button(b, [3, 5, 9])
        seen.append(b)
    assert sorted(seen) == [3, 5, 9]
    assert plan([3, 5, 9])[0].recipient == box(5)      # default button at seat 3


def test_button_must_be_in_front_of_a_player():
    with pytest.raises(RuleError, match=r"not in front of a player.*art\. 1\(2\)"):
        plan([3, 5, 9], button=4)


# -- art. 3(2), 6(1), 7(1), 8(1), 8(3): the deal ------------------------------------------------
def test_hole_cards_one_at_a_time_clockwise_from_the_left_of_the_button():
    steps = plan([2, 5, 9], button=5)
    hole = [s for s in steps if s.street == "hole"]
    assert [s.recipient for s in hole] == [box(9), box(2), box(5)] * 2
    assert all(s.cards == 1 and not s.face_up for s in hole)


def test_burn_before_flop_turn_and_river_with_board_face_up():
    steps = plan([1, 2, 3, 4], button=2)
    rest = [(s.recipient, s.cards, s.face_up, s.street) for s in steps[8:]]
    assert rest == [(BURN, 1, False, "flop"), (BOARD, 1, True, "flop"),
                    (BOARD, 1, True, "flop"), (BOARD, 1, True, "flop"),
                    (BURN, 1, False, "turn"), (BOARD, 1, True, "turn"),
                    (BURN, 1, False, "river"), (BOARD, 1, True, "river")]
    assert sum(s.cards for s in steps) == 2 * 4 + 8


def test_shuffler_deals_the_same_plan_as_the_shoe():
    # art. 3(1) lets the shuffler replace the shuffling only; art. 6(1) deals one at a time
    assert plan([1, 4, 6], 4, Mode.SHUFFLER) == plan([1, 4, 6], 4, Mode.SHOE)


def test_plan_through_the_command_line(capsys):
    code, out, _ = run_cli(["rules", "plan", "texas-holdem", "--boxes", "2,5,9", "--button",
                            "5", "--json"], capsys=capsys)
    assert code == 0
    steps = json.loads(out)["steps"]
    assert [s["box"] for s in steps[:6]] == [9, 2, 5, 9, 2, 5]
    assert [s["kind"] for s in steps[6:]] == ["burn", "board", "board", "board", "burn",
                                              "board", "burn", "board"]
    code, _, err = run_cli(["rules", "plan", "texas-holdem", "--boxes", "3"], capsys=capsys)
    assert code == 2 and "at least 2 players" in err and "Traceback" not in err


def test_art_8_5_every_player_still_in_shows_in_the_order_the_hole_cards_were_dealt():
    # art. 8(5) names no order: the hands are shown as the hole cards went out, from the
    # player left of the button (art. 6(1)); there is no croupier's hand, no board or burn
    req = PlanRequest(boxes=(2, 6, 9), mode=Mode.SHOE, layout_boxes=10, button=6)
    assert GAME.reveal_order(req) == [box(9), box(2), box(6)]


# -- art. 9: errors in the deal -----------------------------------------------------------------
@pytest.mark.parametrize("irregularity", [
    Irregularity.DEALING_ERROR, Irregularity.WRONG_ORDER, Irregularity.WRONG_COUNT,
    Irregularity.PLAYER_CARD_EXPOSED, Irregularity.BOARD_CARD_EXPOSED,
    Irregularity.CROUPIER_CARD_EXPOSED, Irregularity.CARD_TO_BOX_WITHOUT_BET])
def test_art_9_1_dealing_errors_hole_or_board_are_rectified(irregularity):
    r = GAME.ruling(irregularity, Phase.DEALING)
    assert r.remedy is Remedy.RECTIFY and r.article == "11/2008 art. 9(1)"


@pytest.mark.parametrize("phase", [Phase.DECISIONS, Phase.REVEAL, Phase.SETTLEMENT])
def test_art_9_1_a_hole_card_exposed_after_the_hole_deal_stays_in_the_hand(phase):
    # 9(1) speaks of errors in the distribution; once the hole cards are out and played on,
    # the exposed card is kept (10(3): every hand stays in play to the end), never replaced.
    r = GAME.ruling(Irregularity.PLAYER_CARD_EXPOSED, phase)
    assert r.remedy is Remedy.CONTINUE and r.article == "11/2008 art. 9(1), 10(3)"
    assert "replaced" not in r.reason


@pytest.mark.parametrize("irregularity", [Irregularity.DEALING_ERROR_UNCORRECTABLE,
                                          Irregularity.MISDEAL])
def test_art_9_2_an_error_that_cannot_be_corrected_voids_the_hand(irregularity):
    r = GAME.ruling(irregularity, Phase.DEALING)
    assert r.remedy is Remedy.ROUND_VOID and r.article == "11/2008 art. 9(2)"
    assert "returned" in r.reason


@pytest.mark.parametrize("irregularity", [Irregularity.SHUFFLER_MALFUNCTION,
                                          Irregularity.SHOE_MALFUNCTION])
def test_h11_machine_failure_while_dealing(irregularity):
    void = GAME.ruling(irregularity, Phase.DEALING)
    assert (void.remedy, void.article, void.needs_supervisor) == (
        Remedy.ROUND_VOID, "11/2008 art. 9(2)", True)
    fix = GAME.ruling(irregularity, Phase.DEALING, {"machine_failure": "rectify"})
    assert (fix.remedy, fix.article) == (Remedy.RECTIFY, "11/2008 art. 9(1)")
    # H11: a failure after every card is out leaves the hand standing: at the showdown as in
    # settlement.
    for phase in (Phase.REVEAL, Phase.SETTLEMENT):
        after = GAME.ruling(irregularity, phase)
        assert after.remedy is Remedy.CONTINUE and after.needs_supervisor, phase


@pytest.mark.parametrize("irregularity", [Irregularity.DIE_NOT_FLAT,
                                          Irregularity.DIE_OUT_OF_CUP,
                                          Irregularity.DICE_MALFUNCTION])
def test_dice_do_not_exist_in_holdem(irregularity):
    with pytest.raises(RuleError, match="no dice"):
        GAME.ruling(irregularity, Phase.DEALING)


def test_every_irregularity_has_an_answer_or_a_clear_refusal():
    for irr in Irregularity:
        try:
            r = GAME.ruling(irr, Phase.DEALING)
        except RuleError:
            assert irr.value.startswith("di")
        else:
            assert r.article.startswith("11/2008 art. 9")


# -- the interpretation register ----------------------------------------------------------------
def test_interpretations_are_declared_with_valid_defaults():
    keys = [i.key for i in GAME.interpretations]
    assert keys == ["limit_bet_sizes", "odd_chip", "side_pots", "heads_up_blinds",
                    "heads_up_raises", "short_all_in_reopens", "rake_without_flop",
                    "rake_side_pots", "rake_rounding", "four_of_a_kind_kicker",
                    "machine_failure"]
    for i in GAME.interpretations:
        assert re.fullmatch(r"[a-z][a-z0-9_]*", i.key) and i.default in i.readings
        assert i.article.startswith("11/2008 art.")
    with pytest.raises(RuleError, match='has no interpretation "odd_chips"'):
        GAME.resolve_interpretations({"odd_chips": "tied_winner"})
    with pytest.raises(RuleError, match="choose one of: literal, big_blind_doubled"):
        GAME.resolve_interpretations({"limit_bet_sizes": "double"})


def test_every_interpretation_is_in_the_register_with_its_readings():
    text = (DOCS / "interpretations.md").read_text()
    section = text[text.index("## Texas Hold'em Poker"):]
    section = section[:section.index("\n## ", 5)] if "\n## " in section[5:] else section
    for i in GAME.interpretations:
        assert f"`{i.key}`" in section, i.key
        for reading in i.readings:
            assert f"`{reading}`" in section, (i.key, reading)


# -- settlement: the documented examples through the command line -------------------------------
def documented_examples():
    text = (DOCS / "settle.md").read_text()
    section = text[text.index("## Texas Hold'em Poker"):]
    section = section[:section.index("\n## ", 5)]
    return [json.loads(b) for b in re.findall(r"```json\n(.*?)```", section, re.S)]


def settle_cli(doc, capsys, monkeypatch):
    code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(doc), capsys, monkeypatch)
    assert code == 0, err
    return json.loads(out)


def nets(result):
    return {w["box"]: w["net"] for w in result["wagers"]}


def test_the_settle_docs_hold_three_examples():
    assert len(documented_examples()) == 3


def test_example_1_side_pot_and_rake(capsys, monkeypatch):
    r = settle_cli(documented_examples()[0], capsys, monkeypatch)
    # worked by hand in docs/settle.md
    assert nets(r) == {1: -300, 3: 460, 6: -200}
    assert r["commission"] == r["house_net"] == 40
    assert [(p["amount"], p["eligible"], p["rake"]) for p in r["pots"]] == [
        (600, [1, 3, 6], 30), (200, [1, 3], 10)]
    assert r["hands"]["box 3"]["category_id"] == "three_of_a_kind"
    assert r["hands"]["box 1"]["category_id"] == "one_pair"
    assert r["final_stacks"] == {"1": 700, "3": 960, "6": 0}
    assert r["blinds"]["small_blind_box"] == 3 and r["next_button"] == 3


def test_example_2_limit_split_and_odd_chip(capsys, monkeypatch):
    r = settle_cli(documented_examples()[1], capsys, monkeypatch)
    assert nets(r) == {2: -3, 5: 2, 8: 1}
    assert r["pots"] == [{"amount": 13, "eligible": [5, 8], "rake": 0, "winners": [5, 8],
                          "shares": {"5": 7, "8": 6}, "odd_chips": 1, "odd_chip_to": 5}]
    assert r["hands"]["box 5"]["category_id"] == "straight"
    assert r["hands"]["box 2"]["category"] == "folded"


def test_example_3_heads_up_no_flop_no_drop(capsys, monkeypatch):
    doc = documented_examples()[2]
    r = settle_cli(doc, capsys, monkeypatch)
    assert nets(r) == {4: -10, 7: 10} and r["house_net"] == 0
    assert r["blinds"]["small_blind_box"] == 7 and r["blinds"]["big_blind_box"] == 4
    assert "uncalled 20 returned" in [w for w in r["wagers"] if w["box"] == 7][0]["note"]
    assert r["hands"]["box 7"] == {"cards": [], "category": "not shown"}
    doc = dict(doc, interpretations={})
    r = settle_cli(doc, capsys, monkeypatch)
    assert nets(r) == {4: -10, 7: 9} and r["house_net"] == 1   # 5 % of the 20 contested


def test_settle_text_output(capsys, monkeypatch):
    code, out, _ = run_cli(["rules", "settle"], json.dumps(documented_examples()[0]), capsys,
                           monkeypatch)
    assert code == 0 and "net +460" in out and "commission/rake 40" in out


def base_doc(**changes):
    doc = documented_examples()[0]
    doc.update(changes)
    return doc


@pytest.mark.parametrize("change,message", [
    (dict(actions=[{"box": 3, "action": "call"}]), r"action 1 \(3 call\): seat 3 acted out of turn"),
    (dict(actions=[{"box": 1, "action": "raise", "amount": 15}]), "below the minimum 20"),
    (dict(actions=[{"box": 1, "action": "raise", "amount": 5000}]), "only 1000 behind"),
    (dict(actions=[{"box": 1, "action": "call"}]), "stops before the betting is over"),
    (dict(board=["Ah", "Qs", "3d", "9c"]), "board has 4 cards"),
    (dict(board=["Ah", "Qs", "3d", "9c", "Xx"]), 'unknown card "Xx"'),
    (dict(board=["Ah", "Qs", "3d", "9c", "As"]), "duplicate card As"),
    (dict(rake=7), "outside 3-5 %"),
    (dict(interpretations={"odd_chip": "house"}), 'cannot be "house"'),
    (dict(blinds={"small": 5}), '"blinds" has no "big"; give "big": N'),
    (dict(blinds={"small": 5, "big": "10"}), "big blind must be a whole number"),
    (dict(layout=8), "10 player seats"),
    (dict(structure="pot-limit"), "unknown betting structure"),
    (dict(button=2), "button is at seat 2"),
])
def test_bad_hand_histories_are_named_on_the_command_line(change, message, capsys,
                                                          monkeypatch):
    code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(base_doc(**change)),
                             capsys, monkeypatch)
    assert code == 2 and out == "" and "Traceback" not in err
    assert re.search(message, err), err


def _seat(i, **change):
    seats = [dict(s) for s in documented_examples()[0]["seats"]]
    seats[i].update(change)
    return [{k: v for k, v in s.items() if v is not None} for s in seats]


def _action(i, **change):
    actions = [dict(a) for a in documented_examples()[0]["actions"]]
    actions[i].update(change)
    return [{k: v for k, v in a.items() if v is not None} for a in actions]


@pytest.mark.parametrize("change,message", [
    # a typo at any level is refused, never ignored ("rak" would settle without the rake)
    (dict(rak=5), r"the round has unknown key\(s\) rak; the keys are: .*rake"),
    (dict(seats=_seat(0, stak=1000)), r"seat entry 1 has unknown key\(s\) stak"),
    (dict(actions=_action(0, amout=30)), r"action 1 has unknown key\(s\) amout"),
    (dict(blinds={"small": 5, "big": 10, "ante": 1}), r'"blinds" has unknown key\(s\) ante'),
    # "mode" is common to every game (docs/settle.md) and checked like the others'
    (dict(mode="hand"), 'unknown dealing mode "hand"'),
    # a missing key is named, with the way out, instead of echoing None
    (dict(seats=_seat(1, stack=None)), r'seat entry 2 \(box 3\) has no "stack"; give "stack"'),
    (dict(seats=_seat(0, box=None)), r'seat entry 1 has no "box"; give "box": N'),
    (dict(actions=_action(0, box=None)), r'action 1 has no "box"; give "box": N'),
    (dict(actions=_action(0, action=None)), r'action 1 \(box 1\) has no "action"; give'),
    (dict(actions=_action(0, seat=1)), r'action 1 gives both "box" and "seat"'),
])
def test_unknown_and_missing_keys_are_refused(change, message, capsys, monkeypatch):
    code, out, err = run_cli(["rules", "settle", "--json"], json.dumps(base_doc(**change)),
                             capsys, monkeypatch)
    assert code == 2 and out == "" and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1, err
    assert re.search(message, err), err


def test_mode_shoe_and_shuffler_settle_the_same(capsys, monkeypatch):
    plain = settle_cli(base_doc(), capsys, monkeypatch)
    for mode in ("shoe", "shuffler"):
        assert settle_cli(base_doc(mode=mode), capsys, monkeypatch) == plain


def test_missing_hole_cards_at_the_showdown_and_one_player():
    doc = base_doc()
    doc["seats"] = [dict(doc["seats"][0]), dict(doc["seats"][1], cards=None),
                    dict(doc["seats"][2])]
    with pytest.raises(RuleError, match=r"box\(es\) \[3\] reached the showdown"):
        GAME.settle(doc)
    with pytest.raises(RuleError, match="at least 2 players"):
        GAME.settle(base_doc(seats=[{"box": 1, "stack": 100}], actions=[], board=[]))


def test_h10_four_of_a_kind_on_the_board_splits_unless_the_kicker_counts():
    doc = {"game": "texas-holdem", "blinds": {"small": 1, "big": 2}, "button": 1,
           "seats": [{"box": 1, "stack": 20, "cards": ["Ah", "3d"]},
                     {"box": 2, "stack": 20, "cards": ["Kh", "3h"]}],
           "actions": [{"box": 2, "action": "call"}, {"box": 1, "action": "check"}]
           + [{"box": b, "action": "check"} for _ in range(3) for b in (2, 1)],
           "board": ["9c", "9d", "9h", "9s", "2c"]}
    # literal heads-up blinds: seat 2 (left of the button) small blind, seat 1 big blind
    assert nets(GAME.settle(doc).to_json()) == {1: 0, 2: 0}
    doc["interpretations"] = {"four_of_a_kind_kicker": "counts"}
    assert nets(GAME.settle(doc).to_json()) == {1: 2, 2: -2}


def test_h4_heads_up_blinds_change_who_posts_and_acts_in_settlement():
    doc = {"game": "texas-holdem", "blinds": {"small": 5, "big": 10}, "button": 4,
           "seats": [{"box": 4, "stack": 300}, {"box": 7, "stack": 300}],
           "actions": [{"box": 4, "action": "fold"}], "board": [],
           "interpretations": {"heads_up_blinds": "button_small_blind"}}
    r = GAME.settle(doc).to_json()
    assert nets(r) == {4: -5, 7: 5}                    # the button's small blind is lost
    with pytest.raises(RuleError, match="out of turn"):
        GAME.settle(dict(doc, interpretations={}))


def test_h1_limit_bet_sizes_in_settlement():
    doc = {"game": "texas-holdem", "structure": "limit", "blinds": {"small": 5, "big": 10},
           "button": 1,
           "seats": [{"box": b, "stack": 100} for b in (1, 2, 3)],
           "actions": [{"box": 1, "action": "raise", "amount": 15}, {"box": 2, "action": "fold"},
                       {"box": 3, "action": "fold"}], "board": []}
    assert nets(GAME.settle(doc).to_json()) == {1: 15, 2: -5, 3: -10}
    doc["interpretations"] = {"limit_bet_sizes": "big_blind_doubled"}
    with pytest.raises(RuleError, match="exactly 20"):
        GAME.settle(doc)


# -- conservation over random hands -------------------------------------------------------------
def random_hand(rnd, rules, structure):
    n = rnd.randint(2, 10)
    seats = sorted(rnd.sample(range(1, 11), n))
    stacks = {s: rnd.randint(1, 300) for s in seats}
    button = rnd.choice(seats)
    state = HandState(seats, stacks, button, 1, 2, structure, rules)
    actions = []
    while state.to_act is not None:
        legal = state.legal_actions()
        a = rnd.choice(legal)
        amount = None
        if a.kind in ("bet", "raise"):
            amount = rnd.randint(a.min_to, a.max_to)
        state.act(state.to_act, a.kind, amount)
        actions.append({"box": state.history[-1].seat, "action": a.kind, "amount": amount})
    deck = full_deck()
    rnd.shuffle(deck)
    doc = {"game": "texas-holdem", "structure": structure, "blinds": {"small": 1, "big": 2},
           "button": button, "rake": rnd.choice([0, 3, 4.5, 5]),
           "seats": [{"box": s, "stack": stacks[s], "cards": [str(deck.pop()), str(deck.pop())]}
                     for s in seats],
           "actions": actions,
           "board": [str(deck.pop()) for _ in range(state.board_cards_due)]}
    return doc, stacks


@settings(max_examples=60, deadline=None)
@given(st.randoms(use_true_random=False), st.sampled_from(["limit", "no-limit"]),
       st.sampled_from(["literal", "button_small_blind"]),
       st.sampled_from(["tied_winner", "nearest_in_hand"]),
       st.sampled_from(["whole_hand", "every_pot", "main_pot_only"]))
def test_settled_hands_conserve_chips(rnd, structure, hu_blinds, odd_chip, side_pots):
    readings = {"heads_up_blinds": hu_blinds, "odd_chip": odd_chip, "rake_side_pots": side_pots}
    doc, stacks = random_hand(rnd, BettingRules.from_interpretations(readings), structure)
    doc["interpretations"] = readings
    r = GAME.settle(doc).to_json()
    total_net = sum(w["net"] for w in r["wagers"])
    assert total_net + r["house_net"] == 0
    assert 0 <= r["commission"] <= 5 * 2
    assert all(v >= 0 for v in r["final_stacks"].values())
    assert sum(r["final_stacks"].values()) + r["commission"] == sum(stacks.values())
    for w in r["wagers"]:
        assert r["final_stacks"][str(w["box"])] == stacks[w["box"]] + w["net"]


def test_art_13_2_a_folded_hand_is_not_shown_or_ranked(capsys, monkeypatch):
    r = settle_cli(documented_examples()[1], capsys, monkeypatch)
    folded = r["hands"]["box 2"]
    assert folded == {"cards": [], "category": "folded"}     # face down to the croupier
    assert r["hands"]["box 5"]["cards"] == ["2c", "3c"]         # shown at the showdown
    # its ace would have made the better straight: a folded hand wins nothing (13(3))
    assert nets(r)[2] == -3


def test_art_4_1_2_chips_stay_on_the_table_from_hand_to_hand():
    first = GAME.settle(documented_examples()[0]).to_json()
    stacks = first["final_stacks"]
    # the next hand starts from the chips left on the table, button moved (art. 1(2))
    doc = {"game": "texas-holdem", "blinds": {"small": 5, "big": 10},
           "button": first["next_button"],
           "seats": [{"box": int(b), "stack": v} for b, v in stacks.items() if v > 0],
           "actions": [{"box": 1, "action": "fold"}], "board": []}
    # two players left: seat 1 left of the button posts the small blind (literal H4), acts
    # first and folds it
    r = GAME.settle(doc).to_json()
    assert r["blinds"]["small_blind_box"] == 1 and r["blinds"]["big_blind_box"] == 3
    assert r["final_stacks"] == {"1": 700 - 5, "3": 960 + 5}


def test_amounts_are_whole_chip_units():
    doc = documented_examples()[0]
    doc["seats"][0]["stack"] = 1000.5
    with pytest.raises(RuleError, match="positive whole number of chip units"):
        GAME.settle(doc)
    doc = documented_examples()[0]
    doc["actions"][0]["amount"] = 30.0
    with pytest.raises(RuleError, match="whole number of chip units"):
        GAME.settle(doc)


def test_traceability_names_only_tests_that_exist_and_every_article_has_one():
    text = (DOCS / "regulations" / "texas-holdem.md").read_text()
    tests_dir = Path(__file__).resolve().parent
    defined = set()
    for f in ("test_texas_holdem.py", "test_holdem_betting.py", "test_holdem_pots.py",
              "test_holdem_eval.py", "test_holdem_vs_pokerkit.py",
              "test_table_holdem_shuffler_failure.py", "test_table_holdem.py",
              "test_table_wrong_count.py", "test_table_dealing.py", "test_holdem_view.py",
              "test_api.py", "test_holdem_audit.py",
              "test_holdem_audit_daemon.py", "test_exposure_position.py",
              "test_exposure_position_daemon.py"):
        defined |= set(re.findall(r"^def (test_\w+)", (tests_dir / f).read_text(), re.M))
    named = set(re.findall(r"`(test_\w+)`", text))
    assert named and named <= defined, sorted(named - defined)
    rows = re.findall(r"^\| (\d+(?:\(\d+\))*(?:\(\d+\))?) \|.*\|(.*)\|$",
                      text.split("## The regulation")[1], re.M)
    articles = [a for a, _ in rows]
    for a, tests in rows:
        assert "test_" in tests, f"article {a} has no test"
    # every article 1-16 of the regulation appears
    assert {int(re.match(r"\d+", a).group()) for a in articles} == set(range(1, 17))


def test_live_hand_from_start_to_finish():
    from controller.rules.texas_holdem import finish_hand, start_hand
    state = start_hand([2, 6, 9], {2: 200, 6: 200, 9: 200}, None, 1, 2)
    assert state.button == 2 and state.blind_seats() == (6, 9)   # art. 1(2), 5
    with pytest.raises(RuleError, match="betting is not over"):
        finish_hand(state, {}, [])
    state.act(2, "call")
    state.act(6, "call")
    state.act(9, "check")
    assert state.street == "flop" and state.board_cards_due == 3
    while state.to_act is not None:
        state.act(state.to_act, "check")
    holes = {2: ["As", "Ad"], 6: ["Ks", "Kd"], 9: ["2c", "7d"]}
    board = ["Ah", "Kh", "5c", "9s", "Jd"]
    with pytest.raises(RuleError, match=r"box\(es\) \[4\]"):
        finish_hand(state, {**holes, 4: ["3c", "3d"]}, board)
    with pytest.raises(RuleError, match="board has 3 cards"):
        finish_hand(state, holes, board[:3])
    out = finish_hand(state, holes, board, rake=5)
    # pot 6; three aces win; 5 % of 6 = 0.3, rounded down to nothing
    assert out.money.nets == {2: 4, 6: -2, 9: -2} and out.money.rake == 0
    assert out.values[2].category.name == "THREE_OF_A_KIND"
    with pytest.raises(RuleError, match="do not exist"):
        start_hand([2, 11], {2: 10, 11: 10}, None, 1, 2)
