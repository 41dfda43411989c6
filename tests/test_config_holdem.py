"""[holdem] in table.toml: a Texas Hold'em table's blinds (11/2008 art. 4(3), 5), betting
structure (art. 11) and commission (art. 16); named with its key and line when wrong."""
import re
import textwrap
from fractions import Fraction
from pathlib import Path

import pytest

from config_helpers import line_of, only, problems
from controller.config import ConfigError, HoldemConfig, parse_text
from controller.rules.holdem_pots import parse_rake_percent

ROOT = Path(__file__).resolve().parents[1]

HOLDEM = textwrap.dedent("""\
    [table]
    id = "t1"
    game = "texas-holdem"
    boxes = 10

    [holdem]
    small_blind = 5
    big_blind = 10
    structure = "limit"
    rake_percent = 4.5
    """)


def test_holdem_section_read():
    config = parse_text(HOLDEM)
    assert config.holdem == HoldemConfig(5, 10, "limit", Fraction(9, 2))
    # A decimal rate is kept exact: 4.5 % is 9/2, not the float nearest to it.
    assert config.holdem.rake_percent == Fraction(9, 2)
    assert config.to_json()["holdem"] == {"small_blind": 5, "big_blind": 10,
                                          "structure": "limit", "rake_percent": "4.5"}


def test_table_options_reach_the_rules_unchanged():
    """What the table machine gets is what the rules of art. 16 read back, exactly."""
    for written, rate in (("4.5", Fraction(9, 2)), ("3", Fraction(3)), ("4.25", Fraction(17, 4)),
                          ("0", Fraction(0)), ("5.0", Fraction(5))):
        text = HOLDEM.replace("rake_percent = 4.5", f"rake_percent = {written}")
        options = parse_text(text).holdem.table_options()
        assert options["small_blind"] == 5 and options["big_blind"] == 10
        assert options["structure"] == "limit"
        assert not isinstance(options["rake"], float)
        assert parse_rake_percent(options["rake"]) == rate, written


def test_rake_defaults_to_none_and_no_limit_is_accepted():
    text = HOLDEM.replace("rake_percent = 4.5\n", "").replace('"limit"', '"no-limit"')
    h = parse_text(text).holdem
    assert h.rake_percent == 0 and h.structure == "no-limit"
    assert h.table_options()["rake"] == 0


def test_other_games_have_no_holdem():
    assert parse_text(HOLDEM.replace('"texas-holdem"', '"q-poker"').replace(
        "boxes = 10", "boxes = 7").split("[holdem]")[0]).holdem is None


def test_holdem_section_at_another_game_is_named_at_its_line():
    text = HOLDEM.replace('"texas-holdem"', '"q-poker"').replace("boxes = 10", "boxes = 7")
    p = only(text)
    assert p.key == "holdem" and p.line == line_of(text, "[holdem]")
    assert "q-poker" in p.reason and "remove [holdem]" in p.fix


def test_limits_at_a_holdem_table_are_named_not_ignored():
    text = HOLDEM + "\n[limits]\nmax = 500\n"
    p = only(text)
    assert p.key == "limits" and p.line == line_of(text, "[limits]")
    assert "no wager limits" in p.reason and "remove [limits]" in p.fix


def test_holdem_section_required_at_a_holdem_table():
    text = HOLDEM.split("[holdem]")[0]
    p = only(text)
    assert p.key == "holdem" and p.line == line_of(text, "game =")
    assert "11/2008 art. 4(3)" in p.reason and "small_blind, big_blind" in p.fix


@pytest.mark.parametrize("key", ["small_blind", "big_blind", "structure"])
def test_each_stake_is_required(key):
    text = re.sub(rf"^{key} = .*\n", "", HOLDEM, flags=re.M)
    p = only(text)
    assert p.key == f"holdem.{key}" and p.reason == "is required"
    assert p.line == line_of(text, "[holdem]")


def test_small_blind_above_big_blind():
    text = HOLDEM.replace("small_blind = 5", "small_blind = 20")
    p = only(text)
    assert p.key == "holdem.small_blind" and p.line == line_of(text, "small_blind = 20")
    assert "art. 5(1)" in p.reason
    # equal blinds are allowed: "normally half" (art. 5(1)) is not "always"
    assert parse_text(HOLDEM.replace("small_blind = 5", "small_blind = 10")).holdem.small_blind \
        == 10


@pytest.mark.parametrize("line, key, words", [
    ("small_blind = 0", "holdem.small_blind", "greater than 0"),
    ("big_blind = -10", "holdem.big_blind", "greater than 0"),
    ("big_blind = 2.5", "holdem.big_blind", "not a whole number"),     # money is integers
    ('big_blind = "10"', "holdem.big_blind", "not a whole number"),
    ('structure = "nolimit"', "holdem.structure", "did you mean 'no-limit'"),
    ('structure = "pot-limit"', "holdem.structure", "limit, no-limit"),
    ("rake_percent = 2", "holdem.rake_percent", "3 to 5"),
    ("rake_percent = 5.5", "holdem.rake_percent", "3 to 5"),
    ("rake_percent = -4", "holdem.rake_percent", "3 to 5"),
    ("rake_percent = 4.125", "holdem.rake_percent", "two decimals"),
    ("rake_percent = nan", "holdem.rake_percent", "finite"),
    ('rake_percent = "5%"', "holdem.rake_percent", "write it as 5"),
    ("big_blnd = 10", "holdem.big_blnd", "did you mean 'big_blind'"),
])
def test_a_wrong_value_is_named_at_its_line(line, key, words):
    name = line.split(" =")[0]
    text = re.sub(rf"^{name} = .*$", line, HOLDEM, flags=re.M) if name in HOLDEM \
        else HOLDEM + line + "\n"
    found = {p.key: p for p in problems(text)}
    assert key in found, [p.format() for p in found.values()]
    p = found[key]
    assert p.line == line_of(text, line)
    assert words in p.reason + "; " + p.fix


def test_rake_limits_themselves_are_allowed():
    for rate in ("3", "5", "0", "3.75"):
        assert parse_text(HOLDEM.replace("4.5", rate)).holdem is not None


def test_the_documented_holdem_example_is_valid():
    """The [holdem] snippet in docs/configuration.md, appended to a Hold'em table."""
    doc = (ROOT / "docs" / "configuration.md").read_text()
    section = doc.split("## `[holdem]`", 1)[1].split("\n## ", 1)[0]
    snippet = re.search(r"```toml\n(.*?)```", section, re.S).group(1)
    config = parse_text(HOLDEM.split("[holdem]")[0] + snippet)
    assert config.holdem is not None and config.holdem.big_blind > 0


from hypothesis import given, settings, strategies as st  # noqa: E402

_values = st.one_of(st.booleans(), st.integers(-2**70, 2**70), st.floats(allow_nan=True),
                    st.text(max_size=10), st.lists(st.integers(), max_size=2),
                    st.dictionaries(st.text(max_size=5), st.integers(), max_size=2))


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(st.sampled_from(["small_blind", "big_blind", "structure",
                                        "rake_percent", "x"]), _values, max_size=5),
       st.sampled_from(["texas-holdem", "q-poker", "nonsense"]))
def test_any_holdem_section_gives_a_config_or_a_config_error(section, game):
    import tomllib
    from controller.config import validate
    doc = tomllib.loads(HOLDEM)
    doc["table"]["game"] = game
    doc["holdem"] = section
    try:
        config = validate(doc, HOLDEM)
    except ConfigError as exc:
        assert exc.problems and all(p.key and p.reason for p in exc.problems)
    else:
        h = config.holdem
        assert game == "texas-holdem" and 0 < h.small_blind <= h.big_blind
        assert h.rake_percent == 0 or 3 <= h.rake_percent <= 5
