"""What the console's forms read from the public view, through the API (`GET /api/table`).

Q Poker's play/fold buttons: the view lists who may give each decision still owed
(`view.round.pending_decisions`), as the table takes it. Under `shared_box_decision =
"seated_player"` (89/2004 art. 6(1), 9(2); docs/interpretations.md Q2) that is the box's seated
player alone, also when his own bet is only the pair bonus, and never a backer; under
`per_player` each player with an undecided bet versus the croupier.

Super Pan 9's house co-banks with a capital "previamente determinado" (261/96/M art. 5(5)),
which the table's configuration may set (`[pan9] house_co_bank_capital`): the view gives the
one in force, so the page can fill the house's co-bank with it. It is configuration, not a
secret: every role sees it.
"""
from __future__ import annotations

from controller.api import create_app
from controller.journal import Journal
from controller.rules import get_game
from controller.table import Table
from controller.rules.cards import Card
from controller.table.runner import TableRunner
from drivers import events as ev

from test_api_support import DEVICES, LAYOUT, TOKENS, api_config, auth, client


def runner(path, game="super-pan-9", capital=None, interpretations=None):
    table = Table("T1", get_game(game), "shoe", layout_boxes=LAYOUT[game], devices=DEVICES,
                  house_co_bank_capital=capital, interpretations=interpretations)
    return TableRunner(table, Journal.open(path, "T1"))


def views(run):
    """The view each role gets from ``GET /api/table``."""
    async def check(c):
        out = {}
        for role in TOKENS:
            r = await c.get("/api/table", headers=auth(role))
            assert r.status == 200
            out[role] = (await r.json())["view"]
        return out
    return client(create_app(run, api_config()), check)


def open_round(run):
    run.command("open_table", role="supervisor")
    run.command("deck_ready")


def test_the_view_gives_every_role_the_house_co_bank_capital_the_configuration_sets(tmp_path):
    run = runner(tmp_path / "j.db", capital=500)
    assert {role: v["house_co_bank_capital"] for role, v in views(run).items()} == {
        "display": 500, "dealer": 500, "supervisor": 500}          # before a round, too
    open_round(run)
    run.command("set_banker", seat=1, capital=100)
    assert {v["house_co_bank_capital"] for v in views(run).values()} == {500}
    run.journal.close()


def test_without_one_configured_and_at_a_table_with_no_bank_it_is_null(tmp_path):
    for game in ("super-pan-9", "q-poker", "texas-holdem"):
        run = runner(tmp_path / f"{game}.db", game)
        open_round(run)
        got = views(run)
        assert all("house_co_bank_capital" in v for v in got.values()), game
        assert {v["house_co_bank_capital"] for v in got.values()} == {None}, game
        run.journal.close()


def test_after_a_restart_with_another_capital_the_view_gives_the_one_the_round_opened_with(
        tmp_path):
    """The round in play keeps the capital it opened with (the table refuses any other for
    it), so the view, which the page fills the form from, says that one; the next round
    takes the one configured now."""
    run = runner(tmp_path / "j.db", capital=500)
    open_round(run)
    run.command("set_banker", seat=1, capital=100)
    run.journal.close()                         # the process dies here
    run = runner(tmp_path / "j.db", capital=800)
    run.recover()
    assert run.table.state == "bets_open"
    assert {v["house_co_bank_capital"] for v in views(run).values()} == {500}
    run.command("co_bank", house=True, capital=500)     # the amount shown is the one taken
    run.command("void_round", role="supervisor", reason="the house changes its co-bank")
    for cls in ("shoe", "dice"):        # the next round waits for its devices to link
        run.device(ev.LinkUp(device=cls, ts=0.0, identity=ev.DeviceIdentity(
            cls, "sim", "M1", "0001", "1.0", "ab" * 16, cls == "shoe")))
    run.command("next_round")
    run.command("deck_ready")
    assert {v["house_co_bank_capital"] for v in views(run).values()} == {800}
    run.journal.close()


# --- who may decide play or fold (Q Poker, 89/2004 art. 9(2); Q2) ------------------------------

# art. 7(1): one card at a time to box 2, box 4 and the croupier, three times; box 2 a pair of
# nines, box 4 a pair of aces, the croupier king high (it qualifies, art. 9(4))
DEAL = ("9s", "Ah", "Kc", "9d", "Ad", "7d", "5h", "3c", "2s")


def dealt_q_poker(path, interpretations, bets):
    """A Q Poker round with ``bets`` (box, wager, amount, player) dealt to the decisions."""
    run = runner(path, "q-poker", interpretations=interpretations)
    open_round(run)
    for box, wager, amount, player in bets:
        run.command("place_bet", box=box, wager=wager, amount=amount, player=player)
    assert pending(run) == []                   # bets open: nothing to decide yet
    for c in DEAL:
        run.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
    assert run.table.state == "player_decisions"
    return run


def pending(run):
    """The decisions every role is shown as owed, as (box, player): each role sees the same."""
    got = [v["round"]["pending_decisions"] for v in views(run).values()]
    assert all(g == got[0] for g in got)
    assert all(set(d) == {"box", "player"} for d in got[0])    # no card, nothing else
    return [(d["box"], d["player"]) for d in got[0]]


SHARED_BOX = [(2, "pair_bonus", 10, None),           # the seated player: only the pair bonus
              (2, "versus_croupier", 20, "bo"),      # a backer's bet versus the croupier
              (2, "versus_croupier", 10, "cy"),
              (4, "versus_croupier", 10, None)]


def test_under_seated_player_the_view_names_the_seated_player_alone_for_his_box(tmp_path):
    run = dealt_q_poker(tmp_path / "j.db", {"shared_box_decision": "seated_player"},
                        SHARED_BOX)
    # the page drew a pair for bo and for cy, whose decisions the table refuses, and none for
    # the seated player, whose decision it takes
    assert pending(run) == [(2, None), (4, None)]
    run.command("decide", box=2, decision="fold")
    assert pending(run) == [(4, None)]
    run.command("decide", box=4, decision="play")
    assert run.table.state == "settlement" and pending(run) == []
    run.journal.close()


def test_under_per_player_the_view_names_each_undecided_bettor_versus_the_croupier(tmp_path):
    run = dealt_q_poker(tmp_path / "j.db", None, SHARED_BOX)
    assert pending(run) == [(2, "bo"), (2, "cy"), (4, None)]
    run.command("decide", box=2, decision="play", player="bo")
    assert pending(run) == [(2, "cy"), (4, None)]
    run.command("decide", box=2, decision="fold", player="cy")
    run.command("decide", box=4, decision="play")
    assert run.table.state == "settlement" and pending(run) == []
    run.journal.close()
