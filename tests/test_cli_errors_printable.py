"""A ``tablectl`` command refused prints ``tablectl: error: ...`` to a terminal, and the error
names what it was given: a path typed on the command line, or read from table.toml, where a
TOML string may spell any character with an escape. A path holding an escape sequence or a
right-to-left override was printed raw by every such refusal (a journal or configuration that
does not exist, a control socket nobody listens on), clearing the screen or turning the line
around. Each line of the error now reaches the terminal as escapes; an error of several lines
(the problems of a table.toml) keeps its lines (docs/controller.md, "Text from devices and
persons")."""
from __future__ import annotations

import subprocess
import sys

import pytest

RAW = "\x1b\x07\r\u202e\x9b\u2028"


def tablectl(*args):
    out = subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                         text=True, encoding="utf-8", timeout=60)
    assert "Traceback" not in out.stderr, out.stderr
    return out


@pytest.mark.parametrize("command", [
    ("journal", "verify", "--journal"), ("journal", "rounds", "--journal"),
    ("journal", "export", "--journal"), ("integrity", "report", "--journal"),
    ("config", "check"), ("run", "--config"), ("reload", "--control")])
def test_a_refusal_naming_a_path_prints_it_escaped(tmp_path, command):
    path = tmp_path / "n\x1b[2J\x1b]0;x\x07\u202e\u2028" / "j.db"
    out = tablectl(*command, str(path))
    assert out.returncode != 0
    said = out.stdout + out.stderr
    assert not {ch for ch in RAW if ch in said}, ascii(said)
    assert "tablectl: error: " in out.stderr and "n\\x1b[2J\\x1b]0;x\\x07\\u202e\\u2028" in said


def test_an_error_of_several_lines_keeps_its_lines(tmp_path):
    """The problems of a table.toml read for its journal: one line each, below the head."""
    config = tmp_path / "table.toml"
    config.write_text('[table]\nid = "t1"\n', encoding="utf-8")
    out = tablectl("journal", "verify", "--config", str(config))
    assert out.returncode != 0
    lines = out.stderr.splitlines()
    assert lines[0] == f"tablectl: error: {config}: 3 problems" or \
        lines[0].startswith(f"tablectl: error: {config}: "), lines
    assert any(ln.startswith(f"  {config}:1: table.game: ") for ln in lines), lines
    assert lines[-1] == "(to read the journal meanwhile, name it with --journal PATH)", lines


def test_an_argument_not_taken_is_named_escaped():
    """An argument the command does not take is named back with the way out."""
    out = tablectl("journal", "verify", "x\x1b[2J\u202e")
    assert out.returncode == 2
    assert not {ch for ch in RAW if ch in out.stderr}, ascii(out.stderr)
    assert "unrecognized arguments: x\\x1b[2J\\u202e" in out.stderr, out.stderr
