"""A card drawn just before the shoe's link is lost, end to end: the real daemon (``tablectl
run``) with the simulated shoe on a pseudo-terminal.

Q Poker, dealing from the shoe, one bet on box 2. The shoe's cable is pulled, the table stops
(the round held: no card was out), and the croupier draws a card: the shoe keeps the frame and
sends it again once the cable is back. The card is out at the table, so the table counts it
where the dealing order puts it (box 2's first card: it closes betting, 89/2004 art. 6(2)) and
rules the shoe's failure as one while dealing (art. 11(5), interpretation Q5): under the default
reading the round is void and every bet returned; under ``shoe_malfunction = continue`` the
deal goes on from that card once the supervisor clears.
"""
import pytest

from controller.journal import Journal
from controller.rig import Rig
from rig_helpers import open_for_bets

pytestmark = pytest.mark.hil


def held_card(rig):
    """Open a round with a bet on box 2, lose the shoe's link, draw a card while it is gone and
    bring the link back; the card drawn and the mark before the link came back."""
    open_for_bets(rig)
    rig.must("place_bet", box=2, wager="versus_croupier", amount=10)
    shoe = rig.devices["shoe"]
    shoe.disconnect()
    assert rig.wait_state("malfunction") == "malfunction"
    drawn = shoe.draw()
    assert [d["kind"] for d in drawn] == ["card_drawn"]
    mark = rig.mark()
    shoe.reconnect()
    return drawn[0]["card"], mark


def test_a_card_drawn_while_the_link_was_down_is_counted_and_voids_the_round_art_11_5(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=7)
    try:
        card, mark = held_card(rig)
        ruling = rig.wait_event(lambda e: e["kind"] == "ruling", since=mark, timeout=20)
        assert (ruling["irregularity"], ruling["phase"], ruling["remedy"], ruling["article"]) \
            == ("shoe_malfunction", "dealing", "round_void", "89/2004 art. 11(5)")
        after = rig.events[mark:]
        counted = [e for e in after if e["kind"] == "card"]
        assert [(e["recipient"], e["count"]) for e in counted] == [("box 2", 1)]
        assert not [e for e in after if e["kind"] == "irregular_event"]
        view = rig.view()
        assert view["state"] == "malfunction"
        assert view["round"]["void"]["article"] == "89/2004 art. 11(5)"

        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            records = list(j.records())
        drawn = [r for r in records if r.kind == "device"
                 and r.payload["event"]["kind"] == "card_drawn"]
        assert len(drawn) == 1 and drawn[0].payload["event"]["card"] == card
        later = [r for r in records if r.seq > drawn[0].seq]
        decision = next(r for r in later if r.kind == "decision")
        close = next(r for r in later if r.kind == "round_close")
        assert decision.article == close.article == "89/2004 art. 11(5)"
        assert close.payload["outcome"] == "void"
        assert close.payload["returned"] == [{"box": 2, "wager": "versus_croupier",
                                              "player": None, "amount": 10}]

        rig.must("clear_malfunction", "supervisor")
        assert rig.view()["round"]["round"] == 2            # a new round, a new shuffle
    finally:
        rig.stop()


def test_under_continue_the_held_card_is_box_2s_and_five_more_make_the_deal(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe", seed=7,
              interpretations={"shoe_malfunction": "continue"})
    try:
        card, mark = held_card(rig)
        rig.wait_event(lambda e: e["kind"] == "ruling", since=mark, timeout=20)
        assert [(e["recipient"], e["count"]) for e in rig.events[mark:]
                if e["kind"] == "card"] == [("box 2", 1)]
        assert rig.state() == "malfunction"
        rig.must("clear_malfunction", "supervisor")
        assert rig.wait_state("dealing") == "dealing"
        shoe = rig.devices["shoe"]
        box2 = [card]
        for i in range(5):              # croupier, box 2, croupier, box 2, croupier (art. 7(1))
            out = shoe.draw()
            if i in (1, 3):
                box2.append(out[0]["card"])
        assert rig.wait_state("player_decisions", timeout=20) == "player_decisions"
        opened = next(e for e in rig.events if e["kind"] == "hand_opened")
        assert opened["recipient"] == "box 2" and opened["hand"] == box2
        assert rig.view()["round"]["round"] == 1
    finally:
        rig.stop()
