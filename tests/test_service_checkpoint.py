"""The daemon checkpoints its journal's WAL when the table is quiet, once enough commits
wait in it, or as soon as a round has ended, so SQLite's own checkpoint does not land inside
the commit of some card; few commits leave it to SQLite. Seen on the journal's own SQLite
connection."""
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


async def started(tmp_path, sql):
    """The daemon's Service on a fresh journal, running, its SQL traced into ``sql``."""
    svc = Service(parse_text(CONFIG.format(journal=tmp_path / "j.db")),
                  notifier=Notifier(None), open_panel=False)
    task = asyncio.create_task(svc.run())
    while svc.runner is None:
        await asyncio.sleep(0.01)
    svc.journal._conn.set_trace_callback(sql.append)
    return svc, task


def device_records(tmp_path):
    """The device records in the stopped service's journal, once its chain verifies."""
    with Journal.open(tmp_path / "j.db", readonly=True) as j:
        assert j.verify().ok
        return len(list(j.records(kinds=["device"])))


def test_a_quiet_table_checkpoints_its_journal_once_enough_commits_wait(tmp_path, monkeypatch):
    monkeypatch.setattr(service, "CHECKPOINT_AFTER", 5)
    monkeypatch.setattr(service, "CHECKPOINT_QUIET_S", 0.05)
    sql: list[str] = []

    async def scenario():
        svc, task = await started(tmp_path, sql)
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
    assert device_records(tmp_path) == 3


def test_a_table_never_quiet_checkpoints_as_each_round_ends(tmp_path, monkeypatch):
    """Cards and commands back to back, never a quiet moment: the checkpoint runs right after
    the input that ends the round (no card is due then), not inside a later card's commit."""
    monkeypatch.setattr(service, "CHECKPOINT_QUIET_S", 60.0)
    sql: list[str] = []
    published: list[str] = []

    async def scenario():
        svc, task = await started(tmp_path, sql)
        publish = svc.runner.publish
        svc.runner.publish = lambda e: (published.append(e.kind), publish(e))[-1]
        for rnd in range(2):
            steps = [("open_table", "supervisor", {}), ("deck_ready", "dealer", {})] \
                if rnd == 0 else []
            steps += [("place_bet", "dealer", {"box": 1, "wager": "versus_croupier",
                                               "amount": 10})]
            for name, role, args in steps:
                assert (await svc.submit(name, role, args))["ok"], name
            for c in (("As", "Kd", "Ah", "Kc", "Ad", "Ks") if rnd == 0 else
                      ("2s", "3d", "2h", "3c", "2d", "3s")):
                svc.queue.put_nowait(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(c)))
                while not svc.queue.empty():
                    await asyncio.sleep(0)
            assert (await svc.submit("decide", "dealer", {"box": 1, "decision": "play"}))["ok"]
            before = sql.count(CHECKPOINT)
            assert "round_complete" not in published[-3:]
            assert (await svc.submit("confirm_result", "dealer", {}))["ok"]
            await asyncio.sleep(0)                  # the checkpoint's turn of the loop
            await asyncio.sleep(0)
            assert "round_complete" in published
            assert sql.count(CHECKPOINT) == before + 1, rnd
            assert (await svc.submit("next_round", "dealer", {}))["ok"]
            published.clear()
        svc.stop()
        await task

    asyncio.run(scenario())
    assert device_records(tmp_path) == 12
