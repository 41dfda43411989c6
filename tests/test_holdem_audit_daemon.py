"""Texas Hold'em through the real daemon (`tablectl run` with the simulated shoe over a
pseudo-terminal): the controller killed at each betting round of a hand and started again
rebuilds the hand exactly from its journal (the seats, stacks, pot, whose turn, what may be
done), and the hand plays on to the settlement it would have had; a board card the shoe reads
twice is ruled at once."""
import signal

import pytest

from controller.journal import Journal

from holdem_helpers import full_deck, holdem_rig

pytestmark = pytest.mark.hil

# Button at seat 1: hole cards to 3, 6, 1, 3, 6, 1 (11/2008 art. 6(1)); then burn and flop,
# burn and turn, burn and river (art. 7(1), 8(1), 8(3)).
HAND = ["2c", "3h", "As", "7d", "8s", "Ad",      # box 3: 2c 7d; box 6: 3h 8s; box 1: As Ad
        "5h", "Kc", "Qh", "9d", "6c", "4s", "Tc", "Jc"]


def test_a_restart_in_every_betting_round_rebuilds_the_hand_exactly(tmp_path):
    rig = holdem_rig(tmp_path, 5, {"small_blind": 5, "big_blind": 10,
                                   "structure": "no-limit", "rake_percent": 5},
                     full_deck(HAND))
    try:
        shoe = rig.devices["shoe"]
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


def test_a_board_card_the_shoe_reads_twice_voids_the_hand_at_once(tmp_path):
    # The shoe reads the flop's second card as its first (11/2008 art. 1(1)(3): one deck holds
    # each card once): the daemon rules it there, as the shoe's failure while dealing (art. 9,
    # H11 void by default), and returns every chip, before any betting on that board.
    cards = HAND[:8] + ["Kc"] + HAND[9:]          # burn 5h, flop Kc Kc 9d
    rig = holdem_rig(tmp_path, 6, {"small_blind": 5, "big_blind": 10},
                     cards + [c for c in full_deck([]) if c not in cards][:30])
    try:
        shoe = rig.devices["shoe"]
        rig.must("seat_players", seats=[1, 3, 6], stacks=[500, 500, 500], button=1)
        for _ in range(6):
            mark = rig.mark()
            shoe.draw()
            rig.wait_event(lambda e: e["kind"] == "card", since=mark)
        rig.wait_state("player_decisions")
        for seat, action in ((1, "call"), (3, "call"), (6, "check")):
            rig.must("holdem_action", seat=seat, action=action)
        rig.wait_state("dealing")
        for _ in range(3):
            mark = rig.mark()
            shoe.draw()
            rig.wait_event(lambda e: e["kind"] in ("card", "ruling"), since=mark)
        void = rig.wait_event(lambda e: e["kind"] == "round_void")
        ruling = rig.wait_event(lambda e: e["kind"] == "ruling")
        assert ruling["irregularity"] == "shoe_malfunction"
        assert "already face up" in ruling["detail"]
        assert [(r["box"], r["amount"]) for r in void["returned"]] == [(1, 10), (3, 10),
                                                                        (6, 10)]
        assert rig.view()["holdem"]["stacks"] == {"1": 500, "3": 500, "6": 500}
        assert "betting_round" not in [e["kind"] for e in rig.events[rig.events.index(ruling):]]
    finally:
        rig.stop()
