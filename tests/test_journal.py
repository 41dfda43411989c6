"""The journal: records round-trip, rounds are found for recovery, tampering is named."""
import hashlib
import json
import sqlite3
import subprocess
import sys
import shutil

import pytest

from controller.journal import (GENESIS_HASH, Entry, Journal, JournalError, Kind)
from drivers import events as ev
from controller.rules.cards import Card


class FakeClock:
    """A settable clock (the journal takes any object with time_ns and monotonic_ns)."""

    def __init__(self, wall_ns=1_795_000_000_000_000_000):
        self.wall = wall_ns
        self.mono = 5_000

    def time_ns(self):
        self.wall += 1_000_000
        return self.wall

    def monotonic_ns(self):
        self.mono += 1_000_000
        return self.mono


@pytest.fixture
def path(tmp_path):
    return tmp_path / "journal.db"


def fill(path, rounds=3):
    """A journal of ``rounds`` rounds, the last one left open; returns the records."""
    with Journal.open(path, "T1", clock=FakeClock()) as j:
        j.append(Kind.SERVICE, {"event": "start"}, source="daemon")
        for n in range(1, rounds + 1):
            rid = j.next_round_id()
            j.append(Kind.ROUND_OPEN, {"game": "q-poker", "mode": "shoe", "boxes": [1, 3]},
                     round_id=rid, source="table")
            card = ev.CardDrawn(device="shoe", ts=1.5, card=Card.parse("As"))
            j.append_many([
                Entry(Kind.DEVICE, card.to_json(), rid, "shoe"),
                Entry(Kind.STATE, {"from": "dealing", "to": "decisions", "trigger": "plan_done"},
                      rid, "table"),
            ])
            if n < rounds:
                j.append(Kind.ROUND_CLOSE, {"outcome": "settled"}, round_id=rid, source="table")
        return list(j.records())


def test_append_returns_records_that_read_back(path):
    records = fill(path)
    assert [r.seq for r in records] == list(range(1, len(records) + 1))
    with Journal.open(path, readonly=True) as j:
        assert list(j.records()) == records
        dev = next(r for r in records if r.kind == "device")
        assert ev.event_from_json(dev.payload) == ev.CardDrawn(device="shoe", ts=1.5,
                                                              card=Card.parse("As"))
        assert j.table_id == "T1"


def test_chain_recomputed_independently(path):
    """Recompute every hash from the raw rows with hashlib, by the rule in docs/journal.md."""
    fill(path)
    rows = sqlite3.connect(path).execute(
        "SELECT seq, body, prev_hash, hash FROM records ORDER BY seq").fetchall()
    prev = "0" * 64
    for seq, body, prev_hash, digest in rows:
        assert prev_hash == prev
        assert hashlib.sha256((prev + body).encode()).hexdigest() == digest
        doc = json.loads(body)
        assert doc["seq"] == seq
        assert body == json.dumps(doc, sort_keys=True, separators=(",", ":"))
        prev = digest


def test_rounds_and_recovery_helpers(path):
    fill(path, rounds=3)
    with Journal.open(path, "T1") as j:
        assert j.round("1").closed and j.round("2").closed
        open_round = j.open_round_state()
        assert open_round.round_id == "3" and not open_round.closed
        assert [r.kind for r in open_round.records] == ["round_open", "device", "state"]
        assert open_round.opened.payload["boxes"] == [1, 3]
        assert j.next_round_id() == "4"
        j.append(Kind.ROUND_CLOSE, {"outcome": "void", "reason": "recovered after a crash"},
                 round_id="3", article="89/2004 art. 11")
        assert j.open_round_state() is None
        assert j.last_round().round_id == "3" and j.last_round().closed
        assert j.last(kind=Kind.SERVICE).payload == {"event": "start"}
        assert j.last(kind="alarm") is None
        assert [r.seq for r in j.records(since=10)] == [11, 12, 13]
        assert [r.seq for r in j.records(since=3, until=5)] == [4, 5]
        assert {r.kind for r in j.records(kinds=["device"])} == {"device"}


def test_empty_journal(path):
    with Journal.open(path, "T1") as j:
        assert len(j) == 0 and j.head() == (0, GENESIS_HASH)
        assert j.open_round_state() is None and j.last_round() is None
        assert j.next_round_id() == "1"
        assert j.verify().ok


def test_bad_payload_changes_nothing(path):
    with Journal.open(path, "T1") as j:
        j.append("service", {"event": "start"})
        with pytest.raises(JournalError, match="JSON"):
            j.append_many([Entry("device", {"ok": 1}), Entry("device", {"amount": 1.5j})])
        with pytest.raises(JournalError, match="JSON"):
            j.append("device", {"nan": float("nan")})
        with pytest.raises(JournalError, match="kind"):
            j.append("Not A Kind", {})
        assert len(j) == 1 and j.verify().ok


def test_one_journal_per_table(path):
    Journal.open(path, "T1").close()
    with pytest.raises(JournalError, match="belongs to table 'T1'"):
        Journal.open(path, "T2")
    with pytest.raises(JournalError, match="table id"):
        Journal.open(path.with_name("x.db"), "bad id!")
    with pytest.raises(JournalError, match="does not exist"):
        Journal.open(path.with_name("none.db"), readonly=True)


def test_reader_beside_the_writer(path):
    writer = Journal.open(path, "T1")
    writer.append("service", {"event": "start"})
    reader = Journal.open(path, readonly=True)
    writer.append("service", {"event": "tick"})
    assert len(reader) == 2 and reader.verify().ok
    with pytest.raises(JournalError, match="read-only"):
        reader.append("service", {})
    reader.close()
    writer.close()


def test_wal_and_full_sync(path):
    j = Journal.open(path, "T1")
    assert j._conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert j._conn.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL
    j.close()


# --- tampering ------------------------------------------------------------------------------

def sql(path, statement):
    """Tamper the way a person would: with the sqlite3 command-line shell when present."""
    if shutil.which("sqlite3"):
        subprocess.run(["sqlite3", str(path), statement], check=True)
    else:
        con = sqlite3.connect(path)
        con.executescript(statement)
        con.close()


def test_edited_payload_is_named(path):
    fill(path)
    sql(path, "UPDATE records SET payload = '{\"card\":\"Kd\",\"kind\":\"card_drawn\"}' "
              "WHERE seq = 4")
    report = Journal.open(path, readonly=True).verify()
    assert not report.ok and report.bad_seq == 4 and "payload" in report.reason
    assert report.records == 3 and report.head_seq == 3


def test_edited_body_is_named(path):
    fill(path)
    sql(path, "UPDATE records SET body = replace(body, '\"As\"', '\"Ks\"'), "
              "payload = replace(payload, '\"As\"', '\"Ks\"') WHERE seq = 7")
    report = Journal.open(path, readonly=True).verify()
    assert (report.ok, report.bad_seq) == (False, 7)
    assert "hash does not match" in report.reason


def test_rehashed_record_breaks_the_next_link(path):
    """Recomputing the edited record's own hash moves the break to the record after it."""
    fill(path)
    con = sqlite3.connect(path)
    body, prev = con.execute("SELECT body, prev_hash FROM records WHERE seq = 3").fetchone()
    body = body.replace('"As"', '"Ks"')
    digest = hashlib.sha256((prev + body).encode()).hexdigest()
    con.execute("UPDATE records SET body = ?, payload = replace(payload, 'As', 'Ks'), hash = ? "
                "WHERE seq = 3", (body, digest))
    con.commit()
    con.close()
    report = Journal.open(path, readonly=True).verify()
    assert (report.ok, report.bad_seq) == (False, 4)
    assert "previous hash" in report.reason


def test_deleted_record_is_named(path):
    fill(path)
    sql(path, "DELETE FROM records WHERE seq = 6")
    report = Journal.open(path, readonly=True).verify()
    assert (report.ok, report.bad_seq) == (False, 6)
    assert "missing" in report.reason and "5 is followed by 7" in report.reason


def test_swapped_records_are_named(path):
    fill(path)
    cols = "wall_ns, mono_ns, table_id, round_id, kind, source, article, payload, body, " \
           "prev_hash, hash"
    swap = ", ".join(f"{c} = (SELECT {c} FROM t WHERE t.seq = 9 - records.seq)"
                     for c in cols.split(", "))
    # Put the contents of record 5 in row 4 and of 4 in row 5 (a journal made before hash lost
    # its UNIQUE still has that index: clear the hashes first).
    sql(path, "CREATE TABLE t AS SELECT * FROM records WHERE seq IN (4, 5); "
              "UPDATE records SET hash = 'x' || seq WHERE seq IN (4, 5); "
              f"UPDATE records SET {swap} WHERE seq IN (4, 5); DROP TABLE t;")
    report = Journal.open(path, readonly=True).verify()
    assert (report.ok, report.bad_seq) == (False, 4)
    assert "reordered" in report.reason


def test_inserted_record_is_named(path):
    fill(path)
    con = sqlite3.connect(path)
    # Shift records 5.. up by one and put a forged record at 5.
    con.execute("UPDATE records SET seq = seq + 1000 WHERE seq >= 5")
    con.execute("UPDATE records SET seq = seq - 999 WHERE seq >= 1005")
    row = con.execute("SELECT * FROM records WHERE seq = 4").fetchone()
    con.execute("INSERT INTO records VALUES (5, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                row[1:11] + ("f" * 64,))
    con.commit()
    con.close()
    report = Journal.open(path, readonly=True).verify()
    assert (report.ok, report.bad_seq) == (False, 5)


def test_cut_off_tail_caught_by_anchor(path):
    fill(path)
    with Journal.open(path, readonly=True) as j:
        anchor = j.head()
        assert j.verify(anchor).ok
    sql(path, f"DELETE FROM records WHERE seq = {anchor[0]}")
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok  # the chain alone cannot see a cut-off tail ...
        report = j.verify(anchor)  # ... the anchor can
        assert not report.ok and report.bad_seq == anchor[0] and "cut off" in report.reason
        assert not j.verify((2, "0" * 64)).ok


# --- the command line -----------------------------------------------------------------------

def tablectl(*args):
    """Run the command line in this process (fast); output and status as a subprocess's."""
    import contextlib
    import io
    from controller.cli import main
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return subprocess.CompletedProcess(args, code, out.getvalue(), err.getvalue())


def tablectl_process(*args):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args],
                          capture_output=True, text=True)


def test_cli_verify(path):
    fill(path)
    ok = tablectl_process("journal", "verify", "--journal", str(path))
    assert ok.returncode == 0, ok.stderr
    assert "12 records, chain verifies" in ok.stdout
    sql(path, "DELETE FROM records WHERE seq = 8")
    bad = tablectl_process("journal", "verify", "--journal", str(path))
    assert bad.returncode == 1
    assert "record 8" in bad.stderr and "missing" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_cli_verify_anchor_and_errors(path):
    fill(path)
    head = Journal.open(path, readonly=True).head()
    assert tablectl("journal", "verify", "--journal", str(path), "--anchor",
                    f"{head[0]}:{head[1]}").returncode == 0
    bad = tablectl("journal", "verify", "--journal", str(path), "--anchor", "3:nothex")
    assert bad.returncode == 2 and "SEQ:HASH" in bad.stderr
    missing = tablectl("journal", "verify", "--journal", str(path.with_name("nope.db")))
    assert missing.returncode == 2 and "does not exist" in missing.stderr


def test_an_anchor_at_record_0_is_refused_as_a_mistake_not_read_as_a_cut_off_tail(path):
    """Sequence numbers start at 1: an anchor at 0 is a mistyped anchor, and the journal,
    which is sound, must not be reported as cut off (nor a backup called for)."""
    fill(path)
    out = tablectl("journal", "verify", "--journal", str(path), "--anchor", "0:" + "0" * 64)
    assert out.returncode == 2 and out.stdout == ""
    assert "start at 1" in out.stderr and "SEQ:HASH" in out.stderr
    assert "cut off" not in out.stderr and "backup" not in out.stderr


def test_cli_show(path):
    fill(path)
    with Journal.open(path, "T1") as j:
        j.append(Kind.DECISION, {"irregularity": "shoe_malfunction", "remedy": "round_void",
                                 "reason": "the shoe jammed while dealing"},
                 round_id="3", source="table", article="89/2004 art. 11(3)")
        j.append(Kind.ROUND_CLOSE, {"outcome": "void", "reason": "the shoe jammed"},
                 round_id="3", source="table", article="89/2004 art. 11(3)")
    out = tablectl("journal", "show", "3", "--journal", str(path))
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert text.startswith("Round 3 at table T1 (q-poker, shoe): 5 records")
    assert "card_drawn card=As" in text
    assert "dealing -> decisions (plan_done)" in text
    assert "shoe_malfunction round_void: the shoe jammed while dealing [89/2004 art. 11(3)]" in text
    assert text.rstrip().endswith("Outcome: void, 89/2004 art. 11(3): the shoe jammed")
    assert tablectl("journal", "show", "last", "--journal", str(path)).stdout == text
    lines = tablectl("journal", "show", "2", "--journal", str(path), "--json").stdout.splitlines()
    assert [json.loads(l)["kind"] for l in lines] == ["round_open", "device", "state",
                                                      "round_close"]
    missing = tablectl("journal", "show", "99", "--journal", str(path))
    assert missing.returncode == 2 and "round '99' is not in" in missing.stderr
    assert "latest round is 3" in missing.stderr


def test_cli_show_open_round(path):
    fill(path)
    out = tablectl("journal", "show", "3", "--journal", str(path)).stdout
    assert "Not closed" in out


def test_the_open_rounds_cards_are_held_back_unless_asked_for(path):
    # Round 3 is still open: the card the shoe read may be face down at the table, so neither
    # the readable account nor the export shows it, as the console and the display do not.
    fill(path)
    jp = ("--journal", str(path))
    text = tablectl("journal", "show", "3", *jp).stdout
    assert "As" not in text and "card_drawn" in text and "shown once it closes" in text
    lines = tablectl("journal", "show", "3", "--json", *jp).stdout.splitlines()
    device = [json.loads(l) for l in lines if json.loads(l)["kind"] == "device"]
    assert device and all("As" not in json.dumps(d) for d in device)
    assert device[0]["payload"]["kind"] == "card_drawn" and "withheld" in device[0]["payload"]
    export = tablectl("journal", "export", *jp).stdout
    assert export.count('"card": "As"') == 2            # rounds 1 and 2 are closed
    assert "--open-round" in export
    # Asked for, for an inquiry: everything.
    full = tablectl("journal", "show", "3", "--open-round", *jp).stdout
    assert "card_drawn card=As" in full
    assert tablectl("journal", "export", "--open-round", *jp).stdout.count('"card": "As"') == 3
    # Once the round closes, its cards are shown like any other round's.
    with Journal.open(path, "T1") as j:
        j.append(Kind.ROUND_CLOSE, {"outcome": "settled"}, round_id="3", source="table")
    assert "card_drawn card=As" in tablectl("journal", "show", "3", *jp).stdout


def test_cli_export_by_sequence_and_time(path):
    records = fill(path)
    out = tablectl("journal", "export", "--journal", str(path))
    docs = [json.loads(line) for line in out.stdout.splitlines()]
    assert [d["seq"] for d in docs] == [r.seq for r in records]
    assert docs[2]["hash"] == records[2].hash and docs[2]["payload"]["card"] == "As"
    assert docs[0]["wall"].endswith("Z")
    after = tablectl("journal", "export", "--since", "10", "--journal", str(path))
    assert [json.loads(l)["seq"] for l in after.stdout.splitlines()] == [11, 12]
    # FakeClock: record n has wall time base + n ms; record 5's time exports 5 onwards.
    when = docs[4]["wall"]
    by_time = tablectl("journal", "export", "--since", when, "--journal", str(path))
    assert [json.loads(l)["seq"] for l in by_time.stdout.splitlines()] == list(range(5, 13))
    by_round = tablectl("journal", "export", "--round", "2", "--journal", str(path))
    assert {json.loads(l)["round_id"] for l in by_round.stdout.splitlines()} == {"2"}
    bad = tablectl("journal", "export", "--since", "yesterday", "--journal", str(path))
    assert bad.returncode == 2 and "ISO time" in bad.stderr
    # A round that is not in the journal is an error, not an empty export.
    missing = tablectl("journal", "export", "--round", "99", "--journal", str(path))
    assert missing.returncode == 2 and missing.stdout == ""
    assert "round '99' is not in" in missing.stderr and "latest round is 3" in missing.stderr


def test_cli_export_since_beyond_the_journals_range(path):
    """Wall times are nanoseconds in SQLite's 64-bit integers (up to 2262-04-11): a bound
    outside that range selects what it says (nothing after, everything before), with no
    traceback."""
    records = fill(path)
    for late in ("2999-01-01", "9999-12-31T23:59:59Z", str(10**30)):
        out = tablectl("journal", "export", "--since", late, "--journal", str(path))
        assert out.returncode == 0 and out.stdout == "", (late, out.stderr)
        assert "Traceback" not in out.stderr
    early = tablectl("journal", "export", "--since", "0001-01-01", "--journal", str(path))
    assert [json.loads(l)["seq"] for l in early.stdout.splitlines()] == [r.seq for r in records]
    rounds = tablectl("journal", "rounds", "--since", str(10**30), "--journal", str(path))
    assert rounds.returncode == 0 and "Traceback" not in rounds.stderr
    assert len(rounds.stdout.splitlines()) == 1          # the heading only
    digits = tablectl("journal", "export", "--since", "\u00b2", "--journal", str(path))
    assert digits.returncode == 2 and "Traceback" not in digits.stderr


# --- the hand check of docs/journal.md ------------------------------------------------------

def doc_blocks():
    """The shell check and the SQL column check, as docs/journal.md gives them."""
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[1] / "docs" / "journal.md").read_text()
    section = text.split("## Checking a journal by hand", 1)[1]
    blocks = re.findall(r"```sh\n(.*?)```", section, re.S)
    sql_text = blocks[1].split('"', 1)[1].rsplit('"', 1)[0]
    return blocks[0], sql_text


needs_sqlite3 = pytest.mark.skipif(shutil.which("sqlite3") is None,
                                   reason="the sqlite3 shell is not installed (Debian: sqlite3)")


@needs_sqlite3
def test_documented_shell_check(path, tmp_path):
    script, _ = doc_blocks()
    fill(path)
    with Journal.open(path, "T1") as j:  # spaces, quotes, % and non-ASCII in a payload
        j.append(Kind.DECISION, {"reason": "翹骰: die 2 not flat, 100% \"reshake\""},
                 source="table", article="261/96/M art. 5")
        head = j.head()
    check = tmp_path / "check.sh"
    check.write_text(script)
    ok = subprocess.run(["sh", str(check), str(path)], capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.strip() == f"{head[0]} records verify; head {head[1]}"
    sql(path, "UPDATE records SET body = replace(body, 'q-poker', 'x-poker') WHERE seq = 6")
    bad = subprocess.run(["sh", str(check), str(path)], capture_output=True, text=True)
    assert bad.returncode == 1 and "record 6: hash does not match" in bad.stdout


@needs_sqlite3
def test_documented_column_check(path):
    _, query = doc_blocks()
    fill(path)
    with Journal.open(path, "T1") as j:
        j.append("service", None)  # a null payload must not look edited
    clean = subprocess.run(["sqlite3", "-readonly", str(path), query], capture_output=True,
                           text=True, check=True)
    assert clean.stdout == ""
    sql(path, "UPDATE records SET kind = 'state' WHERE seq = 3")
    dirty = subprocess.run(["sqlite3", "-readonly", str(path), query], capture_output=True,
                           text=True, check=True)
    assert dirty.stdout.split() == ["3"]


def test_one_writer_at_a_time(path):
    """A second controller on the same journal is refused; a dead one's lock is gone."""
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from controller.journal import Journal; "
         f"j = Journal.open({str(path)!r}, 'T1'); print('open', flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        with pytest.raises(JournalError, match=rf"being written by pid {holder.pid}"):
            Journal.open(path, "T1")
        with Journal.open(path, readonly=True) as reader:  # readers are never blocked
            assert len(reader) == 0
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()
    with Journal.open(path, "T1") as j:  # the killed writer's lock died with it
        assert j.append("service", {"event": "start"}).seq == 1


def test_write_failure_is_reported_and_records_nothing(path):
    j = Journal.open(path, "T1")
    j.append("service", {"event": "start"})
    # Another connection holds the write lock past the busy timeout: the append must fail
    # loudly, not pretend.
    j._conn.execute("PRAGMA busy_timeout = 50")
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    try:
        with pytest.raises(JournalError, match="NOT recorded"):
            j.append("device", {"kind": "jam"})
    finally:
        other.execute("ROLLBACK")
        other.close()
    assert [r.kind for r in j.records()] == ["service"] and j.verify().ok
    assert j.append("device", {"kind": "jam"}).seq == 2
    j.close()


def test_rounds_listing(path):
    fill(path)
    with Journal.open(path, "T1") as j:
        j.append(Kind.ROUND_CLOSE, {"outcome": "void", "reason": "jam"}, round_id="3",
                 article="89/2004 art. 11(3)")
        rounds = j.rounds()
        assert [(r.round_id, r.first_seq, r.last_seq, r.records, r.outcome, r.article)
                for r in rounds] == [("1", 2, 5, 4, "settled", None),
                                     ("2", 6, 9, 4, "settled", None),
                                     ("3", 10, 13, 4, "void", "89/2004 art. 11(3)")]
        assert [r.round_id for r in j.rounds(since=5)] == ["2", "3"]
    out = tablectl("journal", "rounds", "--journal", str(path))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert len(lines) == 4 and lines[3].split()[0] == "3"
    assert lines[3].endswith("void (89/2004 art. 11(3))") and "2-5" in lines[1]


def test_cli_finds_the_journal_through_the_config(path, tmp_path):
    fill(path)
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "T1"\ngame = "q-poker"\nmode = "shoe"\nboxes = 7\n\n'
                      '[devices.shoe]\nclass = "shoe"\nport = "/dev/tablectl/shoe"\n\n'
                      f'[journal]\npath = "{path}"\n')
    out = tablectl("journal", "verify", "--config", str(config))
    assert out.returncode == 0 and "12 records" in out.stdout
    config.write_text(config.read_text().replace("boxes = 7", "boxes = 7\nboxs = 7"))
    bad = tablectl("journal", "verify", "--config", str(config))
    assert bad.returncode == 2 and "boxs: unknown key" in bad.stderr
    # the journal can still be read meanwhile, by its path
    assert "--journal PATH" in bad.stderr
    gone = tablectl("journal", "verify", "--config", str(tmp_path / "none.toml"))
    assert gone.returncode == 2 and "does not exist" in gone.stderr


def test_reading_while_appending(path):
    """An iteration sees the journal as it was when it began; appends go on meanwhile."""
    fill(path)
    with Journal.open(path, "T1") as j:
        seen = []
        for rec in j.records():
            seen.append(rec.seq)
            if rec.seq == 2:
                j.append("service", {"event": "tick"})   # the writer is not held up
        assert seen == list(range(1, 13))
        assert len(j) == 13 and j.verify().ok


def test_show_describes_each_record_shape(path):
    """The table machine's own record shapes read as plain lines."""
    from controller.journal_cli import describe
    with Journal.open(path, "T1") as j:
        card = ev.CardDrawn(device="shoe", ts=9.5, card=Card.parse("Qh"), face_up=True)
        recs = j.append_many([
            Entry(Kind.DEVICE, {"source": "device", "event": card.to_json()}, "2", "shoe"),
            Entry(Kind.COMMAND, {"source": "command", "name": "place_bet", "role": "dealer",
                                 "args": {"box": 1, "amount": 16}}, "2", "dealer"),
            Entry(Kind.STATE, {"kind": "state", "source": "bets_open", "dest": "dealing",
                               "trigger": "first_card", "table": "T1", "round": 2}, "2"),
            Entry(Kind.ROUND_OPEN, {"kind": "round_started", "game": "q-poker",
                                    "snapshot": {"big": list(range(50))}}, "2", "table"),
            Entry(Kind.ROUND_CLOSE, {"kind": "round_void", "outcome": "void",
                                     "article": "89/2004 art. 11(3)"}, "2", "table",
                  "89/2004 art. 11(3)"),
        ])
    lines = [describe(r) for r in recs]
    assert lines[0] == "card_drawn card=Qh deck_id=None face_up=True"  # the JSON key order
    assert lines[1] == "place_bet amount=16 box=1"
    assert lines[2] == "bets_open -> dealing (first_card)"
    assert lines[3] == "round_started game=q-poker"          # the recovery snapshot left out
    assert lines[4] == "round_void outcome=void [89/2004 art. 11(3)]"


@needs_sqlite3
def test_documented_online_backup(path, tmp_path):
    """The backup command of docs/journal.md copies a journal in use, records in the WAL
    included, and the copy verifies."""
    fill(path)
    writer = Journal.open(path, "T1")      # in use: its last records are still in the WAL
    writer.append("service", {"event": "tick"})
    copy = tmp_path / "backup.db"
    subprocess.run(["sqlite3", "-readonly", str(path), f".backup {copy}"], check=True)
    writer.close()
    with Journal.open(copy, readonly=True) as j:
        assert len(j) == 13 and j.verify().ok


def test_not_a_journal(tmp_path):
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database" * 100)
    out = tablectl("journal", "verify", "--journal", str(garbage))
    assert out.returncode == 2 and "not a tablectl journal, or it is damaged" in out.stderr
    other = tmp_path / "other.db"
    con = sqlite3.connect(other)
    con.execute("CREATE TABLE x (a)")
    con.commit()
    con.close()
    out = tablectl("journal", "show", "1", "--journal", str(other))
    assert out.returncode == 2 and "not a tablectl journal" in out.stderr


# --- properties -----------------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_json = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-2**63, 2**63), st.text(max_size=20),
              st.floats(allow_nan=False, allow_infinity=False)),
    lambda inner: st.one_of(st.lists(inner, max_size=4),
                            st.dictionaries(st.text(max_size=8), inner, max_size=4)),
    max_leaves=10)
_COLS = ["wall_ns", "mono_ns", "table_id", "round_id", "kind", "source", "article", "payload",
         "body", "prev_hash", "hash"]


@settings(max_examples=40, deadline=None)
@given(payloads=st.lists(_json, min_size=1, max_size=12), data=st.data())
def test_any_payload_round_trips_and_any_edit_is_named(tmp_path_factory, payloads, data):
    path = tmp_path_factory.mktemp("j") / "j.db"
    with Journal.open(path, "T1") as j:
        written = [j.append("device", p, round_id="1", source="x") for p in payloads]
        assert [r.payload for r in j.records()] == [json.loads(json.dumps(p)) for p in payloads]
        assert j.verify().ok
    # Change one column of one record to anything else: verify names that record.
    victim = data.draw(st.integers(1, len(written)), label="record")
    column = data.draw(st.sampled_from(_COLS), label="column")
    con = sqlite3.connect(path)
    old = con.execute(f"SELECT {column} FROM records WHERE seq = ?", (victim,)).fetchone()[0]
    # A payload spelled otherwise with the same JSON is an edit too (the column is the
    # record's canonical JSON, character for character).
    new = data.draw(st.one_of(st.text(max_size=10), st.integers(-2**63, 2**63 - 1)).filter(
        lambda v: v != old and str(v) != str(old)), label="value")
    if column == "hash":
        new = str(new)  # hash is TEXT
    con.execute(f"UPDATE records SET {column} = ? WHERE seq = ?", (new, victim))
    con.commit()
    con.close()
    report = Journal.open(path, readonly=True).verify()
    assert not report.ok and report.bad_seq == victim, (column, report)


def test_a_writer_given_a_directory_says_so_and_names_a_file_in_it(tmp_path):
    """[journal] path = "/var/lib/tablectl", the state directory without the file's name:
    SQLite only says "unable to open database file"."""
    from controller.journal import JournalError
    with pytest.raises(JournalError) as info:
        Journal.open(tmp_path, "T1")
    msg = str(info.value)
    assert "is a directory" in msg and str(tmp_path / "journal.db") in msg
    assert "damaged" not in msg
    assert list(tmp_path.iterdir()) == []


def test_cli_export_round_last_is_the_latest_round_as_for_show(path):
    fill(path)
    last = tablectl("journal", "export", "--round", "last", "--journal", str(path))
    assert last.returncode == 0, last.stderr
    assert {json.loads(l)["round_id"] for l in last.stdout.splitlines()} == {"3"}


@needs_sqlite3
@pytest.mark.parametrize("what", ["missing", "not a database", "empty", "no records table"])
def test_documented_shell_check_fails_on_a_file_that_is_no_journal(tmp_path, what):
    script, _ = doc_blocks()
    check = tmp_path / "check.sh"
    check.write_text(script)
    target = tmp_path / "j.db"
    if what == "not a database":
        target.write_text("hello\n")
    elif what == "empty":
        target.write_bytes(b"")
    elif what == "no records table":
        sqlite3.connect(target).execute("CREATE TABLE other (x)").connection.close()
    out = subprocess.run(["sh", str(check), str(target)], capture_output=True, text=True)
    assert out.returncode != 0, out.stdout
    assert "verify" not in out.stdout


@needs_sqlite3
@pytest.mark.parametrize("edit", ["wall_ns = wall_ns + 3600000000000", "mono_ns = 1",
                                  "table_id = 'T2'", "seq = 99"])
def test_documented_column_check_sees_every_column(path, edit):
    _, query = doc_blocks()
    fill(path)
    sql(path, f"UPDATE records SET {edit} WHERE seq = 3")
    dirty = subprocess.run(["sqlite3", "-readonly", str(path), query], capture_output=True,
                           text=True, check=True)
    assert dirty.stdout.split() in (["3"], ["99"])


@pytest.mark.parametrize("command", [("journal", "verify"), ("journal", "rounds"),
                                     ("journal", "export"), ("integrity", "report")])
def test_a_config_naming_another_tables_journal_is_refused(path, tmp_path, command):
    """The config is table T2's, its [journal] path names table T1's journal: reading it as
    T2's record would report on the wrong table."""
    fill(path)
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "T2"\ngame = "q-poker"\nmode = "shoe"\nboxes = 7\n\n'
                      '[devices.shoe]\nclass = "shoe"\nport = "/dev/tablectl/shoe"\n\n'
                      f'[journal]\npath = "{path}"\n')
    out = tablectl(*command, "--config", str(config))
    assert out.returncode == 2 and out.stdout == "", out.stdout
    assert "'T1'" in out.stderr and "'T2'" in out.stderr and str(config) in out.stderr
    assert "Traceback" not in out.stderr
    # named by its path, it is read as the journal it is
    assert tablectl(*command, "--journal", str(path)).returncode == 0


def test_a_writer_refuses_an_empty_file_instead_of_starting_a_new_chain(tmp_path):
    """The record of truth cut to 0 bytes is not silently replaced by a fresh journal."""
    empty = tmp_path / "journal.db"
    empty.write_bytes(b"")
    with pytest.raises(JournalError, match=r"empty file \(0 bytes\).*restore the journal from "
                       r"a backup.*remove the empty file"):
        Journal.open(empty, "table-1")
    assert empty.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == [
        "journal.db"]


@pytest.mark.parametrize("command", [("journal", "verify"), ("journal", "export"),
                                     ("journal", "rounds"), ("integrity", "report")])
def test_an_empty_file_is_named_as_such_and_left_alone(tmp_path, command):
    """A 0-byte file (a copy that did not finish, a file made by touch) is said to be empty,
    not "an SQLite file", and stays as it was."""
    empty = tmp_path / "journal.db"
    empty.write_bytes(b"")
    out = tablectl(*command, "--journal", str(empty))
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert "empty" in out.stderr and "SQLite file" not in out.stderr
    assert empty.read_bytes() == b"" and sorted(p.name for p in tmp_path.iterdir()) == [
        "journal.db"]


@pytest.mark.parametrize("table_id", ["macau-07\n", "macau-07\r\n"])
def test_a_table_id_with_a_line_break_after_it_is_refused(tmp_path, table_id):
    # A pattern ending in $ takes a trailing line break too: a journal made so would carry an
    # id no configuration check lets a table have.
    with pytest.raises(JournalError, match="table id"):
        Journal.open(tmp_path / "j.db", table_id)
    assert not (tmp_path / "j.db").exists()


def test_a_record_kind_with_a_line_break_after_it_is_refused(tmp_path):
    j = Journal.open(tmp_path / "j.db", "T1")
    with pytest.raises(JournalError, match="record kind"):
        j.append("device\n", {"x": 1})
    assert j.head()[0] == 0
