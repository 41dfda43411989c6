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

from table_helpers import DEVICES, draw, kinds, ready, settlement, table

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
    with pytest.raises(RuleError, match='no interpretation "shared_box_decision"'):
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


# --- the seated player marked when his bet is placed (place_bet seated=true) ----------------------

def placed(t, *bets):
    """Bets ``(player, wager, amount[, seated])`` on box 2, in that order."""
    for player, wager, amount, *seated in bets:
        t.command("place_bet", box=2, wager=wager, amount=amount, player=player,
                  **({"seated": seated[0]} if seated else {}))


def test_a_backer_who_bets_first_leaves_the_decision_to_the_player_marked_seated():
    """89/2004 art. 6(1), 6(3), 9(2), Q2: bo backs box 2 and places his bet first; ana sits
    there with only the pair bonus and is marked seated with it. She alone decides, the
    backer is refused, and the round document marks her, not the first to decide."""
    t = table("q-poker", interpretations=SEATED)
    placed(t, ("bo", "versus_croupier", 20), ("ana", "pair_bonus", 10, True))
    assert t.public_view()["round"]["seated"] == [{"box": 2, "player": "ana"}]
    draw(t, *DEAL)
    assert t.public_view()["round"]["pending_decisions"] == [{"box": 2, "player": "ana"}]
    before = len(t.outbox)
    with pytest.raises(TablectlError) as refused:
        t.command("decide", box=2, decision="play", player="bo")
    message = str(refused.value)
    assert "bo backs box 2" in message and "ana" in message and "seated" in message
    assert "shared_box_decision=seated_player" in message
    assert 'player "ana"' in message                          # the way out
    unchanged(t, before)
    with pytest.raises(TablectlError, match='player "ana"'):
        t.command("decide", box=2, decision="play")           # no bet of the box's own
    unchanged(t, before)
    t.command("decide", box=2, decision="fold", player="ana")
    assert t.state == "settlement"
    assert by_player(t) == {("ana", "pair_bonus"): 10,        # art. 10(5): a pair, 1 to 1
                            ("bo", "versus_croupier"): -10}   # art. 9(3): her fold, half lost
    doc = settle_doc.build("q-poker", t)
    assert doc["boxes"][0]["players"] == [          # in the order the bets were placed
        {"player": "bo", "versus_croupier": 20},
        {"player": "ana", "pair_bonus": 10, "decision": "fold", "seated": True}]
    assert get_game("q-poker").settle(doc).to_json()["wagers"] == settlement(t)["wagers"]


def test_the_mark_on_a_box_without_a_bet_versus_the_croupier_goes_in_the_round_document():
    t = table("q-poker", interpretations=SEATED)
    placed(t, ("bo", "pair_bonus", 20), ("ana", "pair_bonus", 10, True))
    t.command("place_bet", box=4, wager="versus_croupier", amount=10)
    draw(t, "9s", "Ah", "Kc", "9d", "Ad", "7d", "5h", "3c", "2s")
    assert t._pending_decisions() == [{"box": 4, "player": None}]
    t.command("decide", box=4, decision="play")
    players = settle_doc.build("q-poker", t)["boxes"][0]["players"]
    assert players == [{"player": "bo", "pair_bonus": 20},
                       {"player": "ana", "pair_bonus": 10, "seated": True}]


def test_the_same_seated_player_marked_again_is_taken_and_another_is_refused():
    t = table("q-poker", interpretations=SEATED)
    placed(t, ("ana", "pair_bonus", 10, True), ("ana", "versus_croupier", 10, True),
           ("ana", "versus_croupier", 10), ("bo", "versus_croupier", 20))
    before, bets = len(t.outbox), dict(t.round.bets)
    with pytest.raises(TablectlError) as refused:
        t.command("place_bet", box=2, wager="versus_croupier", amount=20, player="bo",
                  seated=True)
    message = str(refused.value)
    assert "ana is marked seated at box 2" in message and "89/2004 art. 6(3)" in message
    assert "without seated" in message and "remove_bet" in message     # the ways out
    assert t.round.bets == bets and len(t.outbox) == before
    assert t.public_view()["round"]["seated"] == [{"box": 2, "player": "ana"}]
    # a seated player is marked at each box: cy sits at box 4
    t.command("place_bet", box=4, wager="versus_croupier", amount=10, player="cy", seated=True)
    assert t.public_view()["round"]["seated"] == [{"box": 2, "player": "ana"},
                                                 {"box": 4, "player": "cy"}]


def test_seated_false_is_no_mark():
    t = table("q-poker", interpretations=SEATED)
    placed(t, ("bo", "versus_croupier", 20, False))
    assert t.public_view()["round"]["seated"] == []


@pytest.mark.parametrize("game, interpretations, match", [
    ("fortune-3-card-poker", None, r"Fortune 3 Card Poker has no shared box"),
    ("super-pan-9", None, r"Super Pan 9 has no shared box"),
    ("q-poker", None, r"shared_box_decision=per_player: each player decides for his own bet"),
])
def test_seated_is_refused_where_no_seated_player_decides(game, interpretations, match):
    t = table(game, interpretations=interpretations)
    if game == "super-pan-9":
        t.command("set_banker", seat=1, capital=100)
    wager = {"q-poker": "versus_croupier", "fortune-3-card-poker": "ante",
             "super-pan-9": "seat"}[game]
    before = len(t.outbox)
    with pytest.raises(TablectlError, match=match) as refused:
        t.command("place_bet", box=2, wager=wager, amount=10, player="ana", seated=True)
    assert "leave seated out" in str(refused.value)
    assert not t.round.bets and len(t.outbox) == before


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_seated_must_be_true_or_false(value):
    t = table("q-poker", interpretations=SEATED)
    with pytest.raises(TablectlError, match=r"seated must be true or false"):
        t.command("place_bet", box=2, wager="pair_bonus", amount=10, player="ana", seated=value)
    assert not t.round.bets


def test_the_box_own_bets_make_their_player_the_seated_one_so_a_named_mark_is_refused():
    """Q2: a bet without a name is the box's own, its player sits there. A named player marked
    seated beside it would be a second seated player; a bet without a name beside a named
    one marked would be a second player of the box's own. Both refused, nothing changed. The
    box's own player may be marked (it is what his bets without a name already say)."""
    t = table("q-poker", interpretations=SEATED)
    placed(t, (None, "pair_bonus", 10), ("bo", "versus_croupier", 20))
    before, bets = len(t.outbox), dict(t.round.bets)
    with pytest.raises(TablectlError) as refused:
        t.command("place_bet", box=2, wager="versus_croupier", amount=10, player="ana",
                  seated=True)
    message = str(refused.value)
    assert "box 2 holds bets without a player's name" in message
    assert "leave player out" in message and "remove_bet" in message
    assert t.round.bets == bets and len(t.outbox) == before
    t.command("place_bet", box=2, wager="versus_croupier", amount=10, seated=True)
    assert t.public_view()["round"]["seated"] == [{"box": 2, "player": None}]

    t.command("place_bet", box=4, wager="pair_bonus", amount=10, player="cy", seated=True)
    before, bets = len(t.outbox), dict(t.round.bets)
    with pytest.raises(TablectlError) as refused:
        t.command("place_bet", box=4, wager="versus_croupier", amount=10)
    message = str(refused.value)
    assert "cy is marked seated at box 4" in message and 'player "cy"' in message
    assert t.round.bets == bets and len(t.outbox) == before


def test_removing_the_seated_players_last_bet_clears_the_mark():
    t = table("q-poker", interpretations=SEATED)
    placed(t, ("ana", "pair_bonus", 10, True), ("ana", "versus_croupier", 10),
           ("bo", "versus_croupier", 20))
    t.command("remove_bet", box=2, wager="pair_bonus", player="ana")
    assert t.public_view()["round"]["seated"] == [{"box": 2, "player": "ana"}]
    t.command("remove_bet", box=2, wager="versus_croupier", player="ana")
    assert t.public_view()["round"]["seated"] == []
    t.command("place_bet", box=2, wager="pair_bonus", amount=10, player="bo", seated=True)
    t.command("place_bet", box=2, wager="pair_bonus", amount=10, player="ana")
    draw(t, *DEAL)
    assert t._pending_decisions() == [{"box": 2, "player": "bo"}]


def test_the_mark_is_the_rounds_own():
    t = table("q-poker", interpretations=SEATED)
    placed(t, ("bo", "versus_croupier", 20), ("ana", "pair_bonus", 10, True))
    draw(t, *DEAL)
    t.command("decide", box=2, decision="play", player="ana")
    t.command("confirm_result")
    t.command("next_round")
    ready(t)
    assert t.state == "bets_open" and t.public_view()["round"]["seated"] == []
    placed(t, ("bo", "versus_croupier", 20), ("ana", "pair_bonus", 10))
    draw(t, *DEAL)
    assert t._pending_decisions() == [{"box": 2, "player": p} for p in ("ana", "bo")]


def test_the_mark_stands_after_a_restart_and_a_journal_without_it_replays_as_before(tmp_path):
    """The mark is journaled with its place_bet; the table rebuilt from the journal alone
    (TableRunner.recover, as the restarted daemon does) takes it again. Bets journaled without
    the key (before it existed) replay as they were taken."""
    runner, journal = _runner(tmp_path / "j.db")
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=2, wager="versus_croupier", amount=20, player="bo")
    runner.command("place_bet", box=2, wager="pair_bonus", amount=10, player="ana", seated=True)
    runner.command("place_bet", box=4, wager="versus_croupier", amount=10, player="cy")
    bets = [r.payload for r in journal.records(kinds=["command"])
            if r.payload.get("name") == "place_bet"]
    assert [b["args"].get("seated") for b in bets] == [None, True, None]
    journal.close()                                     # the daemon stops here

    runner, journal = _runner(tmp_path / "j.db")
    runner.recover()
    t = runner.table
    assert t.state == "bets_open"
    assert t.public_view()["round"]["seated"] == [{"box": 2, "player": "ana"}]
    for c in ("9s", "Ah", "Kc", "9d", "Ad", "7d", "5h", "3c", "2s"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
    assert t._pending_decisions() == [{"box": 2, "player": "ana"}, {"box": 4, "player": "cy"}]
    with pytest.raises(TablectlError, match="bo backs box 2"):
        runner.command("decide", box=2, decision="play", player="bo")
    runner.command("decide", box=2, decision="fold", player="ana")
    runner.command("decide", box=4, decision="play", player="cy")
    nets = {(w["player"], w["wager"]): w["net"] for w in t.round.settlement["wagers"]}
    assert nets[("bo", "versus_croupier")] == -10                  # art. 9(3): ana folded
    journal.close()


# --- through the console API --------------------------------------------------------------------

def test_the_api_takes_seated_with_the_bet_and_refuses_it_by_name(tmp_path):
    """``seated`` is a boolean of place_bet in the API's schema; the table's refusals are 409
    naming the problem and the way out, a parameter of no command is 400."""
    from controller.api import create_app
    from test_api_support import api_config, auth, client

    runner, journal = _runner(tmp_path / "j.db")
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")

    async def check(c):
        post = lambda name, body: c.post(f"/api/commands/{name}", headers=auth("dealer"),
                                         json=body)
        out = []
        for name, body in (
                ("place_bet", {"box": 2, "wager": "versus_croupier", "amount": 20,
                               "player": "bo"}),
                ("place_bet", {"box": 2, "wager": "pair_bonus", "amount": 10, "player": "ana",
                               "seated": True}),
                ("place_bet", {"box": 2, "wager": "pair_bonus", "amount": 10, "player": "bo",
                               "seated": True}),
                ("place_bet", {"box": 3, "wager": "pair_bonus", "amount": 10, "player": "cy",
                               "seated": "yes"}),
                ("remove_bet", {"box": 2, "wager": "pair_bonus", "player": "ana",
                                "seated": True})):
            r = await post(name, body)
            out.append((r.status, await r.json()))
        whoami = await (await c.get("/api/whoami", headers=auth("dealer"))).json()
        doc = await (await c.get("/api/table", headers=auth("display"))).json()
        return out, whoami, doc

    out, whoami, doc = client(create_app(runner, api_config()), check)
    assert [s for s, _ in out] == [200, 200, 409, 409, 400]
    assert out[1][1]["view"]["round"]["seated"] == [{"box": 2, "player": "ana"}]
    assert "ana is marked seated at box 2" in out[2][1]["error"]["message"]
    assert "without seated" in out[2][1]["error"]["message"]
    assert "seated must be true or false" in out[3][1]["error"]["message"]
    assert out[4][1]["error"]["message"] == (
        "remove_bet takes box, wager, player; unexpected seated")
    place = next(cmd for cmd in whoami["commands"] if cmd["name"] == "place_bet")
    assert place["params"] == ["box", "wager", "amount", "player", "seated"]
    assert place["schema"]["properties"]["seated"]["type"] == "boolean"
    assert "seated" not in place["schema"]["required"]
    # the console shows the seated tick box only where the table's reading takes it
    assert doc["game"]["interpretations"]["shared_box_decision"] == "seated_player"
    assert doc["view"]["round"]["seated"] == [{"box": 2, "player": "ana"}]
    journal.close()


@pytest.mark.hil
def test_the_seated_mark_stands_when_the_real_daemon_is_killed_and_started_again(tmp_path):
    """The mark is journaled with its bet over the control socket; the daemon killed in
    bets_open and started again replays it, and the backer who bet first is still refused."""
    rig = Rig(tmp_path, "q-poker", "shuffler", seed=7, interpretations=SEATED)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        rig.must("open_table", "supervisor")
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"
        rig.must("place_bet", box=3, wager="versus_croupier", amount=20, player="bo")
        rig.must("place_bet", box=3, wager="pair_bonus", amount=10, player="ana", seated=True)
        refused = rig.command("place_bet", box=3, wager="pair_bonus", amount=10, player="bo",
                              seated=True)
        assert refused["ok"] is False and "ana is marked seated at box 3" in refused["error"]
        rig.kill()
        rig.start_controller()
        rig.wait_links()
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"
        assert rig.view()["round"]["seated"] == [{"box": 3, "player": "ana"}]
        rig.must("close_bets")
        assert rig.wait_state("player_decisions", timeout=20) == "player_decisions"
        assert rig.view()["round"]["pending_decisions"] == [{"box": 3, "player": "ana"}]
        refused = rig.command("decide", box=3, decision="play", player="bo")
        assert refused["ok"] is False and "bo backs box 3" in refused["error"]
        mark = rig.mark()
        rig.must("decide", box=3, decision="fold", player="ana")
        done = rig.wait_event(lambda e: e["kind"] == "settlement", since=mark)
        versus = [(w["player"], w["net"]) for w in done["wagers"]
                  if w["wager"] == "versus_croupier"]
        assert versus == [("bo", -10)]                   # art. 9(3): ana folded
    finally:
        rig.stop()
