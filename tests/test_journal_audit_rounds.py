"""`journal show` and `export --round` on a journal rewritten, chain and all, where the latest
round_open names no round (tablectl always gives one) or a record holds megabytes where a
name belongs: the latest round is not taken to be "every record of the journal", and the
account stays an account, one line per record."""
# the journal fixture (a copy of a real run's journal) and its helpers
from test_journal_audit import journal, played  # noqa: F401
from test_journal_audit import digest, rewrite, set_payload, tablectl


def test_a_latest_round_open_without_a_round_id_is_named_not_shown_as_the_whole_journal(journal):
    held = {}

    def edit(conn):
        held["seq"] = conn.execute("SELECT MAX(seq) FROM records WHERE kind = 'round_open'"
                                   ).fetchone()[0]
        conn.execute("UPDATE records SET round_id = NULL WHERE seq = ?", (held["seq"],))

    rewrite(journal, edit)
    before = digest(journal)
    assert tablectl("journal", "verify", "--journal", str(journal)).returncode == 0
    for args in (("journal", "show", "last"), ("journal", "export", "--round", "last")):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode != 0 and out.stdout == "", (args, out.stdout[:300])
        assert "Traceback" not in out.stderr
        assert f"record {held['seq']}, the latest round_open, names no round" in out.stderr
        assert f"--since {held['seq'] - 1}" in out.stderr and "--anchor" in out.stderr
        assert "holds no round yet" not in out.stderr
    assert digest(journal) == before


def test_megabytes_where_a_name_belongs_make_one_line_cut_short(journal):
    held = {}

    def edit(conn):
        held["round"] = conn.execute("SELECT round_id FROM records WHERE kind = 'command' AND "
                                     "round_id IS NOT NULL ORDER BY seq LIMIT 1").fetchone()[0]
        held["seq"] = set_payload(conn, f"kind = 'command' AND round_id = '{held['round']}'",
                                  lambda d: d.update(name="N" * 3_000_000))

    rewrite(journal, edit)
    out = tablectl("journal", "show", held["round"], "--journal", str(journal))
    assert out.returncode == 0, out.stderr
    (line,) = [x for x in out.stdout.splitlines() if x.lstrip().startswith(f"{held['seq']} ")]
    assert len(line) < 2200, len(line)
    assert "characters; the whole record: journal show --json)" in line
    whole = tablectl("journal", "show", held["round"], "--json", "--journal", str(journal))
    assert "N" * 3_000_000 in whole.stdout
