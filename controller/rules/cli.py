"""``tablectl rules plan`` and ``tablectl rules settle``: the rule engine on the command line.

The output of ``--json`` is a contract other tools rely on; see docs/settle.md.
"""
from __future__ import annotations

import argparse
import json
import sys
import unicodedata
from typing import Any

from . import GAME_IDS, get_game
from controller.strict_json import TooLarge, TooLong, Twice, once, whole_number

from .base import AMOUNT_LIMIT, check_settlement_amounts, Mode, PlanRequest, parse_boxes
from .errors import RuleError


def register(sub: argparse._SubParsersAction) -> None:
    rules = sub.add_parser("rules", help="dealing plans and settlement by the regulations")
    rsub = rules.add_subparsers(dest="rules_command", metavar="ACTION")
    rsub.required = True

    plan = rsub.add_parser("plan", help="the dealing plan of one round")
    plan.add_argument("game", choices=GAME_IDS, metavar="GAME", help=" | ".join(GAME_IDS))
    plan.add_argument("--mode", default="shoe", help="shoe (card by card) or shuffler")
    plan.add_argument("--boxes", required=True, help="boxes holding a bet, e.g. 1,3,5 "
                      "(Hold'em: occupied seats; Super Pan 9: seats in play)")
    plan.add_argument("--layout", type=int, default=None,
                      help="player boxes on the table (default: the regulation's own)")
    plan.add_argument("--decks", default="1", metavar="N",
                      help="decks in the shoe, 1 to 8, as the table's [integrity] decks "
                           "(default 1; more only for Q Poker under --set decks=several)")
    plan.add_argument("--button", type=int, help="Hold'em: the seat holding the dealer button")
    plan.add_argument("--banker", type=int, help="Super Pan 9: the banker's seat")
    plan.add_argument("--adjust", default="0", help="Super Pan 9: points declared before the "
                      "shake, e.g. +2 or -1")
    plan.add_argument("--dice", help="Super Pan 9: the four dice, e.g. 3,5,1,6")
    plan.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                      help="choose another reading of an interpretation (repeatable)")
    plan.add_argument("--json", action="store_true", help="machine-readable output")
    plan.set_defaults(func=cmd_plan)

    settle = rsub.add_parser("settle", help="settle one finished round read as JSON on stdin")
    settle.add_argument("--json", action="store_true", help="machine-readable output")
    settle.set_defaults(func=cmd_settle)


def parse_sets(items: list[str]) -> dict[str, str]:
    """``["KEY=VALUE", …]`` into a dict, with a clear error for a malformed item."""
    out: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RuleError(f"--set {item!r} must be KEY=VALUE, e.g. --set count_empty_seats=yes")
        key, value = key.strip(), value.strip()
        if out.get(key, value) != value:
            # As a key given twice in a round document: which was meant cannot be told.
            raise RuleError(f"--set gives {key} twice ({out[key]!r}, then {value!r}); "
                            "give each interpretation once")
        out[key] = value
    return out


def _int_list(text: str | None, what: str) -> tuple[int, ...] | None:
    if text is None:
        return None
    try:
        return tuple(int(p) for p in text.replace(" ", "").split(",") if p)
    except ValueError:
        raise RuleError(f"{what} {text!r} must be whole numbers separated by commas") from None


def cmd_plan(args: argparse.Namespace) -> int:
    game = get_game(args.game)
    try:
        adjust = int(str(args.adjust).replace(" ", ""))
    except ValueError:
        raise RuleError(f"--adjust {args.adjust!r} must be a whole number such as +2 or -1") from None
    interpretations = game.resolve_interpretations(parse_sets(args.set))
    check_decks(game, interpretations, args.layout, args.decks)
    request = PlanRequest(
        boxes=parse_boxes(args.boxes), mode=Mode.parse(args.mode), layout_boxes=args.layout,
        button=args.button, banker=args.banker, adjust=adjust,
        dice=_int_list(args.dice, "--dice"), interpretations=interpretations)
    plan = game.dealing_plan(request)
    if args.json:
        json.dump({"game": game.game_id, "mode": request.mode.value,
                   "steps": [d.to_json() for d in plan]}, sys.stdout, indent=2)
        print()
        return 0
    print(f"{game.title} ({game.regulation}), {request.mode.value}: {len(plan)} steps, "
          f"{sum(d.cards for d in plan)} cards")
    for i, d in enumerate(plan, 1):
        face = " face up" if d.face_up else ""
        street = f" [{d.street}]" if d.street != "deal" else ""
        print(f"{i:3d}. {d.cards} card{'s' if d.cards > 1 else ''} to {d.recipient}{face}{street}")
    return 0


def check_decks(game: Any, interpretations: dict[str, str], layout: int | None,
                decks_text: str) -> None:
    """``--decks`` and ``--layout`` as `tablectl config check` holds ``[integrity] decks`` and
    ``table.boxes``: more than one deck only for Q Poker under decks=several (89/2004 art.
    1(1)), and a layout the decks deal to a full table (``layout`` None: the regulation's
    own, which they do). The reason is the rule module's, as config check gives it; the way
    out names this command's options."""
    from controller.config import MAX_DECKS
    text = str(decks_text).strip()
    # (the length first: int() refuses a text of thousands of digits with a ValueError)
    if not (text.isascii() and text.isdigit()) or len(text) > 3 or \
            not 1 <= int(text) <= MAX_DECKS:
        raise RuleError(f"--decks {decks_text!r} must be the decks in the shoe, 1 to "
                        f"{MAX_DECKS}, as the table's [integrity] decks")
    decks = int(text)
    readable = any(i.key == "decks" for i in game.interpretations)
    several = readable and interpretations.get("decks", "one") != "one"
    if decks != 1 and not readable:
        raise RuleError(f"{decks} decks, but {game.game_id} is played with one 52-card deck: "
                        "give --decks 1 (or leave it out)")
    if decks != 1 and not several:
        raise RuleError(f"{decks} decks, but the interpretation decks is "
                        f"{interpretations.get('decks', 'one')!r}: {game.game_id} is played "
                        "with one 52-card deck under that reading: give --decks 1, or "
                        "--set decks=several (docs/interpretations.md)")
    if layout is None:
        return
    game.check_layout(layout)                   # the seating article, named as in a plan
    try:
        if several:
            game.check_layout(layout, interpretations, decks=decks)
        else:
            game.check_layout(layout, interpretations)
    except RuleError as exc:
        way_out = _fewer_boxes_or_more_decks(game, interpretations, layout, decks, several)
        raise RuleError(f"{exc}: {way_out}") from None


def _fewer_boxes_or_more_decks(game: Any, interpretations: dict[str, str], layout: int,
                               decks: int, several: bool) -> str:
    """The ways out of a layout the decks cannot deal, in this command's options: the most
    boxes they deal, or the fewest decks, up to the most a shoe holds, that deal it (as
    `config check` words them for [integrity] decks and table.boxes)."""
    from controller.config import MAX_DECKS, deck_limits

    lo, more = deck_limits(game, interpretations, layout, decks, several)
    fewer = f"give the table's real layout, --layout at most {lo}"
    if not several:
        return (f"{fewer} (one deck), or, if the table deals from several decks, --set "
                "decks=several and their count as --decks N (docs/interpretations.md, Q3)")
    if more is not None:
        return (f"{fewer} with {decks} deck{'s' if decks > 1 else ''}, or --decks {more} if "
                f"the shoe holds that many (at most {MAX_DECKS}, the table's [integrity] decks)")
    if decks == MAX_DECKS:
        return f"{fewer}: {MAX_DECKS} decks, the most a shoe holds, deal no more"
    return (f"{fewer} with {decks} decks; not even {MAX_DECKS} (the most a shoe holds) deal "
            "this layout")


def _unprintable(value: Any, where: str = "") -> tuple[str, str, str] | None:
    """The first text of ``value`` (a key or a value) holding a control or invisible
    character: (where it is, the text, the character), or None."""
    if isinstance(value, str):
        hidden = next((ch for ch in value if unicodedata.category(ch) in ("Cc", "Cf")), None)
        return None if hidden is None else (where or "the round", value, hidden)
    if isinstance(value, dict):
        for key, item in value.items():
            path = f"{where}.{key}" if where else str(key)
            found = _unprintable(key, f"a key of {where or 'the round'}") or \
                _unprintable(item, path)
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _unprintable(item, f"{where}[{i}]")
            if found:
                return found
    return None


def read_round(raw: str) -> dict[str, Any]:
    """The round document of ``raw``, or RuleError naming what cannot be taken: not JSON, a
    key given twice, a whole number beyond 2^53 - 1 (as at the table), text holding a
    control or invisible character (it would reach the operator's terminal: an escape
    sequence can clear the screen or rewrite the lines above)."""
    try:
        doc = json.loads(raw, object_pairs_hook=once, parse_int=whole_number)
    except Twice as exc:
        raise RuleError(f"the round gives \"{_shown(str(exc))}\" twice in one object; JSON "
                        "would keep only the last, and which one was meant cannot be told: "
                        "give each key once") from None
    except (TooLarge, TooLong) as exc:
        raise RuleError(f"the round holds {_shown(str(exc))}, beyond {AMOUNT_LIMIT}; amounts "
                        "are whole chip units up to that, as at the table") from None
    except json.JSONDecodeError as exc:
        raise RuleError(f"the round is not valid JSON (line {exc.lineno}, column {exc.colno}: "
                        f"{exc.msg}); see docs/settle.md for the format") from None
    except RecursionError:
        raise RuleError("the round is nested too deeply to be a round document; "
                        "see docs/settle.md for the format") from None
    if not isinstance(doc, dict) or "game" not in doc:
        raise RuleError("the round must be a JSON object with a \"game\" key "
                        f"({', '.join(GAME_IDS)}); see docs/settle.md")
    found = _unprintable(doc)
    if found:
        where, text, hidden = found
        raise RuleError(f"{where} {_shown(text)} holds U+{ord(hidden):04X}, a control or "
                        "invisible character (an escape, a NUL, a line break, a zero-width or "
                        "right-to-left mark); names and other text must be printable: type it "
                        "again without it")
    return doc


def _shown(text: str) -> str:
    """``text`` safe to print in an error (at most 40 characters; a control or invisible
    character written as an escape, such as ``\\x1b``)."""
    return text[:40] if text.isprintable() else ascii(text[:40])


def cmd_settle(args: argparse.Namespace) -> int:
    doc = read_round(sys.stdin.read())
    settlement = get_game(str(doc["game"])).settle(doc)
    check_settlement_amounts(settlement.to_json())
    if args.json:
        json.dump(settlement.to_json(), sys.stdout, indent=2)
        print()
        return 0
    print(f"{settlement.game}: interpretations {settlement.interpretations}")
    for who, hand in settlement.hands.items():
        cards = " ".join(hand.get("cards", []))
        print(f"  {who:<10} {cards:<22} {hand.get('category', '')}")
    for w in settlement.wagers:
        player = f" ({w.player})" if w.player else ""
        note = f"  {w.note}" if w.note else ""
        print(f"  box {w.box}{player} {w.wager:<16} stake {w.stake:>8}  {w.outcome:<5} "
              f"net {w.net:+d}{note}")
    if settlement.commission:
        print(f"  commission/rake {settlement.commission}")
    print(f"  house net {settlement.house_net:+d}")
    return 0
