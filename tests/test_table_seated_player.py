"""Q Poker's reading Q2 ``shared_box_decision=seated_player`` (89/2004 art. 6(1), 9(2)) at the
table: the player seated at a box decides play or fold for every bet versus the croupier on it,
whatever his own bets, a backer's decision is refused, and the table's round document is read
by the rules as the table read the decision. Fortune 3 Card Poker has no such reading (78/2008
art. 6(2): a player bets only on his own box); there a decision from a player without an Ante
of his own is refused and the table goes on.

Expected amounts are worked out by hand from the articles cited beside them.
"""
import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.rig import Rig
from controller.rules import RuleError, get_game
from controller.rules.cards import Card
from controller.table import Table, settle_doc
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, draw, kinds, settlement, table

SEATED = {"shared_box_decision": "seated_player"}
# Box 2: a pair of nines; the croupier: king high, which qualifies (art. 9(4)) and is beaten.
DEAL = ("9s", "Kc", "9d", "7d", "5h", "2s")     # art. 7(1): box 2, croupier, three times


def by_player(t) -> dict[tuple[str, str], int]:
    return {(w["player"], w["wager"]): w["net"] for w in settlement(t)["wagers"]}


def dealt(interpretations=SEATED, **bets):
    """A Q Poker table with the bets ``player=(wager, amount), ...`` on box 2 (the player
    ``box`` places the box's own bets, without a name), dealt to the decisions."""
    t = table("q-poker", interpretations=interpretations)
    for player, placed in bets.items():
        for wager, amount in placed:
            t.command("place_bet", box=2, wager=wager, amount=amount,
                      player=None if player == "box" else player)
    draw(t, *DEAL)
    assert t.state == "player_decisions"
    return t


def unchanged(t, before: int) -> None:
    assert t.state == "player_decisions" and not t.round.decisions
    assert "decision" not in kinds(t)[before:]
    assert not [k for k in t.round.bets if k.wager == "play"]


# --- Q Poker, the seated player's bets carry no name (the box's own) ---------------------------

def test_the_seated_player_with_only_the_pair_bonus_decides_for_the_whole_box():
    t = dealt(box=[("pair_bonus", 10)], bo=[("versus_croupier", 20)],
              cy=[("versus_croupier", 10)])
    opened = [e.data["pending"] for e in t.outbox if e.kind == "decisions_open"]
    assert opened == [[{"box": 2, "player": None}]]      # the one decision the box waits for
    t.command("decide", box=2, decision="fold")
    assert t.state == "settlement"
    assert by_player(t) == {
        ("box 2", "pair_bonus"): 10,        # art. 10(5): a pair pays 1 to 1
        ("bo", "versus_croupier"): -10,     # art. 9(3): his fold loses half of each bet
        ("cy", "versus_croupier"): -5,
    }


def test_his_play_binds_the_backers_and_the_rules_read_the_tables_document_alike():
    t = dealt(box=[("pair_bonus", 10)], bo=[("versus_croupier", 20)])
    t.command("decide", box=2, decision="play")
    assert by_player(t) == {("box 2", "pair_bonus"): 10,
                            ("bo", "versus_croupier"): 20}    # art. 9(7)(4): a pair, 1 to 1
    doc = settle_doc.build("q-poker", t)
    assert doc["boxes"][0]["players"] == [
        {"player": "box 2", "pair_bonus": 10, "decision": "play", "seated": True},
        {"player": "bo", "versus_croupier": 20}]
    # `tablectl rules settle` settles the document as the table did
    ruled = get_game("q-poker").settle(doc).to_json()
    assert ruled["wagers"] == settlement(t)["wagers"]


def test_a_backers_decision_is_refused_naming_the_reading_and_changes_nothing():
    t = dealt(box=[("pair_bonus", 10)], bo=[("versus_croupier", 20)])
    before = len(t.outbox)
    with pytest.raises(TablectlError) as refused:
        t.command("decide", box=2, decision="play", player="bo")
    message = str(refused.value)
    assert "bo backs box 2" in message
    assert "shared_box_decision=seated_player" in message and "89/2004 art. 9(2)" in message
    assert "without a player" in message                       # the way out
    unchanged(t, before)
    t.command("decide", box=2, decision="fold")                # the seated player's, taken
    assert by_player(t)[("bo", "versus_croupier")] == -10


def test_the_seated_players_own_bet_versus_the_croupier_is_bound_too():
    t = dealt(box=[("versus_croupier", 10)], bo=[("versus_croupier", 20)])
    with pytest.raises(TablectlError, match="bo backs box 2"):
        t.command("decide", box=2, decision="fold", player="bo")
    t.command("decide", box=2, decision="fold")
    assert by_player(t) == {("box 2", "versus_croupier"): -5, ("bo", "versus_croupier"): -10}


# --- Q Poker, every bet on the box named --------------------------------------------------------

def test_every_bet_named_the_first_to_decide_is_the_seated_one_even_with_only_the_pair_bonus():
    t = dealt(ana=[("pair_bonus", 10)], bo=[("versus_croupier", 20)])
    t.command("decide", box=2, decision="play", player="ana")
    assert t.state == "settlement"
    assert by_player(t) == {("ana", "pair_bonus"): 10, ("bo", "versus_croupier"): 20}
    players = settle_doc.build("q-poker", t)["boxes"][0]["players"]
    assert players[0] == {"player": "ana", "pair_bonus": 10, "decision": "play", "seated": True}


def test_every_bet_named_a_second_decision_for_the_box_is_refused():
    t = table("q-poker", interpretations=SEATED)
    for player, wager, amount in (("ana", "pair_bonus", 10), ("bo", "versus_croupier", 20),
                                  ("cy", "versus_croupier", 10)):
        t.command("place_bet", box=2, wager=wager, amount=amount, player=player)
    t.command("place_bet", box=4, wager="versus_croupier", amount=10)
    draw(t, "9s", "Ah", "Kc", "9d", "Ad", "7d", "5h", "3c", "2s")   # box 4: a pair of aces
    # nothing else on box 2 tells who sits there: any of its players may be the one
    assert t._pending_decisions() == [{"box": 2, "player": p} for p in ("ana", "bo", "cy")] \
        + [{"box": 4, "player": None}]
    t.command("decide", box=2, decision="fold", player="ana")
    assert t._pending_decisions() == [{"box": 4, "player": None}]
    for player in ("bo", "ana"):
        with pytest.raises(TablectlError, match=r"box 2 already decided fold \(ana\): the "
                           "seated player's decision binds the box"):
            t.command("decide", box=2, decision="play", player=player)
    assert list(t.round.decisions) == [(2, "ana")]
    t.command("decide", box=4, decision="play")
    assert by_player(t) == {("ana", "pair_bonus"): 10, ("bo", "versus_croupier"): -10,
                            ("cy", "versus_croupier"): -5,
                            (None, "versus_croupier"): 10}      # art. 9(7)(4): a pair, 1 to 1


def test_a_player_with_no_bet_on_the_box_cannot_decide_for_it():
    t = dealt(ana=[("pair_bonus", 10)], bo=[("versus_croupier", 20)])
    before = len(t.outbox)
    with pytest.raises(TablectlError) as refused:
        t.command("decide", box=2, decision="play", player="zed")
    assert "zed has no bet on box 2" in str(refused.value)
    assert "ana, bo" in str(refused.value)                     # who may give it
    unchanged(t, before)
    with pytest.raises(TablectlError, match="give the name of the player seated at it"):
        t.command("decide", box=2, decision="play")            # no bet of the box's own
    unchanged(t, before)


def test_a_box_with_no_bet_versus_the_croupier_has_nothing_to_decide():
    t = table("q-poker", interpretations=SEATED)
    t.command("place_bet", box=2, wager="pair_bonus", amount=10)
    t.command("place_bet", box=4, wager="versus_croupier", amount=10, player="ana")
    draw(t, "9s", "Ah", "Kc", "9d", "Ad", "7d", "5h", "3c", "2s")
    before = len(t.outbox)
    with pytest.raises(TablectlError, match="nothing to decide"):
        t.command("decide", box=2, decision="play")
    unchanged(t, before)


def test_per_player_still_takes_decisions_only_from_bets_versus_the_croupier():
    t = dealt(interpretations={}, box=[("pair_bonus", 10)], bo=[("versus_croupier", 20)])
    with pytest.raises(TablectlError, match="nothing to decide"):
        t.command("decide", box=2, decision="fold")
    t.command("decide", box=2, decision="play", player="bo")
    assert by_player(t) == {("box 2", "pair_bonus"): 10, ("bo", "versus_croupier"): 20}


def _runner(path):
    journal = Journal.open(path, "T1")
    t = Table("T1", get_game("q-poker"), "shoe", layout_boxes=7, devices=DEVICES,
              interpretations=SEATED)
    return TableRunner(t, journal), journal


def test_the_seated_players_decision_stands_after_a_restart(tmp_path):
    """The decision is journaled with its command; the table rebuilt from the journal alone
    (the restarted daemon's ``TableRunner.recover``) holds it and still refuses the backer."""
    runner, journal = _runner(tmp_path / "j.db")
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=2, wager="pair_bonus", amount=10)
    runner.command("place_bet", box=2, wager="versus_croupier", amount=20, player="bo")
    runner.command("place_bet", box=4, wager="versus_croupier", amount=10)
    for c in ("9s", "Ah", "Kc", "9d", "Ad", "7d", "5h", "3c", "2s"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
    runner.command("decide", box=2, decision="fold")
    journal.close()                                     # the daemon stops here

    runner, journal = _runner(tmp_path / "j.db")
    runner.recover()
    t = runner.table
    assert t.state == "player_decisions" and t.round.decisions == {(2, None): "fold"}
    with pytest.raises(TablectlError, match="binds the box"):
        runner.command("decide", box=2, decision="play", player="bo")
    runner.command("decide", box=4, decision="play")
    assert t.state == "settlement"
    nets = {(w["player"], w["wager"]): w["net"] for w in t.round.settlement["wagers"]}
    assert nets[("bo", "versus_croupier")] == -10                  # art. 9(3): box 2 folded
    journal.close()


# --- Fortune 3 Card Poker (78/2008) -------------------------------------------------------------

def test_fortune_has_no_shared_box_reading():
    with pytest.raises(RuleError, match="no interpretation 'shared_box_decision'"):
        table("fortune-3-card-poker", interpretations=SEATED)


def test_fortune_a_decider_without_an_ante_of_his_own_is_refused_and_the_table_goes_on():
    t = table("fortune-3-card-poker")
    t.command("place_bet", box=2, wager="ante", amount=10, player="ana")
    t.command("place_bet", box=4, wager="pair_plus", amount=5, player="bo")
    draw(t, "9s", "2c", "Kc", "9d", "3c", "7d", "5h", "8h", "2s")
    assert t.state == "player_decisions"
    before = len(t.outbox)
    for box, player in ((4, "bo"), (2, "bo"), (2, None)):
        with pytest.raises(TablectlError, match="has no ante bet in play, so nothing to decide"):
            t.command("decide", box=box, decision="play", player=player)
        unchanged(t, before)
    t.command("decide", box=2, decision="play", player="ana")
    assert t.round.bets[next(k for k in t.round.bets if k.wager == "play")] == 10  # art. 9(4)
    assert t.state == "settlement"


# --- through the real daemon and its control socket --------------------------------------------

@pytest.mark.hil
def test_the_seated_player_decides_for_his_box_through_the_real_daemon(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shuffler", seed=7, interpretations=SEATED)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"   # the shuffle done
        rig.must("place_bet", box=3, wager="pair_bonus", amount=10)
        rig.must("place_bet", box=3, wager="versus_croupier", amount=20, player="bo")
        rig.must("close_bets")
        assert rig.wait_state("player_decisions", timeout=20) == "player_decisions"
        refused = rig.command("decide", box=3, decision="play", player="bo")
        assert refused["ok"] is False
        assert "bo backs box 3" in refused["error"]
        assert "shared_box_decision=seated_player" in refused["error"]
        assert rig.view()["round"]["decisions"] == []
        mark = rig.mark()
        rig.must("decide", box=3, decision="fold")
        done = rig.wait_event(lambda e: e["kind"] == "settlement", since=mark)
        versus = [(w["player"], w["net"]) for w in done["wagers"]
                  if w["wager"] == "versus_croupier"]
        assert versus == [("bo", -10)]                   # art. 9(3): the box folded
    finally:
        rig.stop()
