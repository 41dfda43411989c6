"""The daemon's own anchor (controller/journal_head.py): the journal's last record, written down
beside it after each checkpoint and at a clean stop. At start the journal must still hold that
record with that hash and chain from it; a journal cut short, put back from an older copy, or
rewritten with its chain recomputed is not started on (status 65, the unit does not restart
it), and nothing is written to it. Moving the head file aside starts it, and the start's record
says no head was found."""
import asyncio
import hashlib
import json
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from controller.config import parse_text
from controller.errors import TablectlError
from controller.journal import Journal
from controller.journal_head import Head, HeadError, head_path, read_head, write_head
from controller.rig import Rig
from controller.sdnotify import Notifier
from controller.service import EXIT_UNRECOVERABLE, Service
from rig_helpers import open_for_bets
from service_helpers import journal_only
from test_journal_audit import rewrite, set_payload


def service(path, table="T1"):
    return Service(parse_text(journal_only(path, table)),
                   notifier=Notifier(None), open_panel=False)


def run(svc, then=None):
    """Run ``svc`` until it is ready, call ``then(svc)``, stop it: its exit status. A start
    that is refused returns on its own."""
    async def main():
        task = asyncio.create_task(svc.run())
        while svc.runner is None or not svc._ready:
            if task.done():
                return await task
            await asyncio.sleep(0.01)
        if then is not None:
            then(svc)
        svc.stop()
        return await asyncio.wait_for(task, 30)
    return asyncio.run(asyncio.wait_for(main(), 60))


def betting(svc, bets=1):
    """``bets`` bets asked of a table with no device linked: each refused, each journaled
    (a command and its refusal), which is all these tests need of them."""
    for _ in range(bets):
        with pytest.raises(TablectlError):
            svc.runner.command("place_bet", box=1, wager="versus_croupier", amount=10)


def last(path):
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
        return j.head()


def starts(path):
    with Journal.open(path, readonly=True) as j:
        return [r.payload for r in j.records(kinds=["service"]) if r.payload["event"] == "start"]


def files(path):
    """The journal's bytes and its WAL's, to show a refused start changed nothing (an empty
    WAL and the shared-memory index hold no record)."""
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(path.parent.glob(path.name + "*"))
            if not p.name.endswith((".head", "-shm")) and p.stat().st_size}


def test_a_clean_stop_writes_down_the_journals_last_record(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    head = read_head(head_path(path))
    assert head == Head("T1", *last(path))          # the stop's record is the last
    assert run(service(path)) == 0
    first, second = starts(path)
    assert first["head"] is None                    # a new journal: nothing written down yet
    assert second["head"] == {"seq": head.seq, "hash": head.hash}
    assert read_head(head_path(path)).seq > head.seq


def test_a_checkpoint_writes_the_head_down_while_the_table_plays(tmp_path):
    """Before any stop: after the WAL's checkpoint the head is written down, so a crash
    later still leaves an anchor at most that far behind."""
    path = tmp_path / "j.db"
    svc = service(path)
    seen = {}

    async def main():
        task = asyncio.create_task(svc.run())
        while svc.runner is None or not svc._ready:
            await asyncio.sleep(0.01)
        for _ in range(40):         # enough commits for the quiet checkpoint
            answer = await svc.submit("place_bet", "dealer",
                                      {"box": 1, "wager": "versus_croupier", "amount": 10})
            assert not answer["ok"]
        for _ in range(2000):
            if head_path(path).exists():
                break
            await asyncio.sleep(0.01)
        seen["head"] = read_head(head_path(path))
        seen["journal"] = svc.journal.head()
        svc.stop()
        return await asyncio.wait_for(task, 30)

    assert asyncio.run(asyncio.wait_for(main(), 60)) == 0
    assert seen["head"] is not None and 40 < seen["head"].seq <= seen["journal"][0]


def test_a_journal_put_back_from_an_older_copy_is_not_started_on(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    older = tmp_path / "older.db"
    shutil.copy(path, older)                        # closed cleanly: no WAL beside it
    assert run(service(path), lambda svc: betting(svc, 3)) == 0
    head = read_head(head_path(path))
    shutil.copy(older, path)                        # the older copy put back in its place
    before = files(path)

    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    ends = last(path)[0]
    assert f"ends at record {ends}" in refused.failed
    assert f"records {ends + 1}-{head.seq}" in refused.failed
    assert f"--anchor {head.anchor()}" in refused.failed
    assert f"mv {head_path(path)}" in refused.failed
    assert files(path) == before, "a refused start writes nothing"
    assert read_head(head_path(path)) == head, "the head is kept for the person who looks"

    # The person looked, and starts on the journal as it is: the start says so.
    head_path(path).rename(tmp_path / "j.db.head.checked")
    assert run(service(path)) == 0
    assert starts(path)[-1]["head"] is None


def test_a_journal_rewritten_with_its_chain_recomputed_is_not_started_on(tmp_path):
    """An edit before the head, every hash after it recomputed: verify alone passes it, the
    head written down at the stop does not."""
    path = tmp_path / "j.db"
    assert run(service(path), lambda svc: betting(svc, 2)) == 0
    head = read_head(head_path(path))
    rewrite(path, lambda conn: set_payload(
        conn, "kind = 'command' AND payload LIKE '%place_bet%'",
        lambda p: p["args"].update(amount=5000)))
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok                        # the chain alone does not see it
    before = files(path)
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert f"at record {head.seq}" in refused.failed and "differs from the anchor" in \
        refused.failed
    assert files(path) == before


def test_records_edited_after_the_head_are_named_at_start(tmp_path):
    """A record written after the head (as a crash leaves them) whose body was edited
    without its hash: the chain from the head names it."""
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    head = read_head(head_path(path))
    with Journal.open(path, "T1") as j:             # records after the head, as if a crash
        j.append("note", {"text": "after the head"})
        j.append("note", {"text": "and another"})
    conn = sqlite3.connect(path)
    with conn:
        conn.execute("UPDATE records SET payload = ? WHERE seq = ?",
                     (json.dumps({"text": "edited"}), head.seq + 1))
    conn.close()
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert f"at record {head.seq + 1}" in refused.failed


def test_a_journal_gone_is_not_made_again_empty(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    for p in tmp_path.glob("j.db*"):
        if not p.name.endswith(".head"):
            p.unlink()
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "is gone" in refused.failed
    assert not path.exists(), "no empty journal made in its place"


@pytest.mark.parametrize("text, words", [
    ("garbage\n", "not a head the daemon wrote"),
    (json.dumps({"format": "tablectl-journal-head", "version": 1, "table_id": "T1",
                 "seq": "12", "hash": "0" * 64}), "not a head the daemon wrote"),
    (json.dumps({"format": "tablectl-journal-head", "version": 1, "table_id": "T9",
                 "seq": 1, "hash": "0" * 64}), 'belongs to table "T9"'),
])
def test_a_head_file_not_the_daemons_stops_the_start(tmp_path, text, words):
    path = tmp_path / "j.db"
    assert run(service(path)) == 0
    head_path(path).write_text(text)
    before = files(path)
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert words in refused.failed and "mv " in refused.failed
    assert files(path) == before


def test_a_head_written_is_read_back_whole(tmp_path):
    where = tmp_path / "x.head"
    head = Head("T1", 1234, "ab" * 32)
    write_head(where, head)
    assert read_head(where) == head
    assert not (tmp_path / "x.head.new").exists()
    assert read_head(tmp_path / "none.head") is None
    where.write_bytes(b"x" * 10000)
    with pytest.raises(HeadError, match="not a head"):
        read_head(where)


@pytest.mark.hil
def test_the_daemon_killed_while_playing_starts_again_on_its_head(tmp_path):
    """The real daemon on simulated devices: bets placed (their commits checkpointed at the
    next quiet moment, and the head written down), SIGKILL, a restart: the journal holds the
    head, the start names it, and the bets are there."""
    rig = Rig(tmp_path, "q-poker", "shoe")
    try:
        open_for_bets(rig)
        for _ in range(40):
            rig.must("place_bet", box=1, wager="versus_croupier", amount=10)
        where = head_path(rig.journal_path)
        for _ in range(400):
            if where.exists():
                break
            time.sleep(0.05)
        head = read_head(where)
        assert head is not None and head.seq > 40
        assert rig.kill(signal.SIGKILL) == -signal.SIGKILL
        rig.start_controller()
        rig.wait_links()
        assert rig.view()["round"]["bets"], rig.view()
        start = starts(rig.journal_path)[-1]
        assert start["head"]["seq"] >= head.seq
    finally:
        rig.stop()


def verify(path):
    out = subprocess.run([sys.executable, "-m", "controller.cli", "journal", "verify",
                          "--journal", str(path)], capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout + out.stderr


def test_verify_holds_the_journal_to_the_daemons_head_beside_it(tmp_path):
    """`journal verify` on the table: the chain, and the head beside it; a copy elsewhere
    (no head beside it) is verified by its chain alone."""
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    older = tmp_path / "older.db"
    shutil.copy(path, older)
    assert run(service(path), lambda svc: betting(svc, 3)) == 0
    head = read_head(head_path(path))
    code, text = verify(path)
    assert code == 0 and f"own anchor, record {head.seq}, holds" in text, text

    shutil.copy(older, path)                        # an older copy put back
    code, text = verify(path)
    assert code == 1 and "NOT VERIFIED" in text and f"records" in text \
        and f"-{head.seq} it had written are not in it" in text, text
    assert "nothing was written" not in text
    code, text = verify(older)                      # no head beside it: the chain alone
    assert code == 0 and "own anchor" not in text, text

    head_path(path).write_text("garbage")
    code, text = verify(path)
    assert code == 1 and "not a head the daemon wrote" in text, text
