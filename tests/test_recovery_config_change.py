"""A configuration changed between a crash and the restart changes nothing of the round in play.

The daemon (``Service``, in this process) plays part of a round under one ``table.toml``, stops,
and starts again on the same journal under another one: a lower bet limit, another reading of
an article, fewer boxes, another game, another dealing mode. The round open at the restart is
rebuilt, ruled on and played to its end under the configuration it was played under (every
bet on the layout stays there and a void returns it), and the new configuration takes effect
from the next round, with the change journaled and reported. Device events are put on the
daemon's queue as its drivers put them.
"""
import asyncio

from controller.config import parse_text
from controller.journal import Journal
from controller.rules.cards import Card
from controller.sdnotify import Notifier
from controller.service import Service
from drivers import events as ev

TABLE = """
[table]
id = "cc-1"
game = "{game}"
mode = "{mode}"
boxes = {boxes}
{extra}
[journal]
path = "{journal}"
"""


def config(tmp_path, game="q-poker", mode="shoe", boxes=7, extra=""):
    return parse_text(TABLE.format(game=game, mode=mode, boxes=boxes, extra=extra,
                                   journal=tmp_path / "j.db"))


class Daemon:
    """One run of the service on the test's journal."""

    def __init__(self, cfg):
        self.svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        self.task = None

    async def __aenter__(self):
        self.task = asyncio.create_task(self.svc.run())
        while self.svc.runner is None or self.svc.runner.table is None:
            if self.task.done():
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0)            # recovery is done once the main loop waits
        return self

    async def __aexit__(self, *exc):
        self.svc.stop()
        await asyncio.wait_for(self.task, 30)

    @property
    def table(self):
        return self.svc.runner.table

    async def must(self, name, role="dealer", **args):
        reply = await self.svc.submit(name, role, args)
        assert reply["ok"], (name, args, reply)

    async def refused(self, name, role="dealer", **args):
        reply = await self.svc.submit(name, role, args)
        assert not reply["ok"], (name, args, reply)
        return reply["error"]

    async def device(self, event):
        done = len(list(self.journal().records(kinds=["device"])))
        self.svc.queue.put_nowait(event)
        while len(list(self.journal().records(kinds=["device"]))) == done:
            await asyncio.sleep(0.01)

    def journal(self):
        return self.svc.journal

    def bets(self):
        return sorted((b["box"], b["wager"], b["amount"])
                      for b in self.table.public_view()["round"]["bets"])


def drawn(card):
    return ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card))


def records(tmp_path, kind):
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        return [r.payload for r in j.records(kinds=[kind])]


def test_a_bet_over_a_limit_lowered_before_the_restart_stays_and_is_returned_by_the_void(
        tmp_path):
    played = config(tmp_path)
    lowered = config(tmp_path, extra="[limits]\nmax = 20\n")

    async def scenario():
        async with Daemon(played) as d:
            await d.must("open_table", "supervisor")
            await d.must("deck_ready")
            await d.must("place_bet", box=1, wager="versus_croupier", amount=50)
            await d.must("place_bet", box=3, wager="versus_croupier", amount=20)
        async with Daemon(lowered) as d:
            # The round was played with no maximum: the 50 on box 1 is on the layout.
            assert d.bets() == [(1, "versus_croupier", 50), (3, "versus_croupier", 20)]
            await d.device(drawn("As"))               # the first card: bets close, dealing
            assert d.table.state == "dealing"
        async with Daemon(lowered) as d:
            # A restart while dealing: the round is void (89/2004 art. 11(5)), every bet
            # returned, the 50 included.
            assert d.table.state == "malfunction"
            void = records(tmp_path, "round_close")[-1]
            assert void["outcome"] == "void" and void["article"] == "89/2004 art. 11(5)"
            assert sorted((b["box"], b["amount"]) for b in void["returned"]) == [(1, 50), (3, 20)]
            # The lower limit takes effect from the next round.
            await d.must("clear_malfunction", "supervisor")
            await d.must("deck_ready")
            error = await d.refused("place_bet", box=1, wager="versus_croupier", amount=50)
            assert "20" in error
            await d.must("place_bet", box=1, wager="versus_croupier", amount=20)

    asyncio.run(scenario())
    # The change was journaled and reported by the recovery that found it.
    reports = [r["report"] for r in records(tmp_path, "recovery")]
    change = reports[1]["configuration"]
    assert change["round_played_under"]["limits"] != change["now"]["limits"]
    assert change["takes_effect"] == "next_round"
    assert "limits" in change["changed"]


def test_a_declaration_another_reading_would_refuse_stands_for_the_round_in_play(tmp_path):
    """Super Pan 9 P12: under `wrap` the banker may subtract five points; `refuse` allows three
    at most. Changed between the crash and the restart, the round keeps its declaration."""
    pan9 = dict(game="super-pan-9", boxes=8)
    played = config(tmp_path, **pan9, extra='[interpretations]\nadjusted_total = "wrap"\n')
    now = config(tmp_path, **pan9, extra='[interpretations]\nadjusted_total = "refuse"\n')

    async def scenario():
        async with Daemon(played) as d:
            await d.must("open_table", "supervisor")
            await d.must("deck_ready")
            await d.must("set_banker", "supervisor", seat=1, capital=1000)
            await d.must("place_bet", box=2, wager="seat", amount=100, player="ana")
            await d.must("declare_adjust", points=-5)
        async with Daemon(now) as d:
            assert d.table.public_view()["round"]["adjust"] == -5
            assert d.bets() == [(2, "seat", 100)]
            await d.must("void_round", "supervisor", reason="the croupier stops the table")
            await d.must("next_round")
            await d.must("deck_ready")
            await d.must("set_banker", "supervisor", seat=1, capital=1000)
            await d.refused("declare_adjust", points=-5)
            await d.must("declare_adjust", points=-3)

    asyncio.run(scenario())


def test_a_bet_on_a_box_the_new_layout_no_longer_has_stays_for_the_round(tmp_path):
    played = config(tmp_path, boxes=9)
    fewer = config(tmp_path, boxes=7)

    async def scenario():
        async with Daemon(played) as d:
            await d.must("open_table", "supervisor")
            await d.must("deck_ready")
            await d.must("place_bet", box=9, wager="versus_croupier", amount=10)
            await d.must("place_bet", box=2, wager="versus_croupier", amount=10)
        async with Daemon(fewer) as d:
            assert d.bets() == [(2, "versus_croupier", 10), (9, "versus_croupier", 10)]
            await d.must("void_round", "supervisor", reason="layout changed")
            returned = records(tmp_path, "round_close")[-1]["returned"]
            assert sorted(b["box"] for b in returned) == [2, 9]
            await d.must("next_round")
            await d.must("deck_ready")
            await d.refused("place_bet", box=9, wager="versus_croupier", amount=10)

    asyncio.run(scenario())


def test_another_game_takes_the_table_from_the_next_round(tmp_path):
    """The round in play is Q Poker: it ends as Q Poker (here voided by the supervisor, its
    bets returned); the next round is Fortune 3 Card Poker."""
    played = config(tmp_path)
    other = config(tmp_path, game="fortune-3-card-poker")

    async def scenario():
        async with Daemon(played) as d:
            await d.must("open_table", "supervisor")
            await d.must("deck_ready")
            await d.must("place_bet", box=1, wager="versus_croupier", amount=10)
        async with Daemon(other) as d:
            view = d.table.public_view()
            assert view["game"] == "q-poker" and view["round"]["game"] == "q-poker"
            assert d.bets() == [(1, "versus_croupier", 10)]
            await d.must("void_round", "supervisor", reason="the table changes game")
            assert records(tmp_path, "round_close")[-1]["returned"][0]["amount"] == 10
            await d.must("next_round")
            assert d.table.public_view()["game"] == "fortune-3-card-poker"
            assert records(tmp_path, "round_open")[-1]["game"] == "fortune-3-card-poker"
            await d.must("deck_ready")
            await d.must("place_bet", box=1, wager="ante", amount=10)
            await d.refused("place_bet", box=2, wager="versus_croupier", amount=10)

    asyncio.run(scenario())


def test_another_dealing_mode_takes_the_table_from_the_next_round(tmp_path):
    """The round in play is dealt by the shoe to its end; the next is dealt by the shuffler."""
    played = config(tmp_path)
    other = config(tmp_path, mode="shuffler")

    async def scenario():
        async with Daemon(played) as d:
            await d.must("open_table", "supervisor")
            await d.must("deck_ready")
            await d.must("place_bet", box=1, wager="versus_croupier", amount=10)
        async with Daemon(other) as d:
            assert d.table.public_view()["mode"] == "shoe"
            for card in ("As", "Kd", "Qh", "2c", "3c", "4c"):
                await d.device(drawn(card))
            assert d.table.state == "player_decisions"
            await d.must("decide", box=1, decision="fold")
            await d.must("confirm_result")
            await d.must("next_round")
            assert d.table.public_view()["mode"] == "shuffler"
            assert records(tmp_path, "round_open")[-1]["mode"] == "shuffler"

    asyncio.run(scenario())


# --- the new configuration at the next round is what a restart would rebuild ---------------

def runner_as_the_service_builds_it(cfg, path):
    """The runner on the journal at ``path`` with ``cfg``'s settings, journaled first as the
    daemon journals them (``config`` with ``table``)."""
    from controller.service import build_table, table_settings
    from controller.table.runner import TableRunner

    journal = Journal.open(path, cfg.table_id)
    settings = table_settings(cfg)
    config = journal.append("config", {"table": settings}, source="service")
    runner = TableRunner(build_table(cfg.table_id, settings), journal, settings=settings,
                         config_seq=config.seq,
                         build=lambda s: build_table(cfg.table_id, s))
    return runner, journal


def button(name):
    from controller.inputs import ButtonPressed
    return ButtonPressed(device="panel", ts=0.0, button=name)


def test_a_new_integrity_monitor_at_the_next_round_knows_the_deck_as_a_restart_would(tmp_path):
    """[integrity] changed between the crash and the restart (the table's back id, and a stop
    on an alarm). The next round opens by the panel's confirm button, in one group commit
    with a card before it and a card after it: the new monitor is given the deck in play, the
    card before included, before it sees the card after, and after the round's next cards the
    table and its monitor are those a restart rebuilds."""
    from test_table_restart_matrix import fingerprint

    path = tmp_path / "j.db"
    played = config(tmp_path, boxes=7)
    now = config(tmp_path, boxes=7, extra='[integrity]\nalarm = "stop"\ndeck_ids = [1]\n')
    runner, journal = runner_as_the_service_builds_it(played, path)
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    for card in ("As", "Kd"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(card), deck_id=2))
    runner.command("misdeal")
    journal.close()

    runner, journal = runner_as_the_service_builds_it(now, path)
    report = runner.recover()
    assert report["configuration"]["changed"] == ["integrity", "integrity_action"]
    assert runner.table.state == "round_void"
    with runner.batch():
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("Qh"), deck_id=1))
        runner.device(button("confirm"))                  # next_round: the new settings
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("Jc"), deck_id=1))
    assert runner.table.state == "shuffling"
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("2c"), deck_id=2))
    # Under the new settings back 2 is foreign; shown once the round is over, it stops the
    # table before the next one.
    alarm = journal.last(kind="integrity").payload
    assert (alarm["kind"], alarm["cards"]) == ("foreign_card", ["2c"])
    runner.command("misdeal")
    assert runner.table.public_view()["integrity_stop"]
    live = fingerprint(runner.table)
    journal.close()

    again, journal = runner_as_the_service_builds_it(now, path)
    again.recover()
    rebuilt = fingerprint(again.table)
    journal.close()
    for key in ("monitor", "vault", "round_no", "gate"):
        assert rebuilt[key] == live[key], key
    assert rebuilt["view"]["round"]["bets"] == live["view"]["round"]["bets"]
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
        opens = [r.payload["snapshot"] for r in j.records(kinds=["round_open"])]
    assert opens[-1]["config"] != opens[-2]["config"]
