"""A device's or a person's words on the page are set apart from the page's own (in a <bdi>),
in headless Chromium against the real daemon: a right-to-left override in a malfunction's
text, or a name written right to left, turns nothing the page writes after it around. Where
the glyphs are drawn is measured, as the browser lays them out."""
from __future__ import annotations

import pytest

from test_console_audit import dealer
from test_console_browser import (BROWSER_TESTS, browser, close_pages, expect,  # noqa: F401
                                  front, live, open_page, state_is, supervisor)

pytestmark = BROWSER_TESTS

# A name written right to left (Hebrew): its capital after it must still be drawn after it.
NAME = "\u05e9\u05e8\u05d4"

# In the element ``sel`` whose text holds ``name``: whether the first glyph of ``after`` that
# follows the name in the text is drawn right of every glyph of the name (null until drawn).
AFTER_THE_NAME = """([sel, name, after]) => {
  const box = [...document.querySelectorAll(sel)].find((n) => n.textContent.includes(name));
  if (!box || !box.getBoundingClientRect().width) return null;
  const glyphs = [];
  const walk = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    for (let k = 0; k < n.data.length; k++) glyphs.push([n, k]);
  const text = glyphs.map(([n, k]) => n.data[k]).join("");
  const start = text.indexOf(name), next = text.indexOf(after, start + name.length);
  if (start < 0 || next < 0) return { found: false };
  const rect = ([n, k]) => { const r = document.createRange(); r.setStart(n, k);
                             r.setEnd(n, k + 1); return r.getBoundingClientRect(); };
  // On one line, as a wide screen draws it (a narrow one wraps the capital below the name)
  const wrap = box.style.whiteSpace;
  box.style.whiteSpace = "nowrap";
  const nameRight = Math.max(...glyphs.slice(start, start + name.length).map((g) => rect(g).right));
  const drawn = { after_the_name: rect(glyphs[next]).left >= nameRight - 0.5 };
  box.style.whiteSpace = wrap;
  return drawn;
}"""

# The device's words in the events list: the text node that holds them is inside a <bdi>,
# and the words the page writes before them (the device's id) read left to right.
SET_APART = """(words) => {
  const li = [...document.querySelectorAll("#events li[data-kind=device_condition]")]
    .find((n) => n.textContent.includes(words));
  if (!li || !li.getBoundingClientRect().width) return null;
  const walk = document.createTreeWalker(li, NodeFilter.SHOW_TEXT);
  for (let n = walk.nextNode(); n; n = walk.nextNode())
    if (n.data.includes(words)) return { isolated: !!n.parentElement.closest("bdi") };
  return { isolated: null };
}"""


@pytest.mark.parametrize("live", [("q-poker", "shoe")], indirect=True)
def test_a_malfunctions_text_is_set_apart_in_the_events_list(browser, live):
    supervisor(live, "open_table")
    display = open_page(browser, live, "display")
    mark = live.rig.mark()
    live.rig.devices["shoe"].inject("malfunction", text="reader \u202eEVIL")
    live.rig.wait_event(lambda e: e["kind"] == "device_condition"
                        and "EVIL" in e.get("what", ""), since=mark)
    front(display)
    expect(display.get_by_test_id("events")).to_contain_text("reader \u202eEVIL")
    assert display.wait_for_function(SET_APART, arg="EVIL").json_value() == {"isolated": True}


@pytest.mark.parametrize("live", [("super-pan-9", "shuffler")], indirect=True)
def test_a_name_written_right_to_left_leaves_its_capital_after_it(browser, live):
    supervisor(live, "open_table")
    display = open_page(browser, live, "display")
    state_is(display, "bets_open")
    assert dealer(live, "set_banker", seat=3, capital=1000)[0] == 200
    status, doc = dealer(live, "co_bank", player=NAME, capital=250)
    assert status == 200, doc
    front(display)
    expect(display.get_by_test_id("co-bankers")).to_contain_text(NAME)
    for sel in ("#events li[data-kind=co_banker]", "[data-testid=co-bankers] li"):
        drawn = display.wait_for_function(AFTER_THE_NAME, arg=[sel, NAME, "250"]).json_value()
        assert drawn == {"after_the_name": True}, sel
