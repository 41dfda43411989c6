"""Build the round document a game settles (docs/settle.md) from what the table recorded.

Only revealed cards go in: the vault gives a hand for settlement only once it is face up, so a
settlement can never carry a face-down card. One builder per game, because each regulation's
document names its wagers in its own words.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable

from controller.errors import TablectlError
from controller.rules import GAME_IDS, RuleError, get_game
from controller.rules.base import CROUPIER, box as box_recipient

if TYPE_CHECKING:
    from .machine import Table

def wagers_of(game_id: str) -> tuple[str, ...]:
    """The wager names a bet may be placed under before the deal, from the game's own
    ``wagers`` (empty: any name, e.g. a test game). A wager that is exactly another one is left
    out: Fortune 3 Card Poker's Play is made at the decision and equals the Ante (78/2008
    art. 9(4)), so nobody places it while betting is open."""
    try:
        game = get_game(game_id)
    except RuleError:
        return ()
    return _placed(game)


def _placed(game: Any) -> tuple[str, ...]:
    follows = getattr(game, "limits_follow", None) or {}
    return tuple(w for w in getattr(game, "wagers", None) or () if w not in follows)


# The placeable wagers of each regulation, read from the games (kept for callers that look a
# game up by id in a mapping).
WAGERS: dict[str, tuple[str, ...]] = {gid: wagers_of(gid) for gid in GAME_IDS}


def _cards(table: "Table", recipient) -> list[str]:
    hand = table.vault.revealed_hand(recipient)
    if hand is None or any(c is None for c in hand):
        raise TablectlError(f"the cards of {recipient} are not all known and revealed; "
                            "enter them at the console before settling")
    return [str(c) for c in hand]


def _base(table: "Table") -> dict[str, Any]:
    r = table.round
    return {"game": r.game, "mode": r.mode, "interpretations": dict(table.interpretations),
            "layout_boxes": table.layout_boxes}


def q_poker(table: "Table") -> dict[str, Any]:
    r = table.round
    # interpretation shared_box_decision=seated_player: the player marked seated with his bet,
    # or without a mark the one who decided for the box, is the seated one
    # (Table._box_deciders); his decision binds the others' bets versus the croupier, also
    # when his own bet is only the pair bonus
    by_seated = table.interpretations.get("shared_box_decision") == "seated_player"
    marks = table.seated_marks() if by_seated else {}
    boxes = []
    for b in r.bet_boxes():
        if b in r.void_boxes:
            continue
        players = []
        deciders = [p for (bb, p) in r.decisions if bb == b]
        for p in r.players_on(b):
            entry: dict[str, Any] = {"player": p}
            for w in table.game.wagers:             # pair bonus, versus croupier
                amount = sum(v for k, v in r.bets.items() if (k.box, k.wager, k.player) == (b, w, p))
                if amount:
                    entry[w] = amount
            if (b, p) in r.decisions and ("versus_croupier" in entry or by_seated):
                entry["decision"] = r.decisions[(b, p)]
            if by_seated and (p == marks[b] if b in marks else p in deciders):
                entry["seated"] = True
            players.append(entry)
        box: dict[str, Any] = {"box": b, "cards": _cards(table, box_recipient(b))}
        if len(players) == 1 and players[0]["player"] is None:
            box.update({k: v for k, v in players[0].items() if k != "player"})
        else:
            if any(p["player"] is None for p in players):
                players = [dict(p, player=p["player"] or f"box {b}") for p in players]
            box["players"] = players
        boxes.append(box)
    return {**_base(table), "boxes": boxes, "croupier": {"cards": _cards(table, CROUPIER)}}


def fortune(table: "Table") -> dict[str, Any]:
    r = table.round
    boxes = []
    for b in r.bet_boxes():
        if b in r.void_boxes:
            continue
        bets = r.box_bets(b)
        players = [p for p in r.players_on(b) if p is not None]
        box: dict[str, Any] = {"box": b, "cards": _cards(table, box_recipient(b))}
        if players:
            box["player"] = players[0]
        for w in table.game.wagers:                 # pair plus, ante, play
            if bets.get(w):
                box[w] = bets[w]
        if bets.get("ante"):
            box["decision"] = next(d for (bb, _), d in r.decisions.items() if bb == b)
        boxes.append(box)
    return {**_base(table), "boxes": boxes, "croupier": {"cards": _cards(table, CROUPIER)}}


def super_pan_9(table: "Table") -> dict[str, Any]:
    r = table.round
    seats = []
    for b in r.bet_boxes():
        if b == r.banker or b in r.void_boxes:
            continue
        seats.append({"seat": b, "cards": _cards(table, box_recipient(b)),
                      "bets": [{"player": k.player, "amount": v}
                               for k, v in r.bets.items() if k.box == b]})
    doc = {**_base(table), "banker": {"seat": r.banker, "capital": r.capital,
                                      "cards": _cards(table, box_recipient(r.banker))},
           "seats": seats, "dice": list(r.dice or ()), "adjust": r.adjust}
    if r.co_bankers:
        # in the order placed: the rules put the house last and order the players (P10)
        doc["co_bankers"] = [dict(c) for c in r.co_bankers]
    return doc


def texas_holdem(table: "Table") -> dict[str, Any]:
    """A hand history: seats with stacks, the actions as given, the revealed hole cards of
    the players at the showdown (none when the hand was won uncontested) and the board."""
    from controller.rules.base import BOARD

    r, h, o = table.round, table._holdem, table.holdem_options
    seats = []
    for s in r.seats:
        entry: dict[str, Any] = {"box": s, "stack": table._stacks[s]}
        if not h.won_uncontested and s not in h.folded:
            entry["cards"] = _cards(table, box_recipient(s))
        seats.append(entry)
    board = table.vault.revealed_hand(BOARD) or []
    doc = {"game": r.game, "interpretations": dict(table.interpretations),
           "structure": o["structure"], "blinds": {"small": o["small_blind"],
                                                    "big": o["big_blind"]},
           "button": r.button, "layout": table.layout_boxes, "seats": seats,
           "actions": [{k: v for k, v in a.items() if v is not None} for a in r.actions],
           "board": [str(c) for c in board]}
    if o.get("rake"):
        doc["rake"] = o["rake"]
    return doc


def generic(table: "Table") -> dict[str, Any]:
    """For a game without its own builder: boxes with bets, decisions and cards."""
    r = table.round
    boxes = []
    for b in r.bet_boxes():
        boxes.append({
            "box": b, "void": b in r.void_boxes,
            "cards": _cards(table, box_recipient(b)),
            "bets": [{"wager": k.wager, "player": k.player, "amount": v}
                     for k, v in r.bets.items() if k.box == b],
            "decisions": {str(p) if p else "": d for (bb, p), d in r.decisions.items() if bb == b},
        })
    croupier = _cards(table, CROUPIER) if table.vault.count(CROUPIER) else None
    return {**_base(table), "boxes": boxes, "croupier": croupier}


BUILDERS: dict[str, Callable[["Table"], dict[str, Any]]] = {
    "q-poker": q_poker, "fortune-3-card-poker": fortune, "super-pan-9": super_pan_9,
    "texas-holdem": texas_holdem,
}


def build(game_id: str, table: "Table") -> dict[str, Any]:
    """The settle document for the round in ``table``."""
    return BUILDERS.get(game_id, generic)(table)
