"""``tablectl config check`` on a terminal, given a table.toml holding control characters: a
TOML key or string may spell any character with an escape (``"\\u001b[2J"``), so a key, or a
value the check prints back (the journal's path), could otherwise clear the screen, retitle the
terminal, reorder the line with U+202E or start a forged line. Each reaches the terminal as its
escape (docs/configuration.md)."""
from __future__ import annotations

import subprocess
import sys
import textwrap

from config_helpers import BASE

RAW = "\x1b\x07\r\u202e\x9b\u2028"


def check(path):
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True, encoding="utf-8", timeout=60)
    said = out.stdout + out.stderr
    assert "Traceback" not in said, said
    assert not {ch for ch in RAW if ch in said}, ascii(said)
    return out


def test_a_key_holding_escapes_and_a_line_break_forges_nothing_on_the_terminal(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(BASE + textwrap.dedent(r"""
        "b\n  t:1: ok\u202e" = 1

        ["\u001b[2J\u001b]0;pwned\u0007x"]
        a = 1
        """), encoding="utf-8")
    out = check(path)
    assert out.returncode == 2
    lines = out.stderr.splitlines()
    assert lines[0].endswith("2 problems") and len(lines) == 3, out.stderr
    assert r"\x1b[2J\x1b]0;pwned\x07x: unknown section" in out.stderr, out.stderr
    # shorter than a token, so shown (as its escape) rather than masked as a pasted token
    assert r"b\n  t:1: ok\u202e" in out.stderr, out.stderr


def test_a_path_holding_a_right_to_left_override_is_printed_as_its_escape(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(BASE + textwrap.dedent(fr"""
        [journal]
        path = "{tmp_path}/journal\u202egpj.db"
        """), encoding="utf-8")
    out = check(path)
    assert out.returncode == 0, out.stderr
    assert f"journal {tmp_path}/journal\\u202egpj.db" in out.stdout, out.stdout


def test_a_file_whose_own_path_holds_escapes_is_named_escaped_in_every_line(tmp_path):
    """The file's own path, as the person typed it (or the unit gave it to the daemon), heads
    the list of problems: it was printed raw there while each problem's line printed it
    escaped. ``config check`` and the daemon's start (``tablectl run``) both print it."""
    where = tmp_path / "t\x1b[2J\u202e"
    where.mkdir()
    path = where / "table.toml"
    path.write_text('[table]\nid = "t1"\n', encoding="utf-8")
    out = check(path)
    assert out.returncode != 0
    assert f"{tmp_path}/t\\x1b[2J\\u202e/table.toml: 2 problems" in out.stderr, out.stderr
    run = subprocess.run([sys.executable, "-m", "controller.cli", "run", "--config", str(path)],
                         capture_output=True, text=True, encoding="utf-8", timeout=60)
    assert run.returncode != 0
    assert not {ch for ch in RAW if ch in run.stdout + run.stderr}, ascii(run.stderr)
    assert f"{tmp_path}/t\\x1b[2J\\u202e/table.toml: 2 problems" in run.stderr, run.stderr


def test_a_valid_holdem_file_whose_path_holds_escapes_names_it_escaped(tmp_path):
    """A valid Hold'em file: the line with its stakes named the file by its path raw."""
    where = tmp_path / "t\x1b[2J\u202e"
    where.mkdir()
    path = where / "table.toml"
    path.write_text(textwrap.dedent("""
        [table]
        id = "t1"
        game = "texas-holdem"
        mode = "shoe"
        boxes = 10

        [holdem]
        structure = "no-limit"
        small_blind = 5
        big_blind = 10

        [devices.shoe]
        class = "shoe"
        port = "/dev/tablectl/shoe"
        """), encoding="utf-8")
    out = check(path)
    assert out.returncode == 0, out.stderr
    assert f"{tmp_path}/t\\x1b[2J\\u202e/table.toml: [holdem] small blind 5" in out.stdout
