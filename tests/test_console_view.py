"""What the console's forms read from the public view, through the API (`GET /api/table`).

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
from controller.table.runner import TableRunner

from test_api_support import DEVICES, LAYOUT, TOKENS, api_config, auth, client


def runner(path, game="super-pan-9", capital=None):
    table = Table("T1", get_game(game), "shoe", layout_boxes=LAYOUT[game], devices=DEVICES,
                  house_co_bank_capital=capital)
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
    run.command("next_round")
    run.command("deck_ready")
    assert {v["house_co_bank_capital"] for v in views(run).values()} == {800}
    run.journal.close()
