"""The readers against a journal rewritten, chain and all, with values of the wrong type
where they expect a count, a list of cards or an object (docs/journal.md): each goes on and
says what is there, never a traceback, and the file is not changed."""
import json
import sqlite3

from controller.journal import Journal, canonical_json, chain_hash
# the journal fixture (a copy of a real run's journal) and its helpers
from test_journal_audit import journal, played  # noqa: F401
from test_journal_audit import digest, rewrite, set_payload, tablectl


def test_values_of_the_wrong_type_stop_no_reader(journal):
    """A record rewritten with its chain may hold any JSON where the readers expect a count,
    a list of cards or an object: every reader goes on, and says what is there."""
    def edit(conn):
        set_payload(conn, "kind = 'round_close'", lambda d: d.update(outcome={"x": [1]}))
        set_payload(conn, "kind = 'config'", lambda d: d.update(integrity=[2]))
        seq = conn.execute("SELECT MAX(seq) FROM records").fetchone()[0]
        body = {"record": "alarm", "kind": {"k": 1}, "cards": [1, None, "As"],
                "message": ["m"], "device": 7}
        deck = {"record": "deck", "cards_out": "52", "sentinel": [1],
                "complete": True}
        for i, payload in enumerate((body, dict(body, kind="duplicate_card"), deck)):
            conn.execute(
                "INSERT INTO records(seq, wall_ns, mono_ns, table_id, round_id, kind, source, "
                "article, payload, body, prev_hash, hash) SELECT ?, wall_ns, mono_ns, table_id, "
                "NULL, 'integrity', 'integrity', NULL, ?, '', '', '' FROM records WHERE seq = ?",
                (seq + 1 + i, json.dumps(payload), seq))
        deck2 = {"record": "deck", "sentinel": {"tests": {"pairs": {"pairs": [1], "hits": "x",
                                                                    "expected": "1.5",
                                                                    "p_value": [0]}},
                                                "trend": ["x"]}}
        conn.execute(
            "INSERT INTO records(seq, wall_ns, mono_ns, table_id, round_id, kind, source, "
            "article, payload, body, prev_hash, hash) SELECT ?, wall_ns, mono_ns, table_id, "
            "NULL, 'integrity', 'integrity', NULL, ?, '', '', '' FROM records WHERE seq = ?",
            (seq + 4, json.dumps(deck2), seq))

    rewrite(journal, edit)
    before = digest(journal)
    assert tablectl("journal", "verify", "--journal", str(journal)).returncode == 0
    for args in (["journal", "rounds"], ["integrity", "report"], ["integrity", "report", "--json"],
                 ["journal", "show", "last"], ["journal", "export"]):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode == 0, (args, out.stderr[-2000:])
        assert "Traceback" not in out.stderr
    listed = tablectl("journal", "rounds", "--journal", str(journal)).stdout
    assert '{"x": [1]}' in listed, listed
    report = tablectl("integrity", "report", "--journal", str(journal)).stdout
    assert "alarms: 2" in report and "As" in report, report
    assert digest(journal) == before


def test_a_body_whose_sequence_number_or_version_is_not_a_number_is_named_as_an_edit(journal):
    """A body rewritten with its chain where the seq or the version is text: named as an edit
    of that field, not as records "reordered or moved" nor as "format version '1' is not 1"."""
    def retype(field, value):
        def edit(conn):
            body = json.loads(conn.execute("SELECT body FROM records WHERE seq = 30").fetchone()[0])
            body[field] = value
            conn.execute("UPDATE records SET body = ? WHERE seq = 30", (canonical_json(body),))
        return edit

    for field, value, said in (("seq", "30", "its body's seq is '30', not a whole number"),
                               ("v", "1", "its body's v is '1', not a whole number"),
                               ("v", 2, "its format version 2 is not the journal's 1")):
        copy = journal.with_name(f"{field}-{value}.db")
        copy.write_bytes(journal.read_bytes())
        conn = sqlite3.connect(copy, isolation_level=None)
        retype(field, value)(conn)
        # the chain recomputed over the rewritten body, as a tamperer would
        prev = conn.execute("SELECT hash FROM records WHERE seq = 29").fetchone()[0]
        for seq, body in conn.execute("SELECT seq, body FROM records WHERE seq >= 30 ORDER BY "
                                      "seq").fetchall():
            hashed = chain_hash(prev, body)
            conn.execute("UPDATE records SET prev_hash = ?, hash = ? WHERE seq = ?",
                         (prev, hashed, seq))
            prev = hashed
        conn.close()
        with Journal.open(copy, readonly=True) as j:
            report = j.verify()
        assert not report.ok and report.bad_seq == 30, report
        assert said in report.reason and "edited" in report.reason, report.reason
        out = tablectl("journal", "verify", "--journal", str(copy))
        assert out.returncode == 1 and said in out.stderr and "Traceback" not in out.stderr
