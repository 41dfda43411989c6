"""The daemon's own anchor attacked (controller/journal_head.py; docs/journal.md, *The
daemon's own anchor*): head files the daemon did not write, what a kill in the middle of a
head's write leaves, and the head's permissions."""
import json
import os
import stat
import subprocess
import sys

import pytest

from controller.journal_head import Head, HeadError, HeadWriter, head_path, read_head, write_head
from controller.service import EXIT_UNRECOVERABLE

from test_journal_head import betting, files, run, service, starts, verify


def head_text(seq, digest, table="T1"):
    return json.dumps({"format": "tablectl-journal-head", "version": 1, "table_id": table,
                       "seq": seq, "hash": digest}, sort_keys=True) + "\n"


def test_a_head_of_record_0_with_a_hash_no_empty_journal_has_is_not_the_daemons(tmp_path):
    """Record 0 is the empty journal, whose only hash is 64 zeros: a head naming record 0
    with any other hash was not written by the daemon, and it would pass every journal
    (the start's record would say a head was found and checked)."""
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    head_path(path).write_text(head_text(0, "ab" * 32))
    before = files(path)
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "not a head the daemon wrote" in refused.failed and "mv " in refused.failed
    assert files(path) == before
    code, text = verify(path)
    assert code == 1 and "not a head the daemon wrote" in text, text


def test_a_head_of_record_0_the_daemon_wrote_still_starts(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path)) == 0
    head_path(path).write_text(head_text(0, "0" * 64))
    assert run(service(path)) == 0
    assert starts(path)[-1]["head"] == {"seq": 0, "hash": "0" * 64}


def test_a_head_file_replaced_by_a_symbolic_link_is_not_the_daemons(tmp_path):
    """The daemon writes its head as a file of its own (renamed into place): a link in its
    place, even to a head that holds, was put there by someone else, and read through it the
    check would be another file's."""
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    elsewhere = tmp_path / "elsewhere.head"
    head_path(path).rename(elsewhere)
    head_path(path).symlink_to(elsewhere)
    before = files(path)
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "symbolic link" in refused.failed and "mv " in refused.failed, refused.failed
    assert files(path) == before
    with pytest.raises(HeadError, match="symbolic link"):
        read_head(head_path(path))


def test_a_head_file_that_is_a_directory_is_named_as_such(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path)) == 0
    head_path(path).unlink()
    head_path(path).mkdir()
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "is a directory" in refused.failed and "permissions" not in refused.failed, \
        refused.failed
    assert "mv " in refused.failed


def test_a_head_half_written_when_the_daemon_was_killed_does_not_stop_the_start(tmp_path):
    """Killed in the middle of a head's write: a `.head.new` is left, cut short; the head in
    place is the previous one, which the journal holds."""
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    head = read_head(head_path(path))
    new = head_path(path).with_name(head_path(path).name + ".new")
    new.write_text('{"format": "tablectl-jou')
    assert run(service(path)) == 0
    assert starts(path)[-1]["head"] == {"seq": head.seq, "hash": head.hash}
    assert not new.exists()
    assert read_head(head_path(path)).seq > head.seq


def test_a_file_left_where_the_head_is_written_gives_it_neither_its_mode_nor_its_target(
        tmp_path):
    """A `.head.new` left with another mode (by hand, or by a program with another umask)
    must not lend it to the head, and one that is a link must not be written through."""
    path = tmp_path / "j.db"
    where = head_path(path)
    new = where.with_name(where.name + ".new")
    new.write_text("left over")
    os.chmod(new, 0o666)
    write_head(where, Head("T1", 3, "ab" * 32))
    assert stat.S_IMODE(where.stat().st_mode) & 0o027 == 0, oct(where.stat().st_mode)

    target = tmp_path / "someone-elses-file"
    target.write_text("keep me")
    new.symlink_to(target)
    write_head(where, Head("T1", 4, "cd" * 32))
    assert target.read_text() == "keep me"
    assert read_head(where) == Head("T1", 4, "cd" * 32)
    assert not where.is_symlink()


def test_the_head_is_written_0640_whatever_the_umask_allows(tmp_path):
    where = tmp_path / "j.db.head"
    old = os.umask(0)
    try:
        write_head(where, Head("T1", 1, "ab" * 32))
    finally:
        os.umask(old)
    assert stat.S_IMODE(where.stat().st_mode) == 0o640


def test_verify_by_a_relative_path_finds_the_head_beside_the_journal(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path), betting) == 0
    out = subprocess.run([sys.executable, "-m", "controller.cli", "journal", "verify",
                          "--journal", "j.db"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert out.returncode == 0 and "own anchor" in out.stdout, out.stdout + out.stderr


def test_verify_beside_a_head_that_moves_on_says_no_false_not_verified(tmp_path):
    """`journal verify` while the daemon plays: the head it reads may be newer than the
    snapshot the chain was verified on; the journal holds it all the same."""
    import threading

    path = tmp_path / "j.db"
    results = []

    def then(svc):
        stop = threading.Event()

        def verifying():
            while not stop.is_set() and len(results) < 3:
                results.append(verify(path))
        betting(svc)
        svc._checkpoint()
        svc._heads.close()              # the first head on disk before any verify runs
        svc._heads = HeadWriter(head_path(path), on_error=svc._head_not_written)
        t = threading.Thread(target=verifying)
        t.start()
        for _ in range(20_000):
            betting(svc)
            svc._checkpoint()           # the head written down, again and again
            if len(results) >= 3:
                break
        stop.set()
        t.join()
    assert run(service(path), then) == 0
    assert len(results) == 3 and all(code == 0 for code, _ in results), results
    assert all("own anchor" in text for _, text in results), results


def test_a_head_file_that_is_a_named_pipe_is_named_at_once_not_waited_on(tmp_path):
    path = tmp_path / "j.db"
    assert run(service(path)) == 0
    head_path(path).unlink()
    os.mkfifo(head_path(path))
    refused = service(path)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "named pipe" in refused.failed and "mv " in refused.failed, refused.failed


def test_a_head_the_disk_takes_only_part_of_leaves_the_whole_one_in_place(tmp_path):
    """A disk that fills (here: the file size limit of the process, which cuts a write short
    as a full disk may) in the middle of a head's write: the head in place must stay the
    whole previous one, or the next start would be refused for a head "not the daemon's"."""
    where = tmp_path / "j.db.head"
    write_head(where, Head("T1", 5, "ab" * 32))
    code = ("import resource, signal, sys\n"
            "from pathlib import Path\n"
            "from controller.journal_head import Head, write_head\n"
            "signal.signal(signal.SIGXFSZ, signal.SIG_IGN)\n"
            "resource.setrlimit(resource.RLIMIT_FSIZE, (60, 60))\n"
            "try:\n"
            "    write_head(Path(sys.argv[1]), Head('T1', 6, 'cd' * 32))\n"
            "except OSError as exc:\n"
            "    print('not written:', exc)\n")
    out = subprocess.run([sys.executable, "-c", code, str(where)], capture_output=True,
                         text=True, timeout=60, env={**os.environ, "PYTHONPATH": os.getcwd()})
    assert out.returncode == 0, out.stderr
    assert "not written" in out.stdout, out.stdout
    assert read_head(where) == Head("T1", 5, "ab" * 32)


def test_the_head_of_another_journal_of_the_same_table_is_not_taken_for_this_ones(tmp_path):
    """Two journals of table T1, each longer than the other's head: the head of one beside
    the other names a record the other holds with another hash."""
    a, b = tmp_path / "a" / "j.db", tmp_path / "b" / "j.db"
    assert run(service(a), betting) == 0
    assert run(service(b), lambda svc: betting(svc, 4)) == 0
    head_path(b).unlink()
    head_path(a).rename(head_path(b))
    refused = service(b)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "differs from the anchor" in refused.failed, refused.failed


def test_a_journal_reached_by_a_link_pointed_at_an_older_copy_is_not_started_on(tmp_path):
    """[journal] path a symbolic link to the journal: the head sits beside the path the
    daemon is given, so a link pointed at an older copy is held to it all the same."""
    real, older = tmp_path / "data" / "j.db", tmp_path / "data" / "older.db"
    real.parent.mkdir()
    link = tmp_path / "j.db"
    link.symlink_to(real)
    assert run(service(link), betting) == 0
    import shutil
    shutil.copy(real, older)
    assert run(service(link), lambda svc: betting(svc, 3)) == 0
    link.unlink()
    link.symlink_to(older)
    refused = service(link)
    assert run(refused) == EXIT_UNRECOVERABLE
    assert "it had written are not in it" in refused.failed, refused.failed


def test_heads_noted_while_the_last_is_given_at_close_leave_the_last_on_disk(tmp_path):
    """The stop's head (close(last)) racing heads noted just before it, one of them being
    written: the head on disk at the end is the stop's, whatever was in flight."""
    where = tmp_path / "j.db.head"
    for _ in range(20):
        writer = HeadWriter(where)
        for seq in range(1, 50):
            writer.note(Head("T1", seq, f"{seq:064x}"))
        writer.close(Head("T1", 50, f"{50:064x}"))
        assert read_head(where) == Head("T1", 50, f"{50:064x}")
        writer.note(Head("T1", 51, f"{51:064x}"))       # after close: not written
        assert read_head(where).seq == 50


@pytest.mark.hil
def test_the_daemon_killed_at_any_moment_of_play_starts_again(tmp_path):
    """SIGKILL at moments that fall among commits, checkpoints and the heads' writes (no
    wait for a head to be written, or not): every restart is taken, since a head is written
    only for records already on disk."""
    import signal
    import time

    from controller.rig import Rig
    from rig_helpers import open_for_bets

    rig = Rig(tmp_path, "q-poker", "shoe")
    try:
        open_for_bets(rig)
        for n in range(6):
            for _ in range(20 + 7 * n):
                rig.must("place_bet", box=1, wager="versus_croupier", amount=10)
            time.sleep(0.03 * n)
            assert rig.kill(signal.SIGKILL) == -signal.SIGKILL
            rig.start_controller()
            rig.wait_links()
            assert rig.proc.poll() is None
        head = read_head(head_path(rig.journal_path))
    finally:
        rig.stop()
    assert head is not None
    assert len([s for s in starts(rig.journal_path) if s["head"] is not None]) >= 1
