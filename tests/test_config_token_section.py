"""A console token pasted as a section's name (``[TOKEN]``, ``[api.tokens.TOKEN]``) is never
repeated by a problem: `config check` runs before every start into the system's log, the
daemon's start and reload refusals go there too, and the reload's refusal is journaled. The
problem names its line and says what it looks like; a misspelt name, close to one allowed, is
still shown with its suggestion."""
import asyncio
import json

import pytest

from controller.cli import main
from controller.config import hash_token
from config_helpers import line_of, only
from test_token_reload import A, reloads, running, write

T = "Zq8vN3kLw5RtY7pXc2Hm9Jb4"          # a token as `config hash-token --new` makes them


BASE = """[table]
id = "t1"
game = "q-poker"
mode = "shoe"
boxes = 7
"""


@pytest.mark.parametrize("extra, key, what", [
    (f'[{T}]\ndealer = "x"\n', "(not shown)", "unknown section"),
    (f'{T} = "x"\n', "(not shown)", "unknown key"),
    (f'[api.tokens.{T}]\nx = 1\n', "api.tokens.(not shown)", "unknown section"),
    (f'[api.{T}]\nx = 1\n', "api.(not shown)", "unknown section"),
    (f'[gpio]\n{T} = 17\n', "gpio.(not shown)", "unknown key"),
    (f'[limits.{T}]\nmax = 1\n', "limits.(not shown)", "unknown section"),
    (f'[interpretations.{T}]\nx = "y"\n', "interpretations.(not shown)", "unknown section"),
    (f'[interpretations]\n{T} = "y"\n', "interpretations.(not shown)", "unknown key"),
    # Deeper than an interpretation's key (interpretations have no sections of their own).
    (f'[interpretations.misdeal]\n{T} = "y"\n', "interpretations.misdeal.(not shown)",
     "unknown key"),
    (f'[interpretations]\nmisdeal.{T} = "y"\n', "interpretations.misdeal.(not shown)",
     "unknown key"),
    (f'[interpretations]\n"{T}.x" = "y"\n', "interpretations.(not shown)", "unknown key"),
    # A section holding more than one key is named once, at its own line.
    (f'[interpretations.{T}]\nx = "y"\nz = "w"\n', "interpretations.(not shown)",
     "unknown section"),
])
def test_a_token_as_a_name_is_named_by_its_line_never_its_text(extra, key, what):
    text = extra + BASE if extra.startswith(T) else BASE + extra     # a key before [table]
    p = only(text)
    assert (p.key, p.line) == (key, line_of(text, T))
    assert p.reason.startswith(f"{what}, as long as a token")
    assert T not in p.format("table.toml") and p.fix


def test_a_long_misspelt_name_is_still_shown_with_its_suggestion():
    p = only(BASE + "[api]\nrefused_window_ss = 10\n")
    assert p.key == "api.refused_window_ss" and "refused_window_s" in p.fix


def refused_unshown(path, capsys, line: int, said: str) -> None:
    """`config check` and `tablectl run` refuse ``path`` with the problem ``said`` at ``line``,
    and neither repeats the token."""
    assert main(["config", "check", str(path)]) == 2
    err = capsys.readouterr().err
    assert f":{line}: {said}" in err, err
    assert T not in err
    # `tablectl run` refuses the same file with the same words.
    assert main(["run", "--config", str(path)]) == 2
    out = capsys.readouterr()
    assert f":{line}: {said}" in out.err, out.err
    assert T not in out.err + out.out


def reload_refused_unshown(tmp_path, path, edit, capsys):
    """The journaled record of a reload refused once ``edit`` (text -> text) has changed
    ``path`` under the running service; neither the record, the reload's answer nor the
    output repeats the token."""
    async def scenario():
        svc, task = await running(path)
        path.write_text(edit(path.read_text()))
        done = svc.reload()
        svc.stop()
        await task
        return done

    done = asyncio.run(scenario())
    assert done["outcome"] == "refused"
    (rec,) = reloads(tmp_path / "j.db")
    assert T not in json.dumps(rec.payload) and T not in json.dumps(done)
    out = capsys.readouterr()
    assert T not in out.out + out.err
    return rec


def test_config_check_and_the_start_refusal_never_repeat_it(tmp_path, capsys):
    path = write(tmp_path, {"dealer": A})
    text = path.read_text() + f"\n[{T}]\ndealer = \"{hash_token(T)}\"\n"
    path.write_text(text)
    refused_unshown(path, capsys, line_of(text, f"[{T}]"),
                    "(not shown): unknown section, as long as a token")


def test_the_reload_refusal_never_repeats_it(tmp_path, capsys):
    path = write(tmp_path, {"dealer": A})
    rec = reload_refused_unshown(tmp_path, path,
                                 lambda text: text + f"\n[{T}]\ndealer = \"x\"\n", capsys)
    line = line_of(path.read_text(), T)
    assert {(q["key"], q["line"]) for q in rec.payload["problems"]} == {
        ("(not shown)", line)}
