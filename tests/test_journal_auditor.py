"""An auditor's own check of a journal the real controller wrote, written from docs/journal.md
alone (*The hash chain*, *Checking a journal by hand*) with the standard library: it must
verify a sound journal to the head `tablectl journal verify` prints, and it and `verify` must
each catch, and place at the same record, one byte changed in the file, a record deleted, two
records swapped, and (with an anchor) a tail cut off."""
import hashlib
import json
import re
import sqlite3
import subprocess
from pathlib import Path

import pytest

from test_journal import doc_blocks, needs_sqlite3
from test_journal_audit import played, tablectl  # noqa: F401 (played is a fixture)

pytestmark = pytest.mark.hil

DOC = (Path(__file__).resolve().parents[1] / "docs" / "journal.md").read_text()
GENESIS = "0" * 64
# The body's fields and the query columns that repeat them (docs/journal.md, *Records*).
COLUMNS = ("seq", "wall_ns", "mono_ns", "table_id", "round_id", "kind", "source", "article")


SHORT = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r",
         "\t": "\\t"}


def spell_text(text):
    out = []
    for ch in text:
        if ch in SHORT:
            out.append(SHORT[ch])
        elif " " <= ch <= "~":
            out.append(ch)
        elif ord(ch) > 0xFFFF:
            high, low = divmod(ord(ch) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        else:
            out.append(f"\\u{ord(ch):04x}")
    return '"' + "".join(out) + '"'


def canonical(value):
    """Canonical JSON spelled by the rules docs/journal.md states, not by a JSON library."""
    if value is None or isinstance(value, bool):
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return repr(value)
    if isinstance(value, str):
        return spell_text(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(v) for v in value) + "]"
    return "{" + ",".join(f"{spell_text(k)}:{canonical(value[k])}" for k in sorted(value)) + "}"


def audit(path, anchor=None):
    """The auditor's program: ``(None, head_seq, head_hash)`` for a journal that verifies, or
    ``(seq, why, None)`` naming the first record that does not."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    rows = conn.execute("SELECT seq, wall_ns, mono_ns, table_id, round_id, kind, source, "
                        "article, payload, body, prev_hash, hash FROM records ORDER BY seq")
    prev, expect, hashes = GENESIS, 1, {}
    for row in rows:
        seq, payload, body, prev_hash, digest = row[0], row[8], row[9], row[10], row[11]
        if seq != expect:
            return expect, "missing", None
        if prev_hash != prev:
            return seq, "previous hash", None
        if hashlib.sha256(prev.encode("ascii") + body.encode("ascii")).hexdigest() != digest:
            return seq, "hash", None
        doc = json.loads(body)
        # The body binds the record's number and times: its fields are the row's columns.
        if (doc["v"] != 1 or canonical(doc) != body
                or [doc[c] for c in COLUMNS] != list(row[:8])
                or json.loads(payload) != doc["payload"]):
            return seq, "columns", None
        prev, hashes[seq], expect = digest, digest, expect + 1
    conn.close()
    if anchor is not None and hashes.get(anchor[0]) != anchor[1]:
        return anchor[0], "anchor", None
    return None, expect - 1, prev


@pytest.fixture
def journal(played, tmp_path):
    """A copy of the run's journal, every record in the one file (SQLite's online backup, as
    docs/journal.md's *Backups* makes one)."""
    path = tmp_path / "journal.db"
    source = sqlite3.connect(f"file:{played}?mode=ro", uri=True)
    target = sqlite3.connect(path)
    source.backup(target)
    target.execute("PRAGMA journal_mode = DELETE")    # no -wal: the file is the journal
    source.close()
    target.close()
    return path


def verify(path, *args):
    return tablectl("journal", "verify", "--journal", str(path), *args)


def rows(path, statement, *params):
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        return conn.execute(statement, params).fetchall()
    finally:
        conn.close()


def test_the_recipe_verifies_the_real_journal_to_the_head_verify_prints(journal):
    bad, head_seq, head_hash = audit(journal)
    assert bad is None and head_seq > 50
    out = verify(journal)
    assert out.returncode == 0, out.stderr
    assert f"head record {head_seq} hash {head_hash}" in out.stdout


def test_every_kind_the_controller_wrote_is_in_the_documents_table(journal):
    """An auditor reads each record by its kind: the document must say what each one is."""
    documented = set(re.findall(r"^\| `([a-z_]+)` \|", DOC.split("The kinds the controller "
                                                                  "writes:", 1)[1], re.M))
    written = {kind for (kind,) in rows(journal, "SELECT DISTINCT kind FROM records")}
    assert written - documented == set()


def flip_a_byte(path, seq):
    """One byte of record ``seq``'s body changed in the file itself, as a disk or an editor of
    bytes would change it: a letter of its kind, under SQLite's nose."""
    (body,) = rows(path, "SELECT body FROM records WHERE seq = ?", seq)[0]
    data = bytearray(path.read_bytes())
    at = data.find(body.encode("ascii"))
    assert at > 0 and data.count(body.encode("ascii")) == 1
    at += body.index('"kind":"') + len('"kind":"')
    data[at] ^= 0x20                                  # lower case to upper case
    path.write_bytes(bytes(data))


def delete(path, seq):
    rows(path, "DELETE FROM records WHERE seq = ?", seq)


def swap(path, seq):
    """Records ``seq`` and ``seq + 1`` change places: each row takes the other's contents."""
    cols = "wall_ns, mono_ns, table_id, round_id, kind, source, article, payload, body, " \
           "prev_hash, hash"
    a, b = (rows(path, f"SELECT {cols} FROM records WHERE seq = ?", s)[0] for s in (seq, seq + 1))
    sets = ", ".join(f"{c} = ?" for c in cols.split(", "))
    rows(path, f"UPDATE records SET {sets} WHERE seq = ?", *b, seq)
    rows(path, f"UPDATE records SET {sets} WHERE seq = ?", *a, seq + 1)


@pytest.mark.parametrize("damage", [flip_a_byte, delete, swap], ids=lambda f: f.__name__)
def test_the_recipe_and_verify_catch_each_damage_at_the_same_record(journal, damage):
    (seq,) = rows(journal, "SELECT min(seq) FROM records WHERE kind = 'state'")[0]
    damage(journal, seq)
    bad, why, _ = audit(journal)
    assert bad == seq, (bad, why)
    out = verify(journal)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"NOT VERIFIED: record {seq}:" in out.stderr, out.stderr
    assert f"last good record {seq - 1} hash" in out.stderr


def test_a_tail_cut_off_is_caught_only_with_an_anchor_and_named(journal):
    """The chain alone cannot see its last records gone (docs/journal.md): the anchor can."""
    _, head_seq, head_hash = audit(journal)
    anchor = f"{head_seq}:{head_hash}"
    rows(journal, "DELETE FROM records WHERE seq > ?", head_seq - 5)
    assert audit(journal)[0] is None and verify(journal).returncode == 0
    assert audit(journal, (head_seq, head_hash))[0] == head_seq
    out = verify(journal, "--anchor", anchor)
    assert out.returncode == 1 and "Traceback" not in out.stderr
    assert f"record {head_seq}" in out.stderr and "cut off" in out.stderr, out.stderr


def test_the_documents_spelling_rules_are_those_the_controller_writes_by(journal):
    """Text with every kind of character the rules name, and numbers past 2^53 and with
    fractions, appended by the controller's own writer: the auditor, spelling the body by the
    document's rules alone, gets the stored body, and the journal verifies."""
    from controller.journal import Journal
    with Journal.open(journal, readonly=True) as reader:
        table = reader.table_id
    text = "\"\\/\b\f\n\r\t\x00\x1f\x7f\x80\u00e9\u202e\u2028\ufeff\U0001F0CF 翹骰 ~"
    with Journal.open(journal, table) as writer:
        writer.append("decision", {text: [text, 2**63 - 1, -2**53 - 1, 1e-05, 1e16, 0.1, True,
                                          None, {"z": 1, "Z": 2, "é": 3, "a": []}]},
                      source="table", article=text)
        head = writer.head()
    assert audit(journal) == (None, *head)


def test_the_first_record_deleted_is_named_without_a_record_0(journal):
    """Records are numbered from 1: a journal whose first record is gone begins at record 2,
    and there is no record 0 to follow, nor to be the last good one."""
    delete(journal, 1)
    assert audit(journal)[:2] == (1, "missing")
    out = verify(journal)
    assert out.returncode == 1
    assert "record 1: missing: record 1 is gone (the journal begins at record 2)" in out.stderr
    assert "no record before it verifies" in out.stderr
    assert "record 0" not in out.stderr, out.stderr



def edit_payload_column(path, seq):
    """The payload column edited, the body left as it was: what a query or a report reads."""
    rows(path, "UPDATE records SET payload = '{\"forged\":true}' WHERE seq = ?", seq)


@needs_sqlite3
@pytest.mark.parametrize("damage, says", [
    (None, None), (flip_a_byte, "hash does not match its body"),
    (delete, "missing"), (swap, "previous hash does not match"),
    (edit_payload_column, "a column differs from its body")],
    ids=["sound", "flip_a_byte", "delete", "swap", "edit_payload_column"])
def test_the_documented_shell_script_names_the_first_bad_record(journal, tmp_path, damage, says):
    """docs/journal.md's check-journal.sh, run as the document gives it, on the real journal."""
    script, _ = doc_blocks()
    check = tmp_path / "check-journal.sh"
    check.write_text(script)
    (seq,) = rows(journal, "SELECT min(seq) FROM records WHERE kind = 'state'")[0]
    _, head_seq, head_hash = audit(journal)
    if damage is not None:
        damage(journal, seq)
        assert audit(journal)[0] == seq
    out = subprocess.run(["sh", str(check), str(journal)], capture_output=True, text=True)
    if damage is None:
        assert out.returncode == 0, out.stdout + out.stderr
        assert out.stdout.strip() == f"{head_seq} records verify; head {head_hash}"
    else:
        assert out.returncode == 1 and out.stdout.startswith(f"record {seq}: {says}"), \
            out.stdout
