"""Texas Hold'em through the real daemon: the controller killed at each betting round of a hand
and started again rebuilds the hand exactly from its journal (the seats, stacks, pot, whose
turn, what may be done), and the hand plays on to the settlement it would have had."""
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig
from controller.rules.cards import Card

pytestmark = pytest.mark.hil

# Button at seat 1: hole cards to 3, 6, 1, 3, 6, 1 (11/2008 art. 6(1)); then burn and flop,
# burn and turn, burn and river (art. 7(1), 8(1), 8(3)).
HAND = ["2c", "3h", "As", "7d", "8s", "Ad",      # box 3: 2c 7d; box 6: 3h 8s; box 1: As Ad
        "5h", "Kc", "Qh", "9d", "6c", "4s", "Tc", "Jc"]


def full_deck(first):
    return first + [str(c) for c in (Card.from_code(i) for i in range(52))
                    if str(c) not in first]


def test_a_restart_in_every_betting_round_rebuilds_the_hand_exactly(tmp_path):
    rig = Rig(tmp_path, "texas-holdem", "shoe", seed=5,
              holdem={"small_blind": 5, "big_blind": 10, "structure": "no-limit",
                      "rake_percent": 5})
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        shoe = rig.devices["shoe"]
        rig.must("open_table", "supervisor")
        shoe.load_deck(full_deck(HAND))
        rig.must("deck_ready")
        rig.wait_state("bets_open")
        rig.must("seat_players", seats=[1, 3, 6], stacks={"1": 500, "3": 300, "6": 45},
                 button=1)

        def draw(n):
            for _ in range(n):
                mark = rig.mark()
                shoe.draw()
                assert rig.wait_event(lambda e: e["kind"] in ("card", "ruling"),
                                      since=mark)["kind"] == "card"

        def act(seat, action, amount=None):
            assert rig.view()["holdem"]["to_act"] == seat
            mark = rig.mark()
            rig.must("holdem_action", seat=seat, action=action, amount=amount)
            rig.wait_event(lambda e: e["kind"] == "action", since=mark)

        def hand_now():
            v = rig.view()
            return v["state"], v["holdem"], v["round"]

        def restart():
            before = hand_now()
            rig.kill(signal.SIGKILL)
            rig.start_controller()
            rig.wait_links()
            assert hand_now() == before

        draw(6)
        rig.wait_state("player_decisions")
        restart()                                   # preflop, nobody has acted
        act(1, "raise", 30)
        act(3, "call")
        restart()                                   # preflop, the big blind to act
        act(6, "allin")                             # 45: all in for less than a raise
        act(1, "call")
        act(3, "call")
        draw(4)
        rig.wait_state("player_decisions")
        restart()                                   # flop
        act(3, "bet", 40)
        restart()
        act(1, "call")
        draw(2)
        rig.wait_state("player_decisions")
        restart()                                   # turn
        act(3, "check")
        act(1, "check")
        draw(2)
        rig.wait_state("player_decisions")
        restart()                                   # river
        act(3, "check")
        restart()
        act(1, "check")
        settled = rig.wait_event(lambda e: e["kind"] == "settlement")
        # Main pot 3 x 45 = 135, side pot of boxes 1 and 3, 2 x 40 = 80; on the board
        # Kc Qh 9d 4s Jc box 1's pair of aces takes both (art. 10(2)); the commission is 5 % of
        # 215, 10.75, rounded down to 10 (H9), under the cap of five big blinds (art. 16).
        nets = {w["box"]: w["net"] for w in settled["wagers"]}
        assert settled["commission"] == 10
        assert nets == {1: 215 - 10 - 85, 3: -85, 6: -45}
        rig.must("confirm_result")
    finally:
        rig.stop()
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        assert [r.payload["report"]["void"] for r in j.records(kinds=["recovery"])] == \
            [False] * 8
