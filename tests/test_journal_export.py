"""`tablectl journal export` of a damaged journal: refused unless --verified-only, which
exports only what the chain vouches for, says where it stops, and exits 1."""
import datetime as dt
import hashlib
import json
import sqlite3

import pytest

from controller.journal import GENESIS_HASH, Journal, chain_hash, canonical_json
from test_journal import fill, sql, tablectl


@pytest.fixture
def path(tmp_path):
    return tmp_path / "journal.db"


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def export(path, *args):
    """Run the export; the journal file must come out of it byte for byte as it went in."""
    before = digest(path)
    out = tablectl("journal", "export", "--journal", str(path), *args)
    assert digest(path) == before, "export changed the journal file"
    assert "Traceback" not in out.stderr
    return out


def seqs(out):
    return [json.loads(line)["seq"] for line in out.stdout.splitlines()]


def assert_chain_vouches(out):
    """Every exported record links to the one before it from record 1, and its hash is that
    of its own fields: an auditor can check the export without the journal."""
    prev = GENESIS_HASH
    for line in out.stdout.splitlines():
        doc = json.loads(line)
        body = {k: v for k, v in doc.items() if k not in ("wall", "prev_hash", "hash")}
        assert doc["prev_hash"] == prev
        assert chain_hash(prev, canonical_json(body)) == doc["hash"]
        prev = doc["hash"]


# Damage in the middle of fill()'s 12 records, as `journal verify` names it.
DAMAGE = {
    "edited payload column": ("UPDATE records SET payload = '{\"card\":\"Kd\",\"kind\":"
                              "\"card_drawn\"}' WHERE seq = 7", 7),
    "edited body": ("UPDATE records SET body = replace(body, '\"As\"', '\"Ks\"'), "
                    "payload = replace(payload, '\"As\"', '\"Ks\"') WHERE seq = 7", 7),
    "deleted record": ("DELETE FROM records WHERE seq = 6", 6),
    "broken link": ("UPDATE records SET prev_hash = '" + "1" * 64 + "' WHERE seq = 8", 8),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_a_damaged_journal_is_not_exported_by_default(path, damage):
    statement, bad = DAMAGE[damage]
    fill(path)
    sql(path, statement)
    out = export(path)
    assert out.returncode == 1 and out.stdout == ""
    assert f"record {bad}:" in out.stderr and "Nothing was exported" in out.stderr
    assert "--verified-only" in out.stderr and f"records 1-{bad - 1}" in out.stderr


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_verified_only_exports_up_to_the_first_bad_record_and_exits_1(path, damage):
    statement, bad = DAMAGE[damage]
    records = fill(path)
    sql(path, statement)
    out = export(path, "--verified-only", "--open-round")
    assert out.returncode == 1
    assert seqs(out) == list(range(1, bad))
    assert [json.loads(l)["hash"] for l in out.stdout.splitlines()] == \
        [r.hash for r in records[:bad - 1]]
    assert_chain_vouches(out)
    assert f"record {bad}:" in out.stderr
    assert f"stops after record {bad - 1}" in out.stderr and "not exported" in out.stderr


def test_verified_only_on_a_sound_journal_is_the_whole_export(path):
    fill(path)
    whole = export(path)
    checked = export(path, "--verified-only")
    assert (whole.returncode, checked.returncode) == (0, 0)
    assert checked.stdout == whole.stdout and checked.stderr == ""


def damage_page_of(path, marker):
    """Overwrite the b-tree page header of the page holding ``marker`` (a record's text):
    the file is damaged below SQLite, as a bad sector or a torn write would leave it."""
    con = sqlite3.connect(path)
    page = con.execute("PRAGMA page_size").fetchone()[0]
    con.close()
    data = bytearray(path.read_bytes())
    at = data.index(marker.encode())
    start = at - at % page
    assert start > 0                       # not page 1, the file header
    data[start:start + 8] = b"\xff" * 8
    path.write_bytes(bytes(data))


def test_a_page_sqlite_cannot_read_stops_the_export_where_verify_stops(path):
    from controller.journal import Entry, Kind
    with Journal.open(path, "T1") as j:
        for n in range(300):
            j.append_many([Entry(Kind.ROUND_OPEN, {"n": n}, str(n + 1), "table"),
                           Entry(Kind.ROUND_CLOSE, {"outcome": "settled", "pad": "x" * 300},
                                 str(n + 1), "table")])
    damage_page_of(path, '{"n":150}')
    with Journal.open(path, readonly=True) as j:
        report = j.verify()
    assert not report.ok and 0 < report.head_seq < 600
    refused = export(path)
    assert refused.returncode == 1 and refused.stdout == ""
    assert f"record {report.bad_seq}:" in refused.stderr
    out = export(path, "--verified-only")
    assert out.returncode == 1 and seqs(out) == list(range(1, report.head_seq + 1))
    assert_chain_vouches(out)


def test_verified_only_keeps_the_selection_and_says_when_it_lies_past_the_damage(path):
    fill(path)
    sql(path, "DELETE FROM records WHERE seq = 9")
    early = export(path, "--verified-only", "--round", "1")
    assert early.returncode == 1 and {json.loads(l)["round_id"] for l in
                                      early.stdout.splitlines()} == {"1"}
    since = export(path, "--verified-only", "--since", "5")
    assert since.returncode == 1 and seqs(since) == [6, 7, 8]
    late = export(path, "--verified-only", "--since", "10")
    assert late.returncode == 1 and late.stdout == ""
    assert "record 9:" in late.stderr and "stops after record 8" in late.stderr


def test_verified_only_still_holds_back_the_open_rounds_cards(path):
    # Round 3 (records 10-12) is open at the table; record 12 is damaged, so the export stops
    # after the card of record 11, which stays face down.
    fill(path)
    sql(path, "UPDATE records SET payload = '{}' WHERE seq = 12")
    out = export(path, "--verified-only")
    assert out.returncode == 1 and seqs(out) == list(range(1, 12))
    assert out.stdout.count('"card": "As"') == 2 and "withheld" in out.stdout
    shown = export(path, "--verified-only", "--open-round")
    assert shown.stdout.count('"card": "As"') == 3


def test_when_damage_hides_the_latest_round_the_last_vouched_round_is_held_back(path):
    """The damaged page holds the latest round, so which round is open at the table cannot be
    read: the last round the export holds is taken as open (its cards held back) rather than
    the export failing or showing a card that may be face down."""
    from controller.journal import Entry, Kind
    with Journal.open(path, "T1") as j:
        for n in range(1, 201):
            rid = str(n)
            entries = [Entry(Kind.ROUND_OPEN, {"n": n}, rid, "table"),
                       Entry(Kind.DEVICE, {"kind": "card_drawn", "card": "As",
                                           "pad": "x" * 300}, rid, "shoe")]
            if n < 200:
                entries.append(Entry(Kind.ROUND_CLOSE, {"outcome": "settled"}, rid, "table"))
            j.append_many(entries)
    damage_page_of(path, '{"n":200}')
    with Journal.open(path, readonly=True) as j:
        with pytest.raises(Exception):
            j.last_round()
    out = export(path, "--verified-only")
    assert out.returncode == 1 and out.stdout
    docs = [json.loads(line) for line in out.stdout.splitlines()]
    last = max(int(d["round_id"]) for d in docs if d["kind"] == "round_open")
    assert any("withheld" in d["payload"] for d in docs if d["kind"] == "device")
    for d in docs:
        if d["kind"] == "device":
            assert ("withheld" in d["payload"]) == (int(d["round_id"]) == last), d["round_id"]


def test_verified_only_of_the_latest_round_stops_where_the_chain_stops(path, tmp_path):
    """--round of the latest round (or `last`) with damage before it or in it: nothing past
    the last record the chain vouches for is exported."""
    fill(path)
    sql(path, "UPDATE records SET payload = '{\"outcome\":\"void\"}' WHERE seq = 9")
    for round_ in ("3", "last"):
        out = export(path, "--verified-only", "--round", round_)
        assert out.returncode == 1 and seqs(out) == [], round_
        assert "stops after record 8" in out.stderr
    # The damage cuts the latest round in two: its records up to the damage, no further.
    cut = tmp_path / "cut.db"
    fill(cut)
    sql(cut, "UPDATE records SET payload = '{}' WHERE seq = 12")
    out = export(cut, "--verified-only", "--round", "3")
    assert out.returncode == 1 and seqs(out) == [10, 11]


def test_a_since_time_later_than_now_is_said_to_be_so(path):
    """A mistyped year (2062 for 2026) exports nothing: the auditor is told why on stderr, the
    exit status stays 0 (nothing is wrong with the journal), and a time past the last record
    but not past now, as an export in steps passes, exports nothing without a word."""
    records = fill(path)
    future = export(path, "--since", "2062-11-21T19:00:00Z")
    assert future.returncode == 0 and future.stdout == ""
    assert "2062-11-21T19:00:00Z is later than now" in future.stderr
    assert "nothing was exported; check the date" in future.stderr
    after_last = records[-1].wall_ns // 10**9 + 1
    past = export(path, "--since", dt.datetime.fromtimestamp(after_last, dt.timezone.utc)
                  .strftime("%Y-%m-%dT%H:%M:%SZ"))
    assert (past.returncode, past.stdout, past.stderr) == (0, "", "")


def test_a_since_time_exports_a_whole_tail_when_the_clock_went_back(path):
    """A clock set forward by mistake and then back (NTP stepping it while the table ran,
    docs/journal.md, *The clock*) stamps later records with earlier times. --since TIME exports
    every record from the first one stamped at or after TIME on, whatever the later ones'
    stamps: none written after it is left out, and the lines chain with no hole."""
    from test_journal import FakeClock
    clock = FakeClock()
    hour = 3600 * 10**9
    with Journal.open(path, "T1", clock=clock) as j:
        for n in range(1, 13):
            if n == 5:
                clock.wall += hour              # set an hour ahead ...
            if n == 9:
                clock.wall -= hour              # ... and back, by NTP
            j.append("table", {"n": n}, source="table")
        stamps = [r.wall_ns for r in j.records()]
    assert stamps[8] < stamps[7]                 # record 9 stamped before record 8
    # record 6, stamped in the hour ahead: records 9-12, written after it, bear earlier times
    when = dt.datetime.fromtimestamp(stamps[5] // 10**9, dt.timezone.utc)
    since = when.replace(microsecond=stamps[5] % 10**9 // 1000).isoformat()
    out = export(path, "--since", since)
    docs = [json.loads(line) for line in out.stdout.splitlines()]
    assert [d["seq"] for d in docs] == list(range(6, 13))
    for before, after in zip(docs, docs[1:]):
        assert after["prev_hash"] == before["hash"]
