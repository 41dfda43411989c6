"""Card secrecy of the real daemon (`tablectl run` as its own process, simulated devices):
a card never turned face up at the table (a folded Hold'em hand, the hands of a misdealt
round, the rest of the deck) appears nowhere a client or an operator can read: not in any
API response, not in the event stream, not in the daemon's log. (The moment each card may
appear is checked event by event in tests/test_card_secrecy_api.py.)"""
from __future__ import annotations

import json
import threading
import urllib.request

import pytest

from controller.rules.cards import Card, full_deck

from test_api_support import TOKENS, DaemonTable
from test_card_secrecy_api import card_fates, codes_under_card_keys, spellings

pytestmark = pytest.mark.hil


class Http:
    """A dealer's and a display's HTTP clients, every body kept; the display's stream too."""

    def __init__(self, live: DaemonTable) -> None:
        self.live, self.bodies, self.stream = live, [], bytearray()
        req = urllib.request.Request(live.url + "/api/events", headers=self._h("display"))
        self._resp = urllib.request.urlopen(req, timeout=30)
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _h(self, role):
        return {"Authorization": f"Bearer {TOKENS[role]}", "Content-Type": "application/json"}

    def _read(self) -> None:
        try:
            while True:
                chunk = self._resp.read1(65536)
                if not chunk:
                    return
                self.stream += chunk
        except (OSError, ValueError, AttributeError):   # closed under the reader
            return

    def get(self, role: str, path: str) -> dict:
        req = urllib.request.Request(self.live.url + path, headers=self._h(role))
        with urllib.request.urlopen(req, timeout=10) as r:
            body = r.read()
        self.bodies.append(body)
        return json.loads(body)

    def command(self, name: str, **args) -> dict:
        req = urllib.request.Request(f"{self.live.url}/api/commands/{name}", method="POST",
                                     data=json.dumps(args).encode(), headers=self._h("dealer"))
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                body = r.read()
        except urllib.error.HTTPError as exc:
            body = exc.read()
        self.bodies.append(body)
        self.get("display", "/api/table")
        self.get("dealer", "/api/table")
        return json.loads(body)

    def close(self) -> None:
        self._resp.close()


def draw(live, http):
    with live.journal() as j:
        before = sum(1 for _ in j.records(kinds=["device"]))
    live.devices["shoe"].draw()

    def drawn():
        with live.journal() as j:
            return sum(1 for _ in j.records(kinds=["device"])) > before
    live.wait(drawn)
    http.get("display", "/api/table")


def test_cards_never_turned_up_appear_nowhere_in_the_daemons_output(tmp_path):
    live = DaemonTable(tmp_path, "texas-holdem", "shoe")
    http = Http(live)
    try:
        assert http.command("open_table")["ok"] is False      # the supervisor's, not the dealer's
        urllib.request.urlopen(urllib.request.Request(
            f"{live.url}/api/commands/open_table", method="POST", data=b"{}",
            headers=http._h("supervisor")), timeout=10).read()
        for round_no, seats in ((1, [2, 5, 8]), (2, [1, 4])):
            if live.state() == "shuffling":
                assert http.command("deck_ready")["ok"]
            assert http.command("seat_players", seats=seats, stacks=[400] * len(seats))["ok"]
            assert http.command("close_bets")["ok"]
            folded = False
            for _ in range(60):
                state = live.state()
                if state in ("dealing", "bets_closed"):
                    draw(live, http)
                elif state == "player_decisions" and round_no == 2:
                    assert http.command("misdeal")["ok"]      # round 2: void after the deal
                elif state == "player_decisions":
                    h = live.view()["holdem"]
                    legal = [a["action"] for a in h["legal"]]
                    action = "fold" if not folded else ("check" if "check" in legal else "call")
                    folded = True
                    assert http.command("holdem_action", seat=h["to_act"], action=action)["ok"]
                else:
                    break
            if round_no == 1:
                assert live.state() == "settlement"
                assert http.command("confirm_result")["ok"]
                assert http.command("next_round")["ok"]
            else:
                assert live.state() in ("round_void", "malfunction")
        http.get("display", "/api/health")
    finally:
        http.close()
        live.close()           # the daemon stops: its log is complete

    with live.journal() as journal:
        fates, _ = card_fates(journal)
    revealed = {f.card for f in fates if f.revealed_seq != float("inf")}
    hidden = [str(c) for c in full_deck() if str(c) not in revealed]
    dealt_hidden = {f.card for f in fates} - revealed
    assert len(dealt_hidden) >= 2 + 4         # a folded hand and a misdealt round's hands
    log = live.rig.log_path.read_bytes()
    assert b"api listening" in log and len(http.stream) > 1000
    places = {"log": log, "stream": bytes(http.stream), **{
        f"response {i}": b for i, b in enumerate(http.bodies)}}
    found = []
    for where, data in places.items():
        codes = set()
        for line in data.splitlines():
            try:
                codes |= codes_under_card_keys(json.loads(line.split(b"data: ", 1)[-1]), set())
            except ValueError:
                pass
        for card in hidden:
            if any(p.search(data) for p in spellings(card)) or Card.parse(card).code in codes:
                found.append(f"{card} in {where}")
    assert not found, found[:20]
    # and the search does see cards where they may be: the board and the showdown's hands
    shown = [c for c in revealed if any(p.search(places["stream"]) for p in spellings(c))]
    assert len(shown) == len(revealed) >= 5 + 4
