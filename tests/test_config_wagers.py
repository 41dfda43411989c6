"""[limits.<wager>] is checked against the wagers each game's rules name: a misspelt wager is
an error with a "did you mean", never limits that silently apply to nothing."""
import asyncio
import json
import textwrap
from pathlib import Path

import pytest

from config_helpers import line_of, problems
from controller.config import parse_text
from controller.rules import GAME_IDS, get_game
from controller.sdnotify import Notifier
from controller.service import Service

ROOT = Path(__file__).resolve().parents[1]
BOXES = {"q-poker": 7, "fortune-3-card-poker": 7, "super-pan-9": 8, "texas-holdem": 10}
HOLDEM = '\n[holdem]\nsmall_blind = 1\nbig_blind = 2\nstructure = "no-limit"\n'


def table(game, extra=""):
    text = textwrap.dedent(f"""\
        [table]
        id = "t1"
        game = "{game}"
        boxes = {BOXES[game]}
        """) + (HOLDEM if game == "texas-holdem" else "")
    return text + extra


# --- the rules name their wagers ------------------------------------------------------------

def settle_inputs(title):
    """The input of every example in one game's section of docs/settle.md (the first JSON
    block after each example's heading)."""
    text = (ROOT / "docs" / "settle.md").read_text()
    section = text.split(f"## {title}", 1)[1].split("\n## ", 1)[0]
    return [json.loads(part.split("```json", 1)[1].split("```", 1)[0])
            for part in section.split("### Example")[1:]]


@pytest.mark.parametrize("game, title", [("q-poker", "Q Poker"),
                                         ("fortune-3-card-poker", "Fortune 3 Card Poker"),
                                         ("super-pan-9", "Super Pan 9")])
def test_every_wager_settled_is_one_the_game_names(game, title):
    rules = get_game(game)
    seen = set()
    for doc in settle_inputs(title):
        seen |= {w.wager for w in rules.settle(doc).wagers}
    assert seen and seen <= set(rules.wagers)
    # and every wager named is one the examples settle: no name the rules never use
    assert seen == set(rules.wagers)


def test_the_wagers_are_the_regulations():
    assert get_game("q-poker").wagers == ("pair_bonus", "versus_croupier")       # 89/2004 art. 5
    assert get_game("fortune-3-card-poker").wagers == ("pair_plus", "ante", "play")  # 78/2008
    assert get_game("super-pan-9").wagers == ("seat",)
    assert get_game("texas-holdem").wagers == ()         # chips go into the pot, not on a wager
    assert all(isinstance(get_game(g).wagers, tuple) for g in GAME_IDS)


def test_a_bet_the_game_refuses_is_never_a_wager_name():
    """Q Poker refuses a bet on a name not in its wagers, and takes each of them."""
    from controller.rules.errors import RuleError
    q = get_game("q-poker")
    for wager in q.wagers:
        q.check_bet(wager, 2)
    with pytest.raises(RuleError):
        q.check_bet("pair_bonsu", 2)


# --- the configuration checks them ----------------------------------------------------------

@pytest.mark.parametrize("game, typo, meant", [
    ("q-poker", "pair_bonsu", "pair_bonus"),
    ("q-poker", "versus_crupier", "versus_croupier"),
    ("fortune-3-card-poker", "pair_pluss", "pair_plus"),
    ("fortune-3-card-poker", "antee", "ante"),
    ("super-pan-9", "seats", "seat"),
])
def test_misspelt_wager_is_named_with_a_suggestion(game, typo, meant):
    text = table(game, f"\n[limits]\nmin = 2\n\n[limits.{typo}]\nmax = 100\n")
    (p,) = problems(text)
    assert p.key == f"limits.{typo}" and p.line == line_of(text, f"[limits.{typo}]")
    assert f"has no wager {typo!r}" in p.reason and f"did you mean {meant!r}" in p.fix


def test_a_wager_of_another_game_lists_the_right_ones():
    text = table("super-pan-9", "\n[limits.pair_plus]\nmax = 100\n")
    (p,) = problems(text)
    assert p.key == "limits.pair_plus" and "its wagers are: seat" in p.fix


def test_holdem_has_no_wager_limits_and_says_where_its_stakes_are():
    text = table("texas-holdem", "\n[limits.blinds]\nmax = 100\n")
    (p,) = problems(text)
    assert p.key == "limits.blinds" and p.line == line_of(text, "[limits.blinds]")
    assert "[holdem]" in p.fix and "remove [limits.blinds]" in p.fix


def test_the_play_follows_the_ante():
    """78/2008 art. 9(4): the Play is exactly the Ante, so it has no limits of its own."""
    text = table("fortune-3-card-poker", "\n[limits.play]\nmax = 100\n")
    (p,) = problems(text)
    assert p.key == "limits.play" and "[limits.ante]" in p.fix


@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker", "super-pan-9"])
def test_every_wager_of_a_game_takes_limits(game):
    wagers = get_game(game).wagers
    follows = getattr(get_game(game), "limits_follow", {})
    extra = "".join(f"\n[limits.{w}]\nmin = {i + 2}\nmax = {10 * (i + 2)}\n"
                    for i, w in enumerate(wagers) if w not in follows)
    config = parse_text(table(game, extra))
    for i, w in enumerate(wagers):
        if w not in follows:
            assert config.limits.for_wager(w) == (i + 2, 10 * (i + 2))


def test_the_daemon_applies_each_wagers_limits(tmp_path):
    """The daemon's table refuses a pair bonus above [limits.pair_bonus] and takes the same
    amount on the bet versus the croupier, whose limits are the table's."""
    cfg = parse_text(table("q-poker", textwrap.dedent(f"""
        [limits]
        min = 2
        max = 100

        [limits.pair_bonus]
        max = 10

        [journal]
        path = "{tmp_path / 'j.db'}"
        """)))

    async def scenario():
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        for _ in range(500):
            if svc.runner is not None:
                break
            await asyncio.sleep(0.01)
        replies = [await svc.submit("open_table", "supervisor", {}),
                   await svc.submit("deck_ready", "dealer", {})]
        bet = {"box": 2, "amount": 12}
        over = await svc.submit("place_bet", "dealer", {**bet, "wager": "pair_bonus"})
        fine = await svc.submit("place_bet", "dealer", {**bet, "wager": "versus_croupier"})
        under = await svc.submit("place_bet", "dealer", {"box": 3, "amount": 1,
                                                         "wager": "pair_bonus"})
        svc.stop()
        await task
        return replies, over, fine, under

    replies, over, fine, under = asyncio.run(scenario())
    assert all(r["ok"] for r in replies), replies
    assert not over["ok"] and "above the table limit 10" in over["error"]
    assert fine["ok"], fine
    assert not under["ok"] and "below the table minimum 2" in under["error"]
