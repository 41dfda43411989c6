"""[pan9] in table.toml: a Super Pan 9 table's house co-bank capital, predetermined (261/96/M
art. 5(5)); named with its key and line when wrong, refused at any other game."""
import json
import re
import textwrap
from pathlib import Path

import pytest

from config_helpers import line_of, only
from controller.config import Pan9Config, parse_text
from controller.rules.base import MAX_AMOUNT

ROOT = Path(__file__).resolve().parents[1]

PAN9 = textwrap.dedent("""\
    [table]
    id = "t1"
    game = "super-pan-9"
    boxes = 8

    [pan9]
    house_co_bank_capital = 500
    """)


def test_the_house_co_bank_capital_is_read_and_journaled():
    config = parse_text(PAN9)
    assert config.pan9 == Pan9Config(house_co_bank_capital=500)
    # the config record of the journal says which capital the house co-banked with
    assert json.loads(json.dumps(config.to_json()))["pan9"] == {"house_co_bank_capital": 500}


def test_left_out_the_house_capital_is_entered_at_the_table():
    config = parse_text(PAN9.split("[pan9]")[0])
    assert config.pan9 == Pan9Config(house_co_bank_capital=None)
    assert parse_text(PAN9.replace("house_co_bank_capital = 500", "")).pan9 == Pan9Config()


def test_other_games_have_no_pan9():
    text = PAN9.split("[pan9]")[0].replace('"super-pan-9"', '"q-poker"').replace("8", "7")
    config = parse_text(text)
    assert config.pan9 is None and config.to_json()["pan9"] is None


def test_a_pan9_section_at_another_game_is_named_at_its_line():
    text = PAN9.replace('"super-pan-9"', '"fortune-3-card-poker"').replace("boxes = 8",
                                                                          "boxes = 7")
    p = only(text)
    assert p.key == "pan9" and p.line == line_of(text, "[pan9]")
    assert "fortune-3-card-poker" in p.reason and "261/96/M art. 5(5)" in p.reason
    assert "remove [pan9]" in p.fix


@pytest.mark.parametrize("line,key,words", [
    ("house_co_bank_capital = 0", "pan9.house_co_bank_capital", "greater than 0"),
    ("house_co_bank_capital = -500", "pan9.house_co_bank_capital", "greater than 0"),
    ("house_co_bank_capital = 0", "pan9.house_co_bank_capital",
     "leave house_co_bank_capital out"),
    ("house_co_bank_capital = 2.5", "pan9.house_co_bank_capital", "not a whole number"),
    ('house_co_bank_capital = "500"', "pan9.house_co_bank_capital", "write it as 500"),
    ("house_co_bank_capital = true", "pan9.house_co_bank_capital", "not a whole number"),
    (f"house_co_bank_capital = {MAX_AMOUNT + 1}", "pan9.house_co_bank_capital",
     "at most 9,007,199,254,740,991"),
    ("house_capital = 500", "pan9.house_capital", "did you mean 'house_co_bank_capital'"),
])
def test_a_wrong_value_is_named_at_its_line_with_the_way_out(line, key, words):
    text = re.sub(r"^house_co_bank_capital = .*$", line, PAN9, flags=re.M)
    p = only(text)
    assert p.key == key and p.line == line_of(text, line)
    assert words in p.reason + "; " + p.fix


def test_the_largest_amount_is_taken():
    text = PAN9.replace("= 500", f"= {MAX_AMOUNT}")
    assert parse_text(text).pan9.house_co_bank_capital == MAX_AMOUNT


def test_the_example_files_pan9_lines_make_a_valid_super_pan_9_table():
    """The commented [pan9] lines of docs/table.toml.example, taken as they are written, at a
    Super Pan 9 table."""
    example = (ROOT / "docs" / "table.toml.example").read_text()
    block = re.search(r"^# \[pan9\]\n(?:#.*\n)+", example, re.M)
    assert block, "docs/table.toml.example shows no [pan9] section"
    lines = [line[2:] for line in block.group(0).splitlines() if line.startswith("# ")]
    config = parse_text(PAN9.split("[pan9]")[0] + "\n".join(lines) + "\n")
    assert config.pan9.house_co_bank_capital is not None


def test_the_daemon_co_banks_the_configured_capital_and_keeps_it_for_the_round(tmp_path):
    """The daemon's table takes the house's capital from [pan9]; restarted with another, the
    round in play keeps the one it opened with and the next round takes the new one."""
    import asyncio

    from controller.sdnotify import Notifier
    from controller.service import Service

    def config(capital):
        return parse_text(PAN9.replace("= 500", f"= {capital}")
                          + f'\n[journal]\npath = "{tmp_path / "j.db"}"\n')

    async def session(capital, commands):
        svc = Service(config(capital), notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        for _ in range(500):
            if svc.runner is not None:
                break
            await asyncio.sleep(0.01)
        replies = [await svc.submit(name, role, args) for name, role, args in commands]
        co = svc.runner.table.public_view()["round"]["co_bankers"]
        svc.stop()
        await task
        return replies, co

    first, co = asyncio.run(session(500, [
        ("open_table", "supervisor", {}), ("deck_ready", "dealer", {}),
        ("set_banker", "dealer", {"seat": 1, "capital": 100}),
        ("co_bank", "dealer", {"house": True}),
        ("place_bet", "dealer", {"box": 2, "wager": "seat", "amount": 50})]))
    assert all(r["ok"] for r in first), first
    assert co == [{"house": True, "capital": 500}]
    again, co = asyncio.run(session(800, [
        ("co_bank", "dealer", {"house": True, "capital": 800}),
        ("void_round", "supervisor", {"reason": "the house changes its co-bank"}),
        ("next_round", "dealer", {}), ("deck_ready", "dealer", {}),
        ("set_banker", "dealer", {"seat": 1, "capital": 100}),
        ("co_bank", "dealer", {"house": True})]))
    refused, *rest = again
    assert not refused["ok"] and "predetermined: 500 chip units" in refused["error"]
    assert all(r["ok"] for r in rest), rest
    assert co == [{"house": True, "capital": 800}]
