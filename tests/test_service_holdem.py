"""The daemon's Hold'em table plays the stakes of [holdem]: the blinds posted, the structure's
bet sizes and the commission on the pot, through the real `tablectl run` process and a
simulated card-reading shoe over a pseudo-terminal."""
import asyncio
import dataclasses
import hashlib
import json

import pytest

from controller import __version__
from controller.config import parse_text
from controller.errors import TablectlError
from controller.journal import Journal
from controller.rules import get_game
from controller.sdnotify import Notifier
from controller.service import Service

from holdem_helpers import full_deck, holdem_rig

# 11/2008 art. 6(1): hole cards one at a time from the left of the button (button at 1: seats
# 3, 6, 1, 3, 6, 1); art. 7(1), 8(1), 8(3): burn, flop, burn, turn, burn, river.
HAND = ["2c", "3h", "As", "7d", "8s", "Ad",      # box 3: 2c 7d; box 6: 3h 8s; box 1: As Ad
        "5h", "Kc", "Qh", "9d",                   # burn, flop
        "6c", "4s",                               # burn, turn
        "Tc", "Jc"]                               # burn, river


@pytest.mark.hil
def test_daemon_table_uses_the_configured_blinds_structure_and_rake(tmp_path):
    rig = holdem_rig(tmp_path, 3, {"small_blind": 5, "big_blind": 10, "structure": "limit",
                                   "rake_percent": 4.5}, full_deck(HAND))
    try:
        shoe = rig.devices["shoe"]
        rig.must("seat_players", seats=[1, 3, 6], stacks=[500, 500, 500], button=1)
        drawn = iter(HAND)

        def draw(n):
            for _ in range(n):
                mark = rig.mark()
                shoe.draw()
                card = rig.wait_event(lambda e: e["kind"] in ("card", "ruling"), since=mark)
                assert card["kind"] == "card", card
                next(drawn)

        def legal():
            h = rig.view()["holdem"]
            return h["to_act"], {a["action"]: a for a in h["legal"]}

        def act(seat, action, amount=None):
            to_act, _ = legal()
            assert to_act == seat
            mark = rig.mark()
            rig.must("holdem_action", seat=seat, action=action, amount=amount)
            rig.wait_event(lambda e: e["kind"] == "action", since=mark)

        draw(6)
        rig.wait_state("player_decisions")
        # art. 5: the first player left of the button posts the small blind, the second the
        # big blind: the configured 5 and 10, not a default.
        blinds = rig.wait_event(lambda e: e["kind"] == "blinds")
        assert (blinds["small_blind"], blinds["big_blind"]) == (5, 10)
        assert [(p["box"], p["to"]) for p in blinds["posted"]] == [(3, 5), (6, 10)]
        # A limit game (art. 11(2), literal H1): preflop and flop bets are the small blind,
        # turn and river bets the big blind; one size only, where no-limit would allow the
        # whole stack.
        seat, moves = legal()
        assert seat == 1 and moves["raise"]["min_to"] == moves["raise"]["max_to"] == 15
        act(1, "raise", 15)
        act(3, "call")
        act(6, "call")
        sizes = {}
        for street, cards in (("flop", 4), ("turn", 2), ("river", 2)):
            draw(cards)
            rig.wait_state("player_decisions")
            seat, moves = legal()
            assert seat == 3
            sizes[street] = (moves["bet"]["min_to"], moves["bet"]["max_to"])
            act(3, "bet", moves["bet"]["min_to"])
            act(6, "call")
            act(1, "call")
        assert sizes == {"flop": (5, 5), "turn": (10, 10), "river": (10, 10)}
        settled = rig.wait_event(lambda e: e["kind"] == "settlement")
        # Pot 3 x 40 = 120; art. 16 at 4.5 %: 5.4, rounded down (H9) to 5, under the cap of
        # five big blinds (50). Box 1's aces win the rest.
        assert settled["commission"] == 5 and settled["house_net"] == 5
        nets = {w["box"]: w["net"] for w in settled["wagers"]}
        assert nets == {1: 120 - 5 - 40, 3: -40, 6: -40}
        rig.must("confirm_result")
    finally:
        rig.stop()
    with Journal.open(rig.journal_path, readonly=True) as j:
        assert j.verify().ok
        config = j.last(kind="config").payload
        assert config["holdem"] == {"small_blind": 5, "big_blind": 10, "structure": "limit",
                                    "rake_percent": "4.5"}
        # Which configuration and which controller ruled: the file's SHA-256 as sha256sum
        # gives it, every interpretation as resolved (defaults included), the version.
        assert config["digest"] == hashlib.sha256(rig.config_path.read_bytes()).hexdigest()
        assert config["path"] == str(rig.config_path) and config["version"] == __version__
        register = get_game("texas-holdem").resolve_interpretations(None)
        assert set(config["interpretations"]) == set(register)
        assert "tokens" not in json.dumps(config) and config["api"]["roles"] is not None


def test_a_holdem_config_without_stakes_is_refused_not_defaulted(tmp_path):
    """A Hold'em TableConfig built without [holdem] (the file's check already refuses it):
    the daemon will not fall back to blinds nobody posted."""
    cfg = parse_text(f"""
[table]
id = "h-1"
game = "texas-holdem"
boxes = 10

[holdem]
small_blind = 1
big_blind = 2
structure = "no-limit"

[journal]
path = "{tmp_path / 'j.db'}"
""")
    bare = dataclasses.replace(cfg, holdem=None)
    with pytest.raises(TablectlError, match=r"\[holdem\]"):
        asyncio.run(Service(bare, notifier=Notifier(None), open_panel=False).run())
