"""Q Poker's seated player marked from the console, in headless Chromium against the real daemon
(89/2004 art. 6(1), 6(3), 9(2); docs/interpretations.md Q2). Under `shared_box_decision =
"seated_player"` the bet form of each box takes the player's name and a "seated" tick box: the
player so marked decides play or fold for the box, also when a backer bet first. Under
`per_player` no player is marked seated, and the form has no tick box.
"""
from __future__ import annotations

import signal
import time
import urllib.request

import pytest

from test_api_support import TOKENS
from test_console_browser import (BROWSER_TESTS, browser, close_pages, expect,  # noqa: F401
                                  front, live, open_page, shot, state_is, supervisor)

pytestmark = BROWSER_TESTS

SEATED = {"shared_box_decision": "seated_player"}


def read_as(live, interpretations):
    """Start the daemon again with ``interpretations`` in its configuration (before the table
    opens): the test tables' daemon starts with the defaults."""
    live.rig.kill(signal.SIGTERM)
    live.rig.interpretations = interpretations
    live.rig.write_config()
    live.rig.start_controller()
    live.rig.wait_links()
    deadline = time.monotonic() + 15
    while True:
        try:
            req = urllib.request.Request(live.url + "/api/health", headers={
                "Authorization": f"Bearer {TOKENS['display']}"})
            with urllib.request.urlopen(req, timeout=2):
                return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def bet_as(page, box, wager, amount, player, seated=False):
    front(page)
    page.get_by_test_id(f"wager-{box}").select_option(wager)
    page.get_by_test_id(f"amount-{box}").fill(str(amount))
    page.get_by_test_id(f"player-{box}").fill(player)
    tick = page.get_by_test_id(f"seated-{box}")
    if seated:
        tick.check()
    page.get_by_test_id(f"bet-{box}").click()


def bets_of(live, box):
    return [(b["player"], b["wager"], b["amount"]) for b in live.view()["round"]["bets"]
            if b["box"] == box]


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_the_seated_player_marked_at_the_console_decides_though_a_backer_bet_first(
        browser, live):
    read_as(live, SEATED)
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "shuffling")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    expect(dealer.get_by_test_id("seated-2")).not_to_be_checked()
    bet_as(dealer, 2, "versus_croupier", 20, "bo")                  # the backer, first
    expect(display.get_by_test_id("box-2").locator("[data-wager=versus_croupier]")) \
        .to_contain_text("bo")
    expect(display.get_by_test_id("seated-at-2")).to_have_count(0)
    bet_as(dealer, 2, "pair_bonus", 10, "ana", seated=True)         # she sits there
    expect(display.get_by_test_id("seated-at-2")).to_contain_text("ana")
    assert live.view()["round"]["seated"] == [{"box": 2, "player": "ana"}]
    # the mark is once per player: the tick box is clear again for the next bet
    expect(dealer.get_by_test_id("seated-2")).not_to_be_checked()
    expect(dealer.get_by_test_id("player-2")).to_have_value("ana")
    bet_as(dealer, 2, "pair_bonus", 10, "cy", seated=True)          # a second seated player
    expect(dealer.get_by_test_id("error")).to_contain_text("409: ana is marked seated at box 2")
    assert bets_of(live, 2) == [("ana", "pair_bonus", 10), ("bo", "versus_croupier", 20)]
    shot(dealer, "q-poker-dealer-seated-player")
    for _ in range(6):      # art. 7(1): one card at a time to box 2 and the croupier
        live.devices["shoe"].draw()
    state_is(display, "player_decisions")
    # the one decision of the box is ana's: no play/fold for the backer who bet first
    expect(dealer.get_by_test_id("fold-2-ana")).to_have_count(1)
    expect(dealer.get_by_test_id("fold-2-bo")).to_have_count(0)
    front(dealer).get_by_test_id("fold-2-ana").click()
    state_is(display, "settlement")
    nets = {(w["player"], w["wager"]): w["net"]
            for w in live.view()["round"]["settlement"]["wagers"]}
    assert nets[("bo", "versus_croupier")] == -10       # art. 9(3): her fold, half his bet


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_under_per_player_the_bet_form_has_no_seated_tick_box(browser, live):
    supervisor(live, "open_table")
    dealer = open_page(browser, live, "dealer")
    state_is(dealer, "shuffling")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    expect(dealer.get_by_test_id("bet-2")).to_have_count(1)
    expect(dealer.get_by_test_id("seated-2")).to_have_count(0)
