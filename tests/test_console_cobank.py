"""Super Pan 9's co-bank form in headless Chromium against the real daemon (261/96/M art. 5(5)):
a player of another seat joins the banker. The seat is chosen among the table's seats that can
co-bank, the banker's left out, from the public view (the banker's seat) and the layout; the
player's name is typed. What the table still refuses (a co-banking player who bets on a seat)
is shown in the table's words, and nothing changes.
"""
from __future__ import annotations

import json
import urllib.request

import pytest

from test_api_support import TOKENS

from test_console_browser import (BROWSER_TESTS, browser, close_pages, expect,  # noqa: F401
                                  front, live, open_page, shot, state_is, supervisor)

pytestmark = BROWSER_TESTS


def table_doc(live):
    req = urllib.request.Request(f"{live.url}/api/table",
                                 headers={"Authorization": f"Bearer {TOKENS['display']}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def seat_choices(page):
    return page.get_by_test_id("co-bank-seat").locator("option").evaluate_all(
        "els => els.map(e => e.value)")


def co_bank(page, player, seat, capital):
    front(page).get_by_test_id("co-bank-player").fill(player)
    page.get_by_test_id("co-bank-seat").select_option(seat)
    page.get_by_test_id("co-bank-capital").fill(str(capital))
    page.locator("[data-command=co_bank]").click()


@pytest.mark.parametrize("live", [("super-pan-9", "shuffler")], indirect=True)
def test_the_co_bank_seat_is_chosen_among_the_seats_that_can_co_bank(browser, live):
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    front(dealer).get_by_test_id("banker-seat").fill("3")
    front(dealer).get_by_test_id("banker-capital").fill("1000")
    front(dealer).locator("[data-command=set_banker]").click()
    expect(display.get_by_test_id("box-3")).to_contain_text("Banker")
    layout = table_doc(live)["game"]["boxes"]
    # the banker's seat is no choice; no seat at all is one (it is optional by default)
    assert seat_choices(dealer) == [""] + [str(n) for n in range(1, layout + 1) if n != 3]
    expect(dealer.get_by_test_id("co-bank-player")).to_have_attribute("type", "text")
    co_bank(dealer, "Eve", "4", 100)
    expect(display.get_by_test_id("co-bankers").locator("li")).to_have_count(1)
    co_bank(dealer, "Fay", "", 50)
    expect(display.get_by_test_id("co-bankers").locator("li")).to_have_count(2)
    assert live.view()["round"]["co_bankers"] == [
        {"player": "Eve", "seat": 4, "capital": 100},
        {"player": "Fay", "seat": None, "capital": 50}]
    # still wrong, and the table says why: Ana bets on seat 2 this round
    supervisor(live, "place_bet", box=2, wager="seat", amount=50, player="Ana")
    co_bank(dealer, "Ana", "5", 100)
    expect(dealer.get_by_test_id("error")).to_contain_text("409: Ana bets on seat 2")
    assert len(live.view()["round"]["co_bankers"]) == 2
    shot(dealer, "super-pan-9-dealer-co-bank-seat-choice")
