"""Every `tablectl ...` command line the documentation shows is one the real argument parser
takes: a command renamed, or an option dropped or changed, fails here rather than at a table.

The lines are taken from the Markdown (inline code and shell blocks), the example
configuration and the files of systemd/. A usage line's metavariables (``GAME``, ``FILE``)
are given a value of their kind and its optional parts (``[--json]``) are left out; a line
that ends in ``…`` is checked as far as it goes; a bare command name (`tablectl journal`)
must name a command.
"""
import argparse
import re
import shlex
from pathlib import Path

import pytest

from controller.cli import build_parser

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md")),
           ROOT / "docs" / "table.toml.example", *sorted((ROOT / "systemd").iterdir()),
           ROOT / "firmware-sim" / "README.md"]
COMMANDS = ("rules", "odds", "journal", "config", "panel", "run", "sim", "demo", "integrity",
            "bench", "reload")
# A usage line's metavariables, and a value of each kind.
FILL = {"GAME": "q-poker", "FILE": "/etc/tablectl/table.toml", "ROUND": "42", "N": "42",
        "ROLE": "dealer", "SEQ": "0", "PATH": "/var/lib/tablectl/journal.db",
        "SOCKET": "/run/tablectl/control.sock", "DEVICE": "shoe", "US": "0",
        "SEQ|TIME": "0", "SEQ:HASH": "1234:9f", "KEY=VALUE": "decks=one", "DIR": "/tmp/x",
        "SECONDS": "60", "NAME": "daemon", "ADDRESS": "tcp", "SEED": "1", "SPEED": "1"}
_LINE = re.compile(r"(?<![\w/.-])tablectl\s+(" + "|".join(COMMANDS) + r")\b([^`\n]*)")
# Where a command ends: a shell operator, a comment, a sentence's parenthesis.
_END = re.compile(r"\s(?:[<>|(]|&&|;|#)|\"|\)|\s*$")


def command_lines():
    """(file, line number, the command line as written) for every shown command."""
    found = []
    for path in SOURCES:
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            for part in re.findall(r"`([^`]+)`", line) or [line]:
                for m in _LINE.finditer(part):
                    rest = re.sub(r"\[[^\]]*\]", "", m.group(2))      # [--json], [A | B]
                    rest = re.sub(r"\$\([^)]*\)", "X", rest)           # $(date +%F)
                    alternatives = rest.split("\\|")   # `journal verify \| show ROUND`
                    for i, alt in enumerate(alternatives):
                        alt = alt[:_END.search(alt).start()].rstrip(" \\.,:;")
                        found.append((str(path.relative_to(ROOT)), number,
                                      f"{m.group(1)}{alt}" if i == 0
                                      else f"{m.group(1)} {alt.strip()}"))
    return found


class Refused(Exception):
    pass


def parse(words):
    """The parser's verdict on ``words``: Refused with its message, or the unknown words."""
    def error(self, message):
        raise Refused(message)
    parser = build_parser()
    for p in _parsers(parser):
        p.error = error.__get__(p)
    try:
        _, extra = parser.parse_known_args(words)
    except SystemExit as exc:       # --help
        if exc.code not in (0, None):
            raise
        return []
    return extra


def _parsers(parser):
    yield parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                yield from _parsers(sub)


def words_of(line):
    return [FILL.get(w.rstrip("…"), w.rstrip("…")) for w in shlex.split(line)
            if w.rstrip("…")]


LINES = command_lines()


def test_the_documentation_shows_commands():
    """The collection above finds them (it would pass vacuously otherwise)."""
    shown = {" ".join(words_of(line)[:2]) for _, _, line in LINES}
    assert {"run --config", "config check", "journal verify", "journal export",
            "journal show", "panel check", "config hash-token", "reload"} <= shown, shown


def test_the_check_catches_a_wrong_line():
    """An option the command does not take, a bad choice and a command that is not one."""
    assert parse(words_of("config hash-token --new --role dealer")) == []
    assert parse(words_of("journal export --from 3")) == ["--from", "3"]
    with pytest.raises(Refused, match="invalid choice"):
        parse(words_of("config hash-token --role croupier"))
    with pytest.raises(Refused, match="invalid choice"):
        parse(words_of("journal check"))


@pytest.mark.parametrize("where, number, line", LINES,
                         ids=[f"{p}:{n}" for p, n, _ in LINES])
def test_every_documented_command_line_parses(where, number, line):
    words = words_of(line)
    elided = "…" in line
    try:
        extra = parse(words)
    except Refused as exc:
        # A bare command name (`tablectl journal`), or a line cut short with "…", lacks what
        # comes after it: that is the only refusal such a line may get.
        short = str(exc).startswith("the following arguments are required") or \
            str(exc).endswith("expected one argument")
        mention = all(w in COMMANDS or w.isalpha() or "-" in w and not w.startswith("-")
                      for w in words) and len(words) <= 2
        assert short and (elided or mention), f"{where}:{number}: `tablectl {line}`: {exc}"
        return
    assert not extra, f"{where}:{number}: `tablectl {line}`: the parser does not take {extra}"
