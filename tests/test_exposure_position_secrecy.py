"""Card secrecy after an exposure the croupier names by position (``exposed_card`` ``card``),
at the API: the live table (real drivers, simulated shoe and dice agitator), a display and a
dealer client holding the event stream open and reading every query after every step, and the
log (tests/test_card_secrecy_api.py, whose checks these are).

The journal says which card became face up: the one at the position the dealer's command
named among the recipient's cards dealt so far (test_card_secrecy_api.card_fates reads it from
the command, not from what the table published, and holds each ``card_exposed``'s
``position`` to it). Only that card may leave the controller; the other cards of the hand
stay face down until the regulation's moment."""
from __future__ import annotations

import pytest

from test_card_secrecy_api import open_shoe, pan9_shaken, play
from test_card_secrecy_api import seqlog  # noqa: F401 (fixture)

pytestmark = pytest.mark.hil


def test_q_poker_a_players_first_card_named_leaks_none_of_his_others(tmp_path, seqlog):
    """89/2004 art. 11(2): box 1's first card is exposed while his second is out; the round
    goes on, and his second and third stay face down until the hands are opened (art. 9(1))."""
    async def script(live, c):
        await open_shoe(live, c)
        await c.command("place_bet", box=1, wager="versus_croupier", amount=10)
        await c.command("place_bet", box=4, wager="versus_croupier", amount=10)
        for _ in range(4):                          # box 1, box 4, croupier, box 1
            await c.device(live.devices["shoe"].draw)
        await c.command("exposed_card", recipient="box 1", card=1)
        await c.command("exposed_card", ok=False, recipient="box 1", card=1)   # face up
        await c.command("exposed_card", ok=False, recipient="box 1", card=3)   # not yet
        await c.until_not("dealing", lambda: c.device(live.devices["shoe"].draw))
        await c.command("decide", box=1, decision="play")
        await c.command("decide", box=4, decision="fold")
        await c.command("confirm_result")
    live, n, revealed = play(tmp_path, seqlog, "q-poker", "shoe", script)
    assert n == 9 and revealed == 9


def test_fortune_the_croupiers_first_card_named_leaks_none_of_his_hand(tmp_path, seqlog):
    """78/2008 art. 11(2): the croupier's first card is set aside face up; his second and
    the cards he receives stay face down until his hand is opened."""
    async def script(live, c):
        await open_shoe(live, c)
        await c.command("place_bet", box=2, wager="ante", amount=10)
        for _ in range(4):                          # box 2, croupier, box 2, croupier
            await c.device(live.devices["shoe"].draw)
        await c.command("exposed_card", recipient="croupier", card=1)
        await c.command("exposed_card", ok=False, recipient="croupier", card=1)  # set aside
        await c.until_not("dealing", lambda: c.device(live.devices["shoe"].draw))
        await c.command("decide", box=2, decision="play")
        await c.command("confirm_result")
    live, n, revealed = play(tmp_path, seqlog, "fortune-3-card-poker", "shoe", script)
    assert n == 7 and revealed == 7


def test_super_pan_9_a_seats_first_card_named_and_a_misdeal_leak_its_second(tmp_path, seqlog):
    """261/96/M art. 4: the first seat's first card is exposed once it holds both; a misdeal
    then voids the round (P5): the exposed card is the only one ever shown."""
    async def script(live, c):
        await pan9_shaken(live, c)
        for _ in range(2):
            await c.device(live.devices["shoe"].draw)
        seat = live.do(lambda: str(live.table._last_dealt))
        await c.command("exposed_card", recipient=seat, card=1)
        await c.device(live.devices["shoe"].draw)
        await c.command("misdeal")
    live, n, revealed = play(tmp_path, seqlog, "super-pan-9", "shoe", script)
    assert n == 3 and revealed == 1
