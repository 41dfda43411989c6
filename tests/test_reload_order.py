"""A reload and the commands already accepted, in the journal's order (the daemon's ``Service``
in this process, its console on, its main loop running).

A console command accepted before a reload is asked (its token checked and in force, the
command on the daemon's queue, not yet carried out) is carried out and journaled before the
reload's ``config_reload`` record: the journal never shows a role's command, nor what it did,
after the record of the reload that replaced the token it came with. The command is queued
before the reload is asked, without awaiting it: the race is the same every run."""
import asyncio

import pytest

from controller.journal import Journal
from test_token_reload import A, B, S, running, write


def order(journal_path):
    """The journal's command, state and config_reload records, in order: (kind, what)."""
    with Journal.open(journal_path, readonly=True) as j:
        assert j.verify().ok
        return [(r.kind, r.payload.get("name") or r.payload.get("dest") or
                 r.payload.get("outcome"), r.source)
                for r in j.records(kinds=["command", "state", "config_reload"])]


@pytest.mark.parametrize("via", ["control socket", "SIGHUP"])
def test_a_command_accepted_before_a_reload_is_journaled_before_it(tmp_path, via):
    path = write(tmp_path, {"dealer": A, "supervisor": S})

    async def scenario():
        svc, task = await running(path)
        # The supervisor's open_table, accepted (as the console hands it over) and waiting
        # on the queue when the reload that replaces the supervisor's token is asked.
        accepted = asyncio.ensure_future(svc.submit("open_table", "supervisor", {}))
        await asyncio.sleep(0)
        assert svc.queue.qsize() >= 1 and not accepted.done()
        write(tmp_path, {"dealer": A, "supervisor": B})
        if via == "SIGHUP":
            record = svc.reload()
        else:
            record = (await svc.reload_request())["reload"]
        reply = await asyncio.wait_for(accepted, 10)
        svc.stop()
        await task
        return record, reply

    record, reply = asyncio.run(scenario())
    assert reply["ok"] is True, reply
    assert record["roles"]["changed"] == ["supervisor"]
    seen = order(tmp_path / "j.db")
    reload_at = seen.index(("config_reload", "applied", "service"))
    command_at = seen.index(("command", "open_table", "supervisor"))
    # The command, and the state it put the table in, before the reload that replaced the
    # token it came with; nothing of it after.
    assert command_at < reload_at, seen
    assert [s for s in seen[reload_at:] if s[0] != "config_reload"] == [], seen
