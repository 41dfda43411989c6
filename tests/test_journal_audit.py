"""The journal's readers (`tablectl journal verify|rounds|show|export`, `tablectl integrity
report`) against a journal a real run wrote and someone then rewrote, chain and all: a chain
recomputed after an edit verifies (only an anchor catches it, docs/journal.md), so what such a
journal holds is whatever the person put there. It must never reach the reader's terminal as
control characters (an escape sequence can clear the screen or rewrite the lines above, a
line break inside a name forges a line of the account, a right-to-left mark reorders what
follows), never stop a reader with a traceback, and the file is never changed."""
import hashlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from controller.journal import GENESIS_HASH, body_text, canonical_json, chain_hash

ROOT = Path(__file__).resolve().parents[1]


def tablectl(*args):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                          text=True, cwd=ROOT, timeout=120)


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    """The journal of a real run: the demo's controller process playing Q Poker rounds on
    simulated devices, one of them voided."""
    where = tmp_path_factory.mktemp("demo")
    out = tablectl("demo", "--game", "q-poker", "--mode", "shoe", "--rounds", "3", "--faults",
                   "--dir", str(where))
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
    (journal,) = where.glob("*/journal.db")
    return journal


@pytest.fixture
def journal(played, tmp_path):
    path = tmp_path / "journal.db"
    shutil.copy(played, path)
    return path


def rewrite(path, edit, start=1):
    """Apply ``edit(conn)`` to the journal and recompute every hash from ``start`` on, as a
    tamperer who knows the format would: the chain verifies afterwards."""
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("BEGIN")
    edit(conn)
    prev = (conn.execute("SELECT hash FROM records WHERE seq = ?", (start - 1,)).fetchone()
            or (GENESIS_HASH,))[0]
    for seq, wall, mono, table, rnd, kind, source, article, payload in conn.execute(
            "SELECT seq, wall_ns, mono_ns, table_id, round_id, kind, source, article, payload "
            "FROM records WHERE seq >= ? ORDER BY seq", (start,)).fetchall():
        payload = canonical_json(json.loads(payload))
        body = body_text(seq, wall, mono, table, rnd, kind, source, article, payload)
        digest = chain_hash(prev, body)
        conn.execute("UPDATE records SET payload = ?, body = ?, prev_hash = ?, hash = ? "
                     "WHERE seq = ?", (payload, body, prev, digest, seq))
        prev = digest
    conn.execute("COMMIT")
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()


def set_payload(conn, where, change):
    """Change the payload of the first record matching ``where`` (SQL) with ``change(dict)``."""
    seq, payload = conn.execute(f"SELECT seq, payload FROM records WHERE {where} ORDER BY seq "
                                "LIMIT 1").fetchone()
    doc = json.loads(payload)
    change(doc)
    conn.execute("UPDATE records SET payload = ? WHERE seq = ?", (json.dumps(doc), seq))
    return seq


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def first_command_round(conn):
    return conn.execute("SELECT round_id FROM records WHERE kind = 'command' AND round_id IS "
                        "NOT NULL ORDER BY seq LIMIT 1").fetchone()[0]


ESC = "\x1b[2K\x1b[1A\x1b[31m"       # erase the line, go up one, turn red
HIDDEN = "\x1b]0;title\x07\x9b2J\u202e"  # a window title, a C1 CSI, a right-to-left override


def test_control_characters_in_a_rewritten_journal_reach_no_terminal(journal):
    held = {}

    def edit(conn):
        held["round"] = first_command_round(conn)
        set_payload(conn, f"kind = 'command' AND round_id = '{held['round']}'",
                    lambda d: d.update(name="open" + ESC + "bets"))
        conn.execute("UPDATE records SET article = ? WHERE kind = 'round_close' AND seq = "
                     "(SELECT MIN(seq) FROM records WHERE kind = 'round_close')",
                     ("89/2004 art. 11(3)" + HIDDEN,))
        conn.execute("UPDATE records SET source = ? WHERE seq = (SELECT MIN(seq) FROM records "
                     "WHERE kind = 'state')", ("table" + ESC,))

    rewrite(journal, edit)
    before = digest(journal)
    assert tablectl("journal", "verify", "--journal", str(journal)).returncode == 0
    for args in (["journal", "show", held["round"]], ["journal", "rounds"],
                 ["journal", "show", "1"]):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr
        said = out.stdout + out.stderr
        for ch in "\x1b\x07\x9b\u202e":
            assert ch not in said, (args, ch)
    shown = tablectl("journal", "show", held["round"], "--journal", str(journal)).stdout
    assert r"open\x1b[2K\x1b[1A\x1b[31mbets" in shown, shown
    listed = tablectl("journal", "rounds", "--journal", str(journal)).stdout
    assert r"\x1b]0;title\x07\x9b2J\u202e" in listed, listed
    assert digest(journal) == before


def test_a_line_break_inside_a_name_forges_no_line_of_the_account(journal):
    held = {}
    forged = "\n  999999  00:00:00.000  table         round_close   settled"

    def edit(conn):
        held["round"] = first_command_round(conn)
        set_payload(conn, f"kind = 'command' AND round_id = '{held['round']}'",
                    lambda d: d.update(name="open_bets" + forged))

    rewrite(journal, edit)
    out = tablectl("journal", "show", held["round"], "--journal", str(journal))
    assert out.returncode == 0, out.stderr
    assert "999999" in out.stdout
    assert not any(line.lstrip().startswith("999999") for line in out.stdout.splitlines())
    assert r"open_bets\n  999999" in out.stdout


def test_the_table_id_of_a_rewritten_journal_is_printed_escaped_everywhere(journal):
    table = "demo" + ESC

    def edit(conn):
        conn.execute("UPDATE meta SET value = ? WHERE key = 'table_id'", (table,))
        conn.execute("UPDATE records SET table_id = ?", (table,))

    rewrite(journal, edit)
    for args in (["journal", "verify"], ["journal", "show", "1"], ["integrity", "report"]):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode == 0, out.stderr
        assert "\x1b" not in out.stdout + out.stderr, args
        assert r"demo\x1b[2K" in out.stdout, (args, out.stdout)


def test_the_json_lines_escape_every_control_and_format_character(journal):
    held = {}
    name = "open" + HIDDEN + "\u2028bets\U000e0041"

    def edit(conn):
        held["round"] = first_command_round(conn)
        held["seq"] = set_payload(conn, f"kind = 'command' AND round_id = '{held['round']}'",
                                  lambda d: d.update(name=name))

    rewrite(journal, edit)
    for args in (["journal", "show", held["round"], "--json"], ["journal", "export"]):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode == 0, out.stderr
        for ch in "\x1b\x07\x9b\u202e\u2028\U000e0041":
            assert ch not in out.stdout, (args, ascii(ch))
        docs = [json.loads(line) for line in out.stdout.splitlines()]
        (rec,) = [d for d in docs if d["seq"] == held["seq"]]
        assert rec["payload"]["name"] == name          # the same value to a JSON reader
    # the text a person reads is left as it was: Chinese, accents, a space
    assert "中文" in tablectl_json_of(journal, "中文 é")


def tablectl_json_of(journal, text):
    def edit(conn):
        set_payload(conn, "kind = 'service'", lambda d: d.update(note=text))

    rewrite(journal, edit)
    return tablectl("journal", "export", "--journal", str(journal)).stdout


def test_the_latest_round_named_in_an_error_is_printed_escaped(journal):
    def edit(conn):
        latest = conn.execute("SELECT round_id FROM records WHERE kind = 'round_open' ORDER BY "
                              "seq DESC LIMIT 1").fetchone()[0]
        conn.execute("UPDATE records SET round_id = ? WHERE round_id = ?",
                     (latest + ESC, latest))

    rewrite(journal, edit)
    for args in (["journal", "show", "nosuch"], ["journal", "export", "--round", "nosuch"]):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode == 2 and "is not in" in out.stderr, out.stderr
        assert "\x1b" not in out.stderr and r"\x1b[2K" in out.stderr, out.stderr


def test_a_lone_surrogate_in_a_rewritten_journal_stops_no_reader(journal):
    """JSON may spell half a UTF-16 pair (\\ud800) that no UTF-8 terminal can be written:
    show and export stopped on it with UnicodeEncodeError. Escaped, it reaches the reader as
    written, and a JSON reader gets it back."""
    held = {}

    def edit(conn):
        held["round"] = first_command_round(conn)
        seq, payload = conn.execute("SELECT seq, payload FROM records WHERE kind = 'command' "
                                    "AND round_id = ? ORDER BY seq LIMIT 1",
                                    (held["round"],)).fetchone()
        held["seq"] = seq
        doc = json.loads(payload)
        doc["args"] = {"who": "\ud800x"}
        conn.execute("UPDATE records SET payload = ? WHERE seq = ?", (json.dumps(doc), seq))

    rewrite(journal, edit)
    for args in (["journal", "show", held["round"]], ["journal", "show", held["round"], "--json"],
                 ["journal", "export"]):
        out = tablectl(*args, "--journal", str(journal))
        assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-600:]
        assert r"\ud800x" in out.stdout
    lines = tablectl("journal", "export", "--journal", str(journal)).stdout.splitlines()
    (rec,) = [json.loads(x) for x in lines if json.loads(x)["seq"] == held["seq"]]
    assert rec["payload"]["args"]["who"] == "\ud800x"
