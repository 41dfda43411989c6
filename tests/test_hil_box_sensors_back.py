"""A box-sensor board that fails mid-deal and is put right, end to end: the real daemon
(``tablectl run``) with the simulated shoe and box sensors on pseudo-terminals.

Q Poker from the shoe, bets on boxes 1, 3 and 5. The first card is seen landing on box 1; then
the board reports a malfunction (the simulator's firmware then senses nothing until it is
rebooted), box 3's card is laid out of its sight, the board is rebooted and the supervisor
clears it. The deal goes on without a ruling: box 5's card, laid on box 5, is matched against
the cards drawn since the board came back, not against box 3's card, which it never saw
(before, the table ruled it a wrong order and voided the round, 89/2004 art. 11(1)).
"""
import pytest

from controller.rig import Rig
from rig_helpers import open_for_bets

pytestmark = pytest.mark.hil

SENSORS = "box-sensors"


def dealt(rig, since):
    """Wait for the next card the table counts after ``since``; its recipient."""
    return rig.wait_event(lambda e: e["kind"] == "card", since=since, timeout=20)["recipient"]


def draw_and_lay(rig, board, watching=True):
    """The croupier draws a card and lays it where the table counted it."""
    mark = rig.mark()
    rig.devices["shoe"].draw()
    recipient = dealt(rig, mark)
    if recipient.startswith("box "):
        box = int(recipient.split()[1])
        mark = rig.mark()
        board.place_card(box)
        if watching:
            rig.wait_event(lambda e: e["kind"] in ("card_placed", "ruling"), since=mark,
                           timeout=20)
    return recipient


def test_a_board_put_right_mid_deal_is_matched_only_against_the_cards_after_it(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=11, box_sensors=True)
    try:
        open_for_bets(rig)
        for box in (1, 3, 5):
            rig.must("place_bet", box=box, wager="versus_croupier", amount=10)
        board = rig.devices[SENSORS]
        assert draw_and_lay(rig, board) == "box 1"

        mark = rig.mark()
        board.inject("malfunction", code=3, text="sensor 3")
        rig.wait_event(lambda e: e["kind"] == "device_condition" and e["device"] == SENSORS
                       and "malfunction" in e["conditions"], since=mark, timeout=20)
        assert rig.state() == "dealing"             # the sensors deal no card
        assert draw_and_lay(rig, board, watching=False) == "box 3"

        mark = rig.mark()
        board.reboot()
        rig.wait_event(lambda e: e["kind"] == "device_link" and e["device"] == SENSORS
                       and e["link"] == "up", since=mark, timeout=20)
        rig.must("clear_malfunction", "supervisor")
        assert rig.state() == "dealing"

        mark = rig.mark()
        laid = [draw_and_lay(rig, board) for _ in range(10)]
        assert laid == ["box 5", "croupier", "box 1", "box 3", "box 5", "croupier",
                        "box 1", "box 3", "box 5", "croupier"]
        assert rig.wait_state("player_decisions", timeout=20) == "player_decisions"
        after = rig.events[mark:]
        assert [e["box"] for e in after if e["kind"] == "card_placed"] == [5, 1, 3, 5, 1, 3, 5]
        assert not [e for e in rig.events if e["kind"] == "ruling"]
        assert rig.view()["round"]["void"] is None
    finally:
        rig.stop()
