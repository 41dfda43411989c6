"""Super Pan 9 (261/96/M) art. 5: the bank's rotation, capital and co-banking."""
import pytest
from hypothesis import given, strategies as st

from controller.rules import pan9_bank as bank
from controller.rules.errors import RuleError
from controller.rules.pan9_bank import BankLedger, BankShare

SEATS = range(1, 9)


def test_counter_clockwise_is_decreasing_seat_numbers_wrapping_from_1_to_n():
    assert bank.counter_clockwise(SEATS, 4) == [4, 3, 2, 1, 8, 7, 6, 5]
    # a start that is not one of the seats: the first of them counter-clockwise from it
    assert bank.counter_clockwise([1, 3, 5], 4) == [3, 1, 5]
    assert bank.counter_clockwise([2, 6], 1) == [6, 2]


# --- art. 5(1) ---------------------------------------------------------------------------

def test_art_5_1_two_rounds_at_most_unless_all_agree():
    assert bank.may_keep_bank(0) and bank.may_keep_bank(1)
    assert not bank.may_keep_bank(2)
    assert not bank.may_keep_bank(3)
    assert bank.may_keep_bank(2, all_agree=True)
    with pytest.raises(RuleError, match="whole number of rounds"):
        bank.may_keep_bank(-1)


def test_art_5_1_the_bank_goes_round_seat_by_seat_counter_clockwise():
    everyone = set(SEATS)
    assert bank.bank_offer_order(SEATS, 4, bet_previous_round=everyone) == [3, 2, 1, 8, 7, 6, 5]
    assert bank.bank_offer_order(SEATS, 1, bet_previous_round=everyone)[0] == 8


# --- art. 5(2) ---------------------------------------------------------------------------

def test_art_5_2_a_player_may_decline_and_the_bank_passes_counter_clockwise():
    everyone = set(SEATS)
    # a seat takes the bank once the seats before it in turn have declined (check_taker)
    bank.check_taker(SEATS, 4, 2, bet_previous_round=everyone)            # seat 3 declined
    bank.check_taker(SEATS, 4, 8, bet_previous_round=everyone)            # 3, 2, 1 declined


def test_art_5_2_only_to_a_player_who_bet_in_the_previous_round_always_reading():
    # seat 3 is occupied but did not bet last round; seats 2 and 7 did
    assert bank.bank_offer_order(SEATS, 4, bet_previous_round={2, 7},
                                 occupied={2, 3, 7}) == [2, 7]


def test_art_5_2_when_passed_reading_frees_only_the_seat_whose_turn_it_is():
    rd = {"bank_requires_previous_bet": "when_passed"}
    occupied = {2, 3, 7}
    # seat 3's turn: it takes the bank though it did not bet last round; if it declines, the
    # bank passes on to seat 2, which bet last round, then to seat 7
    assert bank.bank_offer_order(SEATS, 4, bet_previous_round={2, 7}, occupied=occupied,
                                 interpretations=rd) == [3, 2, 7]
    # passed after a refusal to seat 1, which did not bet: skipped
    assert bank.bank_offer_order(SEATS, 4, bet_previous_round={7}, occupied={3, 1, 7},
                                 interpretations=rd) == [3, 7]
    # an empty seat is skipped without counting as a refusal: seat 2 is first in turn
    assert bank.bank_offer_order(SEATS, 4, bet_previous_round=set(), occupied={2, 1},
                                 interpretations=rd) == [2]


def test_art_5_2_check_taker_refuses_a_seat_the_bank_cannot_pass_to():
    bank.check_taker(SEATS, 4, 7, bet_previous_round={2, 7})      # seat 2 declined
    with pytest.raises(RuleError, match=r"seat 3 did not bet in the previous round: .*"
                       r"art\. 5\(2\)\); seats that may take it, in turn: 2, 7"):
        bank.check_taker(SEATS, 4, 3, bet_previous_round={2, 7})
    rd = {"bank_requires_previous_bet": "when_passed"}
    bank.check_taker(SEATS, 4, 3, bet_previous_round={2, 7}, interpretations=rd)
    with pytest.raises(RuleError, match="art\\. 5\\(2\\)"):
        # seat 2 bet, so seat 1 is past the first occupied seat in turn
        bank.check_taker(SEATS, 4, 1, bet_previous_round={2, 7}, interpretations=rd)


def test_art_5_2_bad_input_is_named():
    with pytest.raises(RuleError, match="not one of the table's seats"):
        bank.bank_offer_order(SEATS, 12, bet_previous_round={1})
    with pytest.raises(RuleError, match="always or when_passed"):
        bank.bank_offer_order(SEATS, 4, bet_previous_round={1},
                              interpretations={"bank_requires_previous_bet": "sometimes"})


# --- art. 5(3)-(4) -----------------------------------------------------------------------

@pytest.mark.parametrize("capital,msg", [(None, "no capital"), (0, "more than 0"),
                                         (-5, "more than 0"), ("100", "whole number"),
                                         (2.5, "whole number"), (True, "whole number")])
def test_art_5_3_capital_must_be_on_the_table(capital, msg):
    with pytest.raises(RuleError, match=msg):
        bank.check_capital(capital)


def test_art_5_4_winner_carries_capital_and_winnings_and_may_add():
    assert bank.second_round_capital(1000, 350) == 1350
    assert bank.second_round_capital(1000, 350, offered=1350) == 1350
    assert bank.second_round_capital(1000, 350, offered=2000) == 2000


def test_art_5_4_winner_may_never_reduce():
    with pytest.raises(RuleError, match=r"less than 1350.*never\s+reduce"):
        bank.second_round_capital(1000, 350, offered=1349)
    with pytest.raises(RuleError, match="less than 1350"):
        bank.second_round_capital(1000, 350, offered=1000)


def test_art_5_4_applies_only_after_a_win():
    # lost 400 of 1000: no floor set by the text; what is left, or any new capital
    assert bank.second_round_capital(1000, -400) == 600
    assert bank.second_round_capital(1000, -400, offered=300) == 300
    assert bank.second_round_capital(1000, 0, offered=10) == 10
    with pytest.raises(RuleError, match="capital is spent"):
        bank.second_round_capital(1000, -1000)
    with pytest.raises(RuleError, match="limits the loss"):
        bank.second_round_capital(1000, -1001)


def test_art_5_1_and_5_4_the_bank_turn_at_the_table():
    turn = bank.after_round(None, 3, 1000, 95)             # seat 3 won 95 net in its first round
    assert turn == bank.BankTurn(3, 1, 1000, 95) and turn.capital_floor == 1095
    with pytest.raises(RuleError, match=r"capital 500 is less than 1095 = 1000 \+ winnings 95 "
                       r"\(261/96/M art\. 5\(4\)\); put at least 1095"):
        turn.check(3, 500)
    turn.check(3, 1095)
    turn.check(3, 5000)                                     # he may add
    turn.check(4, 10)                                       # another seat: its own turn
    turn = bank.after_round(turn, 3, 1095, -200)
    assert turn == bank.BankTurn(3, 2, 1000, 95) and turn.capital_floor is None
    with pytest.raises(RuleError, match=r"seat 3 has banked two rounds in a row .*5\(1\).*"
                       r"all_agree=true"):
        turn.check(3, 1000)
    turn.check(3, 1000, all_agree=True)
    assert bank.after_round(turn, 5, 700, -700) == bank.BankTurn(5, 1, 700, -700)
    assert bank.BankTurn.from_json(turn.to_json()) == turn
    lost = bank.after_round(None, 1, 1000, -100)
    assert lost.capital_floor is None
    lost.check(1, 1)                                        # no floor after a loss


# --- art. 5(5) ---------------------------------------------------------------------------

BANKER = BankShare("banker", 100, 4, "banker")


def test_art_5_5_house_last_whatever_the_listing():
    house = BankShare("house", 500, None, "house")
    dee = BankShare("Dee", 50, 6)
    assert [s.name for s in bank.order_shares(BANKER, [house, dee])] == ["banker", "Dee", "house"]
    with pytest.raises(RuleError, match="house is listed twice"):
        bank.order_shares(BANKER, [house, house])


def test_art_5_5_co_banker_order_readings():
    eve, dee = BankShare("Eve", 50, 1), BankShare("Dee", 50, 3)
    assert [s.name for s in bank.order_shares(BANKER, [eve, dee])] == ["banker", "Eve", "Dee"]
    ccw = bank.order_shares(BANKER, [eve, dee], seats=SEATS,
                            interpretations={"co_banker_order": "counter_clockwise"})
    assert [s.name for s in ccw] == ["banker", "Dee", "Eve"]  # 3 comes before 1 from seat 4
    with pytest.raises(RuleError, match="need a seat"):
        bank.order_shares(BANKER, [BankShare("Flo", 50)],
                          interpretations={"co_banker_order": "counter_clockwise"})


def test_ledger_collects_in_order_up_to_each_capital_and_returns_the_rest():
    ledger = BankLedger([BANKER, BankShare("Dee", 50), BankShare("house", 30, None, "house")])
    assert ledger.collect(120) == 120
    assert ledger.nets == [100, 20, 0]
    assert ledger.collect(100) == 60          # Dee 30 more, house 30; 40 left with the player
    assert ledger.nets == [100, 50, 30]
    assert ledger.collect(10) == 0


def test_ledger_pays_from_capital_plus_winnings_banker_first():
    ledger = BankLedger([BANKER, BankShare("Dee", 50)])
    assert ledger.collect(30) == 30            # banker +30
    assert ledger.pay(150) == 150              # banker pays 130 (100 + 30 won), Dee 20
    assert ledger.nets == [-100, -20]
    assert ledger.pay(100) == 30               # Dee's last 30; 70 of this win unpaid
    assert ledger.nets == [-100, -50]


@given(st.lists(st.integers(1, 60), min_size=1, max_size=4),
       st.lists(st.tuples(st.booleans(), st.integers(1, 200)), max_size=12))
def test_ledger_never_lets_a_share_win_or_lose_beyond_its_capital(capitals, moves):
    shares = [BankShare(f"s{i}", c) for i, c in enumerate(capitals)]
    ledger = BankLedger(shares)
    bank_total = 0
    for collect, amount in moves:
        moved = ledger.collect(amount) if collect else ledger.pay(amount)
        assert 0 <= moved <= amount
        bank_total += moved if collect else -moved
        for share, net in zip(shares, ledger.nets):
            assert -share.capital <= net <= share.capital
    assert sum(ledger.nets) == bank_total


def test_allocate_net_in_order():
    shares = [BANKER, BankShare("Dee", 50), BankShare("house", 500, None, "house")]
    assert bank.allocate_net(shares, 180) == [100, 50, 30]
    assert bank.allocate_net(shares, -120) == [-100, -20, 0]
    with pytest.raises(RuleError, match="exceeds its capital"):
        bank.allocate_net(shares, 651)
