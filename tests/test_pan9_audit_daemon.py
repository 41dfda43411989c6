"""Super Pan 9 through the live controller (real drivers, simulated shoe and dice agitator,
the API with a display and a dealer client): no card face down at the table reaches a client,
the event stream or the log before it is revealed (261/96/M art. 5(6)), in a round voided
after an exposed card (art. 4) and a misdeal (P5), whose other cards are never revealed, and
in the settled round that follows on a fresh deck (art. 2(1))."""
from __future__ import annotations

import pytest

from test_card_secrecy_api import pan9_shaken, play, seqlog  # noqa: F401 (fixture)

pytestmark = pytest.mark.hil


def test_super_pan_9_a_void_rounds_cards_and_an_exposed_card_leak_nothing(tmp_path, seqlog):
    """261/96/M art. 4 (an exposed card stays valid, the round goes on), P5 (a misdeal voids
    the round) and art. 5(6): of the void round only the exposed card is ever shown."""
    async def script(live, c):
        await pan9_shaken(live, c)
        for _ in range(2):
            await c.device(live.devices["shoe"].draw)
        seat = live.do(lambda: str(live.table._last_dealt))
        await c.command("exposed_card", recipient=seat)          # art. 4: goes on
        await c.command("exposed_card", ok=False, recipient=seat)  # already face up
        await c.device(live.devices["shoe"].draw)
        await c.command("misdeal")
        assert live.do(lambda: live.table.state) == "round_void"
        await c.command("next_round")
        await c.command("deck_ready")                            # art. 2(1): a fresh deck
        await c.command("set_banker", seat=3, capital=500)
        await c.command("place_bet", box=1, wager="seat", amount=20)
        live.devices["dice"].set_next_dice([1, 1, 1, 1])
        await c.command("shake")
        await c.until("dealing")
        await c.until_not("dealing", lambda: c.device(live.devices["shoe"].draw))
        assert live.do(lambda: live.table.state) == "settlement"
        await c.command("confirm_result")
    live, n, revealed = play(tmp_path, seqlog, "super-pan-9", "shoe", script)
    # the void round: three cards dealt, one exposed; the next: banker and seat 1 shown
    assert n == 3 + 4 and revealed == 1 + 4


def test_a_restart_with_fewer_seats_ends_the_turn_of_a_seat_no_longer_there(tmp_path):
    """261/96/M art. 5(1): seat 7 banks a settled round under an 8-seat layout; the daemon
    restarts with 4 seats. The turn of a seat the table no longer has is over: the view answers
    and another seat takes the bank in the next round. Before, the next round's view raised an
    error and set_banker was refused for every seat, naming seat 7."""
    import asyncio

    from drivers import events as ev
    from test_recovery_config_change import Daemon, config, drawn

    pan9 = dict(game="super-pan-9")

    async def scenario():
        async with Daemon(config(tmp_path, boxes=8, **pan9)) as d:
            await d.must("open_table", "supervisor")
            await d.must("deck_ready")
            await d.must("set_banker", seat=7, capital=1000)
            await d.must("place_bet", box=2, wager="seat", amount=100, player="Ana")
            await d.must("shake")
            await d.device(ev.DiceResult(device="dice", ts=1.0, dice=(1, 1, 1, 2)))
            for card in ("9s", "Kd", "4h", "2h"):
                await d.device(drawn(card))
            assert d.table.state == "settlement"
            await d.must("confirm_result")
        async with Daemon(config(tmp_path, boxes=4, **pan9)) as d:
            assert d.table.state == "round_complete"
            await d.must("next_round")
            await d.must("deck_ready")
            assert d.table.layout_boxes == 4 and d.table.public_view()["bank_turn"] is None
            await d.must("set_banker", seat=2, capital=100)

    asyncio.run(scenario())
