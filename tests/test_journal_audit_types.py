"""The readers against a journal rewritten, chain and all, with values of the wrong type
where they expect a count, a list of cards or an object (docs/journal.md): each goes on and
says what is there, never a traceback, and the file is not changed."""
import json

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
