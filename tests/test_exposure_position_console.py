"""The dealer console names which card was exposed (``exposed_card`` ``card``), in headless
Chromium against the real daemon with the simulated shoe (tests/test_console_browser.py):
the dealer picks the card's place among the recipient's cards, or leaves "last"."""
from __future__ import annotations

import pytest

from test_console_browser import (BROWSER_TESTS, browser, cards_of, close_pages,  # noqa: F401
                                  dealer_and_display_at_bets, dealt_cards, expect, front,
                                  live, bet)

pytestmark = BROWSER_TESTS


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_the_dealer_picks_the_exposed_card_or_leaves_the_last(browser, live):
    # 89/2004 art. 11(2): box 1's first card is exposed while its second is out; the display
    # shows that one, the second stays face down. Then "last": the table takes the last one.
    dealer, display = dealer_and_display_at_bets(browser, live)
    bet(dealer, 1, "versus_croupier", 10)
    for _ in range(4):                  # box 1, the croupier, box 1, the croupier
        live.devices["shoe"].draw()
    expect(display.get_by_test_id("box-1").locator(".card")).to_have_count(2)
    cards = dealt_cards(live)
    front(dealer).get_by_test_id("exposed-recipient").select_option("box 1")
    picker = dealer.get_by_test_id("exposed-card")
    assert picker.input_value() == ""                   # "last" unless the dealer picks
    assert picker.locator("option").evaluate_all("els => els.map(e => e.value)") == ["", "1", "2"]
    picker.select_option("1")
    dealer.locator("[data-command=exposed_card]").click()
    expect(display.get_by_test_id("box-1").locator(".card").first).to_have_attribute(
        "data-card", cards[0])
    assert cards_of(display, 1) == [cards[0], "back"]
    assert dealer.get_by_test_id("exposed-card").input_value() == ""    # spent: "last" again
    front(dealer).get_by_test_id("exposed-recipient").select_option("box 1")
    dealer.locator("[data-command=exposed_card]").click()
    expect(display.get_by_test_id("box-1").locator(".card").nth(1)).to_have_attribute(
        "data-card", cards[2])
    with live.journal() as journal:
        told = [r.payload["args"] for r in journal.records(kinds=["command"])
                if r.payload["name"] == "exposed_card"]
    assert told == [{"recipient": "box 1", "card": 1}, {"recipient": "box 1"}]
