"""The secrecy oracle: randomized rounds of every game in both modes, with faults injected at
random moments, and every byte that leaves the controller searched for a card still face down.

The table runs with the real drivers and the firmware simulator's devices on pseudo-terminals,
the console API served on 127.0.0.1 (tests/test_api_support.LiveTable). A display and a dealer
client hold the event stream open and read every query after every step; the dealer's commands
(and their refusals) go over the API; the log is captured at debug level; and while the round
is open the journal's readers are run as the pit would run them beside the daemon
(`tablectl journal show/rounds/export`, `tablectl integrity report`). The faults: a jam or a
malfunction whose words name a card face down at the table (spelled `Kc`, `KC`, `K♣`, `10C`,
or two packed, `KcQh`),
a card that cannot be read, a card drawn face up, a refused command, a door opened, a card
reported exposed, a misdeal. An exposed card is reported by its place among its recipient's
cards (``exposed_card`` ``card``, any of them) or, as the panel's button reports it, as the last
one dealt; each session also names one dealt before its recipient's last, so that a table
showing another card of the hand shows a card still face down. Where the table refuses the
report, the refusal must change nothing: the journal holds the command and its refusal only,
and the table is as it was.

The journal says, independently of what was published, when each card came out and when the
regulation turned it up (tests/test_card_secrecy_api.card_fates). A card face down at a moment
must not be in anything that left at that moment: for the stream, the API and the log, every
card not yet turned up (the deck's order in the shoe or the shuffler, a hand dealt and never
shown); for the journal's readers, the round still open's cards not yet turned up (the
records of a closed round are shown in full, on purpose: docs/journal.md).

The default run is one round of two games, one in each mode (a few seconds); ``--long``
plays several rounds of every game in both modes under many seeds.
"""
from __future__ import annotations

import contextlib
import io
import json
import random
import re
from typing import Any

import pytest

from test_card_secrecy_api import (Clients, card_fates, hidden_at, leaks,
                                   seqlog)  # noqa: F401 - seqlog is a fixture

pytestmark = pytest.mark.hil

SIGN = {"s": "♠", "h": "♥", "d": "♦", "c": "♣"}
BET = {"q-poker": "versus_croupier", "fortune-3-card-poker": "ante"}
ROUND_OVER = ("round_void", "round_complete", "closed", "malfunction")


def spell(card: str, how: int) -> str:
    """``card`` as a firmware might write it: ``Kc``, ``KC``, ``K♣``, ``10C``."""
    rank, suit = card[:-1], card[-1]
    return [card, rank + suit.upper(), rank + SIGN[suit],
            ("10" if rank == "T" else rank) + suit.upper()][how % 4]


def upper_spellings(card: str) -> list[re.Pattern]:
    """The spellings test_card_secrecy_api.spellings leaves out: the suit in capitals."""
    rank, suit = card[:-1], card[-1].upper()
    texts = {rank + suit} | ({"10" + suit} if rank == "T" else set())
    return [re.compile(rf"(?<![A-Za-z0-9]){re.escape(t)}(?![A-Za-z0-9])".encode())
            for t in texts]


class Oracle:
    """One table's randomized session: ``rng`` chooses the bets, the decisions and the faults."""

    def __init__(self, live: Any, c: Clients, game: str, mode: str, rng: random.Random) -> None:
        self.live, self.c, self.game, self.mode, self.rng = live, c, game, mode, rng
        self.readings: list[tuple[int, str, bytes]] = []     # the journal readers' output
        self.faults: list[str] = []
        self.open_round = False       # the readers told to show the open round (the self-check)
        self.problems: list[str] = []     # what a refusal changed
        self.named: list[tuple[str, int, int]] = []   # taken by place: whose, which, of how many
        self.named_owed = 3       # tries left at naming a card dealt before its recipient's last

    def state(self) -> str:
        return self.live.do(lambda: self.live.table.state)

    def head(self) -> int:
        return self.c.head()

    async def command(self, name: str, role: str = "dealer", **args: Any) -> dict[str, Any]:
        """A command over the API; a refusal is a result too (its body is checked)."""
        doc = await self.post(name, role, **args)
        await self.c.look()
        return doc

    async def post(self, name: str, role: str = "dealer", **args: Any) -> dict[str, Any]:
        from test_api_support import TOKENS
        async with self.c.session.post(f"{self.live.url}/api/commands/{name}", json=args,
                                       headers={"Authorization": f"Bearer {TOKENS[role]}"}) as r:
            body = await r.read()
        self.c.caps["dealer"].items.append((self.head(), f"POST {name}", body))
        return json.loads(body)

    def hands(self) -> list[tuple[str, int, list[int]]]:
        """Each recipient dealt a card this round: how many it was dealt, and the places (from
        1, in the order dealt) of those still face down in its hand."""
        def read() -> list[tuple[str, int, list[int]]]:
            v = self.live.table.vault
            return [(str(r), len(v.positions(r)),
                     [n for n, slot in enumerate(v.positions(r), 1)
                      if not v.is_face_up(slot) and not v.is_set_aside(slot)])
                    for r in v.recipients() if str(r) != "burn"]
        return self.live.do(read)

    def table_now(self) -> str:
        """What a refusal must leave as it was: the public view, every card's place, face and
        whether it is set aside, and the cards the deal still owes."""
        def read() -> str:
            t = self.live.table
            slots = [(str(t.vault.slot_recipient(i)), t.vault.is_face_up(i),
                      t.vault.is_set_aside(i)) for i in range(t.vault.slots())]
            owed = t.tracker.remaining_cards() if t.tracker is not None else None
            return json.dumps([t.public_view(), slots, owed], sort_keys=True, default=str)
        return self.live.do(read)

    async def expose(self, recipient: str, card: int | None) -> dict[str, Any]:
        """``exposed_card``, naming the card by its place if ``card``. Refused, it must change
        nothing: journaled as the command and its refusal, nothing published, the table as
        it was (compared when nothing else came in meanwhile, as a shuffler dealing may)."""
        args: dict[str, Any] = {"recipient": recipient}
        if card is not None:
            args["card"] = card
        head, before = self.head(), self.table_now()
        doc = await self.post("exposed_card", **args)
        after = self.table_now()
        records = self.live.do(lambda: [(r.seq, r.kind, r.payload) for r in
                                        self.live.journal.records(since=head)])
        await self.c.look()
        at = next((i for i, (_, kind, p) in enumerate(records) if kind == "command"
                   and p.get("name") == "exposed_card" and p.get("args") == args), None)
        if at is None:
            self.problems.append(f"exposed_card {args} is not in the journal")
            return doc
        mine = []
        for _, kind, p in records[at + 1:]:
            if kind in ("command", "device", "restart"):
                break
            mine.append(kind)
        if not doc["ok"]:
            error = doc.get("error")
            where = (f"exposed_card {args} at seq {records[at][0]}, refused "
                     f"({error.get('message') if isinstance(error, dict) else error!r})")
            if mine != ["refused"]:
                self.problems.append(f"{where}, journaled with {mine}")
            if len(records) == 2 and after != before:
                i = next(i for i, (a, b) in enumerate(zip(before + " ", after)) if a != b)
                self.problems.append(f"{where}: the table changed, ...{before[i - 80:i + 40]!r} "
                                     f"became ...{after[i - 80:i + 40]!r}")
        elif card is not None:
            n = next((n for r, n, _ in self.hands() if r == recipient), card)
            self.named.append((recipient, card, n))
        return doc

    async def named_exposure(self) -> None:
        """A card reported exposed by its place, one its recipient was dealt before its last
        (a table that took the last instead would show a card still face down)."""
        held = [(r, [p for p in down if p < n]) for r, n, down in self.hands()]
        held = [(r, places) for r, places in held if places]
        if not held:
            return
        recipient, places = self.rng.choice(held)
        self.faults.append("named")
        doc = await self.expose(recipient, self.rng.choice(places))
        self.named_owed = 0 if doc["ok"] else self.named_owed - 1

    def read_journal(self) -> None:
        """The journal's readers, run beside the table as the pit runs them."""
        from controller.cli import main
        path = str(self.live.journal.path)
        lines = []
        shown = ["--open-round"] if self.open_round else []
        for argv in (["journal", "show", "last", *shown],
                     ["journal", "show", "last", "--json", *shown],
                     ["journal", "export", *shown], ["journal", "rounds"],
                     ["integrity", "report", "--json", *shown], ["integrity", "report", *shown]):
            out, err = io.StringIO(), io.StringIO()
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                try:
                    main([*argv, "--journal", path])
                except SystemExit:
                    pass
            lines.append((" ".join(argv), out.getvalue().encode()))
            lines.append((" ".join(argv) + " (stderr)", err.getvalue().encode()))
        # The table goes on meanwhile (a shuffler deals by itself): what was read reflects at
        # most the journal as it is once the readers are done.
        seq = self.head()
        self.readings += [(seq, what, line) for what, line in lines]

    def face_down_card(self) -> str | None:
        """A card dealt in this round and still face down, or the next in the deck."""
        fates, _ = card_fates(self.live.journal, [])
        seq = self.head()
        hidden = set(hidden_at(fates, seq))
        dealt = [f.card for f in fates if f.card in hidden]
        pool = dealt[-6:] or sorted(hidden)
        return self.rng.choice(pool) if pool else None

    async def fault(self) -> None:
        rng, dev = self.rng, self.live.devices
        cards = "shoe" if self.mode == "shoe" else "shuffler"
        choices = ["jam", "malfunction", "misread", "exposed", "misdeal", "door"]
        if self.mode == "shoe":
            choices.append("face_up")
        else:
            choices.append("refuse")
        what = rng.choice(choices)
        self.faults.append(what)
        card = self.face_down_card()
        word = spell(card, rng.randrange(4)) if card else "the reader"
        other = self.face_down_card()
        if card and other and other != card and rng.random() < 0.3:
            word += spell(other, rng.randrange(4))        # a hand printed packed: KcQh
        if what == "jam":
            await self.c.device(dev[cards].inject, "jam", where=f"reader, card {word}")
        elif what == "malfunction":
            await self.c.device(dev[cards].inject, "malfunction", code=9,
                                text=f"could not eject {word}")
        elif what == "misread":
            dev[cards].inject("misread")
        elif what == "face_up":
            dev["shoe"].inject("face_up")
        elif what == "refuse":
            dev["shuffler"].inject("refuse", code="jammed")
        elif what == "door":
            await self.c.device(dev[cards].inject, "door_open")
        elif what == "exposed":
            # by its place (1 to the cards dealt to the recipient) or, as the panel's
            # button reports it, the last one dealt
            held = self.hands() or [("box 1", 0, [])]
            recipient, n, _ = rng.choice(held)
            await self.expose(recipient, rng.randint(1, n) if n and rng.random() < 0.7 else None)
        elif what == "misdeal":
            await self.command("misdeal")

    async def bets(self) -> None:
        rng = self.rng
        if self.game == "texas-holdem":
            seats = sorted(rng.sample(range(1, 11), rng.randint(2, 4)))
            await self.command("seat_players", seats=seats, stacks=[500] * len(seats),
                               button=seats[0])
            await self.command("close_bets")
            return
        if self.game == "super-pan-9":
            await self.command("set_banker", seat=8, capital=1000)
            for b in rng.sample(range(1, 8), rng.randint(1, 3)):
                await self.command("place_bet", box=b, wager="seat", amount=10)
            self.live.devices["dice"].set_next_dice([rng.randint(1, 6) for _ in range(4)])
            await self.command("shake")
            return
        for b in rng.sample(range(1, 8), rng.randint(1, 3)):
            await self.command("place_bet", box=b, wager=BET[self.game], amount=10)
        if self.mode == "shuffler":
            await self.command("close_bets")

    async def decide(self) -> None:
        if self.game == "texas-holdem":
            h = self.live.do(lambda: self.live.table.public_view()["holdem"])
            legal = [a["action"] for a in h["legal"] if a["action"] in ("fold", "check", "call")]
            if h["to_act"] is None or not legal:
                return
            await self.command("holdem_action", seat=h["to_act"],
                               action=self.rng.choice(legal))
            return
        pending = self.live.do(
            lambda: self.live.table.public_view()["round"]["pending_decisions"])
        for p in pending:
            args = {"player": p["player"]} if p.get("player") else {}
            await self.command("decide", box=p["box"], decision=self.rng.choice(["play", "fold"]),
                               **args)
        if not pending:
            await self.c.look()

    async def round(self, faults: int) -> str:
        """One round, ``faults`` of them injected at random steps; its last state."""
        c, live = self.c, self.live
        await c.until("bets_open", "shuffling")
        if self.state() == "shuffling" and self.mode == "shoe":
            await self.command("deck_ready")
        await c.until("bets_open")
        await self.bets()
        at = sorted(self.rng.sample(range(1, 14), faults))
        for step in range(1, 40):
            if at and step == at[0]:
                at.pop(0)
                await self.fault()
            state = self.state()
            if self.named_owed and state in ("dealing", "player_decisions"):
                await self.named_exposure()
                state = self.state()
            if self.rng.random() < 0.3 or step == 1:
                self.read_journal()
            if state in ROUND_OVER or state == "settlement":
                break
            if state in ("bets_closed", "dealing", "dice_shaking", "bets_open"):
                if self.mode == "shoe" and state != "dice_shaking":
                    await c.device(live.devices["shoe"].draw)
                else:
                    await c.look()
            elif state == "player_decisions":
                await self.decide()
            elif state == "croupier_reveal":
                await c.look()
                if self.state() == "croupier_reveal":       # a card to enter: void it instead
                    await self.command("void_round", role="supervisor",
                                       reason="a card could not be read")
            else:
                await c.look()
        self.read_journal()
        state = self.state()
        if state == "settlement":
            await self.command("confirm_result")
        return self.state()

    async def session(self, rounds: int, faults: int) -> None:
        self.live.do(lambda: self.live.runner.command("open_table", "supervisor"))
        for n in range(rounds):
            end = await self.round(faults if self.rng.random() < 0.7 else 0)
            if end in ("malfunction", "closed") or self.state() == "malfunction":
                return
            if not (await self.command("next_round"))["ok"]:
                return      # a condition a fault left stops the next round


def of_round(what: str, line: bytes, rid: str) -> bytes:
    """What of one line of a reader's output is about round ``rid``: a record or an alarm of
    another round (closed: shown in full, on purpose) is left out."""
    if "--json" in what and what.startswith("integrity"):
        doc = json.loads(line)
        doc["alarms"]["list"] = [a for a in doc["alarms"]["list"] if a.get("round") == rid]
        return json.dumps(doc, ensure_ascii=False).encode()
    if line.startswith(b"{"):
        rec = json.loads(line)
        return line if rec.get("round_id") == rid else b""
    m = re.search(rb" round (\w+):", line)             # integrity report: an alarm's line
    return b"" if m and m.group(1).decode() != rid else line


def reader_leaks(live: Any, readings: list[tuple[int, str, bytes]]) -> list[str]:
    """The journal readers' output holding a card of the round open at that moment that was
    still face down then."""
    fates, _ = card_fates(live.journal, [])     # a wrong position: client_leaks says so
    opens = {r.seq: r.round_id for r in live.journal.records(kinds=["round_open"])}
    closes = [r.seq for r in live.journal.records(kinds=["round_close"])]
    problems = []
    for seq, what, data in readings:
        start = max([s for s in opens if s <= seq], default=0)
        if not start or any(start < s <= seq for s in closes):
            continue                # no round open: every record is shown, on purpose
        in_round = {f.card for f in fates if start <= f.dealt_seq <= seq}
        hidden = [c for c in hidden_at(fates, seq) if c in in_round]
        whole = what.startswith("integrity") and "--json" in what and data.strip()
        for line in [data] if whole else data.splitlines():
            line = of_round(what, line, opens[start])
            for card in hidden:
                pats = upper_spellings(card) + [re.compile(
                    rf"(?<![A-Za-z0-9]){re.escape(card)}(?![A-Za-z0-9])".encode())]
                if any(p.search(line) for p in pats):
                    problems.append(f"{what} at seq {seq}: {card}: {line[:200]!r}")
    return problems


def seen_at(fates: list[Any], seq: int, data: bytes) -> list[str]:
    """The cards face down at ``seq`` that ``data`` shows: test_card_secrecy_api.leaks (the
    card's text, with its suit's sign, ``10`` for ``T``, its code under a card key), and
    with its suit in capitals (``KC``, ``10C``)."""
    found = leaks(fates, seq, data)
    for card in hidden_at(fates, seq):
        if any(p.search(data) for p in upper_spellings(card)):
            found.append(f"{card} in capitals")
    return found


def client_leaks(live: Any, clients: Clients, log: Any) -> list[str]:
    """Everything the clients received (every response, every event of the stream) and every
    log line, each searched for the cards face down when it left."""
    problems: list[str] = []
    fates, published = card_fates(live.journal, problems)
    places = [(seq, f"{cap.role} {w}", d) for cap in clients.caps.values()
              for seq, w, d in cap.items]
    places += [(seq, "log", line) for seq, line in log.lines]
    for cap in clients.caps.values():
        for eid, kind, block in cap.stream_events:
            seq = published[eid - 1] if eid else (0 if kind == "snapshot" else published[-1])
            places.append((seq, f"{cap.role} stream {kind} #{eid}", block))
    return problems + [f"{where} at seq {seq}: {card}: {data[:160]!r}"
                       for seq, where, data in places for card in seen_at(fates, seq, data)]


def run(tmp_path, seqlog, game: str, mode: str, seed: int, rounds: int, faults: int
        ) -> "Oracle":
    o, problems = oracle(tmp_path, seqlog, game, mode, seed, rounds, faults)
    assert not problems, f"seed {seed}, faults {o.faults}:\n" + "\n".join(problems[:20])
    assert o.readings, "the journal's readers were never run"
    return o


def oracle(tmp_path, seqlog, game: str, mode: str, seed: int, rounds: int, faults: int,
           open_round: bool = False) -> tuple[Oracle, list[str]]:
    """Play the session; what the oracle found."""
    import asyncio

    from test_api_support import LiveTable

    rng = random.Random(f"{game} {mode} {seed}")
    live = LiveTable(tmp_path, game, mode, seed=seed)
    seqlog.live = live
    try:
        async def main():
            async with Clients(live) as c:
                o = Oracle(live, c, game, mode, rng)
                o.open_round = open_round
                await o.session(rounds, faults)
                await c.look()
                return o, c
        o, clients = asyncio.run(main())
        problems = (o.problems + client_leaks(live, clients, seqlog)
                    + reader_leaks(live, o.readings))
    finally:
        live.close()
    return o, problems


DEFAULT = [("q-poker", "shoe"), ("texas-holdem", "shuffler")]


@pytest.mark.parametrize("game,mode", DEFAULT)
def test_no_face_down_card_leaves_under_random_faults(tmp_path, seqlog, game, mode):
    o = run(tmp_path, seqlog, game, mode, seed=1, rounds=1, faults=2)
    # a card named by its place before its recipient's last was taken
    assert any(card < n for _, card, n in o.named), (o.faults, o.named)


def test_the_oracle_sees_the_cards_of_the_open_round_when_the_readers_show_them(tmp_path,
                                                                                 seqlog):
    """The oracle itself: told to show the open round (``--open-round``, for an inquiry),
    the journal's readers show the cards the devices read, face down at the table; the
    oracle must find them there."""
    o, problems = oracle(tmp_path, seqlog, "q-poker", "shoe", seed=1, rounds=1, faults=0,
                         open_round=True)
    assert any(p.startswith("journal show last --json --open-round") for p in problems), problems
    assert any(p.startswith("journal export --open-round") for p in problems), problems


@pytest.mark.long
@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("mode", ["shoe", "shuffler"])
@pytest.mark.parametrize("game", ["q-poker", "fortune-3-card-poker", "texas-holdem",
                                  "super-pan-9"])
def test_no_face_down_card_leaves_under_random_faults_long(tmp_path, seqlog, game, mode, seed):
    run(tmp_path, seqlog, game, mode, seed=seed, rounds=3, faults=3)
