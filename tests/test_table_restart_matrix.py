"""A restart in every state of every game, audited deterministically.

For each game, each dealing device the configuration allows (the shoe and the shuffler, each
as a model that reads the cards and as a count-only one) and each state a round can be in, a
scripted table is driven there through the real runner and journal (commands and device
events, as the service feeds them). The journal is then taken as a crash at that moment leaves
it, and a second table is rebuilt from that journal alone, as the restarted daemon does
(``TableRunner.recover``). Each case checks that:

* nothing is lost: the bets, the banker's capital and the co-banks, every card dealt and whether
  it is face up, every ruling, the seats and stacks, the bank's turn, the devices' conditions;
* the interrupted round ends as its regulation says for that state (void, every bet returned,
  with the article; or held for the supervisor; or going on), and the journal verifies, each
  round opened and closed once;
* the rebuilt table is the table that crashed with the restart applied: the same events and
  device commands, the same state afterwards, the next legal input taken and an illegal one
  refused as that table takes and refuses them (and a second restart changes nothing more);
* nothing published during the rebuild (events, the journal's public records, the view) names a
  card that is still face down.

The scripts (``round_*``) are data; each ``Mark`` in them is a case, with what the regulation
(and docs/interpretations.md) says a restart there must do. A script is run once through the
runner, the journal copied at each mark; each case rebuilds from its copy.
"""
from __future__ import annotations

import dataclasses
import json
import os
import re
import shutil
import sqlite3
import tempfile
from collections import deque
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any, Mapping

import pytest

from controller.errors import TablectlError
from controller.integrity.monitor import IntegrityConfig, IntegrityMonitor
from controller.journal import Journal
from controller.rules import get_game
from controller.rules.cards import Card, full_deck
from controller.table import Table
from controller.table.runner import TableRunner
from drivers import events as ev

from table_helpers import DEVICES, LAYOUT

# --- the devices ------------------------------------------------------------------------------

# The dealing devices a table may be configured with: the mode, and whether the model reads
# the cards (its hello's recognises_cards) or only counts them (cards entered at the reveal).
KINDS = {"shoe": ("shoe", True), "shoe-count-only": ("shoe", False),
         "shuffler": ("shuffler", True), "shuffler-count-only": ("shuffler", False)}
GAMES = ("q-poker", "fortune-3-card-poker", "texas-holdem", "super-pan-9")

# The machine-failure articles (89/2004 art. 11(5), 78/2008 art. 11(4), 11/2008 art. 9(2) by
# H11, 261/96/M P3) and Super Pan 9's for the agitator (P4).
MACHINE = {"q-poker": "89/2004 art. 11(5)", "fortune-3-card-poker": "78/2008 art. 11(4)",
           "texas-holdem": "11/2008 art. 9(2)",
           "super-pan-9": "261/96/M interpretation P3 (machine_failure)"}
P4 = "261/96/M interpretation P4 (dice_malfunction)"

# One deck in a fixed order, the cards taken from the top round after round.
DECK = [str(full_deck()[i * 7 % 52]) for i in range(52)]


def identity(cls: str, reads: bool) -> ev.DeviceIdentity:
    return ev.DeviceIdentity(cls, "sim", f"{cls}-model", "sn-1", "1.0", "ab" * 16,
                             recognises_cards=reads)


# --- script steps -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Cmd:
    """A dealer's or supervisor's command."""

    name: str
    args: Mapping[str, Any] = field(default_factory=dict)
    role: str = "dealer"


def cmd(name: str, role: str = "dealer", **args: Any) -> Cmd:
    return Cmd(name, args, role)


def sup(name: str, **args: Any) -> Cmd:
    return Cmd(name, args, "supervisor")


@dataclass(frozen=True)
class Dev:
    """A device event; ``dealer`` stands for the kind's dealing device (shoe or shuffler)."""

    kind: str
    device: str = "dealer"
    args: Mapping[str, Any] = field(default_factory=dict)


def dev(kind: str, device: str = "dealer", **args: Any) -> Dev:
    return Dev(kind, device, args)


@dataclass(frozen=True)
class Deal:
    """The next ``n`` cards out: from the shoe one by one, from the shuffler what it was asked
    (a hand or a card). ``duplicate``: the card dealt is one already dealt this round."""

    n: int = 1
    duplicate: bool = False


@dataclass(frozen=True)
class Act:
    """Texas Hold'em: the seat to act calls, or checks when there is nothing to call; ``n``
    times, or (``n`` 0) until the betting round is over."""

    n: int = 0


@dataclass(frozen=True)
class Enter:
    """At the reveal, the cards of the next hand the table asks for (a count-only device)."""

    n: int = 1


@dataclass(frozen=True)
class Late:
    """What the shuffler was asked before the restart comes out after it (it had left)."""


@dataclass(frozen=True)
class Refused:
    """A command the table refuses, its error matching ``match`` (journaled as refused; a
    restart's replay passes over it)."""

    command: Cmd
    match: str | None = None


@dataclass(frozen=True)
class Restart:
    """The controller restarts here, before the script goes on (its journal then holds a
    restart and a recovery in the middle of a round)."""


@dataclass(frozen=True)
class Expect:
    """What a restart at a mark must do, and what the table takes after it.

    ``state``: the state once recovered. ``void``: the article of the ruling that voids the
    round at the restart, every bet returned (None: the round is not voided by the restart).
    ``ruling``: the article of a ruling the restart makes that keeps the round (held for the
    supervisor). ``next``: legal inputs after the restart, ``then`` the state they lead to.
    ``refuse``: a command refused just after the restart, its error matching ``match``.
    ``asks``: what the table asks of the shuffler again once it links (it may never have left:
    a device command is sent after its journal commit), before the next device event."""

    state: str
    void: str | None = None
    ruling: str | None = None
    next: tuple[Any, ...] = ()
    then: str | None = None
    refuse: Cmd | None = None
    match: str = ""
    asks: tuple[str, ...] = ()


@dataclass(frozen=True)
class Mark:
    label: str
    expect: Expect


def stands(state: str, next_: tuple[Any, ...], then: str, refuse: Cmd, match: str,
           asks: tuple[str, ...] = ()) -> Expect:
    """The restart changes nothing of the round: it goes on from the journal."""
    return Expect(state, next=next_, then=then, refuse=refuse, match=match, asks=asks)


def held(state: str, ruling: str, next_: tuple[Any, ...], then: str, refuse: Cmd,
         match: str, asks: tuple[str, ...] = ()) -> Expect:
    """The restart rules on the round and keeps it, held for the supervisor."""
    return Expect(state, ruling=ruling, next=next_, then=then, refuse=refuse, match=match,
                  asks=asks)


def voided(article: str, game: str, kind: str, late: bool = False) -> Expect:
    """A machine failure while dealing: the round is void, every bet returned, and the table
    waits in malfunction until the supervisor clears it. The next round is then dealt: what
    the shuffler was asked for the void round, which may never have left (or, ``late``, comes
    out after the restart), does not hold it up."""
    return Expect("malfunction", void=article,
                  next=((Late(),) if late else ()) + (sup("clear_malfunction"),
                                                      *first_card_of_the_next_round(game, kind)),
                  then="dealing", refuse=cmd("clear_malfunction"),
                  match="needs the supervisor role")


def asked_first(label: str, article: str, game: str, kind: str) -> list[Mark]:
    """The first hand or card is asked of the shuffler: a restart now voids the round, whether
    what was asked had left (it comes out after the restart) or not."""
    return [Mark(label, voided(article, game, kind)),
            Mark(f"{label}_comes_out_after_the_restart", voided(article, game, kind, late=True))]


def ready(kind: str) -> list[Any]:
    """The deck made ready for a round: by the croupier for the shoe, by the shuffler."""
    return [cmd("deck_ready")] if KINDS[kind][0] == "shoe" else \
        [dev("deck_check_result", count=52), *SHUFFLED]


def first_card_of_the_next_round(game: str, kind: str) -> list[Any]:
    """From a round just opened: the deck ready, a bet, betting closed, the first card out."""
    mode, _ = KINDS[kind]
    if game == "texas-holdem":
        bets = [seating(), cmd("close_bets")]
    elif game == "super-pan-9":
        bets = [sup("set_banker", seat=1, capital=1000),
                cmd("place_bet", box=2, wager="seat", amount=100, player="ana"),
                cmd("shake"), dev("dice_result", device="dice", dice=(1, 1, 1, 2))]
    else:
        bets = three_card_bets(game)[:1] + ([cmd("close_bets")] if mode == "shuffler" else [])
    return ready(kind) + bets + [Deal()]


# --- the scripts --------------------------------------------------------------------------------

# The shuffler's report of a shuffle: begun, then done.
SHUFFLED = (dev("shuffle_started"), dev("shuffle_done", count=52))
# Its status, asked at the clear when a hand asked before a failure or restart may be on its
# way: none is (it never left), or it is (it comes out after the clear: Late).
# The shuffler's answer to the status request the table asked last (the driver names the
# request its report answers; inputs() fills in the table's name of it).
NOTHING_COMING = dev("status_answer", state="ready")
DISPENSING = dev("status_answer", state="dispensing")


def asked_again(mode: str) -> tuple[Any, ...]:
    """What comes before the hand asked again at the clear: with the shuffler, its status
    saying no hand is on its way; the shoe's cards are drawn by hand."""
    return (NOTHING_COMING,) if mode == "shuffler" else ()


def opening(game: str, kind: str) -> list[Any]:
    """The devices link, the table opens and its deck is made ready, with a mark at each
    state on the way."""
    mode, _ = KINDS[kind]
    steps: list[Any] = [Mark("out_of_service", stands(
        "out_of_service", (sup("open_table"),), "shuffling",
        cmd("place_bet", box=1, wager="x", amount=10), "while the table is in out_of_service"))]
    steps.append(sup("open_table"))
    if mode == "shoe":
        steps.append(Mark("shuffling_by_hand", stands(
            "shuffling", (cmd("deck_ready"),), "bets_open", cmd("close_bets"),
            "while the table is in shuffling")))
        steps.append(cmd("deck_ready"))
    else:
        # The deck check is asked when the table opens; its result, then the shuffle.
        steps.append(Mark("deck_check_in_progress", stands(
            "shuffling", (dev("deck_check_result", count=52), *SHUFFLED), "bets_open",
            cmd("deck_ready"), "reports its own deck ready", ("deck_check",))))
        steps.append(dev("deck_check_result", count=52))
        steps.append(Mark("shuffle_asked", stands(
            "shuffling", SHUFFLED, "bets_open", cmd("deck_ready"), "reports its own deck ready",
            ("shuffle",))))
        steps.append(SHUFFLED[0])
        steps.append(Mark("shuffle_in_progress", stands(
            "shuffling", SHUFFLED[1:], "bets_open", cmd("deck_ready"),
            "reports its own deck ready")))
        steps.append(SHUFFLED[1])
    return steps


def three_card_bets(game: str) -> list[Cmd]:
    if game == "q-poker":
        return [cmd("place_bet", box=1, wager="versus_croupier", amount=10),
                cmd("place_bet", box=3, wager="pair_bonus", amount=5),
                cmd("place_bet", box=3, wager="versus_croupier", amount=20)]
    return [cmd("place_bet", box=1, wager="ante", amount=10),
            cmd("place_bet", box=3, wager="pair_plus", amount=5),
            cmd("place_bet", box=3, wager="ante", amount=20)]


def round_three_card(game: str, kind: str) -> list[Any]:
    """Q Poker or Fortune 3 Card Poker: one round from the bets to the table closed."""
    mode, reads = KINDS[kind]
    art = MACHINE[game]
    wager = "versus_croupier" if game == "q-poker" else "ante"
    steps = opening(game, kind)
    steps.append(Mark("bets_open_empty", stands(
        "bets_open", three_card_bets(game)[:1], "bets_open", cmd("close_bets"),
        "no bet is on the layout")))
    steps += three_card_bets(game)
    steps.append(Refused(cmd("decide", box=1, decision="play")))
    steps.append(Mark("bets_placed", stands(
        "bets_open", (cmd("remove_bet", box=3, wager=three_card_bets(game)[1].args["wager"]),),
        "bets_open", cmd("decide", box=1, decision="play"),
        "while the table is in bets_open")))
    steps.append(cmd("close_bets"))
    if mode == "shoe":
        # Bets closed by the croupier; no card is out and none can be (the shoe's cards are
        # drawn by hand and each is journaled as it comes): the bets stand.
        steps.append(Mark("bets_closed", stands(
            "bets_closed", (Deal(),), "dealing", cmd("place_bet", box=2, wager=wager, amount=10),
            "while the table is in bets_closed")))
        cards = 9
    else:
        # The first hand is asked of the shuffler when betting closes: it may have come out
        # while the controller was down, so this is the deal (art. 11(5), 11(4)).
        steps += asked_first("first_hand_asked", art, game, kind)
        cards = 3
    for i in range(1, cards):
        steps.append(Deal())
        steps.append(Mark(f"dealing_{i}_of_{cards}", voided(art, game, kind)))
    steps.append(Deal())
    steps.append(Mark("decisions_open", stands(
        "player_decisions", (cmd("decide", box=1, decision="play"),), "player_decisions",
        cmd("place_bet", box=2, wager=wager, amount=10), "while the table is in player_decisions")))
    steps.append(cmd("decide", box=1, decision="play"))
    steps.append(Mark("one_decision_made", stands(
        "player_decisions", (cmd("decide", box=3, decision="fold"),),
        "settlement" if reads else "croupier_reveal",
        cmd("decide", box=1, decision="fold"), "irrevocable")))
    steps.append(cmd("decide", box=3, decision="fold"))
    steps += reveal_by_hand(reads, recipients=3)
    steps += settled_and_closed(kind)
    return steps


def reveal_by_hand(reads: bool, recipients: int) -> list[Any]:
    """A count-only device: the table waits at the reveal for each hand's cards."""
    if reads:
        return []
    steps: list[Any] = [Mark("cards_needed", stands(
        "croupier_reveal", (Enter(),), "croupier_reveal", cmd("confirm_result"),
        "while the table is in croupier_reveal"))]
    for i in range(1, recipients):
        steps.append(Enter())
        steps.append(Mark(f"cards_entered_{i}_of_{recipients}", stands(
            "croupier_reveal", (Enter(recipients - i),), "settlement", cmd("next_round"),
            "while the table is in croupier_reveal")))
    steps.append(Enter())
    return steps


def settled_and_closed(kind: str) -> list[Any]:
    mode, _ = KINDS[kind]
    steps: list[Any] = [Mark("settled", stands(
        "settlement", (cmd("confirm_result"),), "round_complete", cmd("next_round"),
        "while the table is in settlement"))]
    steps.append(cmd("confirm_result"))
    # With the shuffler the deck is checked as soon as the round ends: a check in progress.
    steps.append(Mark("round_complete", stands(
        "round_complete", (cmd("next_round"),), "shuffling|bets_open", cmd("confirm_result"),
        "while the table is in round_complete", ("deck_check",) if mode == "shuffler" else ())))
    steps.append(sup("close_table"))
    steps.append(Mark("table_closed", stands(
        "out_of_service", (sup("open_table"),), "shuffling|bets_open", cmd("next_round"),
        "while the table is in out_of_service")))
    return steps


@dataclass(frozen=True)
class Scenario:
    """A script, the interpretations the table is configured with and what a deck alarm does
    (``[integrity] alarm``)."""

    steps: tuple[Any, ...]
    interpretations: Mapping[str, str] = field(default_factory=dict)
    alarm: str = "warn"


def scenario(steps: list[Any], alarm: str = "warn", **interpretations: str) -> Scenario:
    return Scenario(tuple(steps), dict(interpretations), alarm)


def without_marks(steps: list[Any]) -> list[Any]:
    return [s for s in steps if not isinstance(s, Mark)]


def branches_three_card(game: str, kind: str) -> dict[str, Scenario]:
    """Rounds that meet an irregularity, each stopped where the table waits for someone."""
    mode, reads = KINDS[kind]
    wager = "versus_croupier" if game == "q-poker" else "ante"
    start = without_marks(opening(game, kind)) + three_card_bets(game)
    cards = 9 if mode == "shoe" else 3
    out: dict[str, Scenario] = {}
    # A jam before the deal holds the round with its bets for the supervisor.
    out["jam_before_the_deal"] = scenario(start + [
        dev("jam", where="exit"),
        Mark("jam_holds_the_bets", stands(
            "malfunction", (sup("clear_malfunction"),), "bets_open", cmd("clear_malfunction"),
            "needs the supervisor role"))])
    # A jam while dealing voids the round; the table waits for the supervisor.
    out["jam_while_dealing"] = scenario(start + [
        cmd("close_bets"), Deal(), dev("jam", where="exit"),
        Mark("jam_voided_the_round", stands(
            "malfunction", (sup("clear_malfunction"), *first_card_of_the_next_round(game, kind)),
            "dealing", cmd("confirm_result"), "while the table is in malfunction"))])
    # The croupier declares a misdeal: the round is void (art. 11(1)), bets returned.
    out["misdeal"] = scenario(start + [
        cmd("close_bets"), Deal(), Deal(), cmd("misdeal"),
        Mark("round_void", stands(
            "round_void", (cmd("next_round"), *first_card_of_the_next_round(game, kind)),
            "dealing", cmd("confirm_result"), "while the table is in round_void"))])
    # A player's card exposed while dealing: the round goes on, the card face up.
    out["player_card_exposed"] = scenario(start + [
        cmd("close_bets"), Deal(), cmd("exposed_card", recipient="box 1"),
        Mark("dealing_with_a_card_face_up", voided(MACHINE[game], game, kind))]
        + [Deal()] * (cards - 1) + [
        Mark("decisions_with_a_card_face_up", stands(
            "player_decisions", (cmd("decide", box=1, decision="play"),), "player_decisions",
            cmd("exposed_card", recipient="box 1"), "already face up"))])
    # The controller restarted earlier in the round (held by a jam), or voided a round: the
    # journal holds restarts and recoveries, which a later restart replays.
    out["restarted_before_the_deal"] = scenario(start + [
        dev("jam", where="exit"), Restart(), sup("clear_malfunction")]
        + ([dev("deck_check_result", count=52), *SHUFFLED] if mode == "shuffler" else [])
        + [cmd("close_bets")] + [Deal()] * cards + [
        Mark("decisions_after_an_earlier_restart", stands(
            "player_decisions", (cmd("decide", box=1, decision="play"),), "player_decisions",
            cmd("close_bets"), "while the table is in player_decisions"))])
    out["restarted_while_dealing"] = scenario(start + [
        cmd("close_bets"), Deal(), Restart(), sup("clear_malfunction")]
        + ready(kind) + three_card_bets(game)[:1] + [
        Mark("bets_after_a_round_voided_by_a_restart", stands(
            "bets_open", (cmd("close_bets"),), "bets_closed", cmd("confirm_result"),
            "while the table is in bets_open"))])
    if game == "fortune-3-card-poker":
        # 78/2008 art. 11(2), F6: the croupier's card exposed after the deal, before the
        # decisions, is set aside face up and the croupier receives the next card.
        out["croupier_card_set_aside"] = scenario(start + [cmd("close_bets")]
                                                  + [Deal()] * cards + [
            cmd("exposed_card", recipient="croupier"),
            Mark("croupier_owed_a_card", voided(MACHINE[game], game, kind)), Deal(),
            Mark("decisions_after_the_set_aside", stands(
                "player_decisions", (cmd("decide", box=1, decision="play"),), "player_decisions",
                cmd("close_bets"), "while the table is in player_decisions"))])
    out.update(common_branches(game, kind, start, [cmd("close_bets"), Deal(), cmd("misdeal")]))
    if reads:
        # A card dealt twice: the rules cannot settle the round; the supervisor voids it.
        out["settlement_refused"] = scenario(start + [cmd("close_bets")] + [Deal()] * (cards - 1)
                                             + [Deal(duplicate=True),
                                                cmd("decide", box=1, decision="play"),
                                                cmd("decide", box=3, decision="play"),
                                                Mark("unsettled_round_held", stands(
                                                    "malfunction",
                                                    (sup("void_round", reason="a card twice"),),
                                                    "round_void", sup("clear_malfunction"),
                                                    "could not be settled"))])
    if mode == "shoe":
        # Q5 / F7 shoe_malfunction=continue: the shoe's failure while dealing keeps the round;
        # the croupier goes on once the supervisor has looked.
        out["shoe_failure_continue"] = scenario(start + [
            cmd("close_bets"), Deal(), Deal(), dev("malfunction", code=3, text="motor"),
            Mark("failure_held_for_the_supervisor", stands(
                "malfunction", (sup("clear_malfunction"), Deal()), "dealing",
                cmd("decide", box=1, decision="play"), "while the table is in malfunction"))],
            shoe_malfunction="continue")
        out["restart_while_dealing_continue"] = scenario(start + [
            cmd("close_bets"), Deal(), Deal(),
            Mark("dealing_under_continue", held(
                "malfunction", MACHINE[game], (sup("clear_malfunction"), Deal()), "dealing",
                cmd("place_bet", box=2, wager=wager, amount=10),
                "while the table is in malfunction"))],
            shoe_malfunction="continue")
    else:
        # A misdeal while the next hand is on its way out of the shuffler: the round is void.
        out["misdeal_with_a_hand_asked"] = scenario(start + [
            cmd("close_bets"), Deal(), cmd("misdeal"),
            Mark("round_void_a_hand_asked", stands(
                "round_void", (cmd("next_round"), *first_card_of_the_next_round(game, kind)),
                "dealing", cmd("confirm_result"), "while the table is in round_void"))])
        out.update(refused_busy(cmd("place_bet", box=2, wager=wager, amount=10), start,
                                "dispense_hand"))
        # A shuffler put right before the deal shuffles the round's deck again, and no hand is
        # asked of it before that shuffle is done; betting may close meanwhile. No card is out
        # and none was asked for.
        out["bets_closed_awaiting_the_shuffle"] = scenario(start + [
            dev("jam", where="exit"), sup("clear_malfunction"), cmd("close_bets"),
            Mark("bets_closed_no_hand_asked", stands(
                "bets_closed", (dev("deck_check_result", count=52), *SHUFFLED, Deal()),
                "dealing",
                cmd("place_bet", box=2, wager=wager, amount=10),
                "while the table is in bets_closed", ("deck_check",)))])
    return out


def common_branches(game: str, kind: str, start: list[Any], void: list[Any]
                    ) -> dict[str, Scenario]:
    """Every game: a door left open before the deal, the supervisor's key turned before a jam,
    and the dealing device switched once a round is over. ``start`` opens the table and takes
    the bets, ``void`` ends the round by a misdeal."""
    mode, _ = KINDS[kind]
    other = "shoe" if mode == "shuffler" else "shuffler"
    out: dict[str, Scenario] = {}
    # A door opened before the deal: the round is held; the door must close before the clear.
    out["door_open_before_the_deal"] = scenario(start + [
        dev("door_opened"),
        Mark("door_open_holds_the_round", stands(
            "malfunction", (dev("door_closed"), sup("clear_malfunction")), "bets_open",
            sup("clear_malfunction"), "door_open"))])
    # The supervisor's key is on: the panel's confirm button clears the jam as his.
    out["key_on_then_a_jam"] = scenario(start + [
        dev("key_switched", device="panel", on=True), dev("jam", where="exit"),
        Mark("jam_with_the_key_on", stands(
            "malfunction", (dev("button_pressed", device="panel", button="confirm"),),
            "bets_open", cmd("clear_malfunction"), "needs the supervisor role"))])
    # The key turned on in a round before the last one opened (the replay starts from that
    # round's snapshot): the panel's confirm button still acts as the supervisor's.
    key_on = dev("key_switched", device="panel", on=True)
    out["key_on_before_the_round"] = scenario(start + [key_on] + void + [cmd("next_round")]
                                              + ready(kind) + [
        Mark("key_on_since_an_earlier_round", stands(
            "bets_open", (dev("jam", where="exit"),
                          dev("button_pressed", device="panel", button="confirm")),
            "bets_open", sup("clear_malfunction"), "nothing to clear"))])
    if mode == "shuffler":
        # The deck check after the round finds a card missing; the table is configured to stop
        # on a deck alarm: no round opens until the supervisor has checked the deck.
        out["deck_alarm_stops_the_table"] = scenario(start + void + [
            dev("deck_check_result", count=51),
            Mark("deck_alarm_pending", stands(
                "round_void", (sup("clear_integrity", supervisor="S. Lam"), cmd("next_round")),
                "shuffling|bets_open", cmd("next_round"), "integrity"))], alarm="stop")
    # The round void, the supervisor switches the dealing device for the next round, which
    # opens once that device has linked to the restarted controller.
    out["mode_switched"] = scenario(start + void + [
        sup("switch_mode", mode=other),
        Mark("other_device_for_the_next_round", stands(
            "round_void", (dev("link_up", device=other), cmd("next_round")), "shuffling",
            sup("switch_mode", mode=other), f"already deals by {other}"))])
    return out


def refused_busy(illegal: Cmd, start: list[Any], action: str) -> dict[str, Scenario]:
    """The shuffler refuses the first hand (or card) as busy: nothing came out of it, and none
    is on its way; its status says it is free again and the hand is asked again."""
    return {"first_hand_refused_busy": scenario(start + [
        cmd("close_bets"), dev("command_refused", action=action, reason="busy"),
        Mark("bets_closed_nothing_on_its_way", stands(
            "bets_closed", (dev("status", state="idle"), Deal()), "dealing", illegal,
            "while the table is in bets_closed"))])}


NOT_TO_ACT = "<a seat not to act>"
TO_ACT = "<the seat to act>"


def round_holdem(game: str, kind: str) -> list[Any]:
    """Texas Hold'em: a hand from the seating through every street to the table closed."""
    mode, reads = KINDS[kind]
    art = MACHINE[game]
    out_of_turn = cmd("holdem_action", seat=NOT_TO_ACT, action="call")
    steps = opening(game, kind)
    steps.append(Mark("bets_open_empty", stands(
        "bets_open", (seating(),), "bets_open", cmd("close_bets"), "at least two players")))
    steps.append(seating())
    steps.append(Mark("players_seated", stands(
        "bets_open", (cmd("close_bets"),), "bets_closed",
        cmd("holdem_action", seat=2, action="call"), "while the table is in bets_open")))
    steps.append(cmd("close_bets"))
    if mode == "shoe":
        steps.append(Mark("blinds_posted", stands(
            "bets_closed", (Deal(),), "dealing", seating(), "while the table is in bets_closed")))
    else:
        steps += asked_first("blinds_posted_first_card_asked", art, game, kind)
    for i in range(1, 6):
        steps.append(Deal())
        steps.append(Mark(f"hole_card_{i}_of_6", voided(art, game, kind)))
    steps.append(Deal())
    # Each street is dealt card by card whatever the device (11/2008 art. 6(1)): the burn card
    # and the board cards after each betting round.
    for street, after, cards in (("preflop", "flop", 4), ("flop", "turn", 2),
                                 ("turn", "river", 2), ("river", None, 0)):
        steps.append(Mark(f"{street}_betting", stands(
            "player_decisions", (Act(1),), "player_decisions", out_of_turn, "out of turn")))
        steps.append(Act(1))
        steps.append(Mark(f"{street}_betting_one_acted", stands(
            "player_decisions", (Act(),), "dealing" if after else
            "settlement" if reads else "croupier_reveal", out_of_turn, "out of turn")))
        steps.append(Act())
        if after is None:
            break
        # The betting is over and the next street is owed, its burn card first (with the
        # shuffler, asked of it): the deal goes on, so a restart now is one while dealing.
        steps.append(Mark(f"{after}_owed", voided(art, game, kind)))
        for i in range(1, cards):
            steps.append(Deal())
            steps.append(Mark(f"{after}_{i}_of_{cards}_out", voided(art, game, kind)))
        steps.append(Deal())
    steps += reveal_by_hand(reads, recipients=4)
    steps += settled_and_closed(kind)
    return steps


def seating() -> Cmd:
    return cmd("seat_players", seats=[2, 4, 6], stacks=[200, 200, 200])


def branches_holdem(game: str, kind: str) -> dict[str, Scenario]:
    mode, reads = KINDS[kind]
    start = without_marks(opening(game, kind)) + [seating()]
    out: dict[str, Scenario] = {}
    out["jam_before_the_deal"] = scenario(start + [
        dev("jam", where="exit"),
        Mark("jam_holds_the_seating", stands(
            "malfunction", (sup("clear_malfunction"),), "bets_open", cmd("clear_malfunction"),
            "needs the supervisor role"))])
    out["misdeal"] = scenario(start + [
        cmd("close_bets"), Deal(), Deal(), cmd("misdeal"),
        Mark("round_void", stands(
            "round_void", (cmd("next_round"), *first_card_of_the_next_round(game, kind)),
            "dealing", cmd("confirm_result"), "while the table is in round_void"))])
    # H11 machine_failure=rectify: the croupier finishes the deal by hand once the supervisor
    # has looked; a restart while dealing is held, not voided.
    # At the clear the card asked before may still be on its way: the shuffler's status says
    # whether it is (then it is the card asked) or not (then it is asked again).
    call = cmd("holdem_action", seat=2, action="call")
    marks = [Mark("dealing_under_rectify", held(
        "malfunction", "11/2008 art. 9(1)", (sup("clear_malfunction"), *asked_again(mode),
                                             Deal()), "dealing", call,
        "while the table is in malfunction"))]
    if mode == "shuffler":
        marks.append(Mark("dealing_under_rectify_comes_out_after_the_clear", held(
            "malfunction", "11/2008 art. 9(1)", (sup("clear_malfunction"), DISPENSING,
                                                 Late(), Deal()), "dealing", call,
            "while the table is in malfunction")))
    out["restart_while_dealing_rectify"] = scenario(start + [
        cmd("close_bets"), Deal(), Deal(), *marks], machine_failure="rectify")
    out["jam_while_dealing_rectify"] = scenario(start + [
        cmd("close_bets"), Deal(), Deal(), dev("jam", where="exit"),
        Mark("failure_held_for_the_supervisor", stands(
            "malfunction", (sup("clear_malfunction"), *asked_again(mode), Deal()), "dealing",
            call, "while the table is in malfunction"))],
        machine_failure="rectify")
    # A hole card exposed while the hole cards are dealt is set aside and replaced by the next
    # card (art. 9(1)); the set-aside card stays face up through a restart.
    out["hole_card_exposed"] = scenario(start + [
        cmd("close_bets"), Deal(2), cmd("exposed_card", recipient="box 6"),
        Mark("hole_cards_with_one_set_aside", voided(MACHINE[game], game, kind)), Deal(5),
        Mark("preflop_with_a_card_set_aside", stands(
            "player_decisions", (Act(),), "dealing",
            cmd("holdem_action", seat=NOT_TO_ACT, action="call"), "out of turn"))])
    # Every player all in before the flop: the board is dealt with no betting between streets,
    # and a void returns what each put in.
    out["all_in"] = scenario(start + [
        cmd("close_bets"), Deal(6), cmd("holdem_action", seat=TO_ACT, action="allin"), Act(),
        Mark("all_in_board_owed", voided(MACHINE[game], game, kind)), Deal(4),
        Mark("all_in_turn_owed", voided(MACHINE[game], game, kind)), Deal(4)]
        + [Enter()] * (0 if reads else 4) + [
        Mark("all_in_settled", stands(
            "settlement", (cmd("confirm_result"),), "round_complete", seating(),
            "while the table is in settlement"))])
    # Two players fold: the hand is won without a showdown, and no hole card is ever shown.
    fold = cmd("holdem_action", seat=TO_ACT, action="fold")
    out["won_uncontested"] = scenario(start + [
        cmd("close_bets"), Deal(6), fold, fold,
        Mark("uncontested_settled", stands(
            "settlement", (cmd("confirm_result"),), "round_complete", fold,
            "while the table is in settlement"))])
    out.update(common_branches(game, kind, start, [cmd("close_bets"), Deal(), cmd("misdeal")]))
    if mode == "shuffler":
        out.update(refused_busy(seating(), start, "dispense_card"))
        out["bets_closed_awaiting_the_shuffle"] = scenario(start + [
            dev("jam", where="exit"), sup("clear_malfunction"), cmd("close_bets"),
            Mark("blinds_posted_no_card_asked", stands(
                "bets_closed", (dev("deck_check_result", count=52), *SHUFFLED, Deal()),
                "dealing",
                seating(), "while the table is in bets_closed", ("deck_check",)))])
        # Between streets the board waits in the shuffler; the controller's restart is not the
        # shuffler's, which keeps its cards and their order (H11): the betting goes on.
        out["link_lost_between_streets"] = scenario(start + [
            cmd("close_bets"), Deal(6), dev("link_lost", reason="unplugged"),
            Mark("betting_with_the_link_lost", stands(
                "player_decisions", (dev("link_up"), Act()), "dealing",
                cmd("holdem_action", seat=NOT_TO_ACT, action="call"), "out of turn"))])
    return out


def pan9_first_bets() -> list[Cmd]:
    return [sup("set_banker", seat=1, capital=1000),
            cmd("co_bank", player="li", seat=4, capital=300),
            cmd("co_bank", house=True, capital=500),
            cmd("place_bet", box=2, wager="seat", amount=100, player="ana"),
            cmd("place_bet", box=3, wager="seat", amount=50, player="bo"),
            cmd("declare_adjust", points=2)]


def round_pan9(game: str, kind: str) -> list[Any]:
    """Super Pan 9: the bank named, co-banks, bets, points declared, the shake, a reshake, the
    dice read, each card out, the reveal and the settlement."""
    mode, reads = KINDS[kind]
    art = MACHINE[game]
    banker, li, house, ana, bo, adjust = pan9_first_bets()
    steps = opening(game, kind)
    steps.append(Mark("bets_open_empty", stands(
        "bets_open", (banker,), "bets_open", cmd("shake"), "name the banker")))
    steps.append(banker)
    steps.append(Mark("banker_named", stands(
        "bets_open", (li,), "bets_open", cmd("shake"), "no bet is on the layout")))
    steps += [li, house]
    steps.append(Mark("co_banks_placed", stands(
        "bets_open", (cmd("remove_co_bank", house=True),), "bets_open",
        sup("set_banker", seat=2, capital=1000), "co-bank")))
    steps += [ana, bo]
    steps.append(Mark("bets_placed", stands(
        "bets_open", (adjust,), "bets_open",
        cmd("place_bet", box=1, wager="seat", amount=10), "banker's seat")))
    steps.append(adjust)
    steps.append(Mark("points_declared", stands(
        "bets_open", (cmd("shake"),), "dice_shaking", li, "already co-banks")))
    steps.append(cmd("close_bets"))
    steps.append(Mark("bets_closed", stands(
        "bets_closed", (cmd("shake"),), "dice_shaking", ana, "while the table is in bets_closed")))
    steps.append(cmd("shake"))
    # A restart during the shake: the agitator's throw is lost to the table (P4): the banker
    # shakes again once the supervisor has looked, under the points he declared (art. 2(3)).
    reshake = held("malfunction", P4, (
        sup("clear_malfunction"),
        Refused(cmd("declare_adjust", points=1), "this round's dice were shaken"),
        cmd("shake")), "dice_shaking", cmd("shake"), "while the table is in malfunction")
    steps.append(Mark("shaken", reshake))
    steps.append(dev("shake_started", device="dice"))
    steps.append(dev("die_not_flat", device="dice", die=2))
    steps.append(Mark("reshake_owed", reshake))
    steps.append(dev("shake_started", device="dice"))
    steps.append(dev("dice_result", device="dice", dice=(1, 1, 1, 2)))
    # The dice are read: with the shoe a card drawn while the controller was down is still
    # on its way (P3, docs/interpretations.md); with the shuffler the first hand was asked.
    if mode == "shoe":
        steps.append(Mark("dice_read", voided(art, game, kind)))
    else:
        steps += asked_first("dice_read_first_hand_asked", art, game, kind)
    cards = 6 if mode == "shoe" else 3
    for i in range(1, cards):
        steps.append(Deal())
        steps.append(Mark(f"dealing_{i}_of_{cards}", voided(art, game, kind)))
    steps.append(Deal())
    steps += reveal_by_hand(reads, recipients=3)
    steps += settled_and_closed(kind)
    return steps


def branches_pan9(game: str, kind: str) -> dict[str, Scenario]:
    mode, reads = KINDS[kind]
    start = without_marks(opening(game, kind)) + pan9_first_bets()
    cards = 6 if mode == "shoe" else 3
    dice = dev("dice_result", device="dice", dice=(1, 1, 1, 2))
    out: dict[str, Scenario] = {}
    out["jam_before_the_shake"] = scenario(start + [
        dev("jam", where="exit"),
        Mark("jam_holds_the_bank_and_the_bets", stands(
            "malfunction", (sup("clear_malfunction"),), "bets_open", cmd("clear_malfunction"),
            "needs the supervisor role"))])
    out["agitator_failed_during_the_shake"] = scenario(start + [
        cmd("shake"), dev("malfunction", device="dice", code=4, text="motor"),
        Mark("agitator_failure_held", stands(
            "malfunction", (sup("clear_malfunction"), cmd("shake")), "dice_shaking",
            cmd("declare_adjust", points=1), "while the table is in malfunction"))])
    # The controller restarted during the shake (the round held, P4) and the round was then
    # played out: the journal holds the restart; the bank's turn counts the round.
    out["restarted_during_the_shake"] = scenario(start + [
        cmd("shake"), Restart(), sup("clear_malfunction"), cmd("shake"), dice]
        + [Deal()] * cards + [Enter()] * (0 if reads else 3) + [
        Mark("settled_after_an_earlier_restart", stands(
            "settlement", (cmd("confirm_result"),), "round_complete", cmd("shake"),
            "while the table is in settlement"))])
    # P4 dice_malfunction=round_void: a restart during the shake voids the round instead.
    out["restart_during_the_shake_p4_round_void"] = scenario(start + [
        cmd("shake"), Mark("shaken_under_round_void", voided(P4, game, kind))],
        dice_malfunction="round_void")
    out["misdeal"] = scenario(start + [
        cmd("shake"), dice, Deal(), cmd("misdeal"),
        Mark("round_void", stands(
            "round_void", (cmd("next_round"), *first_card_of_the_next_round(game, kind)),
            "dealing", cmd("confirm_result"), "while the table is in round_void"))])
    p3 = "261/96/M interpretation P3 (machine_failure)"
    marks = [Mark("dealing_under_rectify", held(
        "malfunction", p3, (sup("clear_malfunction"), *asked_again(mode), Deal()), "dealing",
        cmd("shake"), "while the table is in malfunction"))]
    if mode == "shuffler":
        # The second of three hands, asked before the restart, comes after the clear; the
        # third (the last) is asked once it is in, and nothing more comes out.
        marks.append(Mark("dealing_under_rectify_comes_out_after_the_clear", held(
            "malfunction", p3, (sup("clear_malfunction"), DISPENSING, Late(), Deal()),
            "settlement|croupier_reveal", cmd("shake"), "while the table is in malfunction")))
    out["restart_while_dealing_rectify"] = scenario(start + [
        cmd("shake"), dice, Deal(), *marks], machine_failure="rectify")
    out["jam_while_dealing_rectify"] = scenario(start + [
        cmd("shake"), dice, Deal(), dev("jam", where="exit"),
        Mark("failure_held_for_the_supervisor", stands(
            "malfunction", (sup("clear_malfunction"), *asked_again(mode), Deal()), "dealing",
            cmd("shake"), "while the table is in malfunction"))],
        machine_failure="rectify")
    out.update(common_branches(game, kind, start, [cmd("shake"), dice, Deal(), cmd("misdeal")]))
    if reads:
        out["settlement_refused"] = scenario(start + [
            cmd("shake"), dice] + [Deal()] * (cards - 1) + [Deal(duplicate=True),
            Mark("unsettled_round_held", stands(
                "malfunction", (sup("void_round", reason="a card twice"),), "round_void",
                sup("clear_malfunction"), "could not be settled"))])
    if mode == "shuffler":
        # The shuffler jammed before the shake and was put right: its deck is shuffled again,
        # and the dice are read before that shuffle is done. No hand is out or asked: a
        # failure before the first card (P3), held for the supervisor with the same dice.
        out["dice_read_before_the_shuffle"] = scenario(start + [
            dev("jam", where="exit"), sup("clear_malfunction"), cmd("shake"), dice,
            Mark("dice_read_no_hand_asked", held(
                "malfunction", "261/96/M interpretation P3 (machine_failure)",
                (sup("clear_malfunction"), dev("deck_check_result", count=52), *SHUFFLED,
                 Deal()), "dealing", cmd("shake"),
                "while the table is in malfunction", ("deck_check",)))])
    # The bank's turn (art. 5(1)): two settled rounds banked by seat 1, then a restart before
    # the third: the turn comes back from the round's snapshot, and the seat may not bank a
    # third round unless every player agrees.
    play = [cmd("shake"), dice] + [Deal()] * cards + [Enter()] * (0 if reads else 3) \
        + [cmd("confirm_result"), cmd("next_round")]
    again = [sup("set_banker", seat=1, capital=5000),
             cmd("place_bet", box=2, wager="seat", amount=100, player="ana"),
             cmd("place_bet", box=3, wager="seat", amount=50, player="bo")]
    out["bank_turn"] = scenario(start + play + ready(kind) + again + play + ready(kind) + [
        Mark("third_round_of_the_bank", stands(
            "bets_open", (sup("set_banker", seat=1, capital=5000, all_agree=True),), "bets_open",
            sup("set_banker", seat=1, capital=5000), "all_agree"))])
    return out


# --- the matrix ---------------------------------------------------------------------------------

def scenarios(game: str, kind: str) -> dict[str, Scenario]:
    if game == "texas-holdem":
        main, branches = round_holdem, branches_holdem
    elif game == "super-pan-9":
        main, branches = round_pan9, branches_pan9
    else:
        main, branches = round_three_card, branches_three_card
    return {"round": scenario(main(game, kind)), **branches(game, kind)}


SCENARIOS = {(g, k): scenarios(g, k) for g in GAMES for k in KINDS}
CASES = [pytest.param(g, k, name, step.label, id=f"{g}-{k}-{name}-{step.label}")
         for (g, k), named in SCENARIOS.items() for name, sc in named.items()
         for step in sc.steps if isinstance(step, Mark)]


def make_table(game: str, kind: str, sc: Scenario) -> Table:
    """The table as the service builds it: its devices, its interpretations and the deck
    integrity monitor every table has."""
    mode, _ = KINDS[kind]
    holdem = {"small_blind": 1, "big_blind": 2} if game == "texas-holdem" else None
    return Table("T1", get_game(game), mode, layout_boxes=LAYOUT[game], devices=DEVICES,
                 interpretations=dict(sc.interpretations), holdem=holdem,
                 integrity=IntegrityMonitor(IntegrityConfig(
                     deck_per_round=game == "super-pan-9")), integrity_action=sc.alarm)


def devices_of(game: str, kind: str) -> list[str]:
    mode, _ = KINDS[kind]
    return [mode] + (["dice"] if game == "super-pan-9" else [])


# --- turning the script's steps into inputs, against the table as it stands --------------------

@dataclass
class Dealer:
    """What the croupier and the devices know: the deck's next card, what the shuffler was
    asked and has not yet put out, and the cards each hand was given (a count-only device
    does not say them; they are entered at the reveal)."""

    kind: str
    position: int = 0
    round_id: int | None = None
    dealt: list[str] = field(default_factory=list)
    given: dict[str, list[str]] = field(default_factory=dict)
    asked: list[int] = field(default_factory=list)

    def copy(self) -> "Dealer":
        return dataclasses.replace(self, dealt=list(self.dealt), asked=list(self.asked),
                                   given={k: list(v) for k, v in self.given.items()})

    def note(self, commands: list[dict[str, Any]]) -> None:
        """The device commands the table sent: a hand or a card asked of the shuffler."""
        for c in commands:
            if c["action"] == "dispense_hand":
                self.asked.append(int(c["n"]))
            elif c["action"] == "dispense_card":
                self.asked.append(1)

    def next_card(self, table: Table, duplicate: bool) -> str:
        rid = table.round.round_id if table.round else None
        if rid != self.round_id:
            self.round_id, self.dealt, self.given = rid, [], {}
        if duplicate:
            return self.dealt[0]
        card = DECK[self.position % len(DECK)]
        self.position += 1
        return card


def device_record(step: Dev, game: str, kind: str) -> dict[str, Any]:
    mode, reads = KINDS[kind]
    device = mode if step.device == "dealer" else step.device
    doc: dict[str, Any] = {"kind": step.kind, "device": device, "ts": 0.0, **step.args}
    if step.kind in ("link_up", "link_restored"):
        cls = DEVICES[device]
        doc["identity"] = dataclasses.asdict(identity(cls, reads and cls in ("shoe", "shuffler")))
    return {"source": "device", "event": ev.event_from_json(doc).to_json()}


def command_record(step: Cmd, table: Table) -> dict[str, Any]:
    args = dict(step.args)
    if args.get("seat") == NOT_TO_ACT:
        h = table._holdem
        args["seat"] = next(s for s in h.seats if s != h.to_act)
    elif args.get("seat") == TO_ACT:
        h = table._holdem
        args["seat"] = h.to_act if h.to_act is not None else h.seats[0]
    return {"source": "command", "name": step.name, "role": step.role, "args": args}


def inputs(step: Any, table: Table, dealer: Dealer, game: str, kind: str):
    """The input records of one step, one at a time: each is applied before the next is
    worked out from the table."""
    mode, reads = KINDS[kind]
    if isinstance(step, Cmd):
        yield command_record(step, table)
    elif isinstance(step, Dev):
        if step.kind == "status_answer":
            step = Dev(step.kind, step.device, {**step.args, "ask": table._status_ask})
        yield device_record(step, game, kind)
    elif isinstance(step, Deal):
        for _ in range(step.n):
            if mode == "shoe":
                cards = [dealer.next_card(table, step.duplicate)]
                doc = {"kind": "card_drawn", "device": "shoe", "ts": 0.0,
                       "card": cards[0] if reads else None}
            else:
                # The shuffler puts out only what it was asked, in the order asked.
                assert dealer.asked, f"nothing was asked of the shuffler in {table.state}"
                n = dealer.asked.pop(0)
                assert n == table.tracker.owed_in_step(), (n, table.tracker.owed_in_step())
                cards = [dealer.next_card(table, step.duplicate and i == n - 1)
                         for i in range(n)]
                shown = cards if reads else [None] * n
                doc = ({"kind": "card_dispensed", "device": "shuffler", "ts": 0.0,
                        "card": shown[0]} if n == 1 else
                       {"kind": "hand_dispensed", "device": "shuffler", "ts": 0.0,
                        "cards": shown})
            before = table.vault.slots()
            yield {"source": "device", "event": doc}
            dealer.dealt += cards
            for i, card in zip(range(before, table.vault.slots()), cards):
                dealer.given.setdefault(str(table.vault.slot_recipient(i)), []).append(card)
    elif isinstance(step, Late):
        assert mode == "shuffler" and dealer.asked
        n = dealer.asked.pop(0)
        cards = [dealer.next_card(table, False) for _ in range(n)]
        shown = cards if reads else [None] * n
        yield {"source": "device", "event": (
            {"kind": "card_dispensed", "device": "shuffler", "ts": 0.0, "card": shown[0]}
            if n == 1 else
            {"kind": "hand_dispensed", "device": "shuffler", "ts": 0.0, "cards": shown})}
    elif isinstance(step, Act):
        h = table._holdem
        street, done = h.street_index, 0
        while table.state == "player_decisions" and h.to_act is not None \
                and h.street_index == street and (step.n == 0 or done < step.n):
            to_call = any(a.kind == "call" for a in h.legal_actions())
            yield command_record(cmd("holdem_action", seat=h.to_act,
                                     action="call" if to_call else "check"), table)
            done += 1
    elif isinstance(step, Enter):
        for _ in range(step.n):
            rec = table._unknown_hands()[0]
            yield command_record(cmd("enter_cards", recipient=rec,
                                     cards=" ".join(dealer.given[rec])), table)
    else:
        raise AssertionError(f"unknown step {step!r}")


def feed(runner: TableRunner, record: Mapping[str, Any]) -> None:
    """One input through the runner, as the service gives it."""
    if record["source"] == "device":
        runner.device(ev.event_from_json(dict(record["event"])))
    else:
        runner.command(record["name"], role=record["role"], **record["args"])


# --- what a table holds -------------------------------------------------------------------------

def plain(value: Any) -> Any:
    """Any of the table's own data as plain JSON-like values, to compare two tables."""
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, Card):
        return str(value)
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return sorted(([plain(k), plain(v)] for k, v in value.items()), key=repr)
    if isinstance(value, (set, frozenset)):
        return sorted((plain(v) for v in value), key=repr)
    if isinstance(value, (list, tuple, deque)):
        return [plain(v) for v in value]
    if hasattr(value, "__dict__"):
        attrs = vars(value)
    else:
        attrs = {s: getattr(value, s) for c in type(value).__mro__
                 for s in getattr(c, "__slots__", ()) if hasattr(value, s)}
    return {type(value).__name__: {k: plain(v) for k, v in attrs.items() if not callable(v)}}


# The table's configuration and its outputs (taken by the runner as they come) are not its state.
NOT_STATE = {"machine", "outbox", "commands", "private_records", "integrity", "game", "flow"}


def fingerprint(table: Table, monitor: bool = True) -> dict[str, Any]:
    """Everything the table holds, its integrity monitor's too (unless ``monitor`` is false),
    and its public view."""
    state = {k: plain(v) for k, v in vars(table).items() if k not in NOT_STATE and not callable(v)}
    # A device with no condition left is a device with none (the snapshot keeps no empty set).
    state["conditions"] = plain({d: c for d, c in table.conditions.items() if c})
    state["view"] = table.public_view()
    if not monitor:
        return state
    state["monitor"] = plain(table.integrity)["IntegrityMonitor"]
    return state


# Kept through a restart, whatever it rules: what was bet, dealt, ruled and banked.
KEPT = ("mode", "round_no", "vault", "conditions", "identities", "_stacks", "_last_button",
        "_bank_turn", "_bank_bettors", "_supervisor_key", "_shaken")
KEPT_ROUND = ("round_id", "bets", "decisions", "actions", "void_boxes", "dice", "adjust",
              "banker", "capital", "co_bankers", "button", "seats", "settlement")


CARD_WORD = re.compile(r"(?<![A-Za-z0-9])(?:10|[2-9TJQKA])[shcd](?![A-Za-z0-9])")


def face_down(table: Table) -> set[str]:
    """The cards the table holds that are still face down."""
    return {str(s.card) for s in table.vault._slots if s.card is not None and not s.face_up}


# --- running a script once, the journal taken at each mark ------------------------------------

@dataclass
class Taken:
    """The moment of a mark: the inputs so far, the journal as a crash then leaves it, the
    table as it then was, and what the croupier and the devices knew."""

    expect: Expect
    inputs: int
    journal: Path
    fingerprint: dict[str, Any]
    dealer: Dealer


@dataclass
class Run:
    records: list[dict[str, Any]]
    marks: dict[str, Taken]


_RUNS: dict[tuple[str, str, str], Run] = {}


def take_journal(path: Path, into: Path) -> Path:
    """The journal as a crash at this moment leaves it: every committed record (copied through
    SQLite, which takes the write-ahead log's committed frames with the rest)."""
    into.mkdir(parents=True)
    copy = into / path.name
    src = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
    dst = sqlite3.connect(copy)
    try:
        src.backup(dst)
    finally:
        src.close()
        dst.close()
    return copy


def run_script(game: str, kind: str, name: str, where: Path) -> Run:
    key = (game, kind, name)
    if key in _RUNS:
        return _RUNS[key]
    sc = SCENARIOS[(game, kind)][name]
    path = where / "journal.db"
    journal = Journal.open(path, "T1")
    table = make_table(game, kind, sc)
    dealer = Dealer(kind)

    def send(c: Any) -> None:
        dealer.note([c.to_json()])
    runner = TableRunner(table, journal, send=send)
    records: list[dict[str, Any]] = []
    marks: dict[str, Taken] = {}
    links = [Dev("link_up", d) for d in devices_of(game, kind)]
    for step in links + list(sc.steps):
        if isinstance(step, Mark):
            assert step.label not in marks, step.label
            marks[step.label] = Taken(step.expect, len(records),
                                      take_journal(path, where / step.label),
                                      fingerprint(table), dealer.copy())
            continue
        if isinstance(step, Restart):
            journal.close()
            journal = Journal.open(path, "T1")
            table = make_table(game, kind, sc)
            runner = TableRunner(table, journal, send=send)
            dealer.asked.clear()        # what was asked before it never left
            runner.recover()
            records.append({"source": "restart"})
            for link in links:
                record = device_record(link, game, kind)
                feed(runner, record)
                records.append(record)
            continue
        if isinstance(step, Refused):
            record = command_record(step.command, table)
            with pytest.raises(TablectlError, match=step.match):
                feed(runner, record)
            records.append({**record, "refused": True})
            continue
        for record in inputs(step, table, dealer, game, kind):
            try:
                feed(runner, record)
            except TablectlError as exc:
                raise AssertionError(f"the script of {key} at {step}: {exc}") from None
            records.append(record)
    journal.close()
    _RUNS[key] = Run(records, marks)
    return _RUNS[key]


def memory_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the matrix keeps its journals: in memory where the system has a tmpfs at
    /dev/shm, so that the fsync of each of thousands of commits costs nothing (what is tested is
    what the journal holds, not the disk; that is tests/test_journal_crash.py's), else the
    test's temporary directory."""
    shm = Path("/dev/shm")
    if shm.is_dir() and os.access(shm, os.W_OK | os.X_OK):
        return Path(tempfile.mkdtemp(prefix="tablectl-restart-matrix-", dir=shm))
    return tmp_path_factory.mktemp("restart-matrix")


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    where = memory_dir(tmp_path_factory)
    yield where
    shutil.rmtree(where, ignore_errors=True)
    _RUNS.clear()


@pytest.fixture
def scripts(workdir):
    def get(game: str, kind: str, name: str) -> Run:
        where = workdir / f"{game}-{kind}-{name}"
        if (game, kind, name) not in _RUNS:
            where.mkdir()
        return run_script(game, kind, name, where)
    return get


# --- the case -----------------------------------------------------------------------------------

def applied(table: Table, record: Mapping[str, Any]) -> tuple[list[dict], list[dict]]:
    """Apply one input to the table that did not restart; what it published and asked."""
    table.outbox, table.commands, table.private_records = [], [], []
    table.apply(record)
    return [e.to_json() for e in table.outbox], [c.to_json() for c in table.commands]


class Rebuilt:
    """The restarted service's side: the journal reopened, a new table recovered from it."""

    def __init__(self, path: Path, game: str, kind: str, sc: Scenario) -> None:
        self.journal = Journal.open(path, "T1")
        self.table = make_table(game, kind, sc)
        self.published: list[dict[str, Any]] = []
        self.sent: list[dict[str, Any]] = []
        self.runner = TableRunner(self.table, self.journal,
                                  publish=lambda e: self.published.append(e.to_json()),
                                  send=lambda c: self.sent.append(c.to_json()))

    def recover(self) -> tuple[dict[str, Any], int]:
        head = self.journal.head()[0]
        return self.runner.recover(), head

    def take(self) -> tuple[list[dict], list[dict]]:
        out = (self.published, self.sent)
        self.published, self.sent = [], []
        return out


def crashed_table(run: Run, at: Taken, game: str, kind: str, sc: Scenario) -> Table:
    """The table that crashed, kept in memory: the same inputs (the machine is deterministic),
    without the journal. It stands for what the table would have done had it not restarted."""
    table = make_table(game, kind, sc)
    for record in run.records[:at.inputs]:
        if record.get("refused"):
            with pytest.raises(TablectlError):
                table.apply(record)
        else:
            table.apply(record)
    assert fingerprint(table, monitor=False) == {k: v for k, v in at.fingerprint.items()
                                                  if k != "monitor"}
    return table


def check_nothing_lost(crashed: dict[str, Any], after: dict[str, Any]) -> None:
    for key in KEPT:
        assert after[key] == crashed[key], key
    if crashed["round"] is not None:
        for key in KEPT_ROUND:
            assert after["round"][key] == crashed["round"][key], key
        assert after["round"]["rulings"][:len(crashed["round"]["rulings"])] == \
            crashed["round"]["rulings"]


def check_ruled(game: str, expect: Expect, t: Table, events: list[dict],
                crashed: dict[str, Any]) -> None:
    """The round ends as the regulation says: void with every bet returned, held, or going
    on as it was."""
    assert t.state == expect.state, (t.state, [e["kind"] for e in events])
    assert events[0]["kind"] == "controller_restarted"
    rulings = [e["article"] for e in events if e["kind"] == "ruling"]
    if not expect.void:
        assert rulings == ([expect.ruling] if expect.ruling else [])
        if crashed["round"] is not None:
            assert plain(t.round.void if t.round else None) == crashed["round"]["void"]
        return
    assert rulings == [expect.void]
    assert t.round.void is not None and t.round.void["article"] == expect.void
    voids = [e for e in events if e["kind"] == "round_void"]
    assert len(voids) == 1
    returned = {(b["box"], b["wager"], b["player"]): b["amount"] for b in voids[0]["returned"]}
    if game == "texas-holdem":
        # the chips each seat put in the hand's pot, the blinds included (11/2008 art. 9(2))
        assert returned == {(s, "pot", None): c for s, c in t._holdem.committed.items() if c}
        assert sum(returned.values()) == t._holdem.pot
    else:
        assert returned == {(b["box"], b["wager"], b["player"]): b["amount"]
                            for b in crashed["view"]["round"]["bets"]}


def check_journal(journal: Journal, head: int, expect: Expect, t: Table) -> None:
    """It verifies, holds the recovery, and no round is opened or closed twice."""
    assert journal.verify().ok
    assert journal.last(kind="recovery") is not None
    opens = [r.round_id for r in journal.records(kinds=["round_open"])]
    closes = [r.round_id for r in journal.records(kinds=["round_close"])]
    assert len(opens) == len(set(opens)) and len(closes) == len(set(closes))
    new = [(r.round_id, r.payload["outcome"])
           for r in journal.records(since=head + 1, kinds=["round_close"])]
    assert new == ([(str(t.round.round_id), "void")] if expect.void else [])


def check_no_card_face_down_shown(journal: Journal, head: int, t: Table,
                                  events: list[dict]) -> None:
    """Nothing the rebuild published, journaled as public or shows in the view names a card
    still face down."""
    hidden = face_down(t)
    public = [*events, t.public_view()] + [
        r.payload for r in journal.records(since=head + 1)
        if r.kind not in ("device", "command", "restart", "integrity", "link")]
    shown = set(CARD_WORD.findall(json.dumps(public)))
    assert not shown & hidden, shown & hidden


def refused_alike(original: Table, rebuilt: Rebuilt, command: Cmd, match: str | None) -> None:
    """Both tables refuse the command with the same error, naming the problem; the rebuilt
    one journals the refusal, and neither changes."""
    record = command_record(command, original)
    view = original.public_view()
    with pytest.raises(TablectlError) as theirs:
        original.apply(record)
    with pytest.raises(TablectlError, match=match) as ours:
        feed(rebuilt.runner, record)
    assert str(ours.value) == str(theirs.value)
    assert rebuilt.journal.last().kind == "refused"
    assert rebuilt.table.public_view() == original.public_view() == view
    assert rebuilt.take() == ([], [])


@pytest.mark.parametrize("game,kind,name,label", CASES)
def test_a_restart_rebuilds_the_table_and_ends_the_round_as_the_regulation_says(
        game, kind, name, label, scripts, workdir):
    run = scripts(game, kind, name)
    at = run.marks[label]
    sc = SCENARIOS[(game, kind)][name]
    expect = at.expect
    crashed = at.fingerprint
    original = crashed_table(run, at, game, kind, sc)

    # The restart: a new table from the journal alone, recovered; the table that crashed
    # given the same restart.
    where = Path(tempfile.mkdtemp(dir=workdir))
    path = take_journal(at.journal, where / "journal")
    rebuilt = Rebuilt(path, game, kind, sc)
    report, head = rebuilt.recover()
    events, sent = rebuilt.take()
    assert report["state_at_crash"] == crashed["state"]
    restart = {"source": "restart", "state": crashed["state"]}
    assert (events, sent) == applied(original, restart)
    after = fingerprint(rebuilt.table)
    assert after == fingerprint(original)

    check_nothing_lost(crashed, after)
    check_ruled(game, expect, rebuilt.table, events, crashed)
    check_journal(rebuilt.journal, head, expect, rebuilt.table)
    check_no_card_face_down_shown(rebuilt.journal, head, rebuilt.table, events)

    if after != crashed:
        # The restart changed the table: a second one changes nothing more (the first is
        # replayed with the rest, and rules nothing twice).
        rebuilt.journal.close()
        rebuilt = Rebuilt(path, game, kind, sc)
        rebuilt.recover()
        assert rebuilt.take() == applied(original, restart)
        assert fingerprint(rebuilt.table, monitor=False) == \
            fingerprint(original, monitor=False) == \
            {**{k: v for k, v in after.items() if k != "monitor"},
             "view": original.public_view()}

    # It refuses what the table that did not restart refuses, and changes nothing.
    if expect.refuse is not None:
        refused_alike(original, rebuilt, expect.refuse, expect.match)

    # The devices link again, and the next legal inputs are taken as that table takes them.
    dealer = at.dealer.copy()
    if not any(isinstance(step, Late) for step in expect.next):
        dealer.asked.clear()            # what was asked before the restart never left
    links = [Dev("link_up", d) for d in devices_of(game, kind)]
    asked: list[str] = []
    for i, step in enumerate(links + list(expect.next)):
        if i >= len(links) and isinstance(step, Dev):
            # what the round waits for of the shuffler is asked before it answers
            assert set(expect.asks) <= set(asked), (expect.asks, asked)
        if isinstance(step, Refused):
            refused_alike(original, rebuilt, step.command, step.match)
            continue
        for record in inputs(step, original, dealer, game, kind):
            want = applied(original, record)
            feed(rebuilt.runner, record)
            got = rebuilt.take()
            assert got == want, record
            asked += [c["action"] for c in got[1]]
            dealer.note(got[1])
    assert set(expect.asks) <= set(asked), (expect.asks, asked)
    assert fingerprint(rebuilt.table) == fingerprint(original)
    if expect.then:
        assert rebuilt.table.state in expect.then.split("|")
    assert rebuilt.journal.verify().ok
    rebuilt.journal.close()
    shutil.rmtree(where)
