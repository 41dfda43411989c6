"""Q Poker and Fortune 3 Card Poker through the real daemon (`tablectl run` with the simulated
shoe over a pseudo-terminal): the controller killed at each phase of a round and started again
rebuilds the round exactly from its journal, the croupier's cards never leave it before his
hand is opened (event stream, view, log), and a card the shoe reads twice in the players'
hands voids the round before anyone decides."""
import re
import signal

import pytest

from controller.journal import Journal
from controller.rig import Rig
from controller.rules.cards import Card

pytestmark = pytest.mark.hil

# Boxes 1 and 3 bet: box 1, box 3, the croupier, three times (89/2004 and 78/2008 art. 7(1)).
ROUND = ["As", "2d", "Qh", "Ad", "5c", "8s", "Kd", "9c", "3h"]
CROUPIER = ("Qh", "8s", "3h")                   # Q-high: he qualifies (art. 9(4), 9(5))
WAGERS = {"q-poker": ("versus_croupier", "pair_bonus"), "fortune-3-card-poker": ("ante",
                                                                                "pair_plus")}


def full_deck(first):
    return first + [str(c) for c in (Card.from_code(i) for i in range(52))
                    if str(c) not in first]


def _shown(text):
    return [c for c in CROUPIER if re.search(rf"\b{c}\b", text)]


def _open(rig, game, cards):
    rig.open_with_deck(cards)
    main, side = WAGERS[game]
    rig.must("place_bet", box=1, wager=main, amount=10)
    rig.must("place_bet", box=1, wager=side, amount=10)
    rig.must("place_bet", box=3, wager=main, amount=20)


def _draw(rig, n):
    for _ in range(n):
        mark = rig.mark()
        rig.devices["shoe"].draw()
        rig.wait_event(lambda e: e["kind"] in ("card", "ruling"), since=mark)


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker"])
def test_a_restart_at_each_phase_rebuilds_the_round_and_keeps_the_croupiers_cards(tmp_path,
                                                                                  game):
    rig = Rig(tmp_path, game, "shoe", seed=8)
    try:
        _open(rig, game, full_deck(ROUND))

        def restart():
            before = rig.view()
            rig.kill(signal.SIGKILL)
            rig.start_controller()
            rig.wait_links()
            assert rig.view() == before

        restart()                                   # bets open, the bets on the layout
        _draw(rig, 9)
        rig.wait_state("player_decisions")
        restart()                                   # the hands open, nobody has decided
        rig.must("decide", box=1, decision="fold")
        again = rig.command("decide", box=1, decision="play")
        assert not again["ok"] and "irrevocable" in again["error"]      # art. 9(3)
        assert _shown(again["error"]) == []
        early = rig.command("decide", box=2, decision="play")           # no bet on box 2
        assert not early["ok"] and _shown(early["error"]) == []
        restart()                                   # one decision made
        assert rig.view()["round"]["pending_decisions"] == [{"box": 3, "player": None}]
        text = repr(rig.events) + repr(rig.view()) + rig.log_path.read_text()
        assert _shown(text) == [], "a croupier's card left the controller before its reveal"
        rig.must("decide", box=3, decision="play")
        settled = rig.wait_event(lambda e: e["kind"] == "settlement")
        restart()                                   # settled, not yet confirmed
        nets = {(w["box"], w["wager"]): w["net"] for w in settled["wagers"]}
        rig.must("confirm_result")
    finally:
        rig.stop()
    main, side = WAGERS[game]
    # Box 1, A A K, wins its pair bonus 1 to 1 (89/2004 art. 10(5), 78/2008 art. 10(5)) and
    # folds: half its bet lost (89/2004 art. 9(3)), its Ante lost (78/2008 art. 9(3)). Box 3,
    # 9 5 2, plays and loses to the croupier's qualifying Q 8 3 (89/2004 art. 9(6), 78/2008
    # art. 9(7)).
    if game == "q-poker":
        assert nets == {(1, main): -5, (1, side): 10, (3, main): -20}
    else:
        assert nets == {(1, main): -10, (1, side): 10, (3, main): -20, (3, "play"): -20}
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        voids = [r.payload["report"]["void"] for r in j.records(kinds=["recovery"])]
        assert len(voids) >= 4 and not any(voids)


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker"])
def test_a_players_card_the_shoe_reads_twice_voids_the_round_before_the_decisions(tmp_path,
                                                                                  game):
    # Box 3's second card read as box 1's first (one deck, art. 1(1)): the shoe's failure
    # while dealing, ruled at the opening (89/2004 art. 11(5) Q5, 78/2008 art. 11(4) F7).
    cards = ROUND[:4] + ["As"] + ROUND[5:]
    rig = Rig(tmp_path, game, "shoe", seed=9)
    try:
        _open(rig, game, cards + [c for c in full_deck([]) if c not in cards][:30])
        _draw(rig, 9)
        void = rig.wait_event(lambda e: e["kind"] == "round_void")
        ruling = [e for e in rig.events if e["kind"] == "ruling"][-1]
        assert ruling["irregularity"] == "shoe_malfunction"
        assert sorted((r["box"], r["amount"]) for r in void["returned"]) == [(1, 10), (1, 10),
                                                                            (3, 20)]
        kinds = [e["kind"] for e in rig.events]
        assert not {"hand_opened", "decisions_open", "hand_revealed"} & set(kinds)
        assert _shown(repr(rig.events) + repr(rig.view()) + rig.log_path.read_text()) == []
    finally:
        rig.stop()


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker"])
def test_a_restart_while_dealing_voids_the_round_and_shows_none_of_its_cards(tmp_path, game):
    # The controller's restart while dealing is ruled as the dealing device's failure then
    # (89/2004 art. 11(5), 78/2008 art. 11(4); docs/interpretations.md): the round is void,
    # every bet returned, and none of its cards, face down, is ever shown.
    rig = Rig(tmp_path, game, "shoe", seed=10)
    try:
        _open(rig, game, full_deck(ROUND))
        _draw(rig, 5)                               # box 1, box 3, the croupier, box 1, box 3
        rig.kill(signal.SIGKILL)
        rig.start_controller()
        rig.wait_links()
        assert rig.view()["round"]["void"] is not None
        assert sorted((r["box"], r["amount"]) for r in rig.view()["round"]["bets"]) == \
            [(1, 10), (1, 10), (3, 20)]
        text = repr(rig.events) + repr(rig.view()) + rig.log_path.read_text()
        assert [c for c in ROUND[:5] if re.search(rf"\b{c}\b", text)] == []
    finally:
        rig.stop()
