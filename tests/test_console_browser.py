"""The pit display and dealer console in headless Chromium against the controller: the real
daemon (`tablectl run`, its own process) with simulated devices (shoe, shuffler and dice on
pseudo-terminals, the real drivers) and its console API on a loopback port. Screenshots go to
artifacts/screenshots/.

Chromium is Debian's (``apt-get install chromium``; scripts/test installs it when missing),
driven by Playwright for Python without Playwright's own browser download.
"""
from __future__ import annotations

import asyncio
import json
import os
import re
import tempfile
import urllib.request
from pathlib import Path

import pytest

from test_api_support import TOKENS, DaemonTable

CHROMIUM = "/usr/bin/chromium"
SHOTS = Path(__file__).resolve().parent.parent / "artifacts" / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]

# The marks of every test that drives the page in Chromium (the console's other test files too).
BROWSER_TESTS = [
    pytest.mark.browser,
    pytest.mark.skipif(not os.path.exists(CHROMIUM),
                       reason=f"Chromium is not installed at {CHROMIUM}: "
                              "apt-get install -y chromium (scripts/test does it)"),
]
pytestmark = BROWSER_TESTS
# Playwright is in the `test` extra: a missing one is a broken install, not a reason to skip.
from playwright import sync_api as playwright_sync  # noqa: E402

expect = playwright_sync.expect
TIMEOUT = 15_000


@pytest.fixture(scope="module")
def browser():
    """One Chromium for the module, with a fresh profile of its own."""
    with playwright_sync.sync_playwright() as p, tempfile.TemporaryDirectory() as profile:
        ctx = p.chromium.launch_persistent_context(
            profile, executable_path=CHROMIUM, headless=True, args=ARGS,
            viewport={"width": 1400, "height": 1000}, service_workers="block")
        ctx.set_default_timeout(TIMEOUT)
        yield ctx
        ctx.close()


@pytest.fixture
def live(tmp_path, request):
    game, mode = request.param
    table = DaemonTable(tmp_path, game, mode)
    yield table
    table.close()


def open_page(browser, live, role):
    page = browser.new_page()
    page.goto(f"{live.url}/#token={TOKENS[role]}")
    expect(page.get_by_test_id("role")).to_contain_text(role)
    expect(page.get_by_test_id("stream")).to_have_class(re.compile(r"\bup\b"))
    return page


def supervisor(live, name, **args):
    """A supervisor command over HTTP (as the supervisor's own console would send it)."""
    req = urllib.request.Request(f"{live.url}/api/commands/{name}", method="POST",
                                 data=json.dumps(args).encode(),
                                 headers={"Authorization": f"Bearer {TOKENS['supervisor']}",
                                          "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def front(page):
    """The page the croupier is using: headless Chromium slows a tab behind another."""
    page.bring_to_front()
    return page


def state_is(page, state):
    # wait_for_selector watches the page itself (no polling back-off): the tests stay quick
    page.wait_for_selector(f'[data-testid=state][data-state="{state}"]')


def dealer_and_display_at_bets(browser, live):
    """The table opened by the supervisor, the dealer's and the display's pages, and the
    dealer's deck_ready taken: the bets are open. The two pages."""
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "shuffling")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(display, "bets_open")
    return dealer, display


def bet(page, box, wager, amount):
    front(page)
    page.get_by_test_id(f"wager-{box}").select_option(wager)
    page.get_by_test_id(f"amount-{box}").fill(str(amount))
    before = page.get_by_test_id(f"box-{box}").locator(f"[data-wager={wager}] b").all_inner_texts()
    total = amount + sum(int(t) for t in before)
    page.get_by_test_id(f"bet-{box}").click()
    page.wait_for_function(
        "([box, wager, total]) => [...document.querySelectorAll(`[data-testid=box-${box}] "
        "[data-wager=${wager}] b`)].some(b => parseInt(b.textContent, 10) === total)",
        arg=[box, wager, total])


def cards_of(page, box):
    return page.get_by_test_id(f"box-{box}").locator(".card").evaluate_all(
        "els => els.map(e => e.dataset.card)")


def dealt_cards(live):
    """Every card the devices dealt this round, from the journal, as text."""
    out = []
    with live.journal() as journal:
        records = list(journal.records(kinds=["device"]))
    for rec in records:
        e = rec.payload["event"]
        if e["kind"] in ("card_drawn", "card_dispensed"):
            out.append(e["card"])
        elif e["kind"] == "hand_dispensed":
            out.extend(e["cards"])
    return out


def shot(page, name):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def settled_nets(live):
    s = live.view()["round"]["settlement"]
    return s, {(w["box"], w["wager"]): w["net"] for w in s["wagers"]}


def check_results_shown(display, nets):
    """Each wager's net on the display is the controller's settled net for it."""
    for (box, wager), net in nets.items():
        line = display.get_by_test_id(f"result-{box}").locator("li").filter(
            has=display.locator(f"text=/{re.escape(wager_en(wager))}/"))
        expect(line.first).to_contain_text(("+" if net > 0 else "") + str(net))


def wager_en(w):
    return {"pair_bonus": "Pair bonus", "versus_croupier": "Versus croupier",
            "pair_plus": "Pair Plus", "ante": "Ante", "play": "Play", "seat": "Bet",
            "pot": "Pot"}[w]


@pytest.fixture(autouse=True)
def close_pages(browser):
    """Each test's pages close with it (their streams would keep the cores busy)."""
    yield
    for page in list(browser.pages):
        page.close()


# --- a full round of each game --------------------------------------------------------------

@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_q_poker_round_with_the_shoe_appears_on_the_display(browser, live):
    dealer, display = dealer_and_display_at_bets(browser, live)
    bet(dealer, 1, "versus_croupier", 10)
    bet(dealer, 3, "pair_bonus", 5)
    bet(dealer, 3, "versus_croupier", 20)
    shot(dealer, "q-poker-dealer-bets")
    expect(display.get_by_test_id("box-3").locator("[data-wager=pair_bonus]")).to_contain_text("5")
    for _ in range(9):      # art. 7(1): one card at a time to boxes 1 and 3, croupier last
        live.devices["shoe"].draw()
    state_is(display, "player_decisions")
    cards = dealt_cards(live)
    # art. 9(1): the players open their hands; the croupier's stays face down
    expect(display.get_by_test_id("box-1").locator(".card")).to_have_count(3)
    assert cards_of(display, 1) == cards[0::3]
    assert cards_of(display, 3) == cards[1::3]
    assert display.get_by_test_id("croupier").locator(".card").evaluate_all(
        "els => els.map(e => e.dataset.card)") == ["back"] * 3
    shot(display, "q-poker-shoe-decisions")
    front(dealer).get_by_test_id("play-1").click()
    front(dealer).get_by_test_id("fold-3").click()
    state_is(display, "settlement")
    expect(display.get_by_test_id("decision-3")).to_contain_text("Fold")
    croupier = display.get_by_test_id("croupier").locator(".card")
    expect(croupier.first).not_to_have_attribute("data-card", "back")
    assert croupier.evaluate_all("els => els.map(e => e.dataset.card)") == cards[2::3]
    settlement, nets = settled_nets(live)
    assert nets[(3, "versus_croupier")] == -10     # art. 9(3): not playing loses half the bet
    check_results_shown(display, nets)
    expect(display.get_by_test_id("house-net")).to_contain_text(str(settlement["house_net"]))
    expect(display.get_by_test_id("light")).to_have_attribute("data-colour", "amber")
    shot(display, "q-poker-shoe-settlement")
    front(dealer).locator("[data-command=confirm_result]").click()
    state_is(display, "round_complete")


@pytest.mark.parametrize("live", [("fortune-3-card-poker", "shuffler")], indirect=True)
def test_fortune_round_with_the_shuffler_appears_on_the_display(browser, live):
    supervisor(live, "open_table")           # the shuffler shuffles, then bets open
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    bet(dealer, 2, "ante", 10)
    bet(dealer, 2, "pair_plus", 5)
    bet(dealer, 5, "ante", 20)
    front(dealer).locator("[data-command=close_bets]").click()
    state_is(display, "player_decisions")    # hands of three, box by box, croupier last
    hands = dealt_cards(live)
    assert cards_of(display, 2) == hands[0:3] and cards_of(display, 5) == hands[3:6]
    assert display.get_by_test_id("croupier").locator("[data-card=back]").count() == 3
    front(dealer).get_by_test_id("play-2").click()
    front(dealer).get_by_test_id("fold-5").click()
    state_is(display, "settlement")
    assert display.get_by_test_id("croupier").locator(".card").evaluate_all(
        "els => els.map(e => e.dataset.card)") == hands[6:9]
    _, nets = settled_nets(live)
    assert nets[(5, "ante")] == -20           # a fold loses the Ante (78/2008 art. 9)
    check_results_shown(display, nets)
    shot(display, "fortune-shuffler-settlement")
    front(dealer).locator("[data-command=confirm_result]").click()
    state_is(display, "round_complete")


@pytest.mark.parametrize("live", [("super-pan-9", "shuffler")], indirect=True)
def test_super_pan_9_round_with_dice_and_shuffler_appears_on_the_display(browser, live):
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    front(dealer).get_by_test_id("banker-seat").fill("1")
    front(dealer).get_by_test_id("banker-capital").fill("1000")
    front(dealer).locator("[data-command=set_banker]").click()
    expect(display.get_by_test_id("box-1")).to_contain_text("Banker")
    for box, amount in ((2, 50), (4, 30), (6, 20)):
        bet(dealer, box, "seat", amount)
    live.devices["dice"].set_next_dice([3, 5, 1, 6])
    front(dealer).locator("[data-command=shake]").click()
    state_is(display, "settlement")
    expect(display.get_by_test_id("dice").locator(".die")).to_have_count(4)
    expect(display.get_by_test_id("dice")).to_contain_text("15")
    view = live.view()
    for box in (1, 2, 4, 6):                 # every hand in play is face up at settlement
        hand = view["hands"][f"box {box}"]
        assert len(hand) == 2 and None not in hand
        assert cards_of(display, box) == hand
    _, nets = settled_nets(live)
    check_results_shown(display, {k: v for k, v in nets.items() if k[1] == "seat"})
    shot(display, "super-pan-9-shuffler-settlement")
    front(dealer).locator("[data-command=confirm_result]").click()
    state_is(display, "round_complete")


@pytest.mark.parametrize("live", [("super-pan-9", "shuffler")], indirect=True)
def test_super_pan_9_co_banks_from_the_console_appear_beside_the_banker_and_are_settled(
        browser, live):
    """261/96/M art. 5(5): the dealer takes a player's and the house's co-bank once the banker
    is named; the display lists them beside the banker in the order placed, a co-bank refused
    by the table says why and changes nothing, and the settlement shows each share of the
    bank, the house last."""
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    expect(dealer.locator("[data-command=co_bank]")).to_have_count(0)   # no banker yet
    assert live.view()["house_co_bank_capital"] is None      # none predetermined: typed
    front(dealer).get_by_test_id("banker-seat").fill("1")
    front(dealer).get_by_test_id("banker-capital").fill("100")
    front(dealer).locator("[data-command=set_banker]").click()
    expect(display.get_by_test_id("box-1")).to_contain_text("Banker")
    front(dealer).get_by_test_id("co-bank-house").check()
    expect(dealer.get_by_test_id("co-bank-capital")).to_be_editable()
    front(dealer).get_by_test_id("co-bank-capital").fill("500")
    front(dealer).locator("[data-command=co_bank]").click()
    expect(display.get_by_test_id("co-bankers").locator("li")).to_have_count(1)
    front(dealer).get_by_test_id("co-bank-house").uncheck()
    for name, capital in (("Eve", "100"), ("Dee", "0")):    # Dee's capital is no capital
        front(dealer).get_by_test_id("co-bank-player").fill(name)
        front(dealer).get_by_test_id("co-bank-seat").select_option("4")
        front(dealer).get_by_test_id("co-bank-capital").fill(capital)
        front(dealer).locator("[data-command=co_bank]").click()
        if name == "Eve":
            expect(display.get_by_test_id("co-bankers").locator("li")).to_have_count(2)
    expect(dealer.get_by_test_id("error")).to_contain_text("409: co-banker Dee's capital")
    assert [c.get("player") or "house" for c in live.view()["round"]["co_bankers"]] == [
        "house", "Eve"]
    co = display.get_by_test_id("co-bankers").locator("li")
    expect(co.nth(0)).to_contain_text("House")
    expect(co.nth(0)).to_contain_text("500")
    expect(co.nth(1)).to_contain_text("Eve")
    expect(co.nth(1)).to_contain_text("100")
    for box, amount in ((2, 150), (3, 100)):
        bet(dealer, box, "seat", amount)
    shot(dealer, "super-pan-9-dealer-co-banks")
    live.devices["dice"].set_next_dice([3, 5, 1, 6])
    front(dealer).locator("[data-command=shake]").click()
    state_is(display, "settlement")
    bank = live.view()["round"]["settlement"]["bank"]
    assert [row["name"] for row in bank] == ["banker", "Eve", "house"]
    rows = display.get_by_test_id("bank").locator("li")
    expect(rows).to_have_count(3)
    for i, row in enumerate(bank):
        expect(rows.nth(i)).to_contain_text(("+" if row["net"] > 0 else "") + str(row["net"]))
    expect(rows.nth(1)).to_contain_text("Eve")
    expect(rows.nth(2)).to_contain_text("House")
    shot(display, "super-pan-9-co-banks-settlement")


@pytest.mark.parametrize("live", [("super-pan-9", "shuffler")], indirect=True)
def test_a_co_bank_is_withdrawn_from_the_console_before_the_shake(browser, live):
    supervisor(live, "open_table")
    dealer = open_page(browser, live, "dealer")
    state_is(dealer, "bets_open")
    dealer.get_by_test_id("banker-seat").fill("2")
    dealer.get_by_test_id("banker-capital").fill("1000")
    dealer.locator("[data-command=set_banker]").click()
    dealer.get_by_test_id("co-bank-player").fill("Eve")
    dealer.get_by_test_id("co-bank-capital").fill("300")
    dealer.locator("[data-command=co_bank]").click()
    expect(dealer.get_by_test_id("co-bankers")).to_contain_text("Eve")
    dealer.get_by_test_id("remove-co-bank-Eve").click()
    expect(dealer.get_by_test_id("co-bankers")).to_have_count(0)
    assert live.view()["round"]["co_bankers"] == []


@pytest.fixture
def house_500(tmp_path, monkeypatch):
    """A Super Pan 9 table (the daemon, as ``live`` starts it) whose table.toml predetermines
    the house's co-bank capital: ``[pan9] house_co_bank_capital = 500``, added to the file the
    rig writes, which the daemon reads as it would any table's."""
    from controller.rig import Rig
    plain = Rig.write_config

    def write_config(rig):
        plain(rig)
        with open(rig.config_path, "a", encoding="utf-8") as f:
            f.write("\n[pan9]\nhouse_co_bank_capital = 500\n")
    monkeypatch.setattr(Rig, "write_config", write_config)
    table = DaemonTable(tmp_path, "super-pan-9", "shuffler")
    yield table
    table.close()


def table_doc(live, role):
    """``GET /api/table`` as the role's page reads it."""
    req = urllib.request.Request(f"{live.url}/api/table",
                                 headers={"Authorization": f"Bearer {TOKENS[role]}"})
    with urllib.request.urlopen(req, timeout=10) as r:
        return json.loads(r.read())


def test_the_house_co_bank_is_filled_with_the_capital_the_configuration_predetermines(
        browser, house_500):
    """261/96/M art. 5(5): the house co-banks with a capital "previamente determinado". Where
    the configuration sets it the table takes no other, but the page did not know it: the
    dealer had to type it, and a different amount was refused. The view now gives it; the
    house's co-bank shows it, fixed, and a player's capital is still the dealer's to type."""
    live = house_500
    supervisor(live, "open_table")
    assert table_doc(live, "display")["view"]["house_co_bank_capital"] == 500
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    front(dealer).get_by_test_id("banker-seat").fill("1")
    dealer.get_by_test_id("banker-capital").fill("100")
    dealer.locator("[data-command=set_banker]").click()
    capital = dealer.get_by_test_id("co-bank-capital")
    capital.fill("250")                         # a player's capital, typed first
    fixed = dealer.get_by_test_id("house-capital-predetermined")
    expect(fixed).to_be_hidden()
    dealer.get_by_test_id("co-bank-house").check()
    expect(capital).to_have_value("500")
    expect(capital).not_to_be_editable()        # the table would refuse any other amount
    for words in ("預先訂定", "Predetermined"):
        expect(fixed).to_contain_text(words)
    shot(dealer, "super-pan-9-dealer-house-capital-predetermined")
    dealer.locator("[data-command=co_bank]").click()
    expect(display.get_by_test_id("co-bankers").locator("li")).to_have_count(1)
    expect(display.get_by_test_id("co-bankers").locator("li").first).to_contain_text("500")
    with live.journal() as journal:             # what the page sent, as the table received it
        assert journal.last(kind="command").payload["args"] == {"house": True, "capital": 500}
    front(dealer).get_by_test_id("co-bank-house").uncheck()
    expect(capital).to_be_editable()
    expect(capital).to_have_value("250")        # what the dealer typed for the player is kept
    expect(fixed).to_be_hidden()
    dealer.get_by_test_id("co-bank-player").fill("Eve")
    dealer.get_by_test_id("co-bank-seat").select_option("4")
    dealer.locator("[data-command=co_bank]").click()
    expect(display.get_by_test_id("co-bankers").locator("li")).to_have_count(2)
    assert live.view()["round"]["co_bankers"] == [
        {"house": True, "capital": 500}, {"player": "Eve", "seat": 4, "capital": 250}]


@pytest.mark.parametrize("live", [("super-pan-9", "shuffler")], indirect=True)
def test_super_pan_9_points_declared_and_a_reshake_are_given_from_the_console(browser, live):
    """261/96/M art. 2(3): the banker declares the points he adds or takes before the shake;
    art. 2(4): a die out of the cup is put back and the banker shakes again, under the points
    declared. The page had no way to declare them but the raw "All commands" form, and no
    shake to give once the table waited for the banker's second shake."""
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    assert dealer.locator("[data-command=declare_adjust]").count() == 0   # no banker yet
    front(dealer).get_by_test_id("banker-seat").fill("1")
    front(dealer).get_by_test_id("banker-capital").fill("1000")
    front(dealer).locator("[data-command=set_banker]").click()
    bet(dealer, 2, "seat", 50)
    front(dealer).get_by_test_id("adjust-points").fill("+2")
    dealer.locator("[data-command=declare_adjust]").click()
    expect(display.get_by_test_id("adjust")).to_contain_text("+2")
    assert live.view()["round"]["adjust"] == 2
    live.devices["dice"].inject("die_out_of_cup", die=1)
    front(dealer).locator("[data-command=shake]").click()
    expect(display.get_by_test_id("irregularity")).to_contain_text("A die out of the cup")
    state_is(display, "dice_shaking")
    assert live.view()["reshake_owed"] is True
    live.devices["dice"].return_die()
    live.devices["dice"].set_next_dice([3, 5, 1, 6])
    shake = front(dealer).locator("[data-command=shake]")
    expect(shake).to_be_visible()
    assert dealer.locator("[data-command=declare_adjust]").count() == 0   # declared already
    shake.click()
    state_is(display, "settlement")
    assert live.view()["round"]["adjust"] == 2
    expect(display.get_by_test_id("dice")).to_contain_text("15")
    expect(display.get_by_test_id("adjust")).to_contain_text("+2")
    shot(display, "super-pan-9-reshake-settlement")


@pytest.mark.parametrize("live", [("texas-holdem", "shuffler")], indirect=True)
def test_texas_holdem_round_to_the_showdown_appears_on_the_display(browser, live):
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    for seat in (2, 5, 8):
        front(dealer).get_by_test_id(f"seat-stack-{seat}").fill("500")
    front(dealer).get_by_test_id("button-seat").fill("2")
    front(dealer).locator("[data-command=seat_players]").click()
    expect(display.get_by_test_id("stack-5")).to_contain_text("500")
    front(dealer).locator("[data-command=close_bets]").click()
    state_is(display, "player_decisions")     # hole cards dealt, blinds posted
    for seat in (2, 5, 8):                     # hole cards stay face down (11/2008 art. 8)
        expect(display.get_by_test_id(f"box-{seat}").locator("[data-card=back]")).to_have_count(2)
    expect(display.get_by_test_id("pot")).to_contain_text("3")
    shot(dealer, "texas-holdem-dealer-preflop")
    first = True
    for _ in range(16):                        # the seat to act folds first, then check or call
        live.wait(lambda: live.state() in ("player_decisions", "settlement"))
        if live.state() != "player_decisions":
            break
        to_act = live.view()["holdem"]["to_act"]
        expect(dealer.locator(".seat-to-act")).to_contain_text(str(to_act))
        legal = dealer.locator("[data-action]").evaluate_all("els => els.map(e => e.dataset.action)")
        choice = "fold" if first else ("check" if "check" in legal else "call")
        first = False
        street = live.view()["holdem"]["street"]
        front(dealer).locator(f"[data-action={choice}]").click()
        # the action ends the street when the next is dealt and the same seat speaks first
        live.wait(lambda: (lambda v: v["state"] != "player_decisions"
                           or v["holdem"]["to_act"] != to_act
                           or v["holdem"]["street"] != street)(live.view()))
    state_is(display, "settlement")
    view = live.view()
    board = view["hands"]["board"]
    assert len(board) == 5 and None not in board
    assert display.get_by_test_id("board").locator(".card").evaluate_all(
        "els => els.map(e => e.dataset.card)") == board
    folded = view["holdem"]["folded"] if view.get("holdem") else [2]
    for seat in (2, 5, 8):
        shown = cards_of(display, seat)
        if seat in folded:                     # a folded hand is never shown
            assert shown == ["back", "back"] or shown == []
        else:
            assert shown == view["hands"][f"box {seat}"] and "back" not in shown
    _, nets = settled_nets(live)
    check_results_shown(display, {k: v for k, v in nets.items() if k[0] not in folded})
    shot(display, "texas-holdem-showdown")
    front(dealer).locator("[data-command=confirm_result]").click()
    state_is(display, "round_complete")


@pytest.mark.parametrize("live", [("texas-holdem", "shuffler")], indirect=True)
def test_each_seat_is_given_its_own_stack_and_a_wrong_one_is_refused_by_the_table(browser, live):
    """The seating form gave every seat the same stack: other stacks went only through the
    API. It now has a field per seat (a seat with chips typed is seated with them, an empty
    one is not), sends what was typed, and shows the table's own refusal of a wrong stack,
    which seats nobody and keeps what the dealer typed."""
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    seat = lambda n: dealer.get_by_test_id(f"seat-stack-{n}")       # noqa: E731
    front(dealer)
    seat(2).fill("300")
    seat(5).fill("0")                           # the button left to the table (art. 1(2))
    dealer.locator("[data-command=seat_players]").click()
    error = dealer.get_by_test_id("error")
    expect(error).to_contain_text("409: a stack must be more than 0 chip units, got 0")
    assert live.view()["holdem"] is None
    expect(seat(5)).to_have_value("0")
    seat(5).fill("800")
    dealer.locator("[data-command=seat_players]").click()
    expect(display.get_by_test_id("stack-2")).to_contain_text("300")
    expect(display.get_by_test_id("stack-5")).to_contain_text("800")
    holdem = live.view()["holdem"]
    assert (holdem["seats"], holdem["stacks"], holdem["button"]) == (
        [2, 5], {"2": 300, "5": 800}, 2)       # the lowest seat, at the table's first hand
    expect(dealer.get_by_test_id("button-seat")).to_have_value("2")
    shot(front(dealer), "texas-holdem-dealer-seat-stacks")
    # seated again from the supervisor's console: the form shows the seating in force, not
    # what was typed for the one it replaced
    supervisor(live, "seat_players", seats=[2, 5], stacks={"2": 300, "5": 700}, button=5)
    expect(seat(5)).to_have_value("700")
    expect(dealer.get_by_test_id("button-seat")).to_have_value("5")
    # a typing slip (a letter O for a zero): refused as typed, by the table; the seating
    # stands as it was and the slip stays in its field to be put right
    seat(5).fill("7O0")
    seat(8).fill("400")
    dealer.locator("[data-command=seat_players]").click()
    expect(error).to_contain_text('409: a stack must be a whole number of chip units, got "7O0"')
    holdem = live.view()["holdem"]
    assert (holdem["seats"], holdem["stacks"], holdem["button"]) == (
        [2, 5], {"2": 300, "5": 700}, 5)
    expect(seat(5)).to_have_value("7O0")
    expect(seat(8)).to_have_value("400")
    expect(display.get_by_test_id("stack-5")).to_contain_text("700")
    expect(display.get_by_test_id("stack-8")).to_have_count(0)
    shot(dealer, "texas-holdem-dealer-seat-stack-refused")


@pytest.mark.parametrize("live", [("texas-holdem", "shuffler")], indirect=True)
def test_texas_holdem_side_pot_of_an_all_in_is_shown_with_its_boxes_and_its_winner(browser, live):
    """11/2008 art. 10(2), 11(3), H3: a player all-in for less can win only what he matched;
    the chips above make a side pot. The page showed only the pot's total: it now shows the
    main pot and each side pot with the boxes that may win it, while the hand is played and
    at settlement, with who took each."""
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    supervisor(live, "seat_players", seats=[2, 5, 8], stacks={"2": 100, "5": 500, "8": 500},
               button=2)                  # blinds 1 and 2 on seats 5 and 8; seat 2 speaks first
    expect(display.get_by_test_id("stack-2")).to_contain_text("100")
    front(dealer).locator("[data-command=close_bets]").click()
    state_is(display, "player_decisions")
    expect(display.get_by_test_id("pot-0")).to_contain_text("3")
    expect(display.get_by_test_id("pot-0")).to_have_attribute("data-eligible", "2,5,8")

    def act(seat, action, amount=None):
        expect(front(dealer).locator(".seat-to-act")).to_contain_text(str(seat))
        if amount is not None:
            dealer.get_by_test_id(f"action-{action}").fill(str(amount))
        street = live.view()["holdem"]["street"]
        dealer.locator(f"button[data-action={action}]").click()
        # a call that ends the street: the next is dealt and the same seat may speak first
        live.wait(lambda: (lambda v: v["state"] != "player_decisions"
                           or v["holdem"]["to_act"] != seat
                           or v["holdem"]["street"] != street)(live.view()))

    act(2, "allin")                           # 100, all he has
    act(5, "call")
    act(8, "raise", 300)
    pots = display.get_by_test_id("pots").locator("li")
    expect(pots).to_have_count(2)
    expect(pots.nth(1)).to_have_attribute("data-eligible", "5,8")
    expect(pots.nth(1)).to_contain_text("200")
    act(5, "call")
    expect(pots.nth(1)).to_contain_text("400")
    main, side = display.get_by_test_id("pot-0"), display.get_by_test_id("pot-1")
    expect(main).to_contain_text("300")
    expect(main).to_have_attribute("data-eligible", "2,5,8")
    for words in ("主池", "Main pot"):
        expect(main).to_contain_text(words)
    for words in ("邊池", "Side pot"):
        expect(side).to_contain_text(words)
    expect(side).to_contain_text("5, 8")
    assert live.view()["holdem"]["pots"] == [{"amount": 300, "eligible": [2, 5, 8]},
                                             {"amount": 400, "eligible": [5, 8]}]
    shot(display, "texas-holdem-side-pot")
    for _ in range(12):                       # seats 5 and 8 check the hand down
        live.wait(lambda: live.state() in ("player_decisions", "settlement"))
        if live.state() != "player_decisions":
            break
        act(live.view()["holdem"]["to_act"], "check")
    state_is(display, "settlement")
    awarded = live.view()["round"]["settlement"]["pots"]
    assert [(p["amount"], p["eligible"]) for p in awarded] == [(300, [2, 5, 8]), (400, [5, 8])]
    for i, pot in enumerate(awarded):
        shown = display.get_by_test_id(f"pot-{i}")
        for seat, share in pot["shares"].items():
            expect(shown).to_contain_text(f"{seat}: {share}")
        expect(shown).to_contain_text("Won by")
        expect(shown).to_contain_text("贏得")
    shot(display, "texas-holdem-side-pot-settlement")



@pytest.mark.parametrize("live", [("texas-holdem", "shuffler")], indirect=True)
def test_a_void_holdem_hand_shows_its_pot_returned_and_the_stacks_whole(browser, live):
    """11/2008 art. 9(2): a void hand's stakes go back to the players. The display kept the
    pot as it stood and the stacks without the chips; it now shows no pot, what each seat got
    back, and each stack as it was seated."""
    supervisor(live, "open_table")
    display = open_page(browser, live, "display")
    state_is(display, "bets_open")
    supervisor(live, "seat_players", seats=[2, 5], stacks={"2": 300, "5": 400}, button=2)
    supervisor(live, "close_bets")
    state_is(display, "player_decisions")
    seat = live.view()["holdem"]["to_act"]
    supervisor(live, "holdem_action", seat=seat, action="raise", amount=20)
    expect(display.get_by_test_id("pots").locator("li")).to_have_count(1)
    committed = {"2": 300 - live.view()["holdem"]["stacks"]["2"],
                 "5": 400 - live.view()["holdem"]["stacks"]["5"]}
    assert sum(committed.values()) == live.view()["holdem"]["pot"] > 0
    supervisor(live, "void_round", reason="a player disputes the deal")
    state_is(display, "round_void")
    assert live.view()["holdem"]["returned"] == committed
    expect(display.get_by_test_id("pots").locator("li")).to_have_count(0)
    returned = display.get_by_test_id("pot-returned")
    for words in ("彩池已退回", "Pot returned"):
        expect(returned).to_contain_text(words)
    for s, chips in committed.items():
        expect(returned).to_contain_text(f"{s}: {chips}")
    expect(display.get_by_test_id("stack-2")).to_contain_text("300")
    expect(display.get_by_test_id("stack-5")).to_contain_text("400")
    expect(display.get_by_test_id("pot")).to_contain_text("0")
    shot(display, "texas-holdem-void-pot-returned")


# --- a fault --------------------------------------------------------------------------------

@pytest.mark.parametrize("live", [("q-poker", "shuffler")], indirect=True)
def test_shuffler_jam_while_dealing_shows_art_11_5_and_the_supervisor_switches_to_the_shoe(browser, live):
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    state_is(display, "bets_open")
    bet(dealer, 1, "versus_croupier", 10)
    bet(dealer, 4, "versus_croupier", 10)
    live.devices["shuffler"].inject("jam", at_card=5)     # during box 4's hand
    front(dealer).locator("[data-command=close_bets]").click()
    state_is(display, "malfunction")
    banner = display.get_by_test_id("irregularity")
    # 89/2004 art. 11(5): a shuffler malfunction while dealing voids the round
    expect(banner).to_contain_text("洗牌機故障")
    expect(banner).to_contain_text("Shuffler malfunction")
    expect(banner.get_by_test_id("article")).to_contain_text("89/2004 art. 11(5)")
    expect(banner).to_contain_text("round void, bets returned")
    expect(display.get_by_test_id("light")).to_have_attribute("data-colour", "red")
    expect(display.locator("tr[data-device=shuffler]")).to_contain_text("jam")
    with live.journal() as journal:
        decision = journal.last(kind="decision")
    assert decision.article == "89/2004 art. 11(5)"
    shot(display, "q-poker-shuffler-jam")
    # the dealer has no way to clear it; the supervisor has
    assert dealer.locator("[data-command=clear_malfunction]").count() == 0
    boss = open_page(browser, live, "supervisor")
    expect(boss.locator("[data-command=switch_mode]")).to_be_visible()
    assert boss.locator("[data-command=void_round]").count() == 0    # already void
    shot(boss, "q-poker-supervisor-malfunction")
    # the buzzer called the supervisor, who silences it from the page; the light stays red
    buzzer = display.get_by_test_id("buzzer")
    expect(buzzer).to_have_attribute("data-buzzer", "sounding")
    expect(buzzer).to_contain_text("buzzer sounding")
    assert dealer.locator("[data-command=silence_buzzer]").count() == 0
    front(boss).locator("[data-command=silence_buzzer]").click()
    expect(display.get_by_test_id("events")).to_contain_text("buzzer silenced")
    expect(display.get_by_test_id("light")).to_have_attribute("data-colour", "red")
    expect(buzzer).to_have_attribute("data-buzzer", "silenced")
    # silenced: no button that could only be refused as already silenced
    expect(front(boss).locator("[data-command=silence_buzzer]")).to_have_count(0)
    # a pit display opened after the silence sees it under the red light, from the table
    late = open_page(browser, live, "display")
    expect(late.get_by_test_id("light")).to_have_attribute("data-colour", "red")
    expect(late.get_by_test_id("buzzer")).to_have_attribute("data-buzzer", "silenced")
    for words in ("蜂鳴器已靜音", "buzzer silenced"):
        expect(late.get_by_test_id("buzzer")).to_contain_text(words)
    shot(late, "q-poker-display-buzzer-silenced")
    late.close()
    with live.journal() as journal:
        silenced = journal.last(kind="table")
    assert silenced.payload["kind"] == "buzzer_silenced", silenced.payload
    assert silenced.payload["role"] == "supervisor" and "shuffler: jam" in silenced.payload["alarms"]
    # art. 11(5): replace the shuffler or deal from the shoe; the supervisor switches
    front(boss).locator("[data-command=switch_mode]").click()
    expect(display.locator("#mode")).to_contain_text("派牌盒")
    expect(display.locator("#mode")).to_contain_text("shoe")
    front(boss).locator("[data-command=clear_malfunction]").click()
    state_is(display, "shuffling")
    expect(display.get_by_test_id("irregularity")).to_be_hidden()
    front(dealer).locator("[data-command=deck_ready]").click()    # shuffled by hand, into the shoe
    state_is(display, "bets_open")
    expect(display.get_by_test_id("light")).to_have_attribute("data-colour", "green")
    expect(buzzer).to_be_hidden()                      # the alarm over: nothing sounds it
    expect(buzzer).to_have_attribute("data-buzzer", "off")
    shot(boss, "q-poker-supervisor-after-switch-to-shoe")


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_jam_during_decisions_is_cleared_by_the_supervisor_from_the_page_and_the_next_round_opens(
        browser, live):
    supervisor(live, "open_table")
    dealer, boss = open_page(browser, live, "dealer"), open_page(browser, live, "supervisor")
    state_is(dealer, "shuffling")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    bet(dealer, 1, "versus_croupier", 10)
    for _ in range(6):                          # box 1 and the croupier, three cards each
        live.devices["shoe"].draw()
    state_is(boss, "player_decisions")
    assert boss.locator("[data-command=clear_malfunction]").count() == 0   # nothing to clear
    live.devices["shoe"].inject("jam")          # every card is out: the round goes on
    expect(boss.locator("tr[data-device=shoe]")).to_contain_text("jam")
    clear = boss.locator("[data-command=clear_malfunction]")
    expect(clear).to_be_visible()
    expect(boss.get_by_test_id("to-clear")).to_contain_text("shoe: jam")
    assert live.state() == "player_decisions"
    assert dealer.locator("[data-command=clear_malfunction]").count() == 0  # the supervisor's
    front(dealer).get_by_test_id("play-1").click()
    state_is(dealer, "settlement")
    front(dealer).locator("[data-command=confirm_result]").click()
    state_is(dealer, "round_complete")
    expect(front(boss).locator("[data-command=clear_malfunction]")).to_be_visible()
    round_no = live.view()["round"]["round"]
    # the jammed shoe stops the next round until the supervisor has it cleared
    front(dealer).locator("[data-command=next_round]").click()
    expect(dealer.get_by_test_id("error")).to_contain_text("jam")
    assert live.state() == "round_complete"
    shot(front(boss), "q-poker-supervisor-jam-after-the-deal")
    live.devices["shoe"].clear_jam()            # someone frees the card, then the supervisor
    front(boss).locator("[data-command=clear_malfunction]").click()
    expect(boss.locator("[data-command=clear_malfunction]")).to_have_count(0)
    expect(boss.locator("tr[data-device=shoe]")).not_to_contain_text("jam")
    assert live.state() == "round_complete"     # only the condition went
    front(dealer).locator("[data-command=next_round]").click()
    live.wait(lambda: live.state() in ("shuffling", "bets_open"))
    if live.state() == "shuffling":             # a shoe deals from a deck shuffled by hand
        state_is(front(dealer), "shuffling")
        front(dealer).locator("[data-command=deck_ready]").click()
    state_is(boss, "bets_open")
    assert live.view()["round"]["round"] > round_no
    expect(boss.get_by_test_id("light")).to_have_attribute("data-colour", "green")
    shot(front(boss), "q-poker-supervisor-next-round-after-jam")


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_round_held_by_a_malfunction_is_voided_by_the_supervisor_from_the_page(browser, live):
    """A shoe that jams with bets on the layout stops the table in malfunction with the round
    held; voiding it (to switch mode, or because the shoe cannot be freed) is one of the
    supervisor's ways out, and the page offers it there."""
    supervisor(live, "open_table")
    dealer, boss = open_page(browser, live, "dealer"), open_page(browser, live, "supervisor")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    bet(dealer, 1, "versus_croupier", 10)
    live.devices["shoe"].inject("jam")
    state_is(front(boss), "malfunction")
    assert dealer.locator("[data-command=void_round]").count() == 0   # the supervisor's
    front(boss).get_by_test_id("void-reason").fill("shoe jammed before the deal")
    front(boss).locator("[data-command=void_round]").click()
    state_is(boss, "round_void")
    assert live.view()["round"]["void"] is not None
    with live.journal() as journal:
        close = journal.last(kind="round_close")
    assert close.payload["outcome"] == "void"


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_the_supervisor_closes_an_idle_table_from_the_page(browser, live):
    """A table waiting for its deck or for bets, with none on the layout, may be taken out
    of service; the page offers it there, and not while bets are on the layout."""
    supervisor(live, "open_table")
    dealer, boss = open_page(browser, live, "dealer"), open_page(browser, live, "supervisor")
    state_is(boss, "shuffling")
    expect(front(boss).locator("[data-command=close_table]")).to_be_visible()
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    bet(dealer, 1, "versus_croupier", 10)
    state_is(front(boss), "bets_open")
    expect(boss.get_by_test_id("box-1").locator("[data-wager=versus_croupier]")).to_contain_text("10")
    assert boss.locator("[data-command=close_table]").count() == 0
    supervisor(live, "remove_bet", box=1, wager="versus_croupier")
    expect(front(boss).locator("[data-command=close_table]")).to_be_visible()
    assert dealer.locator("[data-command=close_table]").count() == 0   # the supervisor's
    boss.locator("[data-command=close_table]").click()
    state_is(boss, "out_of_service")
    assert live.state() == "out_of_service"


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_each_bet_has_a_remove_button_while_bets_are_open_and_none_after(browser, live):
    """A bet could be taken back only through the "All commands" form. Each bet now has its
    own remove button while the table takes remove_bet (bets open), and none once betting has
    closed, when the table would refuse it; the display never has one."""
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    bet(dealer, 1, "versus_croupier", 10)
    bet(dealer, 3, "versus_croupier", 20)
    supervisor(live, "place_bet", box=1, wager="versus_croupier", amount=16, player="Ann")
    supervisor(live, "place_bet", box=1, wager="pair_bonus", amount=5)
    expect(front(dealer).get_by_test_id("box-1").locator("[data-command=remove_bet]")).to_have_count(3)
    assert display.locator("[data-command=remove_bet]").count() == 0
    dealer.get_by_test_id("remove-bet-1-versus_croupier-Ann").click()
    expect(dealer.get_by_test_id("box-1").locator("[data-command=remove_bet]")).to_have_count(2)
    dealer.get_by_test_id("remove-bet-1-pair_bonus").click()
    expect(dealer.get_by_test_id("box-1").locator("[data-command=remove_bet]")).to_have_count(1)
    assert live.view()["round"]["bets"] == [
        {"box": 1, "wager": "versus_croupier", "player": None, "amount": 10},
        {"box": 3, "wager": "versus_croupier", "player": None, "amount": 20}]
    expect(display.get_by_test_id("box-1").locator("[data-wager]")).to_have_count(1)
    shot(front(dealer), "q-poker-dealer-remove-bet")
    front(dealer).locator("[data-command=close_bets]").click()
    state_is(dealer, "bets_closed")
    expect(dealer.locator("[data-command=remove_bet]")).to_have_count(0)
    expect(dealer.get_by_test_id("box-3").locator("[data-wager=versus_croupier]")).to_contain_text("20")


# --- who decides play or fold on a shared box (89/2004 art. 6(1), 9(2); Q2) -------------------

@pytest.fixture
def seated_live(tmp_path):
    """A Q Poker table dealt from the shoe under ``[interpretations] shared_box_decision =
    "seated_player"``: the daemon is started again on that configuration before any round."""
    import signal
    table = DaemonTable(tmp_path, "q-poker", "shoe")
    try:
        table.rig.kill(signal.SIGTERM)
        table.rig.interpretations = {"shared_box_decision": "seated_player"}
        table.rig.write_config()
        assert 'shared_box_decision = "seated_player"' in table.rig.config_path.read_text()
        table.rig.start_controller()
        table.rig.wait_links()
        table.wait(lambda: api_up(table))
    except BaseException:
        table.close()
        raise
    yield table
    table.close()


def api_up(live):
    try:
        with urllib.request.urlopen(urllib.request.Request(f"{live.url}/api/health", headers={
                "Authorization": f"Bearer {TOKENS['display']}"}), timeout=2):
            return True
    except OSError:
        return False


def test_under_seated_player_the_console_offers_play_fold_to_the_seated_player_alone(
        browser, seated_live):
    """The page drew a play/fold pair for each bet versus the croupier not yet decided: on a
    box whose seated player holds only the pair bonus it offered the backer's pair, which the
    table refuses, and none for the seated player, whose decision the table takes. It now
    draws one pair for each decision the table waits for (``view.round.pending_decisions``)."""
    live = seated_live
    supervisor(live, "open_table")
    dealer = open_page(browser, live, "dealer")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    bet(dealer, 2, "pair_bonus", 10)                  # the seated player's own: no name
    assert supervisor(live, "place_bet", box=2, wager="versus_croupier", amount=20,
                      player="bo")["ok"]              # a backer's
    expect(dealer.get_by_test_id("box-2").locator("[data-wager=versus_croupier]")
           ).to_contain_text("20")
    for _ in range(6):                       # art. 7(1): box 2 and the croupier, three each
        live.devices["shoe"].draw()
    state_is(dealer, "player_decisions")
    box = dealer.get_by_test_id("box-2")
    expect(box.locator("button.play")).to_have_count(1)
    expect(box.locator("button.fold")).to_have_count(1)
    expect(box.get_by_test_id("play-2")).to_have_count(1)      # the seated player's, no name
    expect(box.get_by_test_id("play-2-bo")).to_have_count(0)
    shot(front(dealer), "q-poker-dealer-seated-player-decides")
    box.get_by_test_id("fold-2").click()
    state_is(dealer, "settlement")
    assert live.view()["round"]["decisions"] == [{"box": 2, "player": None, "decision": "fold"}]
    _, nets = settled_nets(live)
    assert nets[(2, "versus_croupier")] == -10    # art. 9(3): his fold binds bo's bet: half
    expect(dealer.get_by_test_id("decision-2")).to_contain_text("Fold")
    expect(dealer.locator("button.play, button.fold")).to_have_count(0)


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_under_per_player_the_console_offers_play_fold_to_each_bettor_versus_the_croupier(
        browser, live):
    """The same box under the default reading: each player with a bet versus the croupier
    decides for his own bet, so the backer has a pair of his own and the player with only the
    pair bonus has none (a guard: the page drew this before the view listed the decisions)."""
    supervisor(live, "open_table")
    dealer = open_page(browser, live, "dealer")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    bet(dealer, 2, "pair_bonus", 10)
    assert supervisor(live, "place_bet", box=2, wager="versus_croupier", amount=20,
                      player="bo")["ok"]
    for _ in range(6):
        live.devices["shoe"].draw()
    state_is(dealer, "player_decisions")
    box = dealer.get_by_test_id("box-2")
    expect(box.locator("button.play")).to_have_count(1)
    expect(box.get_by_test_id("play-2-bo")).to_have_count(1)
    box.get_by_test_id("play-2-bo").click()
    state_is(dealer, "settlement")
    assert live.view()["round"]["decisions"] == [{"box": 2, "player": "bo", "decision": "play"}]


# --- the page after the controller restarts --------------------------------------------------

@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_the_page_follows_the_table_again_after_the_controller_restarts(browser, live):
    """A restarted controller numbers its stream events from 1 again: the page took its new
    snapshot for an older table than the one it had drawn and kept drawing the round as it was
    before the restart. And a command given while the controller was down left the message
    at "…", saying nothing of it."""
    import signal
    supervisor(live, "open_table")
    dealer, display = open_page(browser, live, "dealer"), open_page(browser, live, "display")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(display, "bets_open")
    bet(dealer, 1, "versus_croupier", 10)
    for _ in range(6):                       # box 1 and the croupier, three cards each
        live.devices["shoe"].draw()
    state_is(display, "player_decisions")
    live.rig.kill(signal.SIGTERM)
    expect(display.get_by_test_id("stream")).to_have_class(re.compile(r"\bdown\b"))
    front(dealer).get_by_test_id("play-1").click()
    error = dealer.get_by_test_id("error")
    expect(error).to_contain_text("cannot be reached")
    expect(error).to_contain_text("未能連線")
    live.rig.start_controller()
    live.rig.wait_links()
    assert live.state() == "player_decisions"    # the round came back from the journal
    expect(display.get_by_test_id("stream")).to_have_class(re.compile(r"\bup\b"))
    expect(front(dealer).get_by_test_id("stream")).to_have_class(re.compile(r"\bup\b"))
    dealer.get_by_test_id("play-1").click()
    state_is(display, "settlement")
    croupier = live.view()["hands"]["croupier"]
    assert None not in croupier
    expect(display.get_by_test_id("croupier").locator(".card").first).not_to_have_attribute(
        "data-card", "back")
    assert display.get_by_test_id("croupier").locator(".card").evaluate_all(
        "els => els.map(e => e.dataset.card)") == croupier
    _, nets = settled_nets(live)
    check_results_shown(display, nets)
    shot(display, "q-poker-display-after-restart")


# --- what the dealer types goes to the table as typed ------------------------------------------

@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_bet_of_a_fraction_typed_on_the_console_is_refused_not_rounded_down(browser, live):
    """12.5 typed as a bet used to be cut to 12 by the page and placed as 12."""
    supervisor(live, "open_table")
    dealer = open_page(browser, live, "dealer")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    dealer.get_by_test_id("wager-1").select_option("versus_croupier")
    dealer.get_by_test_id("amount-1").fill("12.5")
    dealer.get_by_test_id("bet-1").click()
    expect(dealer.get_by_test_id("error")).to_contain_text("whole number")
    expect(dealer.get_by_test_id("error")).to_contain_text("12.5")
    assert live.view()["round"]["bets"] == []


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_player_named_by_a_number_in_the_all_commands_form_is_sent_as_text(browser, live):
    """The "All commands" form read every field as JSON: a player called 8 on a shared Q Poker
    box went to the table as the number 8 and was refused (a name must be text)."""
    supervisor(live, "open_table")
    dealer = open_page(browser, live, "dealer")
    front(dealer).locator("[data-command=deck_ready]").click()
    state_is(dealer, "bets_open")
    dealer.locator("details summary").click()
    dealer.locator("#command-name").select_option("place_bet")
    for param, value in (("box", "2"), ("wager", "versus_croupier"), ("amount", "10"),
                         ("player", "8")):
        dealer.locator(f"#command-params [data-param={param}]").fill(value)
    dealer.locator("#command-form button[type=submit]").click()
    expect(dealer.get_by_test_id("box-2").locator("[data-wager=versus_croupier]")).to_contain_text("8")
    assert live.view()["round"]["bets"] == [
        {"box": 2, "wager": "versus_croupier", "player": "8", "amount": 10}]
    with live.journal() as journal:       # what the page sent, as the table received it
        sent = journal.last(kind="command").payload["args"]
    assert sent == {"box": 2, "wager": "versus_croupier", "amount": 10, "player": "8"}
    assert isinstance(sent["box"], int) and isinstance(sent["amount"], int)


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_the_all_commands_form_reads_each_parameter_as_the_api_describes_it(browser, live):
    """The form kept its own list of the parameters to send as text, beside the API's
    schema: a parameter the API takes as text and the list forgot would go as a number. Each
    field is now read as the description the controller serves says, for every command."""
    boss = open_page(browser, live, "supervisor")
    with urllib.request.urlopen(f"{live.url}/api/openapi.json", timeout=10) as r:
        paths = json.loads(r.read())["paths"]
    boss.locator("details summary").click()
    names = boss.locator("#command-name option").evaluate_all("els => els.map(e => e.value)")
    assert sorted(names) == sorted(p.rsplit("/", 1)[1] for p in paths if "/commands/" in p)
    for name in names:
        boss.locator("#command-name").select_option(name)
        props = paths[f"/api/commands/{name}"]["post"]["requestBody"]["content"][
            "application/json"]["schema"]["properties"]
        fields = boss.locator("#command-params input")
        expect(fields).to_have_count(len(props))
        got = dict(fields.evaluate_all("els => els.map(e => [e.dataset.param, e.dataset.read])"))
        want = {p: "text" if s.get("type") in ("string", ["string", "null"]) else "json"
                for p, s in props.items()}
        assert got == want, name


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_reason_given_for_one_void_is_not_offered_again_for_the_next(browser, live):
    """What was typed for a command that the table took is spent: the next round's void form
    starts empty, not with the last void's reason ready to be journaled for another round."""
    supervisor(live, "open_table")
    boss = open_page(browser, live, "supervisor")
    for reason in ("a player disputed the cut", "the shoe was loaded twice"):
        state_is(front(boss), "shuffling")
        front(boss).locator("[data-command=deck_ready]").click()
        state_is(boss, "bets_open")
        field = boss.get_by_test_id("void-reason")
        assert field.input_value() == ""
        field.fill(reason)
        boss.locator("[data-command=void_round]").click()
        state_is(boss, "round_void")
        front(boss).locator("[data-command=next_round]").click()
    with live.journal() as journal:
        voids = [r.payload["reason"] for r in journal.records(kinds=["round_close"])]
    assert voids == ["a player disputed the cut", "the shoe was loaded twice"]


@pytest.mark.parametrize("kind, data, shown", [
    ("settlement_refused", {"reason": "the croupier's hand holds As twice"},
     "the croupier's hand holds As twice"),
    ("cards_needed", {"recipients": ["box 1", "croupier"]}, "box 1, croupier"),
])
def test_what_stops_a_settlement_is_shown_in_words_with_its_reason(browser, tmp_path, kind,
                                                                     data, shown):
    """A round the rules cannot settle from what was recorded, or a hand the device could
    not read, stops the table until someone acts: the page says so and why, in both
    languages, not the event's bare name."""
    from test_api_support import LiveTable
    from controller.table.secrecy import PublicEvent
    live = LiveTable(tmp_path, "q-poker", "shoe")
    try:
        page = browser.new_page()
        page.goto(f"{live.url}/#token={TOKENS['supervisor']}")
        expect(page.get_by_test_id("stream")).to_have_class(re.compile(r"\bup\b"))
        live.do(lambda: live.hub.publish(PublicEvent(kind, "T1", 1, "malfunction", data)))
        item = page.locator(f"#events li[data-kind={kind}]")
        expect(item).to_have_count(1)
        assert kind not in item.inner_text()
        expect(item).to_contain_text(shown)
    finally:
        live.close()


def test_a_device_that_cannot_link_shows_why_in_the_device_list(browser, tmp_path):
    """The pit display showed "connecting" while the reason was only in the log: the device
    list now shows why, labelled in both languages. A spare driver configured as a shuffler
    reaches a simulated shoe on a pseudo-terminal."""
    import dataclasses
    from test_api_support import LiveTable
    from drivers.factory import open_driver
    live = LiveTable(tmp_path, "q-poker", "shoe")
    try:
        stray = live.sim.add("shoe", "stray")
        spec = dataclasses.replace(stray.spec(id="spare"), device_class="shuffler")

        async def add_spare():
            live.drivers["spare"] = open_driver(spec, asyncio.Queue())
        live.call(add_spare())
        page = browser.new_page()
        page.goto(f"{live.url}/#token={TOKENS['display']}")
        row = page.locator("#devices tr[data-device=spare]")
        problem = row.get_by_test_id("device-problem")
        expect(problem).to_contain_text("device says it is a shoe, configured as a shuffler")
        expect(problem).to_contain_text(stray.port)
        expect(problem).to_contain_text("未能連線原因")
        expect(problem).to_contain_text("Why it cannot link")
        expect(page.locator("#devices tr[data-device=shoe]").get_by_test_id(
            "device-problem")).to_have_count(0)
        live.call(live.drivers.pop("spare").close())
    finally:
        live.close()


def test_every_word_the_table_can_show_has_a_chinese_and_an_english_label(browser):
    """Each label is a pair, Chinese and English; every state, command, irregularity, remedy,
    void cause and event kind the table can put on the page has one (a missing one shows the
    bare key, in one language). Super Pan 9's bank is named in 261/96/M's own words: 庄家 the
    banker, 幫庄 a co-bank, 閒家 the seats bet on."""
    import inspect
    from controller.rules.base import Irregularity, Remedy
    from controller.rules.holdem_betting import ACTIONS
    from controller.table import machine
    page = browser.new_page()
    page.set_content("<!DOCTYPE html><html><body></body></html>")
    page.add_script_tag(path=str(Path(machine.__file__).resolve().parent.parent / "web" / "i18n.js"))
    words = page.evaluate("() => window.L")
    for table, entries in words.items():
        for key, pair in entries.items():
            assert isinstance(pair, list) and len(pair) == 2 and all(
                isinstance(w, str) and w.strip() for w in pair), (table, key, pair)
    source = inspect.getsource(machine)
    wanted = {
        "states": set(machine.STATES), "commands": set(machine.COMMANDS),
        "irregularities": {i.value for i in Irregularity}
        | set(re.findall(r'self\._void\([^,]+, "([^"]+)"\)', source)),
        "remedies": {r.value for r in Remedy}, "actions": set(ACTIONS),
        "conditions": set(re.findall(r'_cond\([^)]*\)\.add\("([a-z_]+)"\)', source)),
        "events": set(re.findall(r'_publish\("([a-z_]+)"', source)),
    }
    for table, keys in wanted.items():
        assert keys and not keys - set(words[table]), (table, sorted(keys - set(words[table])))
    assert words["labels"]["banker"][0] == "庄家"
    assert words["labels"]["co_banker"][0] == "幫庄"
    assert "幫庄" in words["commands"]["co_bank"][0]
    assert "閒家" in words["wagers"]["seat"][0]


# --- the display is read only ----------------------------------------------------------------

@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_display_token_cannot_issue_a_command(browser, live):
    supervisor(live, "open_table")
    display = open_page(browser, live, "display")
    state_is(display, "shuffling")
    expect(display.get_by_test_id("controls")).to_be_hidden()
    with live.journal() as journal:
        before = len(journal)
    answer = display.evaluate("""async () => {
        const r = await fetch('/api/commands/deck_ready', {method: 'POST',
            headers: {Authorization: 'Bearer ' + sessionStorage.getItem('tablectl-token')}});
        return [r.status, await r.json()];
    }""")
    assert answer[0] == 403 and answer[1]["error"]["code"] == "read_only"
    with live.journal() as journal:
        after = len(journal)
    assert live.state() == "shuffling" and after == before
    state_is(display, "shuffling")
    shot(display, "display-read-only")
    stranger = browser.new_page()                 # a wrong token gets the login form, no table
    stranger.goto(f"{live.url}/#token=not-a-token")
    expect(stranger.locator("#login")).to_be_visible()
    expect(stranger.locator("#login-error")).to_contain_text("not accepted")
    expect(stranger.locator("#table")).to_be_hidden()


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_token_typed_with_a_full_width_keyboard_is_named_as_such_at_the_login(browser, live):
    """A browser cannot put a letter outside plain ASCII in a request's header: a token typed
    with a full-width (or any other) keyboard made every request fail inside the page, which
    took that for the controller being unreachable and kept trying, the login form showing
    nothing. It now says what is wrong and how to type it; the right token then opens the
    table."""
    page = browser.new_page()
    page.goto(live.url + "/")
    expect(page.locator("#login")).to_be_visible()
    full_width = "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c
                         for c in TOKENS["dealer"])
    page.locator("#token-input").fill(full_width)
    page.locator("#login button[type=submit]").click()
    error = page.locator("#login-error")
    expect(error).to_contain_text("half-width")
    expect(error).to_contain_text("半形")
    expect(page.locator("#table")).to_be_hidden()
    page.locator("#token-input").fill(TOKENS["dealer"])
    page.locator("#login button[type=submit]").click()
    expect(page.get_by_test_id("role")).to_contain_text("dealer")
