"""A card the croupier names as exposed (``exposed_card`` ``card``) through the real daemon
(`tablectl run` with the simulated shoe over a pseudo-terminal), killed and started again
after the exposure: the journal holds the position, so the round rebuilt from it has the same
card set aside and the same hand, and no other card of that hand leaves the controller (event
stream, view, log) before its reveal."""
import re
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig

from test_qpoker_audit_daemon import ROUND, _draw, _open, full_deck

pytestmark = pytest.mark.hil


def _shown(cards, text):
    return [c for c in cards if re.search(rf"(?<![A-Za-z0-9]){c}(?![A-Za-z0-9])", text)]


def test_fortune_the_croupiers_first_card_named_survives_a_restart_art_11_2(tmp_path):
    # Boxes 1 and 3 bet; the shoe deals box 1, box 3, the croupier, three times (art. 7(1)).
    # After two rounds of cards the croupier holds Qh, 8s; the dealer saw his first one, the
    # Qh. It is set aside face up and he receives the next card, the Kd (art. 11(2)); then
    # box 1, box 3 and his own third card. Taking the last card set the 8s aside and showed it.
    deck = full_deck(ROUND)
    rig = Rig(tmp_path, "fortune-3-card-poker", "shoe", seed=3)
    try:
        _open(rig, "fortune-3-card-poker", deck)
        _draw(rig, 6)
        rig.must("exposed_card", recipient="croupier", card=1)
        aside = rig.wait_event(lambda e: e["kind"] == "card_set_aside")
        assert aside["cards"] == ["Qh"]
        _draw(rig, 4)                               # Kd to him, 9c, 3h, then his third
        rig.wait_state("player_decisions")
        hidden = ("8s", "Kd", deck[9])              # his hand now, face down
        before = rig.view()
        assert before["set_aside"] == ["Qh"] and before["hands"]["croupier"] == [None] * 3
        rig.kill(signal.SIGKILL)
        rig.start_controller()
        rig.wait_links()
        after = rig.view()
        assert after == before                      # the same card aside, the same hand
        with Journal.open(rig.journal_path, readonly=True) as j:
            told = [r.payload["args"] for r in j.records(kinds=["command"])
                    if r.payload["name"] == "exposed_card"]
        assert told == [{"recipient": "croupier", "card": 1}]
        ruling = [e for e in rig.events if e["kind"] == "ruling"][-1]
        assert (ruling["position"], ruling["remedy"]) == (1, "set_aside")
        text = repr(rig.events) + repr(after) + rig.log_path.read_text()
        assert _shown(hidden, text) == [], "a croupier's card left before his hand was opened"
        rig.must("decide", box=1, decision="play")
        rig.must("decide", box=3, decision="play")
        settled = rig.wait_event(lambda e: e["kind"] == "settlement")
        assert sorted(settled["hands"]["croupier"]["cards"]) == sorted(hidden)
    finally:
        rig.stop()


def test_holdem_a_hole_card_named_while_dealt_is_replaced_and_survives_a_restart_art_9_1(
        tmp_path):
    # Seats 1 and 2, the button on 1: the hole cards go to seat 2, seat 1, seat 2, seat 1.
    # Seat 2's first card, the As, is shown while the hole cards are dealt: it is set aside
    # and seat 2 receives the next card, the Qh, before seat 1's second (art. 9(1), 6(3)).
    from holdem_helpers import full_deck as holdem_deck, holdem_rig

    deck = holdem_deck(["As", "Kd", "Ah", "Qh", "Kc", "2c", "7s", "8d", "9h", "3c", "Js",
                        "4d", "5s"])
    rig = holdem_rig(tmp_path, 5, {}, deck)
    try:
        rig.must("seat_players", seats=[1, 2], stacks=[100, 100], button=1)
        _draw(rig, 3)
        rig.must("exposed_card", recipient="box 2", card=1)
        assert rig.wait_event(lambda e: e["kind"] == "card_set_aside")["cards"] == ["As"]
        _draw(rig, 2)
        rig.wait_state("player_decisions")
        before = rig.view()
        assert before["set_aside"] == ["As"] and before["hands"]["box 2"] == [None, None]
        rig.kill(signal.SIGKILL)
        rig.start_controller()
        rig.wait_links()
        assert rig.view() == before
        text = repr(rig.events) + repr(rig.view()) + rig.log_path.read_text()
        assert _shown(("Ah", "Qh", "Kd", "Kc"), text) == []
        rig.must("holdem_action", seat=2, action="call")
        rig.must("holdem_action", seat=1, action="check")
        for cards in (4, 2, 2):                     # burn and flop, burn and turn, river
            _draw(rig, cards)
            rig.wait_state("player_decisions", "settlement")
            if rig.state() == "player_decisions":
                rig.must("holdem_action", seat=2, action="check")
                rig.must("holdem_action", seat=1, action="check")
        rig.wait_event(lambda e: e["kind"] == "settlement")
        shown = {e["recipient"]: sorted(e["hand"]) for e in rig.events
                 if e["kind"] == "hand_revealed"}
        assert shown == {"box 2": ["Ah", "Qh"], "box 1": ["Kc", "Kd"]}
    finally:
        rig.stop()
