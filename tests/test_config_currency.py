"""``chips.currency`` is the ISO 4217 code of the currency a chip unit is worth, three capital
letters, as docs/configuration.md says: a label (``HK$``, ``Pataca``) or a code in small
letters is refused at its line with the code to write, and ``KD``, the Kuwaiti dinar's label,
which reads as a card (the king of diamonds), with its code, KWD. The code is journaled in
every ``config`` record."""
import pytest

from controller.config import parse_text
from config_helpers import BASE, line_of, only


def with_currency(value):
    return BASE + f'\n[chips]\ncurrency = "{value}"\n'


@pytest.mark.parametrize("code", ["MOP", "HKD", "KWD", "USD"])
def test_an_iso_4217_code_is_taken_and_journaled(code):
    cfg = parse_text(with_currency(code), "table.toml")
    assert cfg.currency == code and cfg.to_json()["currency"] == code


def test_the_default_is_the_pataca():
    assert parse_text(BASE, "table.toml").currency == "MOP"


@pytest.mark.parametrize("value, fix", [
    ("KD", 'KD is no such code and reads as a card (the king of diamonds): write "KWD"'),
    ("kd", 'write "KWD"'),
    ("HK$", 'write "HKD"'),
    ("MOP$", 'write "MOP"'),
    ("Pataca", 'write "MOP"'),
    ("mop", 'write "MOP"'),
    (" MOP", 'write "MOP"'),
    ("Euro", "three capital letters"),
    ("", "three capital letters"),
    ("ＭＯＰ", "three capital letters"),        # full-width letters: no code
])
def test_anything_else_is_refused_at_its_line_with_the_code_to_write(value, fix):
    text = with_currency(value)
    p = only(text)
    assert (p.key, p.line) == ("chips.currency", line_of(text, "currency ="))
    assert "ISO 4217 code, three capital letters" in str(p.format("table.toml"))
    assert fix in p.format("table.toml"), p.format("table.toml")


def test_a_bare_dollar_sign_names_the_codes_it_may_mean_not_one_of_them():
    """In Macau "$" is as often the pataca or the Hong Kong dollar as the US dollar: the
    refusal names the three codes and chooses none for the operator."""
    fix = only(with_currency("$")).format("table.toml")
    assert '"MOP"' in fix and '"HKD"' in fix and '"USD"' in fix, fix
    assert 'write "USD"' not in fix
