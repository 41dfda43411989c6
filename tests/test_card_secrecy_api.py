"""Card secrecy at the API: no card still face down at the table leaves the controller.

A display client and a dealer client watch full rounds of each game, played through the real
drivers against simulated devices: each holds the event stream open and reads every query
after every step; the dealer gives its commands over the API. Everything they receive (every
HTTP response body and every byte of the stream) and every log line is recorded. The journal
says, independently of what was published, when each card was dealt, to whom, and when the
regulation turned it face up (a card dealt face up, the players' hands opened, the croupier's
reveal, an exposed card or one set aside: the one the croupier named by its place, or the
recipient's last). Then every card's text (``As``, ``10s``/``Ts``, ``A♠``) and its wire code
(under a key naming a card) is searched for in what each client held before that card's
reveal: it must not be there.
"""
from __future__ import annotations

import asyncio
import io
import json
import re
from dataclasses import dataclass, field
from typing import Any

import pytest

from controller.logs import configure_logging
from controller.rules.cards import Card, full_deck

from test_api_support import TOKENS, LiveTable, reset_logging

pytestmark = pytest.mark.hil

PUBLICATIONS = ("state", "decision", "round_open", "round_close", "alarm", "table")
SUIT_SIGNS = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}


# --- what the journal says of each card -------------------------------------------------------

@dataclass
class CardFate:
    card: str
    dealt_seq: int
    recipient: str | None = None
    revealed_seq: float = float("inf")      # never revealed: inf
    set_aside: bool = False                 # out of the hand: its opening does not show it


def card_fates(journal, problems: list[str] | None = None
               ) -> tuple[list[CardFate], list[int]]:
    """Every card dealt, with the journal seq at which it became face up at the table; and the
    seqs of the published records in order (the n-th stream event is the n-th of them).

    An exposed card is the one the croupier named (``exposed_card`` ``card``: its place among
    the recipient's cards in the order dealt, set-aside ones counted), or the recipient's last
    card when he named none: read from the command in the journal, not from what the table
    published, so a table that shows another card of the hand is caught showing a card face
    down. The ``position`` each ``card_exposed`` carries must be that card's: one that is not
    is added to ``problems`` (raised without it). A card set aside with others (a hand the
    shuffler put out whole) is set aside unseen."""
    fates: list[CardFate] = []
    pending: list[CardFate] = []
    hands: dict[str, list[CardFate]] = {}
    published: list[int] = []
    named: Any = None           # the card an exposed_card command just named, if any
    aside = 0                   # the cards set aside so far this round
    for rec in journal.records():
        p = rec.payload if isinstance(rec.payload, dict) else {}
        if rec.kind in ("command", "device", "restart"):
            named = ((p.get("args") or {}).get("card")
                     if rec.kind == "command" and p.get("name") == "exposed_card" else None)
        if rec.kind == "device":
            e = p["event"]
            cards = ([e["card"]] if e["kind"] in ("card_drawn", "card_dispensed") and e.get("card")
                     else e.get("cards") or [] if e["kind"] == "hand_dispensed" else [])
            if cards:
                pending.clear()          # cards that went to no recipient
                for c in cards:
                    f = CardFate(c, rec.seq)
                    fates.append(f)
                    pending.append(f)
                    if e.get("face_up"):     # in everyone's sight, whoever it goes to
                        f.revealed_seq = rec.seq
            continue
        if rec.kind not in PUBLICATIONS:
            continue
        published.append(rec.seq)
        kind = p.get("kind")
        if kind == "round_started":
            hands, aside = {}, 0
        elif kind == "card":
            who = p["recipient"]
            for f in pending[:p["count"]]:
                f.recipient = who
                hands.setdefault(who, []).append(f)
                if who == "board":      # the Hold'em board, face up as the plan deals it
                    f.revealed_seq = min(f.revealed_seq, rec.seq)
            del pending[:p["count"]]
        elif kind in ("hand_opened", "hand_revealed"):
            for f in hands.get(p["recipient"], []):
                if not f.set_aside:
                    f.revealed_seq = min(f.revealed_seq, rec.seq)
        elif kind in ("card_exposed", "card_set_aside"):
            mine = hands.get(p["recipient"], [])
            at = named if isinstance(named, int) and 1 <= named <= len(mine) else len(mine)
            if kind == "card_exposed":
                if p.get("position") != at:
                    wrong = (f"card_exposed at seq {rec.seq} has position {p.get('position')} "
                             f"of {p['recipient']}; the card exposed is its card {at} of "
                             f"{len(mine)}")
                    if problems is None:
                        raise AssertionError(wrong)
                    problems.append(wrong)
                turned = mine[at - 1:at]
            else:
                now = len(p.get("cards") or [])
                if now - aside > 1:          # a whole hand set aside: none of it shown
                    for f in mine:
                        f.set_aside = True
                    turned = []
                else:
                    turned = mine[at - 1:at] if p.get("recipient") != "burn" else []
                    for f in turned:
                        f.set_aside = True
                aside = now
            for f in turned:
                f.revealed_seq = min(f.revealed_seq, rec.seq)
    return fates, published


# --- what the clients received ----------------------------------------------------------------

@dataclass
class Capture:
    """What one role's client received: ``(journal seq it may reflect, what, bytes)``."""

    role: str
    items: list[tuple[int, str, bytes]] = field(default_factory=list)
    stream_events: list[tuple[int | None, str, bytes]] = field(default_factory=list)


def spellings(card: str) -> list[re.Pattern]:
    c = Card.parse(card)
    rank = card[:-1]
    texts = {str(c), rank + SUIT_SIGNS[c.suit]}
    if rank == "T":
        texts |= {"10" + c.suit, "10" + SUIT_SIGNS[c.suit]}
    return [re.compile(rf"(?<![A-Za-z0-9]){re.escape(t)}(?![A-Za-z0-9])".encode())
            for t in texts]


def codes_under_card_keys(doc: Any, out: set[int], key: str = "", in_list: bool = False
                          ) -> set[int]:
    """Integers that stand for a card: the value of a ``card``/``code`` key, or the items of
    a ``cards``/``deck``/``hand`` list (a count such as ``"cards": 3`` is not one)."""
    if isinstance(doc, dict):
        for k, v in doc.items():
            codes_under_card_keys(v, out, k.lower())
    elif isinstance(doc, list):
        for v in doc:
            codes_under_card_keys(v, out, key, True)
    elif isinstance(doc, int) and not isinstance(doc, bool):
        if (not in_list and (key.endswith("card") or key.endswith("code"))) or \
                (in_list and any(w in key for w in ("card", "deck", "hand", "code"))):
            out.add(doc)
    return out


def hidden_at(fates: list[CardFate], seq: int) -> list[str]:
    """Every card of the pack that is face down at the table at journal ``seq``: in the shoe or
    the shuffler (the deck's order), or dealt and not yet turned up. A card is face up only
    between its reveal and the next time it is dealt."""
    latest: dict[str, CardFate] = {}
    for f in fates:
        if f.dealt_seq <= seq:
            latest[f.card] = f
    return [str(c) for c in full_deck()
            if str(c) not in latest or latest[str(c)].revealed_seq > seq]


def leaks(fates: list[CardFate], seq: int, data: bytes) -> list[str]:
    """The cards still face down at journal ``seq`` that ``data`` shows."""
    try:
        codes = codes_under_card_keys(json.loads(data), set())
    except ValueError:
        codes = set()
    found = []
    for card in hidden_at(fates, seq):
        for p in spellings(card):
            m = p.search(data)
            if m:
                found.append(f"{card} in ...{data[max(0, m.start() - 60):m.end() + 20]!r}")
        if Card.parse(card).code in codes:
            found.append(f"{card} as its code {Card.parse(card).code}")
    return found


class Clients:
    """A display and a dealer client on the live table: streams open, queries after every
    step, the dealer's commands, everything recorded."""

    def __init__(self, live: LiveTable) -> None:
        self.live = live
        self.caps = {r: Capture(r) for r in ("display", "dealer")}

    async def __aenter__(self) -> "Clients":
        import aiohttp
        self.session = aiohttp.ClientSession()
        self.readers = [asyncio.ensure_future(self._stream(r)) for r in self.caps]
        await self.settle()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        for t in self.readers:
            t.cancel()
        await self.session.close()

    def _h(self, role: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {TOKENS[role]}"}

    async def _stream(self, role: str) -> None:
        cap = self.caps[role]
        async with self.session.get(f"{self.live.url}/api/events", headers=self._h(role)) as r:
            assert r.status == 200
            while True:
                block = await r.content.readuntil(b"\n\n")
                fields = dict(line.split(b": ", 1) for line in block.strip().split(b"\n"))
                eid = int(fields[b"id"]) if b"id" in fields else None
                cap.stream_events.append((eid, fields[b"event"].decode(), block))

    def head(self) -> int:
        return self.live.do(lambda: self.live.journal.head()[0])

    async def settle(self) -> None:
        """Until both streams hold every event published so far."""
        for _ in range(500):
            last = self.live.do(lambda: self.live.table and self._hub_last())
            got = [max([e for e, k, _ in c.stream_events if e is not None and k != "status"],
                       default=-1) for c in self.caps.values()]
            if all(g >= last for g in got) and self.live.do(lambda: self.live.queue.empty()):
                return
            await asyncio.sleep(0.02)
        raise AssertionError("the streams did not catch up")

    def _hub_last(self) -> int:
        return self.live.hub.last_id

    async def look(self) -> None:
        """Both clients read every query (what a display polls, what a console reloads)."""
        await self.settle()
        for role, cap in self.caps.items():
            for path in ("/api/table", "/api/health", "/api/whoami"):
                async with self.session.get(self.live.url + path, headers=self._h(role)) as r:
                    body = await r.read()
                cap.items.append((self.head(), f"GET {path}", body))

    async def command(self, name: str, ok: bool = True, **args: Any) -> dict[str, Any]:
        async with self.session.post(f"{self.live.url}/api/commands/{name}",
                                     headers=self._h("dealer"), json=args) as r:
            body = await r.read()
        self.caps["dealer"].items.append((self.head(), f"POST {name}", body))
        doc = json.loads(body)
        assert doc["ok"] is ok, doc
        await self.look()
        return doc

    def _device_records(self) -> int:
        return self.live.do(lambda: sum(1 for _ in self.live.journal.records(kinds=["device"])))

    async def device(self, fn, *args: Any, **kw: Any) -> None:
        """A croupier's action on a device; waits until the device's event is journaled."""
        before = self._device_records()
        await asyncio.get_running_loop().run_in_executor(None, lambda: fn(*args, **kw))
        for _ in range(500):
            if self._device_records() > before:
                break
            await asyncio.sleep(0.01)
        await self.look()

    async def until(self, *states: str) -> None:
        """Until the devices have done their part and the table is in one of ``states``."""
        for _ in range(400):
            if self.live.do(lambda: self.live.table.state) in states:
                await self.look()
                return
            await asyncio.sleep(0.025)
        raise AssertionError(f"not in {states}: {self.live.do(lambda: self.live.table.state)}")

    async def until_not(self, state: str, step) -> None:
        for _ in range(40):
            if self.live.do(lambda: self.live.table.state) != state:
                return
            await step()
        raise AssertionError(f"still {state}")


def check(live: LiveTable, clients: Clients, log: "SeqLog") -> int:
    """Assert no leak anywhere; return how many card identities were checked."""
    problems: list[str] = []
    fates, published = card_fates(live.journal, problems)
    assert fates, "no card was dealt"
    for cap in clients.caps.values():
        for seq, what, data in cap.items:
            for card in leaks(fates, seq, data):
                problems.append(f"{cap.role} {what} at seq {seq}: {card}")
        for eid, kind, block in cap.stream_events:
            if eid is None:         # status: devices and light, at any time
                seq = published[-1]
            elif kind == "snapshot":
                seq = published[eid - 1] if eid else 0
            else:
                seq = published[eid - 1]
                doc = json.loads(block.split(b"data: ", 1)[1])
                rec = next(iter(live.journal.records(since=seq - 1)))
                assert rec.seq == seq and doc["kind"] == rec.payload["kind"]  # journal order
            for card in leaks(fates, seq, block):
                problems.append(f"{cap.role} stream {kind} #{eid}: {card}")
    for seq, line in log.lines:
        for card in leaks(fates, seq, line):
            problems.append(f"log at seq {seq}: {card}: {line[:200]!r}")
    assert not problems, "\n".join(problems[:20])
    return len(fates)


class SeqLog(io.TextIOBase):
    """A log stream that remembers the journal's head when each line was written."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, bytes]] = []
        self.live: LiveTable | None = None

    def write(self, s: str) -> int:
        head = self.live.journal.head()[0] if self.live else 0
        self.lines.append((head, s.encode()))
        return len(s)


@pytest.fixture
def seqlog():
    stream = SeqLog()
    configure_logging("debug", "json", stream)
    yield stream
    reset_logging()


def play(tmp_path, seqlog, game, mode, script) -> tuple[LiveTable, int]:
    live = LiveTable(tmp_path, game, mode)
    seqlog.live = live
    try:
        async def main():
            async with Clients(live) as c:
                await script(live, c)
                await c.look()
                return c
        clients = asyncio.run(main())
        n = check(live, clients, seqlog)
        revealed = [f for f in card_fates(live.journal)[0] if f.revealed_seq != float("inf")]
        return live, n, len(revealed)
    finally:
        live.close()


# --- the rounds ---------------------------------------------------------------------------------

async def open_shoe(live, c):
    live.do(lambda: live.runner.command("open_table", "supervisor"))
    await c.command("deck_ready")


def test_q_poker_shoe_rounds_leak_no_card(tmp_path, seqlog):
    async def script(live, c):
        await open_shoe(live, c)
        await c.command("place_bet", box=2, wager="versus_croupier", amount=10)
        await c.command("place_bet", box=5, wager="pair_bonus", amount=5)
        await c.command("place_bet", box=5, wager="versus_croupier", amount=10)
        await c.command("decide", ok=False, box=2, decision="play")     # refused: too early
        await c.until_not("bets_open", lambda: c.device(live.devices["shoe"].draw))
        await c.until_not("dealing", lambda: c.device(live.devices["shoe"].draw))
        await c.command("decide", box=2, decision="play")
        await c.command("decide", box=5, decision="fold")
        await c.command("confirm_result")
        # a second round: a player's card exposed (art. 11(2)), then a misdeal voids it
        await c.command("next_round")
        await c.command("place_bet", box=1, wager="versus_croupier", amount=10)
        await c.command("place_bet", box=4, wager="versus_croupier", amount=10)
        for _ in range(4):
            await c.device(live.devices["shoe"].draw)
        await c.command("exposed_card", recipient="box 1")
        await c.device(live.devices["shoe"].draw)
        await c.command("misdeal")
    live, n, revealed = play(tmp_path, seqlog, "q-poker", "shoe", script)
    assert n == 9 + 5 and revealed == 9 + 1     # the misdealt round kept all but one hidden


def test_fortune_shuffler_rounds_leak_no_card(tmp_path, seqlog):
    async def script(live, c):
        live.do(lambda: live.runner.command("open_table", "supervisor"))
        await c.until("bets_open")
        await c.command("place_bet", box=1, wager="ante", amount=10)
        await c.command("place_bet", box=1, wager="pair_plus", amount=5)
        await c.command("place_bet", box=6, wager="ante", amount=10)
        await c.command("close_bets")
        await c.until("player_decisions")
        await c.command("decide", box=1, decision="play")
        await c.command("decide", box=6, decision="fold")
        await c.command("confirm_result")
    live, n, revealed = play(tmp_path, seqlog, "fortune-3-card-poker", "shuffler", script)
    assert n >= 9 and revealed >= 9


async def pan9_shaken(live, c):
    """A Super Pan 9 table from the shoe: the banker on seat 3, bets on seats 1 and 5, the dice
    shaken (2 2 4 6); the deal has begun."""
    await open_shoe(live, c)
    await c.command("set_banker", seat=3, capital=500)
    await c.command("place_bet", box=1, wager="seat", amount=20)
    await c.command("place_bet", box=5, wager="seat", amount=30)
    live.devices["dice"].set_next_dice([2, 2, 4, 6])
    await c.command("shake")
    await c.until("dealing")


def test_super_pan_9_shoe_round_leaks_no_card(tmp_path, seqlog):
    async def script(live, c):
        await pan9_shaken(live, c)
        await c.until_not("dealing", lambda: c.device(live.devices["shoe"].draw))
        await c.command("confirm_result")
    live, n, revealed = play(tmp_path, seqlog, "super-pan-9", "shoe", script)
    assert n == 6 and revealed == 6      # banker and two seats, two cards each, all shown


def test_texas_holdem_rounds_leak_no_hole_card(tmp_path, seqlog):
    """A round to the showdown in which one player folds (his hole cards are never shown), and
    a round voided by a misdeal after the hole cards (none is ever shown)."""
    async def script(live, c):
        await open_shoe(live, c)
        await c.command("seat_players", seats=[2, 5, 8], stacks=[500, 500, 500], button=2)
        await c.command("close_bets")
        folded = False
        for _ in range(60):
            state = live.do(lambda: live.table.state)
            if state in ("dealing", "bets_closed"):
                await c.device(live.devices["shoe"].draw)
            elif state == "player_decisions":
                h = live.do(lambda: live.table.public_view()["holdem"])
                legal = [a["action"] for a in h["legal"]]
                action = "check" if "check" in legal else "call"
                if not folded:
                    action, folded = "fold", True
                await c.command("holdem_action", seat=h["to_act"], action=action)
            else:
                break
        assert live.do(lambda: live.table.state) == "settlement"
        await c.command("confirm_result")
        await c.command("next_round")
        await c.settle()
        if live.do(lambda: live.table.state) == "shuffling":
            await c.command("deck_ready")
        await c.command("seat_players", seats=[1, 4], stacks=[300, 300])
        await c.command("close_bets")
        await c.until_not("bets_closed", lambda: c.device(live.devices["shoe"].draw))
        await c.until_not("dealing", lambda: c.device(live.devices["shoe"].draw))
        await c.command("misdeal")
    live, n, revealed = play(tmp_path, seqlog, "texas-holdem", "shoe", script)
    # first round: 6 hole cards, 5 board (and the burns); two players' hands and the board
    # are shown; second round: 4 hole cards, none shown
    assert revealed == 4 + 5 and n >= 6 + 5 + 4


def test_the_watch_finds_a_card_shown_before_its_reveal(tmp_path):
    """The checker itself: a croupier card in a response before the reveal is caught, by its
    text or its code; after the reveal it is allowed."""
    from drivers import events as ev
    from test_api_support import make_runner
    runner = make_runner(tmp_path / "j.db")
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="versus_croupier", amount=10)
    for text in ("As", "Kd", "Th", "2c", "3c", "4d"):
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(text)))
    before = runner.journal.head()[0]
    runner.command("decide", box=1, decision="play")          # the croupier's hand opens
    after = runner.journal.head()[0]
    fates, _ = card_fates(runner.journal)
    assert [(f.card, f.recipient) for f in fates] == [
        ("As", "box 1"), ("Kd", "croupier"), ("Th", "box 1"), ("2c", "croupier"),
        ("3c", "box 1"), ("4d", "croupier")]
    assert leaks(fates, before, b'{"x": "Kd"}') and leaks(fates, before, b'{"card": 24}')
    assert leaks(fates, before, b'{"hand": ["10h"]}') == []   # box 1's hand is open (art. 9(1))
    assert leaks(fates, before, b'{"deck": ["5s"]}')           # still in the shoe
    assert leaks(fates, after, b'{"x": "Kd", "cards": 3}') == []
    runner.journal.close()


def test_a_device_text_naming_a_card_reaches_no_client_and_no_log(tmp_path, seqlog):
    """The shoe's firmware words its jam itself, naming the card stuck in its reader (here a
    card that stays face down: the jam voids the round, art. 11(5)). Its words reach the
    console, the display and the log as the condition and the ruling's detail: the card must
    not."""
    async def script(live, c):
        await open_shoe(live, c)
        await c.command("place_bet", box=3, wager="versus_croupier", amount=10)
        for _ in range(2):
            await c.device(live.devices["shoe"].draw)
        await c.device(live.devices["shoe"].inject, "jam", where="reader, card 7c and Qh")
        await c.until("malfunction")
    live, n, revealed = play(tmp_path, seqlog, "q-poker", "shoe", script)
    assert n == 2 and revealed == 0


def test_the_watch_takes_the_card_the_croupier_named_as_the_one_exposed(tmp_path):
    """The checker itself: a card named by its place (``exposed_card`` ``card``) is the one
    face up, not its recipient's last; the croupier's card named is set aside face up
    (78/2008 art. 11(2)), and the rest of his hand and the cards still coming stay down."""
    from drivers import events as ev
    from test_api_support import make_runner
    runner = make_runner(tmp_path / "j.db", "fortune-3-card-poker")
    runner.command("open_table", role="supervisor")
    runner.command("deck_ready")
    runner.command("place_bet", box=1, wager="ante", amount=10)
    for text in ("As", "Kd", "Th", "2c"):         # box 1, croupier, box 1, croupier
        runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse(text)))
    before = runner.journal.head()[0]
    runner.command("exposed_card", recipient="box 1", card=1)
    runner.command("exposed_card", recipient="croupier", card=1)
    runner.device(ev.CardDrawn(device="shoe", ts=0.0, card=Card.parse("5h")))
    after = runner.journal.head()[0]
    problems: list[str] = []
    fates, _ = card_fates(runner.journal, problems)
    assert problems == []
    assert leaks(fates, before, b'{"x": "As"}') and leaks(fates, before, b'{"x": "Kd"}')
    assert leaks(fates, after, b'{"x": "As", "y": "Kd"}') == []     # the two named
    assert leaks(fates, after, b'{"x": "Th"}') and leaks(fates, after, b'{"x": "2c"}')
    assert leaks(fates, after, b'{"x": "5h"}')
    runner.journal.close()
