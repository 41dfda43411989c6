"""The daemon journals a burst of device events already waiting on its queue in one commit,
and a command between them in a commit of its own (its reply is its own). COMMITs are
counted on the journal's SQLite connection."""
import asyncio

from controller.config import parse_text
from controller.journal import Journal
from controller.rules.cards import Card
from controller.sdnotify import Notifier
from controller.service import Service, _CommandItem
from controller.table.round import BetKey
from drivers import events as ev

CONFIG = """
[table]
id = "gc-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""


def card(c):
    return ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c))


def test_a_burst_is_one_commit_and_a_command_between_is_its_own(tmp_path):
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    commits = []

    async def settled(svc, n):
        for _ in range(500):
            if svc.queue.empty() and len(commits) >= n:
                return
            await asyncio.sleep(0.01)
        raise AssertionError(f"{len(commits)} commits, {n} wanted")

    async def scenario():
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        while svc.runner is None:                # commands wait on the queue until ready
            await asyncio.sleep(0.01)
        for name, role, args in (("open_table", "supervisor", {}), ("deck_ready", "dealer", {}),
                                 ("place_bet", "dealer", {"box": 1, "wager": "versus_croupier",
                                                          "amount": 10})):
            assert (await svc.submit(name, role, args))["ok"]
        svc.journal._conn.set_trace_callback(
            lambda sql: commits.append(sql) if sql == "COMMIT" else None)
        # Four cards land on the queue before the daemon looks: one group, one commit.
        for c in ("As", "Kd", "Ah", "Kc"):
            svc.queue.put_nowait(card(c))
        await settled(svc, 1)
        assert len(commits) == 1
        assert svc.runner.table.state == "dealing"
        # A card, a bet the table refuses (betting is closed), a card: three commits, and
        # the refusal is the command's own reply.
        fut = asyncio.get_running_loop().create_future()
        svc.queue.put_nowait(card("Ad"))
        svc.queue.put_nowait(_CommandItem("place_bet", "dealer",
                                          {"box": 2, "wager": "versus_croupier", "amount": 5},
                                          fut))
        svc.queue.put_nowait(card("Ks"))
        reply = await fut
        await settled(svc, 4)
        assert len(commits) == 4
        assert reply["ok"] is False and "89/2004 art. 6(2)" in reply["error"]
        assert svc.runner.table.state == "player_decisions"
        assert BetKey(2, "versus_croupier", None) not in svc.runner.table.round.bets
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        cards = [r.payload["event"]["card"] for r in j.records(kinds=["device"])]
        assert cards == ["As", "Kd", "Ah", "Kc", "Ad", "Ks"]
        assert [r.payload["input"]["name"] for r in j.records(kinds=["refused"])] \
            == ["place_bet"]
