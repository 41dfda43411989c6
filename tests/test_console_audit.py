"""The pit display and the dealer console given hostile text, in headless Chromium against the
real daemon: a player's name, a void's reason, a refusal, and a device's serial number and
malfunction text (its firmware's, over the wire) holding HTML and script are shown as the text
they are, on every role's page, and nothing of them runs.
"""
from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest

from test_api_support import TOKENS
from test_hostile_device_words import malfunction, swap_in_a_spare_shoe
from test_console_browser import (BROWSER_TESTS, browser, close_pages, expect,  # noqa: F401
                                  front, live, open_page, state_is, supervisor)

pytestmark = BROWSER_TESTS

NAME = '<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>Mr <b>X</b>'
REASON = 'dispute <svg onload="window.__xss=3"></svg><b id="injected">bold</b>'


def dealer(live, name, **args):
    req = urllib.request.Request(f"{live.url}/api/commands/{name}", method="POST",
                                 data=json.dumps(args).encode(),
                                 headers={"Authorization": f"Bearer {TOKENS['dealer']}",
                                          "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def nothing_ran(page):
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[src=x], #injected, svg[onload]").count() == 0
    assert page.locator("script").evaluate_all(
        "els => els.filter(e => e.textContent.includes('__xss')).length") == 0


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_html_in_a_name_a_reason_and_a_refusal_is_shown_as_text(browser, live):
    supervisor(live, "open_table")
    assert dealer(live, "deck_ready")[0] == 200
    display = open_page(browser, live, "display")
    desk = open_page(browser, live, "dealer")
    state_is(display, "bets_open")
    status, doc = dealer(live, "place_bet", box=1, wager="versus_croupier", amount=10,
                         player=NAME)
    assert status == 200, doc
    for page in (display, desk):
        front(page)
        expect(page.get_by_test_id("box-1")).to_contain_text("Mr <b>X</b>")
        expect(page.get_by_test_id("box-1")).to_contain_text('<img src=x onerror=')
        nothing_ran(page)
    # A refusal quoting the name, shown to the dealer: remove a bet this player does not hold.
    front(desk)
    desk.locator("details:has(#command-form) summary").click()
    desk.locator("#command-name").select_option("remove_bet")
    desk.locator("#command-form [data-param=box]").fill("1")
    desk.locator("#command-form [data-param=wager]").fill("pair_bonus")
    desk.locator("#command-form [data-param=player]").fill(NAME)
    desk.locator("#command-form [type=submit]").click()
    expect(desk.get_by_test_id("error")).to_contain_text("409")
    nothing_ran(desk)
    supervisor(live, "void_round", reason=REASON)
    for page in (display, desk):
        front(page)
        state_is(page, "round_void")
        expect(page.get_by_test_id("events")).to_contain_text('<b id="injected">bold</b>')
        nothing_ran(page)


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_html_in_a_devices_serial_number_and_malfunction_is_shown_as_text(browser, live):
    # A device's own words, as its firmware sends them over the wire: the spare shoe's serial
    # number is HTML, and so is its malfunction's text (WORDS).
    serial = '<img src=x onerror="window.__xss=4"><b id="injected">SIM</b>'
    supervisor(live, "open_table")
    display = open_page(browser, live, "display")
    boss = open_page(browser, live, "supervisor")
    swap_in_a_spare_shoe(live.rig, serial)
    malfunction(live.rig)
    for page in (display, boss):
        front(page)
        expect(page.locator("tr[data-device=shoe] .ident")).to_contain_text(serial)
        expect(page.get_by_test_id("events")).to_contain_text(
            '<img src=x onerror="window.__xss=1">')
        expect(page.get_by_test_id("events")).to_contain_text('{"event": "forged"')
        nothing_ran(page)


# Where the shoe row's firmware version's "f" and "w" are drawn: with "fw" read left to right,
# the "f" is left of the "w"; a right-to-left override before it turns it around. Null until
# the row is drawn (the rows are drawn anew at each status message).
FW_READS_LEFT_TO_RIGHT = """() => {
  const cell = document.querySelector("tr[data-device=shoe] .ident");
  if (!cell || !cell.textContent.includes("EVIL") || !cell.getBoundingClientRect().width)
    return null;
  const walk = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode()) {
    const i = n.data.indexOf("fw ");
    if (i < 0) continue;
    const at = (k) => { const r = document.createRange(); r.setStart(n, k); r.setEnd(n, k + 1);
                        return r.getBoundingClientRect().left; };
    return { left_to_right: at(i) < at(i + 1) };
  }
  return { left_to_right: null };
}"""


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_right_to_left_override_in_a_serial_number_turns_nothing_else_around(browser, live):
    # U+202E in the spare's serial number would show the firmware version after it (and its
    # hash) backwards, "0.0.1 wf": the serial number is set apart from the rest of the row.
    supervisor(live, "open_table")
    display = open_page(browser, live, "display")
    swap_in_a_spare_shoe(live.rig, "SIM-\u202eEVIL")
    cell = front(display).locator("tr[data-device=shoe] .ident")
    expect(cell).to_contain_text("SIM-\u202eEVIL")
    # (one call that finds the row and measures it: a row drawn anew between the two would
    # measure as nowhere)
    drawn = display.wait_for_function(FW_READS_LEFT_TO_RIGHT).json_value()
    assert drawn == {"left_to_right": True}
