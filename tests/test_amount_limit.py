"""Every amount the table takes is a whole number of chip units the console page shows
exactly: at most 2^53 - 1 (JavaScript's largest exact integer), and a round's bets together
small enough that every figure of its settlement stays below it too."""
import pytest

from controller.config import ConfigError, parse_text
from controller.errors import TablectlError
from controller.rules.base import MAX_AMOUNT, MAX_ROUND_STAKES

from table_helpers import draw, settlement, table

BASE = '[table]\nid = "t1"\ngame = "q-poker"\nboxes = 7\n'
HOLDEM = ('[table]\nid = "t1"\ngame = "texas-holdem"\nboxes = 10\n'
          '[holdem]\nstructure = "no-limit"\n')


def test_the_limits_are_what_the_docs_say():
    assert MAX_AMOUNT == 2**53 - 1 == 9_007_199_254_740_991
    assert MAX_ROUND_STAKES == MAX_AMOUNT // 82


@pytest.mark.parametrize("amount", [MAX_AMOUNT + 1, 2**60, 10**30])
def test_a_bet_beyond_what_the_page_shows_exactly_is_refused(amount):
    t = table("q-poker")
    with pytest.raises(TablectlError, match="2\\^53"):
        t.command("place_bet", box=1, wager="versus_croupier", amount=amount)
    assert t.round.bets == {}


def test_a_rounds_bets_together_are_bounded_so_its_settlement_is_exact():
    t = table("q-poker")
    assert MAX_ROUND_STAKES % 2 == 1
    t.command("place_bet", box=1, wager="versus_croupier", amount=MAX_ROUND_STAKES - 11)
    t.command("place_bet", box=2, wager="pair_bonus", amount=11)
    with pytest.raises(TablectlError, match="together"):
        t.command("place_bet", box=3, wager="versus_croupier", amount=2)
    assert sum(t.round.bets.values()) == MAX_ROUND_STAKES


@pytest.mark.parametrize("stacks", [[MAX_AMOUNT + 1, 100], [MAX_AMOUNT // 2 + 1] * 2])
def test_holdem_stacks_beyond_the_limit_are_refused(stacks):
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10, "rake": 5})
    with pytest.raises(TablectlError, match="2\\^53"):
        t.command("seat_players", seats=[1, 3], stacks=stacks, button=1)


def test_holdem_stacks_up_to_the_limit_settle_exactly():
    t = table("texas-holdem", holdem={"small_blind": 5, "big_blind": 10, "rake": 0})
    big = MAX_AMOUNT // 2
    t.command("seat_players", seats=[1, 3], stacks=[big, big], button=1)
    draw(t, "Qd", "7h", "As", "Qc")
    t.command("holdem_action", seat=3, action="allin")
    t.command("holdem_action", seat=1, action="call")
    draw(t, "2c", "3d", "4h", "8s", "9c", "Td", "Jh", "Ks")
    doc = settlement(t)
    assert all(abs(w["net"]) <= MAX_AMOUNT for w in doc["wagers"])


def test_a_banker_capital_beyond_the_limit_is_refused():
    t = table("super-pan-9")
    with pytest.raises(TablectlError, match="2\\^53"):
        t.command("set_banker", seat=1, capital=MAX_AMOUNT + 1)


@pytest.mark.parametrize("text, key", [
    (BASE + f"[limits]\nmax = {MAX_ROUND_STAKES + 1}\n", "limits.max"),
    (BASE + f"[limits]\nmin = {MAX_ROUND_STAKES + 1}\n", "limits.min"),
    (BASE + f"[limits.pair_bonus]\nmax = {2**62}\n", "limits.pair_bonus.max"),
    (HOLDEM + f"small_blind = 1\nbig_blind = {MAX_AMOUNT + 1}\n", "holdem.big_blind"),
])
def test_config_amounts_beyond_the_limit_are_refused(text, key):
    with pytest.raises(ConfigError) as info:
        parse_text(text, "table.toml")
    found = {p.key: p for p in info.value.problems}
    assert key in found, [str(p) for p in info.value.problems]
    assert "2^53" in str(found[key])


def test_config_amounts_at_the_limit_are_taken():
    cfg = parse_text(BASE + f"[limits]\nmax = {MAX_ROUND_STAKES}\n", "table.toml")
    assert cfg.limits.maximum == MAX_ROUND_STAKES


def test_the_api_description_states_the_limit():
    from controller.api.openapi import PARAMS
    assert PARAMS["amount"]["maximum"] == MAX_AMOUNT
    assert PARAMS["capital"]["maximum"] == MAX_AMOUNT
    for form in PARAMS["stacks"]["oneOf"]:
        items = form.get("items") or form.get("additionalProperties")
        assert items["maximum"] == MAX_AMOUNT and items["minimum"] == 1
