"""`journal verify --anchor` on a journal rewritten after the anchor was written down: a round's
outcome edited and every hash after it recomputed. The anchor catches it; what verify then
says must not vouch for the records the rewriting covered (any of them up to the anchor may
be the one changed), and an earlier anchor that still holds is the way to narrow it down."""
import sqlite3

# the journal fixture (a copy of a real run's journal) and its helpers
from test_journal_audit import journal, played  # noqa: F401
from test_journal_audit import digest, rewrite, tablectl


def test_a_broken_anchor_vouches_for_none_of_the_records_before_it(journal):
    conn = sqlite3.connect(journal)
    head_seq, head = conn.execute("SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1"
                                  ).fetchone()
    edited = conn.execute("SELECT MIN(seq) FROM records WHERE kind = 'round_close'"
                          ).fetchone()[0]
    early_seq = edited - 5
    early = conn.execute("SELECT hash FROM records WHERE seq = ?", (early_seq,)).fetchone()[0]
    conn.close()

    def edit(conn):
        conn.execute("UPDATE records SET payload = replace(payload, '\"settled\"', '\"void\"') "
                     "WHERE seq = ?", (edited,))

    rewrite(journal, edit)
    before = digest(journal)
    assert tablectl("journal", "verify", "--journal", str(journal)).returncode == 0
    out = tablectl("journal", "verify", "--journal", str(journal),
                   "--anchor", f"{head_seq}:{head}")
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert "differs from the anchor" in out.stderr and "rewritten at or before it" in out.stderr
    # the record changed lies before the anchor: nothing before it is vouched for
    assert "vouches for records" not in out.stderr, out.stderr
    assert "--verified-only" not in out.stderr, out.stderr
    assert f"last good record {head_seq - 1}" not in out.stderr
    assert "none of them is vouched for" in out.stderr
    assert "an anchor written down earlier" in out.stderr, out.stderr
    # and the earlier anchor still holds, as the way out says
    assert tablectl("journal", "verify", "--journal", str(journal),
                    "--anchor", f"{early_seq}:{early}").returncode == 0
    assert digest(journal) == before
