"""The pit display and the dealer console when the controller goes away under them, in headless
Chromium against the real daemon (`tablectl run`, its own process): stopped and started again,
killed outright, paused without a word (a network that stops answering), its tokens replaced
by a reload, two consoles acting at once. A pit supervisor trusts what the display shows: a
table it no longer hears is marked stale, with since when, until it hears it again.
"""
from __future__ import annotations

import re
import signal
import time

import pytest

from controller.config import hash_token
from test_api_support import TOKENS, DaemonTable
from test_console_browser import (BROWSER_TESTS, TIMEOUT, browser, close_pages,  # noqa: F401
                                  dealer_and_display_at_bets, expect, front, live, open_page,
                                  shot, state_is, supervisor)
from test_reload_sync import reload_cmd

pytestmark = BROWSER_TESTS

NEW = "tok-new-" + "9" * 24
UP, DOWN = re.compile(r"\bup\b"), re.compile(r"\bdown\b")


def commands_named(live, name):
    """The command records journaled for ``name`` and, of them, those the table refused."""
    with live.journal() as journal:
        records = list(journal.records(kinds=["command", "refused"]))
    given = [r for r in records if r.kind == "command" and r.payload["name"] == name]
    refused = [r for r in records if r.kind == "refused" and r.payload["input"]["name"] == name]
    return given, refused


def shown_as_stale(page, silent=False):
    """The page says it lost the table, since when and in which zone, and marks what it
    shows as the last state known. At once (within expect's 5 s: less than the 6 s at least
    that the page waits on a silent stream) when the stream was closed; ``silent``: when
    nothing closed it, once it gave it up."""
    expect(page.get_by_test_id("stream")).to_have_class(DOWN, timeout=TIMEOUT if silent else None)
    stale = page.get_by_test_id("stale")
    expect(stale).to_be_visible()
    expect(stale).to_contain_text("not live")
    expect(stale).to_contain_text("非即時")
    # the time the table was last heard, with its zone: "14:03:07 UTC+8" (the browser's own)
    offset = page.evaluate("-new Date().getTimezoneOffset()")
    zone = "UTC" if offset == 0 else "UTC" + ("+" if offset > 0 else "-") + str(abs(offset) // 60)
    expect(stale).to_contain_text(re.compile(r"\d\d:\d\d:\d\d " + re.escape(zone) + r"\b"))
    assert page.evaluate("document.body.dataset.stale") == "true"


def live_again(page):
    expect(page.get_by_test_id("stream")).to_have_class(UP, timeout=TIMEOUT)
    expect(page.get_by_test_id("stale")).to_be_hidden()
    assert page.evaluate("document.body.dataset.stale") != "true"


@pytest.fixture
def paused(tmp_path):
    """A Q Poker table dealt from the shoe with the usual link timeout (5 s), to be paused
    longer than it: the devices speak on meanwhile, and the controller, which judges their
    silence only over time it ran, keeps their links (docs/protocol.md 3.5), so what the
    page shows is all that the pause changes."""
    table = DaemonTable(tmp_path, "q-poker", "shoe")
    yield table
    table.close()


def test_a_paused_controller_is_shown_stale_and_a_bet_given_meanwhile_is_placed_once(
        browser, paused):
    """A controller that stops answering without closing anything (SIGSTOP: as a network
    that drops every packet) left the display saying "live" over a table it no longer heard,
    for ever. The stream's `status` every 2 s is its heartbeat: a page that hears nothing for
    several of them says it lost the table. A bet given meanwhile waits for its answer, says
    so, and is placed once when the controller answers again."""
    live = paused
    dealer, display = dealer_and_display_at_bets(browser, live)
    live.rig.proc.send_signal(signal.SIGSTOP)
    try:
        shown_as_stale(front(display), silent=True)
        front(dealer).get_by_test_id("bet-1").click()
        # (said once the answer is 4 s late: past expect's 5 s under load)
        expect(dealer.get_by_test_id("message")).to_contain_text("no answer yet", timeout=TIMEOUT)
        expect(dealer.get_by_test_id("message")).to_contain_text("do not send it again")
    finally:
        live.rig.proc.send_signal(signal.SIGCONT)
    expect(front(dealer).get_by_test_id("message")).to_contain_text("✓", timeout=TIMEOUT)
    live_again(front(display))
    expect(display.get_by_test_id("box-1").locator("[data-wager]")).to_contain_text("10")
    given, refused = commands_named(live, "place_bet")
    assert len(given) == 1 and not refused


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_killed_controller_leaves_the_last_state_marked_stale_and_the_page_rebuilds(
        browser, live):
    """SIGKILL while dealing: the page says at once that it lost the table and keeps the
    last state, marked stale; a command given meanwhile is said not to have reached it and is
    not sent again. The restart voids the round (a machine failure while dealing, 89/2004
    art. 11(5)); the supervisor clears it and the next round opens before the display can
    reconnect: the page takes the table as it now is, not the round it had drawn."""
    dealer, display = dealer_and_display_at_bets(browser, live)
    assert supervisor(live, "place_bet", box=1, wager="versus_croupier", amount=10)["ok"]
    live.devices["shoe"].draw()
    state_is(display, "dealing")
    expect(display.get_by_test_id("box-1").locator(".card")).to_have_count(1)
    expect(front(dealer).locator("[data-command=misdeal]")).to_be_visible()
    live.rig.kill(signal.SIGKILL)
    shown_as_stale(front(display))
    expect(display.get_by_test_id("box-1").locator(".card")).to_have_count(1)   # the last state
    shot(display, "display-table-lost")
    front(dealer).locator("[data-command=misdeal]").click()
    expect(dealer.get_by_test_id("error")).to_contain_text("cannot be reached")
    display.route("**/api/events", lambda route: route.abort())   # it misses what follows
    live.rig.start_controller()
    live.rig.wait_links()
    # the restart voided the round (89/2004 art. 11(5)), held for the supervisor: the dealer's
    # page, which could reconnect, shows it
    live_again(front(dealer))
    state_is(dealer, "malfunction")
    expect(dealer.get_by_test_id("irregularity")).to_contain_text("11(5)")
    expect(dealer.get_by_test_id("settlement")).to_contain_text("Round void")
    assert supervisor(live, "clear_malfunction")["ok"]      # and the next round opens
    assert live.state() == "shuffling"
    shown_as_stale(front(display))
    display.unroute("**/api/events")
    live_again(display)
    state_is(display, "shuffling")
    expect(display.locator("#round-no")).to_have_text(str(live.view()["round"]["round"]))
    expect(display.get_by_test_id("box-1").locator(".card")).to_have_count(0)
    expect(display.get_by_test_id("irregularity")).to_be_hidden()
    given, _ = commands_named(live, "misdeal")
    assert given == []          # the page did not send it again when the table came back


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_restart_shows_stale_at_once_then_the_round_as_the_journal_holds_it(browser, live):
    """SIGTERM: the stream closes cleanly, the page says so at once (the layout marked stale
    with the time); started again, the page shows the round the journal kept, live."""
    dealer, display = dealer_and_display_at_bets(browser, live)
    live.rig.kill(signal.SIGTERM)
    shown_as_stale(front(display))
    live.rig.start_controller()
    live.rig.wait_links()
    live_again(display)
    state_is(display, "bets_open")
    live_again(front(dealer))


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_token_entered_while_the_controller_is_down_says_so_and_opens_once_it_is_up(
        browser, live):
    """A display left at the sign-in form: the token entered while the controller was down
    left the form as it was, saying nothing, while the page tried again in silence."""
    page = browser.new_page()
    page.goto(live.url + "/")
    expect(page.locator("#login")).to_be_visible()
    live.rig.kill(signal.SIGTERM)
    page.locator("#token-input").fill(TOKENS["display"])
    page.locator("#login button[type=submit]").click()
    expect(page.get_by_test_id("unreachable")).to_contain_text("cannot be reached")
    expect(page.get_by_test_id("unreachable")).to_contain_text("未能連線")
    live.rig.start_controller()
    live.rig.wait_links()
    expect(page.get_by_test_id("role")).to_contain_text("display")
    live_again(page)
    expect(page.get_by_test_id("unreachable")).to_be_hidden()


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_two_consoles_deciding_at_once_one_is_refused_and_both_show_the_table(browser, live):
    """The dealer's tablet and the supervisor's pit PC give box 1's decision at the same
    moment: the table takes one, the other console shows the table's refusal (409, its own
    words) and both show the same table."""
    dealer, _ = dealer_and_display_at_bets(browser, live)
    boss = open_page(browser, live, "supervisor")
    assert supervisor(live, "place_bet", box=1, wager="versus_croupier", amount=10)["ok"]
    for _ in range(6):
        live.devices["shoe"].draw()
    for page in (dealer, boss):
        state_is(front(page), "player_decisions")
    dealer.evaluate("document.querySelector('[data-testid=play-1]').click()")
    boss.evaluate("document.querySelector('[data-testid=fold-1]').click()")
    for page in (dealer, boss):
        state_is(front(page), "settlement")
        expect(page.get_by_test_id("message")).not_to_contain_text("…")
    messages = [p.get_by_test_id("message").inner_text() for p in (dealer, boss)]
    assert sorted("✓" in m for m in messages) == [False, True], messages
    refusal = next(m for m in messages if "✓" not in m)
    assert "409" in refusal
    given, refused = commands_named(live, "decide")
    assert len(given) == 2 and len(refused) == 1
    assert refused[0].payload["error"] in refusal
    decided = live.view()["round"]["decisions"][0]["decision"]
    for page in (dealer, boss):
        expect(page.get_by_test_id("decision-1")).to_contain_text(decided.capitalize())


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_token_replaced_by_a_reload_asks_to_sign_in_again_and_stops_asking(browser, live):
    """`tablectl reload` with the dealer's token replaced: the open console said only "That
    token is not accepted", as for a token mistyped. It now says the token was replaced,
    the way out (the new one from the supervisor), hides the table, and asks nothing more
    until the new token is entered, which opens the table again."""
    dealer = open_page(browser, live, "dealer")
    display = open_page(browser, live, "display")
    text = live.rig.config_path.read_text()
    live.rig.config_path.write_text(text.replace(hash_token(TOKENS["dealer"]),
                                                 hash_token(NEW)))
    done = reload_cmd(live.rig.control_path)
    assert done.returncode == 0, done.stderr
    login = front(dealer).locator("#login")
    expect(login).to_be_visible()
    expect(dealer.locator("#login-error")).to_contain_text("replaced")
    expect(dealer.locator("#login-error")).to_contain_text("supervisor")
    expect(dealer.locator("#login-error")).to_contain_text("已被更換")
    expect(dealer.locator("#table")).to_be_hidden()
    asked = []
    dealer.on("request", lambda r: asked.append(r.url))
    time.sleep(6)                   # three heartbeats and more of the page's retries
    assert asked == []
    live_again(front(display))      # the display's token did not change
    dealer.locator("#token-input").fill(NEW)          # the way out: the new token
    dealer.locator("#login button[type=submit]").click()
    expect(front(dealer).get_by_test_id("role")).to_contain_text("dealer")
    live_again(dealer)
