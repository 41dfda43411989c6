"""The daemon checkpoints its journal's WAL when the table is quiet, once enough commits
wait in it, so SQLite's own checkpoint does not land inside the commit of some card; few
commits, or a table never quiet for long enough, leave it to SQLite. Seen on the journal's
own SQLite connection."""
import asyncio

import controller.service as service
from controller.config import parse_text
from controller.journal import Journal
from controller.rules.cards import Card
from controller.sdnotify import Notifier
from controller.service import Service
from drivers import events as ev

CONFIG = """
[table]
id = "ck-1"
game = "q-poker"
mode = "shoe"
boxes = 7

[journal]
path = "{journal}"
"""
CHECKPOINT = "PRAGMA wal_checkpoint(PASSIVE)"


def test_a_quiet_table_checkpoints_its_journal_once_enough_commits_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(service, "CHECKPOINT_AFTER", 5)
    monkeypatch.setattr(service, "CHECKPOINT_QUIET_S", 0.05)
    cfg = parse_text(CONFIG.format(journal=tmp_path / "j.db"))
    sql: list[str] = []

    async def scenario():
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        while svc.runner is None:
            await asyncio.sleep(0.01)
        svc.journal._conn.set_trace_callback(sql.append)
        for name, role, args in (("open_table", "supervisor", {}), ("deck_ready", "dealer", {})):
            assert (await svc.submit(name, role, args))["ok"]
        await asyncio.sleep(0.3)
        assert CHECKPOINT not in sql             # two commits: not worth one
        assert (await svc.submit("place_bet", "dealer", {"box": 1, "wager": "versus_croupier",
                                                          "amount": 10}))["ok"]
        for c in ("As", "Kd", "Ah"):
            svc.queue.put_nowait(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
            while not svc.queue.empty():
                await asyncio.sleep(0.001)
        await asyncio.sleep(0.3)
        assert sql.count(CHECKPOINT) == 1         # six commits, then quiet: one checkpoint
        await asyncio.sleep(0.3)
        assert sql.count(CHECKPOINT) == 1         # nothing new to copy: no second one
        svc.stop()
        await task

    asyncio.run(scenario())
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        assert len(list(j.records(kinds=["device"]))) == 3
