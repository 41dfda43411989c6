"""The table machine: one round's lifecycle per regulation, as a ``transitions`` state machine.

Every input (a device event or a dealer/supervisor command) comes in through :meth:`Table.apply`
(or :meth:`Table.handle_device` / :meth:`Table.command`, which build the same input record). The
machine never holds a rule of its own: it asks the game for the dealing plan, for the ruling on
every irregularity, for the order the hands are shown in and for the settlement, and turns each
answer into a published event that cites the article. What it publishes goes to :attr:`Table.outbox` as
:class:`~controller.table.secrecy.PublicEvent` (no face-down card can be in one) and device
commands go to :attr:`Table.commands`; the service journals both before acting on them.

The machine is deterministic (no clock, no randomness): replaying the journaled inputs rebuilds
the same state, which is how the service recovers after a crash.

States (``docs/state-machine.md`` draws them): ``out_of_service``, ``shuffling``, ``bets_open``,
``bets_closed``, ``dice_shaking``, ``dealing``, ``player_decisions``, ``croupier_reveal``,
``settlement``, ``round_complete``, ``round_void`` and ``malfunction``. The automatic
``to_<state>`` shortcuts are off, so nothing can skip a rule; an event that is not legal in the
current state publishes an ``irregular_event`` (device) or raises TablectlError (command, nothing
changed); an exception inside a transition lands the table in ``malfunction`` with the round
void as a machine failure.
"""
from __future__ import annotations

import functools
import inspect
import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Callable, Collection, Mapping

from transitions import Machine

from controller.errors import TablectlError
from controller.shown import described, shown
from controller.rules.base import (BURN, CROUPIER, BOARD, Game, Irregularity, Mode, Phase,
                                   PlanRequest, Recipient, Remedy, Ruling, box as box_recipient)
from controller.rules.cards import Card
from controller.rules.errors import RuleError
from controller.rules.pan9_bank import (BankTurn, after_round as bank_after_round,
                                        bank_offer_order, check_taker, may_keep_bank)
from controller import inputs as panel_inputs   # registers the panel's events for replay
from drivers import events as ev
from drivers.shuffler import StatusAnswer   # registers the shuffler's answer for replay

from .dealing import DealingTracker, Outcome
from .flow import Flow, flow_for
from .holdem_pots_view import view_pots, void_view
from .round import BetKey, RoundData, check_amount
from controller.rules.base import (AMOUNT_LIMIT, MAX_AMOUNT, MAX_ROUND_STAKES,
                                   check_settlement_amounts)
from .secrecy import (CardVault, PublicEvent, reads_as_card, scrub, scrub_device, shown_device,
                      written_apart)
from . import settle_doc

STATES = ["out_of_service", "shuffling", "bets_open", "bets_closed", "dice_shaking", "dealing",
          "player_decisions", "croupier_reveal", "settlement", "round_complete", "round_void",
          "malfunction"]
# States in which a round holds bets or cards.
ROUND_STATES = ["bets_open", "bets_closed", "dice_shaking", "dealing", "player_decisions",
                "croupier_reveal", "settlement"]
DEALT_STATES = ["player_decisions", "croupier_reveal", "settlement"]
# What a table is configured with, taken from a table built with new settings when the next
# round opens (Table.configure_next_round).
CONFIGURED = ("game", "layout_boxes", "interpretations", "devices", "box_sensors", "limits",
              "flow", "wagers", "holdem_options", "house_co_bank_capital", "integrity")

TRANSITIONS: list[dict[str, Any]] = [
    {"trigger": "open_table", "source": "out_of_service", "dest": "shuffling",
     "conditions": "needs_shuffle"},
    {"trigger": "open_table", "source": "out_of_service", "dest": "bets_open"},
    {"trigger": "deck_ready", "source": "shuffling", "dest": "bets_open"},
    {"trigger": "close_bets", "source": "bets_open", "dest": "bets_closed"},
    {"trigger": "first_card", "source": ["bets_open", "bets_closed"], "dest": "dealing"},
    {"trigger": "shake", "source": ["bets_open", "bets_closed"], "dest": "dice_shaking"},
    {"trigger": "dice_settled", "source": "dice_shaking", "dest": "dealing"},
    {"trigger": "hands_dealt", "source": "dealing", "dest": "player_decisions",
     "conditions": "has_decisions"},
    {"trigger": "hands_dealt", "source": "dealing", "dest": "croupier_reveal"},
    {"trigger": "next_street", "source": "player_decisions", "dest": "dealing"},
    {"trigger": "showdown", "source": "dealing", "dest": "croupier_reveal"},
    {"trigger": "resume_dealing", "source": "player_decisions", "dest": "dealing"},
    {"trigger": "decisions_done", "source": "player_decisions", "dest": "croupier_reveal"},
    {"trigger": "settle", "source": ["croupier_reveal", "player_decisions"], "dest": "settlement"},
    {"trigger": "confirm_result", "source": "settlement", "dest": "round_complete"},
    {"trigger": "next_round", "source": ["round_complete", "round_void"], "dest": "shuffling",
     "conditions": "needs_shuffle"},
    {"trigger": "next_round", "source": ["round_complete", "round_void"], "dest": "bets_open"},
    {"trigger": "void_round", "source": ROUND_STATES + ["shuffling", "malfunction"],
     "dest": "round_void"},
    {"trigger": "fail", "source": STATES, "dest": "malfunction"},
    {"trigger": "clear", "source": "malfunction", "dest": "out_of_service",
     "conditions": "closed_table_held"},
    {"trigger": "clear", "source": "malfunction", "dest": "dealing",
     "conditions": "dealing_held"},
    {"trigger": "clear", "source": "malfunction", "dest": "bets_closed",
     "conditions": "shake_held"},
    {"trigger": "clear", "source": "malfunction", "dest": "bets_closed",
     "conditions": "closed_held"},
    {"trigger": "clear", "source": "malfunction", "dest": "shuffling",
     "conditions": "shuffle_held"},
    {"trigger": "clear", "source": "malfunction", "dest": "bets_open",
     "conditions": "round_held"},
    {"trigger": "clear", "source": "malfunction", "dest": "shuffling"},
    {"trigger": "close_table", "source": ["round_complete", "round_void", "malfunction",
                                          "shuffling", "bets_open"], "dest": "out_of_service"},
]

PHASE_OF_STATE = {
    "shuffling": Phase.BETTING, "bets_open": Phase.BETTING, "bets_closed": Phase.BETTING,
    "dice_shaking": Phase.SHAKING, "dealing": Phase.DEALING,
    "player_decisions": Phase.DECISIONS, "croupier_reveal": Phase.REVEAL,
    "settlement": Phase.SETTLEMENT,
}
HOLDEM_STREETS = {"hole": 0, "flop": 1, "turn": 2, "river": 3}
DEVICE_FAILURE = {"shuffler": Irregularity.SHUFFLER_MALFUNCTION,
                  "shoe": Irregularity.SHOE_MALFUNCTION,
                  "dice": Irregularity.DICE_MALFUNCTION}
# Device events that put cards out at the table (face down, most of them).
CARDS_OUT = (ev.CardDrawn, ev.CardDispensed, ev.HandDispensed, ev.Misread)
# Conditions that persist until a device clears them or a supervisor does. ``replaced``: the
# device came back as another unit (serial number or firmware hash), which the supervisor
# accepts (docs/protocol.md 3.4).
SUPERVISOR_CONDITIONS = ("jam", "malfunction", "replaced")

# The reason a round opened and ended by close_table before any bet says (round_not_played).
NOT_PLAYED_REASON = "table taken out of service"
# Why a command asked of a device was not carried out, when asking again later is all it takes:
# the device was busy with something else, or its link was not up (nothing was sent).
NOT_DONE = ("busy", "not-connected")
# The shuffler's states in which it takes a command (protocol: StatusReport.state). A status
# report in one of them after a ``busy`` refusal means the work it was busy with is over.
SHUFFLER_FREE = ("idle", "ready")
# The reason of a command the controller itself failed to carry out (drivers/driver.py
# CONTROLLER_ERROR): the request never reached the device, which neither did nor refused it.
CONTROLLER_ERROR = "controller-error"
# Status requests a round makes of a shuffler that said ``busy``: a firmware that keeps
# saying busy while its status says free is not asked in a loop; the round then waits for its
# report of the work done (or for the supervisor).
BUSY_STATUS_ASKS = 3
# A status request the round waits on (whether a hand asked before a failure or a restart is
# on its way) that the shuffler refuses as ``busy`` is asked again after this wait, timed by
# the service (the machine has no clock: a ``wait`` command, and the journaled ``wait_over``
# input when it is over), at most STATUS_BUSY_WAITS times in a row; refused once more, the
# round is held for the supervisor with an alarm naming the shuffler and the way out.
STATUS_BUSY_WAIT_S = 5.0
STATUS_BUSY_WAITS = 3


@dataclass(slots=True)
class Command:
    """Something the service must tell a device (after journaling it)."""

    device_class: str
    action: str
    args: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {"device_class": self.device_class, "action": self.action, **self.args}


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One dealer or supervisor command: who may give it and what it takes."""

    name: str
    roles: tuple[str, ...]
    params: tuple[str, ...]
    help: str


COMMANDS: dict[str, CommandSpec] = {c.name: c for c in (
    CommandSpec("open_table", ("supervisor",), (), "open the table for play"),
    CommandSpec("close_table", ("supervisor",), (),
                "take the table out of service; a round opened and not played (in shuffling, "
                "in bets_open with nothing on the layout, or held there in malfunction) ends "
                "with it: round_not_played, its round_close (docs/journal.md)"),
    CommandSpec("deck_ready", ("dealer", "supervisor"), (),
                "shoe mode: the deck is shuffled by hand, cut and in the shoe"),
    CommandSpec("place_bet", ("dealer", "supervisor"),
                ("box", "wager", "amount", "player", "seated"),
                "mark a bet on a box; Q Poker under shared_box_decision=seated_player: "
                "seated=true marks the bet's player as the one seated at the box, who decides "
                "play or fold for it (89/2004 art. 6(3), 9(2))"),
    CommandSpec("remove_bet", ("dealer", "supervisor"), ("box", "wager", "player"),
                "take a bet back before betting closes"),
    CommandSpec("close_bets", ("dealer", "supervisor"), (), "no more bets"),
    CommandSpec("set_banker", ("dealer", "supervisor"), ("seat", "capital", "all_agree"),
                "Super Pan 9: the banker's seat and capital; two rounds in a row at most "
                "unless all_agree (261/96/M art. 5(1)); the bank given up passes to a player "
                "who bet in the previous round (art. 5(2)); after a winning first round, "
                "capital at least capital plus win (art. 5(4))"),
    CommandSpec("co_bank", ("dealer", "supervisor"), ("player", "capital", "seat", "house"),
                "Super Pan 9: a player of another seat (player, seat) or the house "
                "(house=true) joins the banker with a capital, before the shake; paid or "
                "collected in order after the banker, the house last, each up to its capital; "
                "the house's capital may be left out where [pan9] house_co_bank_capital "
                "predetermines it; a co-banking player bets on no seat that round "
                "(261/96/M art. 5(5))"),
    CommandSpec("remove_co_bank", ("dealer", "supervisor"), ("player", "house"),
                "Super Pan 9: a co-bank (the player's, or the house's with house=true) taken "
                "back before the shake"),
    CommandSpec("declare_adjust", ("dealer", "supervisor"), ("points",),
                "Super Pan 9: points the banker adds or subtracts, before the shake"),
    CommandSpec("shake", ("dealer", "supervisor"), (),
                "Super Pan 9: the banker shakes the dice (again, after a reshake ruling)"),
    CommandSpec("seat_players", ("dealer", "supervisor"), ("seats", "stacks", "button"),
                "Texas Hold'em: the occupied seats and the dealer button"),
    CommandSpec("decide", ("dealer", "supervisor"), ("box", "decision", "player"),
                "a player plays or folds (three-card games)"),
    CommandSpec("holdem_action", ("dealer", "supervisor"), ("seat", "action", "amount"),
                "Texas Hold'em: fold, check, call, bet, raise or all-in"),
    CommandSpec("enter_cards", ("dealer", "supervisor"), ("recipient", "cards"),
                "at the reveal: the cards of a hand the device could not read, as read out"),
    CommandSpec("confirm_result", ("dealer", "supervisor"), (), "the result is paid; round over"),
    CommandSpec("next_round", ("dealer", "supervisor"), (), "start the next round"),
    CommandSpec("misdeal", ("dealer", "supervisor"), (), "the croupier declares a misdeal"),
    CommandSpec("exposed_card", ("dealer", "supervisor"), ("recipient", "card"),
                "a card of 'croupier', 'board' (Hold'em) or 'box N' was exposed by mistake; "
                "card: which, by its place among the recipient's cards in the order dealt "
                "to it (1 = its first); left out: the last one dealt"),
    CommandSpec("void_round", ("supervisor",), ("reason",), "void the round by hand"),
    CommandSpec("clear_malfunction", ("supervisor",), (),
                "the device is fixed or replaced: its jam or malfunction is cleared; in "
                "malfunction the table goes on (a table out of service stays out of service), "
                "elsewhere nothing else changes"),
    CommandSpec("clear_integrity", ("supervisor",), ("supervisor",),
                "the deck was checked after an integrity alarm; the table may go on"),
    CommandSpec("switch_mode", ("supervisor",), ("mode",),
                "deal with the shoe or the shuffler from the next round"),
    CommandSpec("silence_buzzer", ("supervisor",), (),
                "silence the tower light's buzzer while the alarm stays (the light stays red "
                "and blinking); a new alarm sounds it again"),
)}


def _shown_identity(ident: Mapping[str, Any]) -> dict[str, Any]:
    """A device's identity as published: a name of its own that reads as a card (a model
    "2D", a serial "5s") is marked as the device's, since a published text that spells a
    card is refused as a face-down card's, which faulted the table at every link-up and left
    no view to build."""
    return {k: f"{v} (as the device names it)" if isinstance(v, str) and reads_as_card(v)
            else v for k, v in ident.items()}


def _shown_device(device: str) -> str:
    """A device's id as the view lists it (secrecy.shown_device)."""
    return shown_device(device)


def _shown_keys(by_device: Mapping[str, Any]) -> dict[str, Any]:
    """``by_device`` with each device's id as the view lists it (_shown_device)."""
    return {_shown_device(d): v for d, v in by_device.items()}


def _not_ready(blocked: Mapping[str, list[str]],
               gone: Collection[str] = ()) -> TablectlError:
    """The refusal for devices ``blocked`` (id -> conditions), with each condition's own way
    out: a lost link goes when the device links again, which no clear can do for it, and never
    for a device of ``gone`` (see _gone_lost)."""
    conds = {c for cs in blocked.values() for c in cs}
    ways = []
    if conds & set(SUPERVISOR_CONDITIONS):
        ways.append("fix the device (a jam, a malfunction, another unit) and the supervisor "
                    "gives clear_malfunction")
    if any("link_lost" in cs for d, cs in blocked.items() if d not in gone):
        ways.append("a lost link comes back when the device links again: check its cable "
                    "and power")
    ways += filter(None, [_gone_lost(blocked, gone)])
    if "door_open" in conds:
        ways.append("close the door or lid left open")
    return TablectlError(f"devices not ready: {_shown_keys(blocked)}; "
                         + "; ".join(ways or ["clear them first"]))


def _gone_lost(blocked: Mapping[str, Collection[str]], gone: Collection[str]) -> str | None:
    """The way out for a lost link of a device of ``gone``: one the round in play opened with
    that table.toml no longer names (an id of an earlier file, renamed since). No link of it
    comes back, and nothing would clear the condition: the round ends (void_round), and the
    next one opens with the devices the file names now. None when no such device lost its
    link."""
    lost = [_shown_device(d) for d in sorted(blocked) if d in gone and "link_lost" in blocked[d]]
    if not lost:
        return None
    one = len(lost) == 1
    return (f"{_and(lost)} {'is' if one else 'are'} no longer in table.toml, so "
            f"{'its' if one else 'their'} link never comes back, and the round in play, which "
            f"opened with {'it' if one else 'them'}, cannot go on: void the round (void_round "
            "with the reason); the next one opens with the devices table.toml names now")


def _configured(device: str, devices: Mapping[str, str]) -> bool:
    """``device`` is one of the configuration's ``devices`` (id -> class). A table built
    without its devices (none configured) takes every device it hears from as its own."""
    return not devices or device in devices


def _needed_classes(mode: Mode, flow: Flow, box_sensors: bool) -> set[str]:
    """The device classes a round dealt by ``mode`` needs."""
    need = {"shoe"} if mode is Mode.SHOE else {"shuffler"}
    if flow.dice:
        need.add("dice")
    if box_sensors:
        need.add("box-sensors")
    return need


class Table:
    """One table's round machine. See the module docstring."""

    def __init__(self, table_id: str, game: Game, mode: Mode | str, *, layout_boxes: int,
                 interpretations: Mapping[str, str] | None = None,
                 devices: Mapping[str, str] | None = None, box_sensors: bool = False,
                 limits: Mapping[str, tuple[int, int]] | None = None,
                 flow: Flow | None = None, wagers: tuple[str, ...] | None = None,
                 holdem: Mapping[str, Any] | None = None, integrity: Any = None,
                 integrity_action: str = "warn",
                 house_co_bank_capital: int | None = None) -> None:
        self.table_id = table_id
        self.game = game
        self.mode = Mode.parse(mode) if isinstance(mode, str) else mode
        self.layout_boxes = layout_boxes
        game.check_layout(layout_boxes, interpretations or {})
        self.interpretations = game.resolve_interpretations(interpretations)
        self.devices = dict(devices or {})          # device id -> device class
        self.box_sensors = box_sensors
        self.limits = dict(limits or {})
        self.flow = flow or flow_for(game.game_id)
        self.wagers = wagers if wagers is not None else settle_doc.wagers_of(game.game_id)
        if house_co_bank_capital is not None:
            if not self.flow.dice:
                raise TablectlError(f"{game.title} has no banker, so no house co-bank capital; "
                                    "leave it out")
            house_co_bank_capital = check_amount(house_co_bank_capital,
                                                 "the house's co-bank capital")
        # Super Pan 9 art. 5(5): the house's co-bank capital as configured ([pan9]), and the
        # one in force for the round in play, fixed when it opens (in its snapshot), so a
        # restart replays the round with the capital it was played with.
        self.house_co_bank_capital = house_co_bank_capital
        self._house_capital = house_co_bank_capital
        self.conditions: dict[str, set[str]] = {}   # device id -> {"jam", "door_open", ...}
        self.identities: dict[str, dict[str, Any]] = {}
        # The devices linked to the running controller since its restart (None: no restart,
        # every link the table knows is this process's). The journal's links are the earlier
        # process's: until a device links again the view says it is connecting, not up.
        self._linked: set[str] | None = None
        # device id -> the identity it had before it came back as another unit (``replaced``)
        self.replaced_units: dict[str, dict[str, Any]] = {}
        self._new_unit = ""             # the device being handled as another unit, if any
        self.outbox: list[PublicEvent] = []
        self.commands: list[Command] = []
        self.round_no = 0
        self.round: RoundData | None = None
        # Q Poker under seated_player: the round (its RoundData) and, per box, the player
        # marked seated with his bet (place_bet seated=true); see seated_marks
        self._seated: tuple[RoundData | None, dict[int, str | None]] = (None, {})
        self.vault = CardVault()
        self.tracker: DealingTracker | None = None
        self._needs_shuffle = True
        self._deck_ready = False
        self._held_round = False        # a malfunction before dealing keeps the round's bets
        # The controller's own fault where no round was held before ("out_of_service",
        # "shuffling"): the clear puts back what it interrupted, refused as one that began a
        # round was (the replay of a journal of either version, _cmd_clear_malfunction).
        self._fault_from = ""
        # The input in hand began a round (its round_started is published) that the machine
        # has not entered yet: a controller fault before it does ends that round (_fault).
        self._opening = False
        self._held_dealing = ""         # "dealing"/"dice_shaking"/"shuffling": the held state
        # The dealing device's failure that holds the table, ruled (or held) as one before the
        # first card: a card out while the table waits shows the deal had begun (_held_taken).
        self._held_failure: tuple[str, str] | None = None      # (device, what)
        # Hold'em: a street completed while the table waited; its betting opens at the clear.
        self._betting_owed: str | None = None
        # Super Pan 9: cards taken out of play before the dice were read (P5 rectify).
        self._out_of_play_before_dice = 0
        self._last_slot: dict[Recipient, int] = {}
        self._holdem = None
        self._stacks: dict[int, int] = {}
        self._last_button: int | None = None
        self.holdem_options = {"small_blind": 1, "big_blind": 2, "structure": "no-limit",
                               "rake": 0, **dict(holdem or {})}
        self._supervisor_key = False
        # The alarms (controller.tower.alarm_causes) whose buzzer was silenced: it sounds again
        # for one not among them. An alarm that ends leaves the set after the input that
        # ended it (_alarms_ended), so the same fault coming back is a new alarm.
        self.silenced_alarms: frozenset[str] = frozenset()
        # The shuffler's deck check (shuffler mode): the deck is checked once gathered, before
        # it is shuffled. "" not checked since gathered, "asked" the result is awaited,
        # "busy" the shuffler refused it as busy (still owed: asked again once it is free),
        # "done" the gathered deck is checked. A shuffle that waits for the result is marked.
        self._deck_check = ""
        self._shuffle_after_check = False
        self._dispensing = False        # a hand or card asked of the shuffler is on its way
        # A hand or card asked before a failure or a restart of the controller, not answered:
        # it may have left and still come. "maybe": the shuffler's status is asked before the
        # request is made again (a second request would put one hand too many out); "asked":
        # that status is awaited; "coming": the shuffler said it is dispensing (_on_status).
        self._unanswered = ""
        # The status requests of the round in play, each named "<round>.<n>" (its ``ask``),
        # and the name of the one whose answer says whether that hand is coming: only the
        # shuffler's answer to it does (``status_answer``); a report of its own, or the late
        # answer to an earlier request, may be older than the hand (docs/protocol.md 3.7).
        self._status_asks = 0
        self._status_ask = ""
        self._status_busy = 0       # its busy refusals in a row (asked again after a wait)
        # The status asked of a shuffler that refused a hand (or shuffle) as busy, to learn
        # whether it is free again; "" once a report says so (or says it is not).
        self._free_ask = ""
        self._role: str | None = None  # who gave the command in hand (Table.command)
        # The round in play waits for the shuffler's shuffle (asked, or to ask again once the
        # shuffler is put right): no hand is asked of it before its shuffle is done.
        self._awaiting_shuffle = False
        # The round held in malfunction before its deck is shuffled (in shuffling, or with
        # betting open) owes a request to the shuffler at the clear, not before: the shuffle
        # the shuffler lost (it failed, lost its link or restarted, or the controller did),
        # or the one its deck check's result, come meanwhile, lets go (_shuffle_at_clear).
        self._shuffle_owed = False
        self._reshake_owed = False      # a reshake was ruled; the banker shakes again
        self._reshake_asked = False     # ... and the agitator was asked for it since
        self._shaken = False            # the round's dice were shaken (261/96/M art. 2(3))
        # Super Pan 9: the seat holding the bank and its settled rounds in a row (261/96/M
        # art. 5(1), 5(4)); kept from round to round, in the snapshot.
        self._bank_turn: BankTurn | None = None
        # the seats that bet in the last round settled (261/96/M art. 5(2)); None before one
        self._bank_bettors: tuple[int, ...] | None = None
        self._busy_asks = 0             # status requests after a "busy" refusal, this round
        self._unsettled = False
        self._last_dealt: Recipient | None = None
        # While the journal is replayed: whether the input replayed was accepted when played
        # (TableRunner._replay); None when live. Only a void an earlier version took asks it.
        self.replay_accepted: bool | None = None
        # With it, the states the input replayed took the table to when played (its ``state``
        # records): betting a version opened over a deck alarm is opened again on replay.
        self.replay_reached: tuple[str, ...] | None = None
        # Deck integrity (controller.integrity): alarms are shown without naming a card; the
        # records (which do name cards) go only to the journal, through private_records.
        from controller.integrity.alarms import IntegrityGate
        self.integrity = integrity
        self.gate = IntegrityGate(integrity_action)
        self.private_records: list[dict[str, Any]] = []
        self._held_alarms: list[Any] = []   # raised while cards are out: shown at round end
        # Private records whose mere moment would say what a face-down card is: journaled at
        # round end (an enter_cards conflict, _cmd_enter_cards).
        self._held_records: list[dict[str, Any]] = []
        # A new configuration for the next round: (a table built with it, switch the mode).
        self._next_configuration: tuple[Table, bool] | None = None
        self.machine = Machine(model=self, states=STATES, transitions=TRANSITIONS,
                               initial="out_of_service", auto_transitions=False, queued=True,
                               send_event=True, after_state_change="_published_state",
                               before_state_change="_leaving",
                               on_exception="_on_exception")

    # ======================================================================================
    # inputs
    # ======================================================================================
    def apply(self, record: Mapping[str, Any]) -> None:
        """Apply one journaled input: ``{"source": "device", "event": {...}}`` or
        ``{"source": "command", "name": ..., "role": ..., "args": {...}}``.

        A command that is not allowed raises TablectlError and changes nothing.
        """
        source = record.get("source")
        if source not in ("device", "command", "restart"):
            raise TablectlError(f"unknown input record {record!r}")
        if source == "device":
            self.handle_device(ev.event_from_json(dict(record["event"])))
        elif source == "command":
            self.command(str(record["name"]), role=str(record.get("role", "dealer")),
                         **dict(record.get("args") or {}))
        else:
            self._guarded(self.recover_after_restart)
            self._alarms_ended()

    def _alarms_ended(self) -> None:
        """Forget the silence of alarms that are over, after every input: the same fault
        coming back later is a new alarm, and sounds."""
        if self.silenced_alarms:
            self.silenced_alarms &= self.alarm_causes()

    def alarm_causes(self) -> frozenset[str]:
        """What sounds the buzzer now (controller.tower.alarm_causes): empty when nothing."""
        from controller.tower import alarm_causes
        return alarm_causes(self)

    def _guarded(self, fn: Callable[..., None], *args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except TablectlError:
            raise
        except Exception as exc:   # a bug must not take the table down: fault state
            self._fault(exc)
        finally:
            self._opening = False   # a round begun by this input is entered, or ended

    def command(self, name: str, role: str = "dealer", **args: Any) -> None:
        """Run a dealer or supervisor command (see COMMANDS). Raises TablectlError naming the
        problem and the way out when it is not allowed now; nothing changes then."""
        spec = COMMANDS.get(name)
        if spec is None:
            raise TablectlError(f"unknown command {shown(name)}; the commands are: "
                                f"{', '.join(COMMANDS)}")
        if role not in spec.roles:
            raise TablectlError(f"{name} needs the {' or '.join(spec.roles)} role; "
                                f"{shown(role)} may not give it")
        unknown = set(args) - set(spec.params)
        if unknown:
            raise TablectlError(f"{name} takes {', '.join(spec.params) or 'no arguments'}; "
                                f"unexpected {', '.join(sorted(unknown))}")
        fn = getattr(self, f"_cmd_{name}")
        handler = getattr(type(self), f"_cmd_{name}")
        accepted, required = _arguments(handler)
        if not required <= args.keys() or not args.keys() <= accepted:
            missing = [p for p in spec.params if p in required - args.keys()]
            optional = [p for p in spec.params if p not in required]
            raise TablectlError(f"{name} needs {', '.join(missing)}; it takes "
                                f"{', '.join(p for p in spec.params if p in required)}"
                                + (f" and, if wanted, {', '.join(optional)}" if optional else ""))
        for param, nullable in _text_params(handler).items():
            # A name where a list or a number came would fail inside the handler, and a
            # handler's failure is a controller fault, which voids a round in play.
            value = args.get(param, "")
            if not isinstance(value, str) and not (nullable and value is None):
                raise TablectlError(f"{name}: {param} must be text{' or null' if nullable else ''}"
                                    f", such as \"{TEXT_EXAMPLES.get(param, 'text')}\"; got "
                                    f"{described(value)}")
            hidden = next((ch for ch in value if ch not in "\t\n\r"
                           and unicodedata.category(ch) in ("Cc", "Cf")),
                          None) if isinstance(value, str) else None
            if hidden is not None:
                # Journaled and shown as typed: a NUL or an escape, a zero-width character (two
                # names that look the same), a right-to-left override (the display shows the
                # text reversed) are no part of a name or a reason.
                what = TEXT_WORDS.get(param, param)
                raise TablectlError(f"{name}: {param} holds U+{ord(hidden):04X}, a control or "
                                    f"invisible character; {what} must be printable text, so "
                                    "type it again without it")
            refusal = card_text_refusal(name, param, value)
            if refusal is None and param in TEXT_WORDS and self.replay_accepted is not True:
                # A card inside a name or a reason ("Mr Kd"): shown as typed, but every
                # message quoting it back masks the card. An input a journal holds as taken
                # (a version that took such text) replays as it was played.
                refusal = card_word_refusal(name, param, value)
            if refusal is not None:
                raise TablectlError(refusal)
        self._role = role       # for the commands that ask who gave them
        try:
            self._guarded(fn, **args)
        finally:
            self._role = None
        self._alarms_ended()

    def handle_device(self, event: ev.DeviceEvent) -> None:
        """Take one device event. Never raises for an event out of place: that becomes an
        ``irregular_event`` (and, where the regulation says so, a ruling)."""
        if self.integrity is not None:
            hold = isinstance(event, CARDS_OUT) or self._cards_at_table()
            self._guarded(lambda: self._integrity(self.integrity.observe(event), hold=hold))
        handler: Callable[[ev.DeviceEvent], None] | None = getattr(
            self, f"_on_{event.kind}", None)
        if handler is None:
            self._irregular_event(event, "event kind the table does not use")
            return
        try:
            self._guarded(handler, event)
        except TablectlError as exc:   # a device event is a fact: never refused
            self._irregular_event(event, str(exc))
        self._alarms_ended()

    # ======================================================================================
    # queries
    # ======================================================================================
    def needs_shuffle(self, event_data: Any = None) -> bool:
        return self._needs_shuffle and not self._deck_ready


    def has_decisions(self, event_data: Any = None) -> bool:
        return bool(self.flow.decision_wager or self.flow.betting_streets)

    def dealing_held(self, event_data: Any = None) -> bool:
        return self._held_dealing == "dealing" and self.round is not None \
            and self.round.void is None

    def shake_held(self, event_data: Any = None) -> bool:
        return self._held_dealing == "dice_shaking" and self.round is not None \
            and self.round.void is None

    def closed_held(self, event_data: Any = None) -> bool:
        """Held with its bets after betting closed: the clear goes back to ``bets_closed``
        (betting stays closed, Hold'em's blinds stay posted) and the deal goes on."""
        return self._held_dealing == "bets_closed" and self._held_round \
            and self.round is not None and self.round.void is None

    def shuffle_held(self, event_data: Any = None) -> bool:
        return self._held_dealing == "shuffling" and self._held_round \
            and self.round is not None

    def closed_table_held(self, event_data: Any = None) -> bool:
        """The table was out of service when it failed: the clear leaves it out of service,
        as it was (opening it is the supervisor's ``open_table``), and begins no round."""
        return self._fault_from == "out_of_service"

    def round_held(self, event_data: Any = None) -> bool:
        return self._held_round and self.round is not None

    def blocking_conditions(self, next_round: bool = False) -> dict[str, list[str]]:
        """Conditions on devices the current mode needs (they stop the next round).
        ``next_round``: on those the next round to open needs (see blocking_conditions_sets)."""
        return {dev: sorted(c) for dev, c in self.blocking_conditions_sets(next_round)}

    def blocking_conditions_sets(self, next_round: bool = False) -> list[tuple[str, set[str]]]:
        """The devices the mode needs with their conditions (see blocking_conditions). A device
        no longer configured stops nothing: nothing would ever link under its name to clear a
        lost link. ``next_round``: the devices of the configuration the next round opens
        under (configure_next_round), which a round in play at a restart does not have yet."""
        devices, needed = self._needed_devices(next_round)
        return [(d, c) for d, c in self.conditions.items()
                if c and _configured(d, devices) and devices.get(d, d) in needed]

    def needed_classes(self) -> set[str]:
        """The device classes a round dealt as this table deals now needs."""
        return _needed_classes(self.mode, self.flow, self.box_sensors)

    def _needed_devices(self, next_round: bool = False) -> tuple[Mapping[str, str], set[str]]:
        """The configured devices (id -> class) and the classes a round needs: this round's,
        or with ``next_round`` those of the configuration the next round takes, if any."""
        other, switch_mode = self._next_configuration or (None, False)
        if not next_round or other is None:
            return self.devices, self.needed_classes()
        mode = other.mode if switch_mode else self.mode      # as _take_configuration takes it
        return other.devices, _needed_classes(mode, other.flow, other.box_sensors)

    def devices_connecting(self, next_round: bool = False) -> list[str]:
        """The devices a round needs that the view shows ``connecting``: known from the
        journal, not linked to the controller running since its restart, and no other device
        of their class linked (a spare kept unplugged beside the one in use waits on nothing).
        The table waits on them (the tower light's amber); ``next_round`` as in
        blocking_conditions_sets."""
        devices, needed = self._needed_devices(next_round)
        wanted = [d for d in self.known_devices(devices) if _configured(d, devices)
                  and devices.get(d, d) in needed]
        up = {devices.get(d, d) for d in wanted if self.link_of(d) == "up"}
        return sorted(d for d in wanted if self.link_of(d) == "connecting"
                      and devices.get(d, d) not in up)

    def _require_linked(self, what: str, closed: bool = False) -> None:
        """A round is not opened that could not be dealt: refused while a device the next
        round needs is connecting (devices_connecting, the rules of the tower light's amber).
        The links counted are the running process's, which the replay rebuilds from the
        journal (its restarts and link-ups), so a refusal replays as a refusal. ``closed``:
        the clear of a table out of service, which has no round; the supervisor opens it
        (open_table) once it is cleared."""
        waiting = self.devices_connecting(next_round=True)
        if waiting:
            names = ", ".join(waiting)
            one = len(waiting) == 1
            why = ("the table is out of service and no round is in play, but none could be "
                   "dealt once it is opened" if closed else "the round could not be dealt")
            then = ("; then clear the malfunction (clear_malfunction) and open the table "
                    "(open_table)" if closed else "")
            raise TablectlError(
                f"cannot {what}: {names} {'has' if one else 'have'} not linked since the "
                f"controller restarted (connecting), and {why}; wait "
                f"for {'it' if one else 'them'} to link (the tower light turns green) or check "
                f"{'its' if one else 'their'} cable and power, or take "
                f"{'it' if one else 'them'} out of table.toml (or configure a spare) and "
                f"restart the service{then}")

    def _gone(self) -> set[str]:
        """The devices of the round in play that the configuration the next round opens under
        no longer names (the file changed while it was in play, or before a restart): nothing
        links under such an id again."""
        if self._next_configuration is None:
            return set()
        later = self._needed_devices(next_round=True)[0]
        return {d for d in self.devices if not _configured(d, later)}

    def _in_view_or_next(self, device: str) -> bool:
        """``device`` is configured now or for the next round: a clear clears only its
        conditions. One taken out of table.toml keeps what the journal left on it, shown in
        no view, for when it is configured again (and shown again)."""
        return _configured(device, self.devices) or _configured(
            device, self._needed_devices(next_round=True)[0])

    def known_devices(self, devices: Mapping[str, str] | None = None) -> list[str]:
        """The devices the table knows of: those it heard from (the journal's included) and,
        once the running process counts its links (``_linked``), every one of ``devices`` (the
        configuration's, the one in force by default): a device configured since the last
        run, a spare under a new id, has never linked, and is connecting until it does, not
        absent."""
        devices = self.devices if devices is None else devices
        known = list(self.identities)
        if self._linked is not None:
            known += [d for d in devices if d not in self.identities]
        return known

    def link_of(self, device: str) -> str:
        """The device's link as the view shows it: lost, up, or connecting (known from the
        journal, not yet linked to the controller running since a restart)."""
        if "link_lost" in self.conditions.get(device, ()):
            return "lost"
        return "connecting" if self._linked is not None and device not in self._linked \
            else "up"

    def public_view(self) -> dict[str, Any]:
        """The table as a display may see it: no face-down card."""
        r = self.round
        hands = {}
        if r is not None:
            for rec in self.vault.recipients():
                hands[str(rec)] = self.vault.public_hand(rec)
        ev_ = PublicEvent("view", self.table_id, r.round_id if r else None, self.state, {
            "game": self.game.game_id, "mode": self.mode.value,
            # the devices of the configuration in force: one taken out of table.toml is
            # still in the journal, but leaves once the configuration without it takes effect
            "conditions": {_shown_device(d): sorted(c) for d, c in self.conditions.items()
                           if c and _configured(d, self.devices)},
            # with the ones configured that never linked: connecting, no identity yet
            "devices": {_shown_device(d): {"link": self.link_of(d),
                                           **_shown_identity(self.identities.get(d, {}))}
                        for d in self.known_devices()
                        if _configured(d, self.devices)},
            # who may give each decision the table waits for, as ``decide`` takes it under
            # either reading of Q2 (no card): the console draws one play/fold pair per entry
            "round": {**r.summary(), "pending_decisions": self._pending_decisions()
                      if self.state == "player_decisions" else [],
                      # Q Poker under seated_player: who is marked seated at each box
                      "seated": [{"box": b, "player": p}
                                 for b, p in sorted(self.seated_marks().items())]}
            if r else None,
            "hands": hands,
            "set_aside": self.vault.set_aside_cards(),
            "expected": self._expected_json(),
            "holdem": self._holdem_json(),
            "integrity_stop": not self.gate.may_open_round(),
            "bank_turn": self._bank_turn_json(),
            # 261/96/M art. 2(4): a reshake was ruled (or the agitator refused the shake) and
            # the banker shakes again: ``shake`` is taken in dice_shaking until he does
            "reshake_owed": self._reshake_owed and self.state == "dice_shaking",
            # 261/96/M art. 5(5): the house's co-bank capital predetermined for the round in
            # play ([pan9] house_co_bank_capital; the one it opened with, also after a
            # restart), the only one a house co-bank takes; the console fills its form with it
            "house_co_bank_capital": self._house_capital,
        })
        return ev_.to_json()

    # ======================================================================================
    # publishing
    # ======================================================================================
    def _publish(self, kind: str, **data: Any) -> None:
        self.outbox.append(PublicEvent(kind, self.table_id,
                                       self.round.round_id if self.round else None,
                                       self.state, data))

    def _leaving(self, event_data: Any) -> None:
        if event_data.transition.dest == "bets_open" and self._deck_ready:
            self._needs_shuffle = False     # this deck serves the coming round

    def _published_state(self, event_data: Any) -> None:
        self._publish("state", trigger=event_data.event.name,
                      source=event_data.transition.source, dest=event_data.transition.dest)
        if event_data.transition.dest in ("round_complete", "round_void"):
            self._deck_gathered()

    def _on_exception(self, event_data: Any) -> None:
        self._fault(event_data.error)

    def _fault(self, err: BaseException) -> None:
        """Any unexpected error: the round is void as a machine failure, the table stops."""
        self._publish("controller_fault", error=type(err).__name__,
                      message=scrub(str(err))[:200])
        # The fault came in the input that began a round (open_table, next_round, a clear),
        # after its round_started and before the machine entered it: that round is ended
        # here, or it would stay open in the journal forever (a second one opens over it).
        opening = self._opening and self.state not in ("shuffling", "bets_open")
        self._opening = False
        if opening and self.round is not None and self.round.void is None:
            self._void(self._opening_ruling(), "controller fault")
        if self.round is not None and self.state in ROUND_STATES and self.state != "bets_open" \
                and self.round.void is None and not self.round.paid:
            # (a round already paid, its confirm_result cut short, is not voided: the journal
            # holds its settlement as paid; the clear goes on as from round_complete)
            self._void(self._fault_ruling(), "controller fault")
        elif self.state == "bets_open" and self.round is not None:
            self._held_round = True     # no card out: the bets stand, as for a device failure
        elif self.state == "shuffling" and self.round is not None:
            # The round opened waits for its deck: it goes on at the clear (what was asked of
            # the shuffler stands), rather than a second round opening over it unclosed.
            self._held_round, self._held_dealing = True, "shuffling"
            self._fault_from = self.state
        elif self.state == "out_of_service":
            self._fault_from = self.state
        self.fail()

    def _opening_ruling(self) -> Ruling:
        """The controller failed while it opened a round: no bet was placed and no card is out
        (the round had not reached shuffling or betting). It is ended as the game rules a
        machine failure before the deal, and its article is cited (Q Poker 11(5), Fortune
        11(4), Hold'em 9 by H11, Super Pan 9 P3): void, with nothing to return (docs/
        interpretations.md, "a controller fault while a round opens")."""
        article = "controller"
        try:
            article = self._ask(DEVICE_FAILURE[self._dealing_class()], Phase.BETTING).article
        except TablectlError:
            pass
        return Ruling(Remedy.ROUND_VOID, article,
                      "the controller failed while opening the round, before any bet or card: "
                      "it cannot vouch for the round, which is void with nothing to return; "
                      "the table waits for the supervisor", True)

    def _fault_ruling(self) -> Ruling:
        """The controller lost its view of the round: the round is void, every bet returned.
        While cards are still to come this is a machine failure while dealing, and the game's
        article for it is cited; once every card is out no article speaks of it, so the
        ruling cites none (``controller``) rather than a dealing article that does not apply."""
        still_dealing = self.state in ("bets_closed", "dice_shaking", "dealing") or (
            self.tracker is not None and not self.tracker.done)
        ruling = None
        if still_dealing:
            irr = DEVICE_FAILURE["shoe" if self.mode is Mode.SHOE else "shuffler"]
            try:
                ruling = self._ask(irr, Phase.DEALING)
            except TablectlError:
                ruling = None
        if ruling is not None and ruling.remedy is Remedy.ROUND_VOID:
            return ruling
        when = "while dealing" if still_dealing else "after every card was out"
        return Ruling(Remedy.ROUND_VOID, ruling.article if ruling else "controller",
                      f"the controller failed {when}: it cannot vouch for the round, so the "
                      "round is void and every bet is returned", True)

    def _cards_at_table(self) -> bool:
        """Cards of the round in play are out (some may still be face down)."""
        return self.round is not None and self.round.void is None and bool(self.vault.slots()) \
            and self.state not in ("round_complete", "round_void")

    def _integrity(self, update: Any, hold: bool = False) -> None:
        """Journal the monitor's records; show its alarms. ``hold``: the update came of a card
        out, or while cards of the round are at the table. Shown now, an alarm would say
        something of a card still face down (a duplicate raised as the croupier's card comes
        out says that card is one already seen): it is shown when the round ends, and only
        then counts against the next round (docs/integrity.md)."""
        self.private_records.extend(update.records)
        if hold:
            self._held_alarms.extend(update.alarms)
            return
        self._show_alarms(update.alarms)

    def _release_alarms(self) -> None:
        """The round is over (or the next begins): the alarms its cards raised are shown."""
        held, self._held_alarms = self._held_alarms, []
        self.private_records.extend(self._held_records)
        self._held_records = []
        self._show_alarms(held)

    def _show_alarms(self, alarms: list[Any]) -> None:
        for reaction in self.gate.raise_alarms(alarms):
            # One event per kind of fault found: a deck check short of twelve cards is one
            # line on the display; the journal holds each alarm with its card.
            self._publish("integrity_alarm", alarm=str(reaction.alarm.kind),
                          count=len(reaction.alarms),
                          display=reaction.display, tower_light=reaction.tower_light,
                          stop_before_next_round=reaction.stop_before_next_round)

    def _round_may_open(self) -> None:
        self._release_alarms()
        if not self.gate.may_open_round():
            raise TablectlError("a deck integrity alarm stops the table before the next round; "
                                "a supervisor checks the deck, then clear_integrity")

    def _cmd_clear_integrity(self, supervisor: str) -> None:
        cleared = self.gate.clear(supervisor)
        self._publish("integrity_cleared", supervisor=str(supervisor), alarms=len(cleared))
        if self.state == "shuffling" and self._deck_ready and not self.blocking_conditions():
            # The round's deck was ready (the shuffler's shuffle done, or the croupier's
            # deck_ready) while the stop held betting back: it opens now.
            self.deck_ready()

    def _cmd_silence_buzzer(self) -> None:
        self._silence(self._role or "supervisor", by="console")

    def _silence(self, role: str, by: str) -> None:
        """Silence the buzzer of the alarms sounding now; published (and so journaled, with
        the input that asked for it, before the service turns the buzzer off)."""
        causes = self.alarm_causes()
        if not causes:
            raise TablectlError(
                "nothing to silence: the buzzer sounds on its own only while the tower light "
                "blinks red (a device failed, jammed, its door open or its link lost, or a "
                "deck integrity alarm stops the table), and it does not now")
        if causes <= self.silenced_alarms:
            raise TablectlError(
                "the buzzer is already silenced for the alarm on now ("
                + ", ".join(sorted(causes)) + "); it sounds again for a new one. The light "
                "stays red until a supervisor deals with the alarm")
        self.silenced_alarms = causes
        self._publish("buzzer_silenced", role=role, by=by, alarms=sorted(causes))

    def _irregular_event(self, event: ev.DeviceEvent, why: str) -> None:
        self._publish("irregular_event", device=event.device, event=event.kind,
                      reason=scrub(why))

    def _holdem_json(self) -> dict[str, Any] | None:
        """Hold'em for the view: the seats, the button and the stacks from the moment the
        players are seated (they are public at the table), then the betting as the hand runs.
        Hole cards never appear here; ``hands`` carries them, face down as ``null``.
        ``pots``: the main pot and the side pots, each with the boxes that may win it; none
        once the hand is void, its stakes back in the stacks (``returned``)."""
        h = self._holdem
        if h is None:
            return self._seating_json()
        all_in = {s for s in h.contenders if h.stacks[s] == 0}
        view = {"seats": list(h.seats), "button": h.button,
                "street": h.street, "to_act": h.to_act, "pot": h.pot,
                "folded": sorted(h.folded), "stacks": {str(k): v for k, v in h.stacks.items()},
                "legal": [{"action": a.kind, "min_to": a.min_to, "max_to": a.max_to}
                          for a in (h.legal_actions() if h.to_act is not None else [])],
                "pots": view_pots(h.committed, h.folded, all_in, h.is_over)}
        if self.round is not None and self.round.void is not None:
            return void_view(view, h.stacks, h.committed)
        return view

    def _seating_json(self) -> dict[str, Any] | None:
        """Hold'em between ``seat_players`` and the blinds: the same keys as a running hand,
        with no street, nobody to act, nothing in the pot and the stacks as seated."""
        r = self.round
        if not self.flow.betting_streets or r is None or not r.seats:
            return None
        return {"seats": list(r.seats), "button": r.button,
                "street": None, "to_act": None, "pot": 0, "folded": [],
                "stacks": {str(s): self._stacks[s] for s in r.seats if s in self._stacks},
                "legal": [], "pots": []}

    def _expected_json(self) -> dict[str, Any] | None:
        if self.tracker is None or self.tracker.expected is None:
            return None
        d = self.tracker.expected.deal
        return {"recipient": str(d.recipient), "cards": d.cards, "street": d.street}

    # ======================================================================================
    # rulings
    # ======================================================================================
    def _phase(self) -> Phase:
        if self.state == "malfunction":
            # A card out while the table waits is ruled in the phase of what it holds.
            if self.dealing_held():
                return Phase.DEALING
            if self.shake_held():
                return Phase.SHAKING
        return PHASE_OF_STATE.get(self.state, Phase.BETTING)

    def _ask(self, irregularity: Irregularity, phase: Phase | None = None) -> Ruling:
        phase = phase or self._phase()
        if "mode" in _signature(self.game.ruling).parameters:
            return self.game.ruling(irregularity, phase, self.interpretations, mode=self.mode)
        return self.game.ruling(irregularity, phase, self.interpretations)

    def _rule(self, irregularity: Irregularity, detail: str, *, recipient: Recipient | None = None,
              slot: int | None = None, device: str | None = None,
              phase: Phase | None = None, hold: bool = True,
              whole: bool = False, position: int | None = None) -> Ruling | None:
        """Ask the game, record the ruling with its article, and carry out its remedy.
        ``hold=False``: what the ruling leaves to the supervisor concerns a device the rest of
        the round does not use; its condition stops the next round, not this one.
        ``whole``: an exposed card of a hand the shuffler put out whole (``_dealt_whole``).
        ``position``: the exposed card as the croupier named it (``exposed_card`` ``card``),
        recorded with the ruling."""
        try:
            ruling = self._ask(irregularity, phase)
        except RuleError as exc:
            # The game says this cannot happen in this phase: record it, change nothing.
            self._publish("irregularity_unruled", irregularity=irregularity.value,
                          phase=self._phase().value, detail=detail, reason=scrub(str(exc)))
            return None
        entry = {"irregularity": irregularity.value, "phase": (phase or self._phase()).value,
                 "detail": detail, **ruling.to_json()}
        if recipient is not None:
            entry["recipient"] = str(recipient)
        if position is not None:
            entry["position"] = position
        if device is not None:
            entry["device"] = device
        if self.round is not None:
            self.round.rulings.append(entry)
        self._publish("ruling", **entry)
        self._carry_out(ruling, irregularity, recipient, slot, hold, whole)
        return ruling

    def _carry_out(self, ruling: Ruling, irregularity: Irregularity,
                   recipient: Recipient | None, slot: int | None, hold: bool = True,
                   whole: bool = False) -> None:
        remedy = ruling.remedy
        if remedy is Remedy.ROUND_VOID:
            self._void(ruling, irregularity.value)
            if self.state == "malfunction":
                pass        # the table waits for the supervisor already; the clear starts anew
            elif ruling.needs_supervisor or irregularity in DEVICE_FAILURE.values():
                self.fail()
            else:
                self.void_round()
            return
        if remedy is Remedy.BOX_VOID and recipient is not None and recipient.kind == "box":
            self.round.void_boxes.add(recipient.box)
            self._publish("box_void", box=recipient.box, article=ruling.article)
        elif remedy is Remedy.SET_ASIDE and slot is not None and self.tracker is not None:
            self._set_aside(slot, ruling, whole)
        elif (remedy is Remedy.RECTIFY and slot is not None and self.tracker is not None
              and irregularity is Irregularity.PLAYER_CARD_EXPOSED and self.state == "dealing"):
            # Hold'em art. 9(1): the exposed hole card is replaced by the next card.
            # The replacement is a hole card: it is owed before the deal of the hole cards is
            # over (art. 6(3): the players decide on two cards), even when the exposed card
            # was the last hole card and the plan's next step is already the flop's burn.
            rec = self.vault.slot_recipient(slot)
            self.vault.set_aside(slot)
            self.tracker.replace_card(rec, "hole")
            self._publish("card_set_aside", recipient=str(rec), article=ruling.article,
                          cards=self.vault.set_aside_cards())
            return
        elif remedy is Remedy.RESHAKE:
            # The banker owes a shake (261/96/M art. 2(4)); until the agitator reports it, the
            # banker's shake command is taken again in dice_shaking (only he shakes, art. 2(2)).
            self._reshake_owed, self._reshake_asked = True, False
            if not ruling.needs_supervisor and irregularity is not Irregularity.DIE_OUT_OF_CUP:
                # The dice are all in the cup: the banker's shake goes on at once. A die out of
                # the cup is put back first, a failed agitator repaired: then the banker shakes.
                self.commands.append(Command("dice", "shake"))
                self._reshake_asked = True
            self._publish("reshake", article=ruling.article)
        if slot is not None and irregularity in (Irregularity.PLAYER_CARD_EXPOSED,
                                                 Irregularity.BOARD_CARD_EXPOSED,
                                                 Irregularity.CROUPIER_CARD_EXPOSED) \
                and remedy is not Remedy.SET_ASIDE:
            # It is face up at the table now: the display may show it.
            self._publish("card_exposed", recipient=str(self.vault.slot_recipient(slot)),
                          position=self.vault.position(slot), card=self.vault.expose(slot))
        if ruling.needs_supervisor and hold and self.state in DEALT_STATES:
            # Every card is out and the round stands (e.g. a card put right, 261/96/M P5):
            # nothing is left to deal that a hold could keep back, and a malfunction here
            # would lose the round at the clear, which starts a new one. The ruling tells the
            # supervisor; the round goes on.
            pass
        elif ruling.needs_supervisor and hold and self.state != "malfunction":
            if self.state in ("dealing", "dice_shaking"):
                self._held_dealing = self.state
            self._held_round = self.state in ("bets_open", "bets_closed", "shuffling")
            self._hold_shuffle()
            self._hold_closed()     # e.g. the first hand asked, H11 rectify: no blinds again
            self.fail()

    def _set_aside(self, slot: int, ruling: Ruling, whole: bool = False) -> None:
        """78/2008 art. 11(2): the exposed croupier card is set aside face up and the croupier
        receives the next card (with the shuffler, per interpretation F4, the next card or the
        next whole hand). ``whole``: the exposed card is one of a hand the shuffler put out
        whole and cannot be told from the others: the hand is set aside, none of it shown,
        and the croupier receives as many cards."""
        slots, seen = [slot], True
        if whole or self.mode is Mode.SHUFFLER and \
                self.interpretations.get("croupier_card_exposed_shuffler") == "next_hand":
            slots = [i for i, r in enumerate(self._slot_recipients())
                     if r == CROUPIER and not self.vault.is_set_aside(i)]
            # The other cards of the hand are set aside unseen, and which of the hand's cards
            # was exposed the shuffler cannot say: none of them is shown.
            seen = False
        for s in slots:
            self.vault.set_aside(s, face_up=seen)
        self.tracker.replace_croupier_card(len(slots))
        self._publish("card_set_aside", recipient="croupier", article=ruling.article,
                      cards=self.vault.set_aside_cards())
        if self.state == "player_decisions":
            self.resume_dealing()
            self._ask_shuffler()

    def _slot_recipients(self) -> list[Recipient]:
        return [self.vault.slot_recipient(i) for i in range(self.vault.slots())]

    def _void(self, ruling: Ruling, cause: str) -> None:
        if self.round is None or self.round.void is not None:
            return
        self.round.void = {"cause": cause, **ruling.to_json()}
        self._held_round, self._held_dealing = False, ""
        self._fault_from = ""
        self._unanswered = ""       # a hand still to come joins no hand of a void round
        self._shuffle_owed = False
        self._held_failure, self._betting_owed = None, None
        self._unsettled = False
        self.tracker = None
        self._needs_shuffle = True
        self._deck_ready = False
        self._publish("round_void", cause=cause, article=ruling.article, reason=ruling.reason,
                      returned=self._returned())
        self._release_alarms()
        if self.integrity is not None:
            self._integrity(self.integrity.round_ended())

    def _returned(self) -> list[dict[str, Any]]:
        """What a void round gives back: the bets on the layout, or in Hold'em, where the chips
        are in the hand's pot (the blinds included), what each seat put in (11/2008 art. 9(2):
        "os valores das apostas são devolvidos aos jogadores"), as ``wager`` ``pot``."""
        if self._holdem is None:
            return self.round.bets_json()
        return [{"box": seat, "wager": "pot", "player": None, "amount": chips}
                for seat, chips in sorted(self._holdem.committed.items()) if chips > 0]

    # ======================================================================================
    # device events
    # ======================================================================================
    def _cond(self, device: str) -> set[str]:
        return self.conditions.setdefault(device, set())

    def _device_class(self, device: str) -> str:
        return self.devices.get(device, device)

    def _on_link_up(self, e: ev.LinkUp) -> None:
        self._link_up(e, replaced=self._another_unit(e))

    def _another_unit(self, e: ev.LinkUp) -> bool:
        """Take the identity the device gave at its hello. One with another serial number or
        firmware hash than the table last had for that device id (journaled: after a restart
        of the controller it is the one replayed) is another unit (docs/protocol.md 3.4): a
        spare put in, or other firmware. It is journaled and published with both identities,
        held for the supervisor to accept (``replaced``, cleared by clear_malfunction) and
        ruled as a device that restarted: whatever the unit before held is gone."""
        ident = e.identity
        now = {"vendor": ident.vendor, "model": ident.model, "serial": ident.serial,
               "firmware_version": ident.firmware_version, "firmware_hash": ident.firmware_hash,
               "recognises_cards": ident.recognises_cards}
        was = self.identities.get(e.device)
        self.identities[e.device] = now
        if was is None or (was.get("serial"), was.get("firmware_hash")) == (
                now["serial"], now["firmware_hash"]):
            return False
        self.replaced_units[e.device] = was
        self._cond(e.device).add("replaced")
        self._publish("device_replaced", device=e.device, was=_shown_identity(was),
                      now=_shown_identity(now))
        if (self._device_class(e.device) == "shuffler" and self.mode is Mode.SHUFFLER
                and not self._deal_begun()):
            # The deck the unit before shuffled is not in this one: shuffled again first.
            self._deck_ready, self._needs_shuffle = False, True
            if self.round is not None and self.round.void is None \
                    and self.state == "malfunction":
                self._awaiting_shuffle = True
        self._new_unit = e.device
        try:
            self._device_failure(e, f"came back as another unit (serial {now['serial']}, "
                                    f"firmware hash {now['firmware_hash']}; was serial "
                                    f"{was.get('serial')}, firmware hash "
                                    f"{was.get('firmware_hash')}): check it is an approved "
                                    "unit, then the supervisor gives clear_malfunction")
        finally:
            self._new_unit = ""
        return True

    def _link_up(self, e: ev.LinkUp, replaced: bool) -> None:
        self._cond(e.device).discard("link_lost")
        if self._linked is not None:
            self._linked.add(e.device)
        self._publish("device_link", device=e.device, link="up",
                      **_shown_identity(self.identities[e.device]))
        if replaced or not (isinstance(e, ev.LinkRestored) and e.resumed):
            # A new session (it restarted, or the controller did and cannot tell): what it
            # saw while away is lost. A resumed one sends what it saw (protocol 3.2).
            self._sensors_watch_again(e.device)
        if (self._device_class(e.device) == "shuffler" and self._deck_check == "asked"
                and not self._shuffle_after_check):
            # A check asked before the link came (back) may have been lost with it (a
            # restart): it is asked again before the shuffle.
            self._deck_check = ""
        if (self.state == "malfunction" and self.mode is Mode.SHUFFLER and self.shuffle_held()
                and not self._deck_ready and self._device_class(e.device) == "shuffler"):
            # Linked while the round held in shuffling waits for the clear (after its restart,
            # or the controller's): the shuffle may be lost, and is asked again at the clear.
            self._shuffle_owed = True
        if (self.state == "shuffling" and self.mode is Mode.SHUFFLER and not self._deck_ready
                and self._device_class(e.device) == "shuffler"):
            # A shuffler (re)connected while the table waits for its deck: ask again (for
            # the deck check first when the shuffle waits for it).
            if self._shuffle_after_check:
                self.commands.append(Command("shuffler", "deck_check"))
                self._deck_check = "asked"
            else:
                self.commands.append(Command("shuffler", "shuffle"))
        self._resume_requests()

    def _on_link_restored(self, e: ev.LinkRestored) -> None:
        replaced = self._another_unit(e)
        if not replaced and not e.resumed and self._board_owed(self._device_class(e.device)):
            # It restarted while away: the board it held is lost (as on a reboot notice).
            self._device_failure(e, "the shuffler came back with a new session (it restarted)")
        self._link_up(e, replaced)

    def _on_link_lost(self, e: ev.LinkLost) -> None:
        self._cond(e.device).add("link_lost")
        self._publish("device_link", device=e.device, link="lost", reason=e.reason)
        self._device_failure(e, f"link lost: {e.reason}")

    def _on_malfunction(self, e: ev.Malfunction) -> None:
        self._cond(e.device).add("malfunction")
        self._device_failure(e, f"malfunction {e.code} {scrub_device(e.text)}".strip())

    def _on_jam(self, e: ev.Jam) -> None:
        self._cond(e.device).add("jam")
        self._device_failure(e, f"jam {scrub_device(e.where)}".strip())

    def _on_door_opened(self, e: ev.DoorOpened) -> None:
        self._cond(e.device).add("door_open")
        self._device_failure(e, "door opened")

    def _on_door_closed(self, e: ev.DoorClosed) -> None:
        self._cond(e.device).discard("door_open")
        self._publish("device_condition", device=e.device,
                      conditions=sorted(self._cond(e.device)))
        self._resume_requests()

    def _on_empty(self, e: ev.Empty) -> None:
        if self._device_class(e.device) == "shuffler":
            self._dispensing = False
        self._needs_shuffle = True
        self._deck_ready = False
        if self.state == "dealing":
            self._device_failure(e, "no cards left while dealing")
        else:
            self._publish("device_condition", device=e.device, conditions=["empty"])

    def _on_status(self, e: ev.Status, answer: bool = False) -> None:
        # Journaled by the service. A shuffler that reports itself free may be asked what the
        # round waits for of it (a hand or shuffle it refused as busy): asked again now.
        if self._device_class(e.device) != "shuffler":
            return
        if self._unanswered == "asked" and not answer:
            # Not the answer to the request the round waits on: a report the shuffler sent
            # on its own (as after it restarts) or the late answer to an earlier request. It
            # may have been made before the hand asked reached the shuffler, so its "ready"
            # would not say that no hand is coming: the table waits for its answer.
            return
        if self._unanswered in ("asked", "coming"):
            # The answer to whether the hand asked before the failure or restart is on its
            # way. A device sends its events in order, so that hand, had it come out, would
            # have come before this report: dispensing, it is coming and is the one asked;
            # anything else, none is coming and the request is made again.
            self._status_busy = 0
            if e.state == "dispensing":
                self._unanswered = "coming"
                return
            self._unanswered = ""
            self._resume_requests()
            return
        if e.state in SHUFFLER_FREE:
            self._free_ask, self._status_busy = "", 0     # free again: settled
            self._resume_requests()

    def _on_status_answer(self, e: StatusAnswer) -> None:
        """The shuffler's answer to a status request of the table's (the driver names the
        request it answers: the first report after the shuffler accepted it, on the same
        link). The answer to the request the round waits on says whether the hand asked
        before is coming; any other is taken as a report of the shuffler's own."""
        if e.ask and e.ask == self._free_ask:
            # Whether it is free again after a busy refusal: answered (free, or busy with
            # work that reports itself done), whatever it says. No answer to a hand's question.
            self._free_ask, self._status_busy = "", 0
        self._on_status(e, answer=bool(e.ask) and e.ask == self._status_ask)

    def _ask_status(self) -> str:
        """Ask the shuffler's status, naming the request ("<round>.<n>") so its answer is
        told from any other report; the name."""
        self._status_asks += 1
        ask = f"{self.round_no}.{self._status_asks}"
        self.commands.append(Command("shuffler", "status", {"ask": ask}))
        return ask

    def _on_deck_check_result(self, e: ev.DeckCheckResult) -> None:
        self._publish("deck_check", device=e.device, count=e.count)
        if self._device_class(e.device) != "shuffler":
            return
        # The result is journaled (and the integrity monitor has seen it): the deck it
        # describes may now be shuffled.
        self._deck_check = "done"
        self._shuffle_after_check = False
        # Asked for whenever a result comes while the round still waits for its shuffle
        # (_request_shuffle set _awaiting_shuffle), not only after the check it waited for: a
        # check asked again after a restart answers second, and the shuffle asked on the
        # first answer may have been refused (the device busy with that second check). A
        # shuffle already under way refuses the repeat, and nothing is lost by asking.
        if self._awaiting_shuffle and self.mode is Mode.SHUFFLER and not self._deck_ready:
            if self.state == "malfunction":
                # Nothing is sent for the round while the table waits for the supervisor:
                # the result is kept (journaled, with the integrity monitor's records) and
                # the shuffle it lets go is asked at the clear (_shuffle_at_clear).
                self._shuffle_owed = True
                return
            self.commands.append(Command("shuffler", "shuffle"))
        else:
            self._resume_requests()     # a hand refused while the check ran: asked now

    def _on_command_refused(self, e: ev.CommandRefused) -> None:
        """The device refused a command, or it was not sent because the link was not up
        (journaled by the service like the device's own events). ``busy``: it was doing
        something else, and what the round waits for is asked again when the device reports
        that done (a deck check stays owed: the shuffle waits for it, _busy_work);
        ``not-connected``: when its link comes up (_resume_requests, _on_link_up).
        The agitator's shake, for any reason: nothing was shaken, the croupier shakes again
        once it is ready. Any other refusal of the shuffler (not ready, empty, door open,
        jammed, fault, a command it does not know) means it cannot deal this round's cards: a
        failure of the shuffler, ruled as one by the game at this phase of the round; one the
        controller failed to send, ``controller-error``, never reached it (_request_failed). A
        refused status matters only when the round waits on it (_ask_shuffler)."""
        what = e.text or f"{e.device} refused {e.action}: {e.reason}"
        cls = self._device_class(e.device)
        if e.action == "status":
            if cls == "shuffler" and self._unanswered == "asked":
                # The round waits on this one: asked again when the shuffler is next heard
                # from (its link up, a report of its own, the supervisor's clear), and when
                # it said busy, after a wait too (it may say nothing more).
                self._unanswered = "maybe"
                self._publish("device_condition", device=e.device, what=scrub(what),
                              conditions=sorted(self._cond(e.device)), refused=e.action,
                              reason=e.reason)
                if e.reason == "busy":
                    self._status_refused_busy(e, late=True)
            elif (cls == "shuffler" and e.reason == "busy" and self._free_ask
                  and self._free_ask == f"{self.round_no}.{self._status_asks}"
                  and self.round is not None and self.round.void is None):
                # The status asked to learn whether a shuffler that refused a hand (or a
                # shuffle) as busy is free again, refused as busy in its turn: it may say
                # nothing more, so it is asked again after a wait too.
                self._publish("device_condition", device=e.device, what=scrub(what),
                              conditions=sorted(self._cond(e.device)), refused=e.action,
                              reason=e.reason)
                self._status_refused_busy(e, late=False)
            return      # otherwise a question for the console; the round waits on nothing
        if (cls == "shuffler" and self.mode is Mode.SHUFFLER and e.reason == CONTROLLER_ERROR
                and e.action in ("dispense_card", "dispense_hand")):
            self._request_failed(e, what)
            return
        if cls == "shuffler" and self.mode is Mode.SHUFFLER and e.reason not in NOT_DONE:
            self._device_failure(e, what)
            return
        self._publish("device_condition", device=e.device, what=what,
                      conditions=sorted(self._cond(e.device)), refused=e.action,
                      reason=e.reason)
        if cls == "dice":
            if e.action == "shake" and self.state == "dice_shaking":
                self._reshake_owed, self._reshake_asked = True, False
            return
        if cls != "shuffler" or self.mode is not Mode.SHUFFLER:
            return
        if e.action in ("dispense_card", "dispense_hand"):
            self._dispensing = False        # no hand is on its way: asked again
        elif e.action == "deck_check" and self._deck_check == "asked":
            if e.reason == "busy":
                # Still owed, and the shuffle it holds back still waits: asked again once the
                # shuffler is free (_resume_requests: its status says so, the ShuffleDone
                # ending its work, its link up, a clear; or the next round's shuffle).
                self._deck_check = "busy"
            else:
                # ``not-connected``: never sent. The shuffle it holds back still waits: the
                # check is asked again when the link comes up (_link_up, _request_shuffle).
                self._deck_check = ""
        if e.reason == "busy" and self.round is not None \
                and self._busy_asks < BUSY_STATUS_ASKS:
            # Busy with what? Work the table asked for reports itself done; work it did not
            # ask for (a self-test, a check the firmware runs on its own) may end without a
            # word. Its status says whether it is free again (_on_status).
            self._busy_asks += 1
            self._free_ask = self._ask_status()

    def _status_refused_busy(self, e: ev.CommandRefused, late: bool) -> None:
        """The shuffler refused as ``busy`` the status request the round waits on: whether
        the hand asked before a failure or a restart is on its way (``late``), or whether it
        is free again after it refused a hand (or shuffle, or deck check) as busy. Busy with
        work the table did not ask for, it may say nothing when that ends: the status is asked
        again after a wait the service times (``wait_over``), STATUS_BUSY_WAITS times in a row
        at most. Refused once more, the round is held for the supervisor (nothing is ruled: no
        card is known out of order, and the shuffler answers) with an alarm naming the shuffler
        and the way out; a hand out meanwhile is the plan's next (_held_card), and the clear
        asks again (_ask_shuffler). A deck check refused as busy before the deal holds nothing
        (no round is held before betting closes): the alarm names the check, which stays owed
        and is asked again when the shuffler reports itself free."""
        self._status_busy += 1
        if self._status_busy <= STATUS_BUSY_WAITS:
            self.commands.append(Command(panel_inputs.TIMER, "wait", {
                "what": "status", "about": e.device,
                "ask": self._status_ask if late else self._free_ask,
                "after_s": STATUS_BUSY_WAIT_S}))
            return
        # The clear starts again from the first request (and from the first busy refusal).
        self._status_busy, self._free_ask, self._busy_asks = 0, "", 0
        r = self.round
        held = r is not None and r.void is None and self.state in ("bets_closed", "dealing")
        check = not late and self._deck_check == "busy"
        if check and not held:
            # Nothing to clear: the check stays owed and is asked again when the shuffler
            # reports itself free (its work done, its status), or with the next round.
            way = ("next_round (the check is asked again)" if self.state in (
                "round_complete", "round_void") else "the deck check is asked again when it "
                "reports its work done or itself free; or void_round")
        else:
            way = ("clear_malfunction " + (
                "(its status is asked again, and the hand only if none is coming; a hand out "
                "meanwhile is dealt as the next)" if late else "(what the round waits for is "
                "asked of it again)") + ", or void_round")
        self._publish("device_condition", device=e.device, what=scrub(
            f"the {e.device} refused its status as busy {STATUS_BUSY_WAITS + 1} times in a "
            "row, so " + ("whether the hand asked of it before is on its way" if late else
                          "whether it is free again after it refused the "
                          + ("deck check" if check else "hand") + " as busy")
            + f" is not known; look at the {e.device}: once it is idle, " + way),
            conditions=sorted(self._cond(e.device)), refused=e.action, reason=e.reason)
        if held:
            self._held_round = self.state == "bets_closed"
            self._held_dealing = self.state
            self.fail()

    def _on_wait_over(self, e: panel_inputs.WaitOver) -> None:
        """A wait the table asked the service to time is over (journaled as an input: the
        machine has no clock). After a ``busy`` refusal of the status the round waits on, that
        status is asked again, unless it was meanwhile (the shuffler heard from, a clear) or
        the round no longer waits on it (answered, what it waited for asked again, void); a
        wait of an earlier request is over for nothing."""
        if e.what != "status" or not e.ask:
            return
        if e.ask == self._status_ask and self._unanswered == "maybe":
            self._resume_requests()
        elif (e.ask == self._free_ask and self.state != "malfunction"
              and self.round is not None and self.round.void is None):
            self._free_ask = self._ask_status()     # free again yet?

    def _request_failed(self, e: ev.CommandRefused, what: str) -> None:
        """A hand or card the controller itself failed to ask of the shuffler
        (``controller-error``): the request never reached it, so it neither failed nor dealt.
        Before the round's first card nothing is out: no article on the shuffler's failure
        while dealing reaches the round (89/2004 art. 11(5), 78/2008 art. 11(4), 11/2008
        art. 9 by H11, 261/96/M P3), which is held for the supervisor with its bets (betting
        stays closed; Super Pan 9 keeps its dice), as for a failure before the deal, and the
        request is made again at the clear. A hand that comes out all the same while it
        waits shows the deal had begun (_held_taken). With cards out, the controller failed
        while dealing: ruled by the game as the shuffler's failure then, as its restart is."""
        self._dispensing = False
        r = self.round
        if (r is None or r.void is not None or self._deal_begun()
                or self.state not in ("bets_closed", "dealing")):
            self._device_failure(e, what)
            return
        self._publish("device_condition", device=e.device, what=scrub(what),
                      conditions=sorted(self._cond(e.device)), refused=e.action,
                      reason=e.reason)
        self._held_round = self.state == "bets_closed"
        self._held_dealing = self.state
        self._held_failure = (e.device, scrub(what))
        self.fail()

    def _on_cut_card_reached(self, e: ev.CutCardReached) -> None:
        self._needs_shuffle = True     # this shoe ends with the round in play
        self._publish("cut_card", device=e.device)

    def _shuffle_while_check_owed(self, e: ev.DeviceEvent) -> bool:
        """A shuffle reported while the deck check the table asked for has not answered: no
        shuffle is asked before that result (_request_shuffle), so this is none the table
        asked for (a report sent again under a new session's number, a shuffle of the
        firmware's own). Taken, the round would be dealt from a deck nobody counted, and the
        late result would leave the next round's deck unchecked too. An irregular event; the
        check stays owed and the shuffle is asked on its result (_on_deck_check_result)."""
        if self.mode is not Mode.SHUFFLER or self._deck_check != "asked":
            return False
        self._irregular_event(e, "a shuffle reported before the result of the deck check "
                              "the table asked for: not the round's shuffle; the deck is "
                              "shuffled once its check has answered")
        return True

    def _busy_work(self) -> bool:
        """A shuffle reported after the shuffler refused the deck check as busy: the work it
        said it was busy with (a shuffle of its own). No shuffle was asked (the check is owed),
        so it is not the round's; announced by the refusal, it is no irregular event either.
        The journal keeps it as the shuffler's event; its end frees the shuffler, and the check
        is asked again (_resume_requests). Once the check is asked again, a shuffle reported
        before its result is irregular (_shuffle_while_check_owed)."""
        return self.mode is Mode.SHUFFLER and self._deck_check == "busy"

    def _on_shuffle_started(self, e: ev.ShuffleStarted) -> None:
        if self._busy_work() or self._shuffle_while_check_owed(e):
            return
        # The checked deck is being shuffled: the next one is checked when it is gathered.
        self._deck_check, self._shuffle_after_check = "", False
        if self.state == "dealing":
            self._irregular_event(e, "the shuffler started a shuffle while dealing")
            return
        self._publish("shuffle", device=e.device, status="started")

    def _on_shuffle_done(self, e: ev.ShuffleDone) -> None:
        if self._busy_work():
            self._resume_requests()     # the work it was busy with is over: the check again
            return
        if self.mode is not Mode.SHUFFLER or not (self.state == "shuffling"
                                                  or self._awaiting_shuffle):
            # No shuffle is owed: the report of one already taken, sent again under a new
            # session's number (protocol 3.2), or a shuffle of the firmware's own while the
            # round's cards are out. Taken as the deck's, the next round would skip the check
            # and shuffle of the deck it gathers (or, by shoe, the croupier's fresh deck).
            self._irregular_event(e, "a shuffle the table did not ask for: the next round's "
                                  "deck is still checked and shuffled when it is gathered")
            return
        if self._shuffle_while_check_owed(e):
            return
        self._deck_ready = True
        self._shuffle_after_check = False
        self._awaiting_shuffle = False
        self._shuffle_owed = False
        self._publish("shuffle", device=e.device, status="done", count=e.count)
        if self.state == "shuffling" and self.mode is Mode.SHUFFLER and not self.blocking_conditions():
            self._bets_open_on_ready_deck()
        else:
            self._resume_requests()     # a hand waits for this shuffle: ask for it now

    def _bets_open_on_ready_deck(self) -> None:
        """The round's deck is ready in ``shuffling`` (the shuffler's shuffle done, or the
        croupier's ``deck_ready`` with the shoe): betting opens, unless a deck alarm under
        ``[integrity] alarm = "stop"`` is pending (the deck check of this very deck, answered
        after the round opened, or the shoe's last deck ended short while the round waited).
        Bets open at the round boundary, where the stop takes effect (docs/integrity.md): the
        round waits in ``shuffling`` with nothing on it until the supervisor checks the deck
        (``clear_integrity``), then betting opens."""
        played_open = self.replay_reached is not None and "bets_open" in self.replay_reached
        if not self.gate.may_open_round() and not played_open:
            # (A journal of an earlier version, which opened betting here, replays as played.)
            self._publish("integrity_stop", waiting="clear_integrity",
                          display="DECK ALARM: betting does not open until a supervisor "
                                  "checks the deck and clears it (clear_integrity)")
            return
        self.deck_ready()

    def _device_failure(self, e: ev.DeviceEvent, what: str) -> None:
        """A device failed. While dealing (or shaking) it is a machine failure ruled by the
        game; before dealing the round is held; after dealing the round goes on and the
        condition stops the next round."""
        # ``what`` may carry the device's own words (a malfunction's text, a jam's place): its
        # firmware's free text, which may name a card (the one stuck in the reader, the next
        # in the shoe). It is published and logged, as the condition and the ruling's detail,
        # so any card in it is masked; the journal keeps the device's event as it came.
        what = scrub(what)
        cls = self._device_class(e.device)
        # Whether a card of the round is out, or may be (a hand asked of the shuffler), before
        # the shuffler's request is forgotten below.
        dealt = self._deal_begun()
        self._publish("device_condition", device=e.device, what=what,
                      conditions=sorted(self._cond(e.device)))
        if cls == "shuffler":
            # A deck check or a hand asked for may never be answered: start afresh. A hand
            # asked may still come (it may be out): before it is asked again, the shuffler is
            # asked whether it is on its way (_ask_shuffler). One it refused did nothing.
            if (self._dispensing and not isinstance(e, ev.CommandRefused)) or self._unanswered:
                self._unanswered = "maybe"
            self._deck_check, self._shuffle_after_check = "", False
            self._dispensing = False
            # Held in malfunction before the deal (its bets, or its deck, waiting for the
            # clear): what the shuffler held is as lost as it would be outside malfunction.
            held = self.state == "malfunction" and self._held_round
            if (self.mode is Mode.SHUFFLER and self.round is not None
                    and self.round.void is None and not dealt
                    and (held or self.state in ("shuffling", "bets_open", "bets_closed",
                                                "dice_shaking", "dealing"))):
                # No card of the round is out yet, but a shuffler that jammed, failed, was
                # opened or restarted has lost (or may have lost) the order it made: the
                # round's deck is shuffled again once it is put right (_resume_requests, or
                # held in shuffling, at the clear: _shuffle_at_clear).
                self._deck_ready = False
                self._needs_shuffle = True
                self._awaiting_shuffle = True
                self._shuffle_owed = self._shuffle_owed or self.shuffle_held()
        if cls not in self.needed_classes():
            return
        if cls == "dice" and self.round is not None and self.round.dice is not None \
                and self.round.void is None and self.state in ROUND_STATES:
            # The dice were read: the rest of the round does not use the agitator. The game
            # rules on it (261/96/M P4: the round goes on); its condition stops the next shake.
            self._rule(DEVICE_FAILURE["dice"], what, device=e.device, hold=False)
            return
        # With the shuffler, once the plan is fixed and a hand asked for, cards may be out:
        # that is dealing, whether or not the first hand has been reported yet. Nothing asked
        # (the round waits for its shuffle, or the shuffler refused the hand as busy), nothing
        # is out or on its way: before the deal, as for a restart then.
        asked = self.state == "bets_closed" and self.tracker is not None and dealt
        between_streets = self._board_owed(cls) and self._order_lost(e)
        if between_streets:
            # Hold'em: the players bet between streets while the rest of the board waits in
            # the shuffler. A shuffler that jammed, failed, was opened or restarted can no
            # longer vouch for those cards: the deal is in progress (H11, art. 9).
            asked = True
        if cls == "box-sensors" and (self.state == "dealing" or asked):
            # The sensors deal no card: the shoe or shuffler goes on in the plan's order, so no
            # dealing machine failed (89/2004 art. 11(5), 78/2008 art. 11(4) and the readings
            # Q5, F7, H11, P3 speak of the device that deals). The round goes on without the
            # sensors; their condition stops the next round.
            return
        if cls == "box-sensors" and self.state == "dice_shaking":
            # No card is out and neither the agitator nor a dealing device failed (P3, P4):
            # the round is held with its bets, and the banker shakes again once it is cleared.
            self._held_dealing = self.state
            self.fail()
            return
        if self.state in ("dealing", "dice_shaking") or asked:
            irr = DEVICE_FAILURE.get(cls, Irregularity.SHUFFLER_MALFUNCTION
                                     if self.mode is Mode.SHUFFLER else
                                     Irregularity.SHOE_MALFUNCTION)
            before_first = not asked and self._failure_phase(dealt) is not None
            ruling = self._rule(irr, what, device=e.device,
                                phase=Phase.DEALING if asked else self._failure_phase(dealt),
                                hold=not between_streets)
            if ruling is None:
                return
            if before_first and cls == self._dealing_class() and self.round.void is None:
                self._held_failure = (e.device, what)
            if ruling.remedy is not Remedy.ROUND_VOID and self.state == "player_decisions":
                # Betting goes on (machine_failure=rectify); the next street is asked of
                # the shuffler once it is put right (_resume_requests).
                return
            if ruling.remedy is not Remedy.ROUND_VOID and self.state != "malfunction":
                # The regulation keeps the round (e.g. the croupier completes the deal):
                # it waits in malfunction and goes on once the supervisor clears.
                self._held_dealing = self.state
                self.fail()
        elif self.state in ("bets_open", "bets_closed", "shuffling"):
            self._held_round = self.round is not None
            if self._held_round and self.state != "shuffling" and cls == self._dealing_class():
                self._held_failure = (e.device, what)
            self._hold_shuffle()
            self._hold_closed()
            self.fail()
        elif self.state in ("round_complete", "round_void", "out_of_service"):
            pass   # blocks the next round (see next_round)

    def _sensors_watch_again(self, device: str) -> None:
        """The box sensors start watching again mid-round (their failure cleared, or back from
        a restart): the cards dealt meanwhile were laid out of their sight, so only those drawn
        from now on are matched in the dealing order (DealingTracker.watching_again); a stale
        match would rule a wrong order for a deal that went right."""
        if self._device_class(device) == "box-sensors" and self.tracker is not None:
            self.tracker.watching_again()

    def _dealing_class(self) -> str:
        """The device class that deals the cards in the table's mode."""
        return "shoe" if self.mode is Mode.SHOE else "shuffler"

    def _deal_begun(self) -> bool:
        """A card of the round in play is out, or may be: one the table has seen, or a card or
        hand asked of the shuffler and not yet reported. A card taken out of play before the
        dice were read (Super Pan 9, P5 rectify) is none: the deal begins after the dice."""
        return self.vault.slots() > self._out_of_play_before_dice or self._dispensing \
            or bool(self._unanswered)

    def _failure_phase(self, dealt: bool) -> Phase | None:
        """The phase a machine failure is ruled in. Super Pan 9 is ``dealing`` from the moment
        the dice are read, before any card is out; a failure then is one before the first card
        (261/96/M P3: the round goes on and the device is replaced), not one while dealing,
        and is ruled as the phase before the deal. None: the phase of the state."""
        if self.state == "dealing" and not dealt:
            return Phase.SHAKING if self.flow.dice else Phase.BETTING
        return None

    def _hold_shuffle(self) -> None:
        """Held while the croupier shuffles for the shoe: the clear goes back to shuffling,
        so the croupier still declares the deck ready (and the integrity monitor starts its
        new deck) before bets open. With the shuffler the clear opens betting while the
        shuffle is asked again (_resume_requests), as before."""
        if self.state == "shuffling" and self.mode is Mode.SHOE:
            self._held_dealing = "shuffling"

    def _hold_closed(self) -> None:
        """Held after betting closed: the clear goes back to ``bets_closed`` (closed_held), not
        to betting: the croupier closed it (89/2004 art. 6(2), 78/2008 art. 6(3)) and in
        Hold'em the blinds are posted (11/2008 art. 5), once a hand."""
        if self.state == "bets_closed" and self._held_round:
            self._held_dealing = "bets_closed"

    # --- cards ------------------------------------------------------------------------------
    def _board_owed(self, cls: str) -> bool:
        """Hold'em from the shuffler, between streets: the board still to come is in the
        shuffler while the players bet."""
        return (cls == "shuffler" and self.mode is Mode.SHUFFLER and self.flow.betting_streets
                and self.state == "player_decisions" and self.round is not None
                and self.round.void is None and self.tracker is not None
                and not self.tracker.done)

    def _order_lost(self, e: ev.DeviceEvent) -> bool:
        """The event says the device may no longer hold the cards it had in the order it had
        them: every failure but a link lost without a restart (the device, still powered,
        resumes its session when the link comes back). Another unit back holds none of them,
        whatever session it claims."""
        if isinstance(e, ev.LinkLost):
            return e.rebooted
        if isinstance(e, ev.LinkRestored):
            return not e.resumed or self._new_unit == e.device
        return True

    def _card_event_allowed(self, e: ev.DeviceEvent) -> bool:
        if self.state == "dealing":
            return True
        if self.state == "malfunction":
            return self._held_card(e)
        if self.flow.dice and self.state in ("bets_open", "bets_closed", "dice_shaking") \
                and self.round is not None:
            # Super Pan 9 before the dice are read: a card out of the dealing order (P5), as
            # when the table holds the round (_held_card); never passed over.
            if self.round.bet_boxes():
                self._before_dice(e)
            else:
                self._irregular_event(e, "a card came out with no bet on the layout")
            return False
        if self.state in ("bets_open", "bets_closed") and self.flow.close_bets_at == "first_card":
            if not self._start_dealing(e):
                return False
            return True
        if self.state == "settlement":
            # Every hand is open and the result worked out from them: a card out now joins no
            # hand of the round (art. 11(1) of 89/2004 and 78/2008 speak of the cards dealt to
            # a hand), so the result stands and the card is journaled as irregular.
            self._irregular_event(e, "a card came out after the round was settled")
            return False
        if self.state in DEALT_STATES:
            # A card out of the device after the deal: more cards than the plan holds.
            self._rule(Irregularity.WRONG_COUNT, f"{e.kind} from {e.device} after the deal")
            return False
        self._irregular_event(e, f"a card came out in state {self.state}")
        return False

    def _held_card(self, e: ev.DeviceEvent) -> bool:
        """A card (or hand) out of the shoe or shuffler while the table waits in malfunction:
        one on its way when the device failed or its link went (sent again once the link is
        back), or one dealt meanwhile. It is out at the table, so it is never passed over
        (docs/interpretations.md, "a card out while the table is stopped"). True: take it as
        the plan's next card (``_take``, then ``_held_taken``)."""
        r = self.round
        if r is not None and r.void is not None:
            self._irregular_event(e, "a card came out while the table waits for the supervisor "
                                     f"and the round is void ({r.void.get('article')}): it joins "
                                     "no hand and goes back with the round's cards; the next "
                                     "round starts from a new shuffle")
            return False
        if r is None or self._unsettled:
            self._irregular_event(e, "a card came out while the table waits for the supervisor "
                                     + ("and the round waits to be voided (void_round)"
                                        if r is not None else "and no round is in play")
                                     + ": it joins no hand")
            return False
        if self.dealing_held() and self.tracker is not None:
            if self._betting_owed is not None:
                # Hold'em: a street is out and its betting is owed (as in player_decisions).
                self._rule(Irregularity.WRONG_COUNT,
                           f"{e.kind} from {e.device} before the betting on the "
                           f"{self._betting_owed}", phase=Phase.DECISIONS)
                return False
            return True
        if self.shuffle_held() or not (self.round_held() or self.shake_held()):
            self._irregular_event(e, "a card came out while the table waits for the supervisor "
                                     "and no deal is under way: it joins no hand")
            return False
        if self.flow.dice:
            self._before_dice(e)
            return False
        return self._start_dealing(e, held=True)

    def _before_dice(self, e: ev.DeviceEvent) -> None:
        """Super Pan 9, a card out before the dice are read: the dice say which seat receives
        the first cards (261/96/M art. 2(2)), so no seat is owed one yet. A card out of the
        dealing order, ruled by the game (P5). Where the round stands (P5 ``rectify``) the card
        has no place in a plan not yet made: it is taken out of play face down, never shown,
        and the deal starts from the next card once the dice are read."""
        ruling = self._rule(Irregularity.WRONG_ORDER,
                            f"a card came out of the {self._device_class(e.device)} before the "
                            "dice were read: no seat is owed a card until the dice say which "
                            "seat receives the first (261/96/M art. 2(2))", device=e.device)
        if ruling is None or self.round is None or self.round.void is not None:
            return
        cards = getattr(e, "cards", None) or (getattr(e, "card", None),)
        for card in cards:
            self.vault.set_aside(self.vault.deal(BURN, card, False),
                                 face_up=bool(getattr(e, "face_up", False)))
            self._out_of_play_before_dice += 1      # no card of the deal (_deal_begun)
        self._publish("card_set_aside", recipient=str(BURN), article=ruling.article,
                      cards=self.vault.set_aside_cards())

    def _held_taken(self, out: Outcome) -> None:
        """A card was taken while the table waits with the deal held: what the clear does next
        (a Hold'em street out opens its betting then), and a failure of the dealing device
        ruled as one before the first card, ruled again: the card shows the deal had begun
        when it came (89/2004 art. 11(5), 78/2008 art. 11(4), H11, P3)."""
        if self.state != "malfunction" or not self.dealing_held():
            return
        if self.flow.betting_streets and out.street_done and out.step is not None \
                and self.tracker is not None and not self.tracker.done:
            self._betting_owed = out.step.deal.street
        failure, self._held_failure = self._held_failure, None
        if failure is not None:
            device, what = failure
            cls = self._device_class(device)
            self._rule(DEVICE_FAILURE[cls], f"{what}; a card of the round came out of the "
                       f"{cls} after it: the deal had begun", device=device, phase=Phase.DEALING)

    def _on_card_drawn(self, e: ev.CardDrawn) -> None:
        if self.mode is not Mode.SHOE:
            self._irregular_event(e, "a card from the shoe while the table deals by shuffler")
            return
        if not self._card_event_allowed(e):
            return
        out = self.tracker.card(e.card, e.face_up)
        twice = self._read_twice(e, out)
        self._take(out, twice or self._unread(e, (e.card,)), self._read_twice_why(twice))

    def _on_card_dispensed(self, e: ev.CardDispensed) -> None:
        self._shuffler_answered()
        if self.mode is not Mode.SHUFFLER:
            self._irregular_event(e, "a card from the shuffler while the table deals by shoe")
            return
        if not self._card_event_allowed(e):
            self._deck_short()
            return
        out = self.tracker.card(e.card, False)
        twice = self._read_twice(e, out)
        self._take(out, twice or self._unread(e, (e.card,)), self._read_twice_why(twice))

    def _on_hand_dispensed(self, e: ev.HandDispensed) -> None:
        self._shuffler_answered()
        if self.mode is not Mode.SHUFFLER:
            self._irregular_event(e, "a hand from the shuffler while the table deals by shoe")
            return
        if not self._card_event_allowed(e):
            self._deck_short()
            return
        self._take(self.tracker.hand(e.cards), self._unread(e, e.cards))

    def _deck_short(self) -> None:
        """A card or hand out of the shuffler joined no hand before the round's plan was made
        (none asked for: no bet on the layout, a condition not cleared): the deck shuffled for
        the round is short of it. The round's deck is checked (what was gathered back) and
        shuffled again before its deal. Super Pan 9 rules on a card before the dice (P5)."""
        if (self.mode is Mode.SHUFFLER and not self.flow.dice and self.tracker is None
                and self.round is not None and self.round.void is None
                and self.state in ("shuffling", "bets_open", "bets_closed")):
            self._deck_ready, self._needs_shuffle, self._awaiting_shuffle = False, True, True
            self._resume_requests()

    def _on_misread(self, e: ev.Misread) -> None:
        """A card left the shoe unread: it is out at the table all the same, the plan's next
        (a card without a face, entered at the reveal where the game goes on), and the shoe
        failed while dealing (``_take``), as a card a reading shoe reports without a face."""
        if self.mode is not Mode.SHOE:
            self._irregular_event(e, "a misread from the shoe while the table deals by shuffler")
            return
        if not self._card_event_allowed(e):
            return
        self._take(self.tracker.card(None, False), e)

    def _on_card_placed(self, e: ev.CardPlaced) -> None:
        if not self._box_on_layout(e):
            return
        failed = self._cond(e.device) & set(SUPERVISOR_CONDITIONS)
        if failed:
            # The deal goes on without a board that failed (_device_failure): a placement it
            # reports before it is put right would be matched against cards it did not watch.
            self._irregular_event(e, f"the box sensors report {' and '.join(sorted(failed))}: "
                                     "what they report is not used until a supervisor has "
                                     "checked them and cleared it (clear_malfunction)")
            return
        if not self._dealing_now() or self.tracker is None:
            if self.state in DEALT_STATES and self.tracker is not None \
                    and self.tracker.placement_due(e.box):
                # The deal's last card reaches its box after the plan is complete.
                self.tracker.placed(e.box)
                self._publish("card_placed", box=e.box)
            elif self.state in DEALT_STATES and e.box not in self._plan_request().boxes:
                # Not a box the deal was for (the bets', the banker's seat, Hold'em's seats).
                self._astray_after_deal(e)
            else:
                self._irregular_event(e, f"a card landed on box {e.box} in state {self.state}")
            return
        out = self.tracker.placed(e.box)
        if out.ok:
            self._publish("card_placed", box=e.box)
            return
        ruling = self._rule(out.irregularity, out.detail,
                            recipient=box_recipient(e.box) if out.box else out.recipient)
        if out.irregularity is not Irregularity.CARD_TO_BOX_WITHOUT_BET or out.recipient is None \
                or ruling is None or self.tracker is None:
            return
        if ruling.remedy is Remedy.BOX_VOID:
            # 89/2004 art. 11(4), 78/2008 art. 11(3): the card stays on the unbet box, a void
            # hand there, not in the hand it was meant for (still owed).
            for slot in self.vault.last_slots(out.recipient, len(out.cards)):
                self.vault.reassign(slot, box_recipient(e.box))
            self.tracker.astray()
        else:
            # Rectified (11/2008 art. 9(1); 261/96/M P5 rectify): the croupier puts the card
            # on the box the plan gave it, whose card it stays; nothing more is owed for it.
            self.tracker.put_right()

    def _box_on_layout(self, e: ev.CardPlaced) -> bool:
        """Whether the box reported is one of the layout's (1 to ``layout_boxes``). Another
        number is no card on a box but the board's fault: a malfunction of the box sensors,
        ruled as their failures are (_device_failure), and no box is invented for it."""
        box = e.box
        if isinstance(box, int) and not isinstance(box, bool) and 1 <= box <= self.layout_boxes:
            return True
        self._cond(e.device).add("malfunction")
        self._device_failure(e, f"reported a card on box {box!r}, which this table does not "
                                f"have (its boxes are 1-{self.layout_boxes}); a supervisor "
                                "checks the box sensors, then clears them (clear_malfunction)")
        return False

    def _astray_after_deal(self, e: ev.CardPlaced) -> None:
        """Every card is out and a card lands on a box the deal was not for. When a card
        dealt for a box has not been seen to land yet, it is that card (as while dealing,
        ``DealingTracker.placed``). Where the ruling leaves it on the box without a bet, a
        void hand there (89/2004 art. 11(4), 78/2008 art. 11(3)), the box it was dealt for is
        short of it, and nothing is left to deal that could make it up: a wrong number of
        cards to a hand (art. 11(1) of both), ruled by the game. Where the deal is rectified
        (261/96/M P5), the croupier puts it on its box and the round stands."""
        out = self.tracker.placed(e.box) if self.tracker is not None else None
        ruling = self._rule(Irregularity.CARD_TO_BOX_WITHOUT_BET, f"a card landed on box {e.box}",
                            recipient=box_recipient(e.box))
        if ruling is None or out is None or out.recipient is None or self.tracker is None \
                or self.round is None or self.round.void is not None:
            return
        self.tracker.put_right()            # the card is accounted for, one way or the other
        if ruling.remedy is not Remedy.BOX_VOID:
            return
        for slot in self.vault.last_slots(out.recipient, len(out.cards)):
            self.vault.reassign(slot, box_recipient(e.box))
        self._rule(Irregularity.WRONG_COUNT,
                   f"{out.recipient} is short of {len(out.cards)} card(s): the card dealt for it "
                   f"landed on box {e.box} after the deal, and nothing is left to deal",
                   recipient=out.recipient)

    def _on_card_removed(self, e: ev.CardRemoved) -> None:
        pass

    # --- the dealer panel (GPIO buttons and the supervisor's key switch) ----------------------
    def _on_key_switched(self, e: panel_inputs.KeySwitched) -> None:
        self._supervisor_key = bool(e.on)
        self._publish("supervisor_key", on=self._supervisor_key)

    def _on_button_repeated(self, e: panel_inputs.ButtonRepeated) -> None:
        """A bounce or a double press inside the panel's repeat guard: one step a press, so
        it is journaled and shown, and nothing is done."""
        self._irregular_event(e, f"the {e.button} button was pressed again {e.after_ms} ms "
                                 "after its last press (acted on or refused), within the "
                                 "repeat guard ([gpio] repeat_guard_ms): taken as a bounce or a "
                                 "double press, not acted on; press it again for the next step")

    def _on_button_pressed(self, e: panel_inputs.ButtonPressed) -> None:
        """A button means what the moment needs; one that means nothing now is an irregular
        event (the command's error names why)."""
        role = "supervisor" if self._supervisor_key else "dealer"
        name, args = e.button, {}
        if e.button == "silence":
            # The croupier's own button, at the table where the buzzer sounds: taken from
            # either role (the console's silence_buzzer is the supervisor's).
            self._silence(role, by="button")
            return
        if e.button == "close_bets":
            name = "shake" if self.flow.dice and self.state in ("bets_closed", "dice_shaking") \
                else "close_bets"
        elif e.button == "exposed_card":
            rec = self._last_dealt
            if rec is None:
                self._irregular_event(e, "no card dealt yet: nothing can be exposed")
                return
            args = {"recipient": str(rec)}
        elif e.button == "confirm":
            name = {"settlement": "confirm_result", "round_complete": "next_round",
                    "round_void": "next_round", "shuffling": "deck_ready",
                    "malfunction": "clear_malfunction",
                    "out_of_service": "open_table"}.get(self.state, "confirm_result")
            if name in ("next_round", "open_table") and role == "supervisor" and any(
                    c & set(SUPERVISOR_CONDITIONS) for d, c in self.blocking_conditions_sets(True)):
                name = "clear_malfunction"      # the jammed device is fixed: clear it first
            if name in ("clear_malfunction", "open_table") and role != "supervisor":
                self._irregular_event(e, f"{name} needs the supervisor's key switch on")
                return
        self.command(name, role=role, **args)

    def _unread(self, e: ev.DeviceEvent, cards: tuple[Card | None, ...]) -> ev.DeviceEvent | None:
        """``e`` when a device that reads cards put out one it could not read (a misread);
        None for a count-only device, whose cards the croupier enters at the reveal."""
        reads = self.identities.get(e.device, {}).get("recognises_cards", False)
        return e if reads and any(c is None for c in cards) else None

    def _read_twice(self, e: ev.DeviceEvent, out: Outcome) -> ev.DeviceEvent | None:
        """Hold'em: ``e`` when it put a board card out read as a card already face up in the
        round. One 52-card deck holds each card once (11/2008 art. 1(1)(3)), so one of the two
        readings is wrong, in everyone's sight: an error in the distribution, dealt with at
        once (art. 9), not at the showdown after every street was bet on a board known to be
        wrong. The new reading is dropped (``out`` holds a card without a face, entered at the
        showdown like one the device could not read) and the device failed while dealing (H11,
        as for a card it could not read). Super Pan 9 the same for a card out face up by accident
        (261/96/M art. 1(1), 4; P3). None otherwise; a card face down is not compared, as
        saying it repeats would tell what it is."""
        card = out.cards[0] if len(out.cards) == 1 else None
        board = self.flow.betting_streets and out.recipient == BOARD
        # Super Pan 9: a card out face up by accident (261/96/M art. 4), dealt to a seat
        exposed = self.flow.dice and out.recipient is not None
        if card is None or not out.face_up or not (board or exposed):
            return None
        shown = [r for rec in self.vault.recipients() for r in self.vault.public_hand(rec)]
        if card not in {r.card for r in shown + self.vault.set_aside_cards() if r is not None}:
            return None
        out.cards = (None,)
        return e

    def _read_twice_why(self, e: ev.DeviceEvent | None) -> str:
        if e is None:
            return ""
        if self.flow.dice:
            return (f"the {self._device_class(e.device)} read a card out face up as one "
                    "already face up at the table: one deck holds each card once (261/96/M "
                    "art. 1(1))")
        return (f"the {self._device_class(e.device)} read a board card as one already face up "
                "at the table: one deck holds each card once (11/2008 art. 1(1)(3))")

    def _take(self, out: Outcome, misread: ev.DeviceEvent | None = None,
              read_twice: str = "") -> None:
        """Keep the card(s) of one dealing outcome and act on its irregularity, if any.
        ``misread``: the event put out a card its device could not read, a machine failure
        while dealing (the game's own article, as the shoe's misread); ``read_twice``: what
        to say when it is a Hold'em board card read as one already face up (``_read_twice``)."""
        if out.recipient is None:      # beyond the plan
            self._rule(out.irregularity, out.detail)
            return
        rectified = self._count_rectified(out)
        if rectified is not None:
            out = rectified
            if not self._dealing_now():
                return
        else:
            slot = self._give(out, out.face_up and out.ok)
        if rectified is None and not out.ok:
            if out.irregularity is Irregularity.PLAYER_CARD_EXPOSED:
                out.irregularity = self._exposure(out.recipient)
            self._rule(out.irregularity, out.detail, recipient=out.recipient, slot=slot)
            if not self._dealing_now():
                return
            nxt = self.tracker.expected if self.tracker else None
            if nxt is not None and out.step is not None and nxt.deal.street == out.step.deal.street:
                out.street_done = False      # a replacement card is still owed on this street
        if misread is not None and self.state == "dealing":
            self._device_failure(misread, read_twice or
                                 f"a card left the {self._device_class(misread.device)} unread")
            if not self._dealing_now():
                return
        if self.state == "malfunction":
            self._held_taken(out)       # the deal goes on from here once the supervisor clears
            return
        if self.tracker is not None and self.tracker.done:
            self._dealt()
        elif out.street_done and self.flow.betting_streets:
            self._street_dealt(out.step.deal.street)
        else:
            self._ask_shuffler()

    def _dealing_now(self) -> bool:
        """Cards are being dealt: in ``dealing``, or in ``malfunction`` with the deal held (a
        card out meanwhile is the plan's next)."""
        return self.state == "dealing" or (self.state == "malfunction" and self.dealing_held())

    def _give(self, out: Outcome, face_up: bool) -> int | None:
        """The card(s) of one outcome go to its recipient, and the table shows them (a
        face-down card as a card without a face). Returns the last card's slot."""
        slot = None
        for card in out.cards:
            slot = self.vault.deal(out.recipient, card, face_up)
        if slot is not None:
            self._last_slot[out.recipient] = slot
            self._last_dealt = out.recipient
        self._publish("card", recipient=str(out.recipient), count=len(out.cards),
                      hand=self.vault.public_hand(out.recipient),
                      street=out.step.deal.street if out.step else None)
        return slot

    def _count_rectified(self, out: Outcome) -> Outcome | None:
        """A hand of the wrong size whose ruling is ``rectify`` (11/2008 art. 9(1); 261/96/M P5
        ``rectify``): the croupier gives its cards, in the order they left the shuffler, to the
        recipients the plan owes them to next (``DealingTracker.rectify_count``), and a
        recipient short of cards is owed the rest. Cards beyond the street being dealt (Hold'em)
        or beyond the plan are taken out of play face down and never shown. No recipient keeps
        a wrong number of cards. Returns the outcome the deal goes on from (the last part
        given, or the hand's own when nothing was given), or None when the ruling is not
        ``rectify``: the hand is then kept and ruled as it came."""
        if out.irregularity is not Irregularity.WRONG_COUNT or out.step is None \
                or self.tracker is None:
            return None
        try:
            ruling = self._ask(Irregularity.WRONG_COUNT)
        except RuleError:
            return None
        if ruling.remedy is not Remedy.RECTIFY:
            return None
        parts, spare = self.tracker.rectify_count(out.cards)
        for part in parts:
            self._give(part, part.face_up)
        for card in spare:
            self.vault.set_aside(self.vault.deal(BURN, card, False), face_up=False)
        self._publish("cards_rectified", recipient=str(out.recipient), article=ruling.article,
                      given=[{"recipient": str(p.recipient), "count": len(p.cards)}
                             for p in parts],
                      out_of_play=len(spare))
        self._rule(Irregularity.WRONG_COUNT, out.detail, recipient=out.recipient)
        if parts:
            return parts[-1]
        return Outcome(out.step, out.recipient, ())

    # --- dice ---------------------------------------------------------------------------------
    def _on_shake_started(self, e: ev.ShakeStarted) -> None:
        if not self.flow.dice:
            self._irregular_event(e, "this game uses no dice")
        elif self.state in ("bets_open", "bets_closed"):
            self._start_shake()
        elif self.state != "dice_shaking":
            self._irregular_event(e, f"a shake in state {self.state}")
        else:
            self._reshake_owed = False      # the banker shook again

    def _on_dice_result(self, e: ev.DiceResult) -> None:
        if not self.flow.dice or self.state != "dice_shaking":
            self._irregular_event(e, f"dice result in state {self.state}")
            return
        if self._reshake_owed and not self._reshake_asked:
            # 261/96/M art. 2(4): the banker owes a shake and has not shaken again (a die out
            # of the cup, a shake refused): these dice are no throw of his.
            self._irregular_event(e, "dice read before the banker shook again: the banker "
                                  "shakes the dice again (261/96/M art. 2(4)), and only the "
                                  "dice of that shake count")
            return
        dice = tuple(e.dice)
        try:
            # The plan is made first: it checks the dice (261/96/M art. 1(2), four dice of
            # 1 to 6), so a reading that is not a throw changes nothing and is never shown.
            self._make_tracker(dice=dice)
        except RuleError as exc:
            # The agitator read what no throw shows: it is out of order (P4), as when it
            # reports its own malfunction. The banker shakes again once it is put right.
            self._cond(e.device).add("malfunction")
            self._device_failure(e, f"reported dice {list(dice)}, which no throw shows ({exc})")
            return
        self.round.dice = dice
        self._reshake_owed = False
        self._publish("dice", dice=list(dice), total=sum(dice))
        self.dice_settled()
        self._ask_shuffler()

    def _on_die_not_flat(self, e: ev.DieNotFlat) -> None:
        self._die_fault(e, Irregularity.DIE_NOT_FLAT, f"die {e.die} not flat")

    def _on_die_out_of_cup(self, e: ev.DieOutOfCup) -> None:
        self._die_fault(e, Irregularity.DIE_OUT_OF_CUP, f"die {e.die} out of the cup")

    def _die_fault(self, e: ev.DeviceEvent, irr: Irregularity, detail: str) -> None:
        if self.state != "dice_shaking":
            self._irregular_event(e, f"{detail} in state {self.state}")
            return
        self._rule(irr, detail, device=e.device)

    # ======================================================================================
    # round steps
    # ======================================================================================
    def configure_next_round(self, other: "Table", *, switch_mode: bool = False) -> None:
        """Play the next round, and every one after it, with ``other``'s configuration (a
        table built with the new settings, which checked them): the game, the layout, the
        interpretations, the devices, the limits, the Hold'em stakes, the house's co-bank
        capital, the integrity monitor and what its alarms do. The round in play keeps its own
        to its end. ``switch_mode``: the next round is dealt by ``other``'s mode, as after
        ``switch_mode``. Another game keeps nothing of the last one's bank turn, dealer button
        or bettors, and begins with its deck shuffled."""
        self._next_configuration = (other, switch_mode)

    def configure_now(self, other: "Table", *,
                      switch_mode: bool = False) -> dict[str, Any] | None:
        """Take ``other``'s configuration at once (as configure_next_round), for a table with
        no round opened yet: a start on a changed table.toml before any round. What it
        changed of the devices (devices_changed), or None."""
        if self.round is not None:
            raise TablectlError("a round has opened: its configuration is kept to its end")
        self._next_configuration = (other, switch_mode)
        return self._take_configuration()

    def _take_configuration(self) -> dict[str, Any] | None:
        """Take the configuration given by configure_next_round (if any). What it changed of
        the table's devices (devices_changed), or None."""
        other, switch_mode = self._next_configuration or (None, False)
        if other is None:
            return None
        self._next_configuration = None
        changed = self.devices_changed(other.devices)
        new_game = other.game.game_id != self.game.game_id
        for name in CONFIGURED:
            setattr(self, name, getattr(other, name))
        self.gate.action = other.gate.action
        new_mode = switch_mode and other.mode is not self.mode
        if new_game:
            self._bank_turn = self._bank_bettors = self._last_button = None
        elif self._bank_turn is not None and self._bank_turn.seat > self.layout_boxes:
            # 261/96/M art. 5(1)-(2): the seat holding the bank is gone from the new layout,
            # so its turn is over and the bank goes to a seat the table has
            self._bank_turn = self._bank_bettors = None
        if new_game or new_mode:
            self.mode = other.mode if new_mode else self.mode
            self._needs_shuffle, self._deck_ready = True, False
            self._deck_check, self._shuffle_after_check, self._dispensing = "", False, False
            self._awaiting_shuffle, self._unanswered = False, ""
        if new_mode:
            self._publish("mode", mode=self.mode.value)
        return changed

    def devices_changed(self, devices: Mapping[str, str]) -> dict[str, Any] | None:
        """What taking ``devices`` (id -> class) in place of the table's own changes of its
        devices, or None: those that leave the table's view (``left``: each ``device``, its
        ``class`` and the ``conditions`` it leaves with, which stop nothing from then on:
        kept, unseen, for when it is configured again) and those that join it (``joined``:
        ``device`` and ``class``). A device kept under another class leaves as the one and
        joins as the other (its conditions stay on it). A table configured with no devices
        takes every one it heard from as its own."""
        heard = sorted({*self.identities, *(d for d, c in self.conditions.items() if c)})
        before = dict(self.devices) if self.devices else {d: d for d in heard}
        after = dict(devices) if devices else {d: d for d in heard}
        # an id from an earlier file that spells a card is marked, as the view marks it
        left = [{"device": _shown_device(d), "class": cls,
                 **({} if d in after else
                    {"conditions": sorted(self.conditions.get(d, ()))})}
                for d, cls in sorted(before.items()) if after.get(d) != cls]
        joined = [{"device": _shown_device(d), "class": cls} for d, cls in sorted(after.items())
                  if before.get(d) != cls]
        return {"left": left, "joined": joined} if left or joined else None

    def _begin_round(self) -> None:
        changed = self._take_configuration()
        self.round_no += 1
        self.round = RoundData(self.round_no, self.game.game_id, self.mode.value)
        self.vault = CardVault()
        self.tracker = None
        self._last_slot = {}
        self._last_dealt = None
        self._holdem = None
        self._stacks = {}
        self._reshake_owed = False
        self._shaken = False
        self._busy_asks = 0
        self._unanswered = ""
        self._status_asks, self._status_ask, self._status_busy = 0, "", 0
        self._free_ask = ""
        self._held_failure, self._betting_owed = None, None
        self._shuffle_owed = False
        self._out_of_play_before_dice = 0
        self._house_capital = self.house_co_bank_capital
        # The first round under a new configuration says what it changed of the devices: a
        # reader of the journal need not diff two configurations.
        self._publish("round_started", game=self.game.game_id, mode=self.mode.value,
                      needs_shuffle=self.needs_shuffle(),
                      **({"devices_changed": changed} if changed else {}))
        self._opening = True
        if self.needs_shuffle() and self.mode is Mode.SHUFFLER:
            self._request_shuffle()

    # --- the shuffler's deck check ------------------------------------------------------------
    def _shuffler_free(self) -> bool:
        """The shuffler can take a deck check now: the table deals by it, no hand asked of it
        is on its way and it reports no condition (a busy or failed shuffler would refuse)."""
        if self.mode is not Mode.SHUFFLER or self._dispensing:
            return False
        return not any(c for d, c in self.conditions.items()
                       if self._device_class(d) == "shuffler")

    def _check_deck(self) -> bool:
        """Ask the shuffler to check the gathered deck (its result reaches the integrity
        monitor, journaled like every device event). True when asked."""
        if not self._shuffler_free():
            return False
        self.commands.append(Command("shuffler", "deck_check"))
        self._deck_check = "asked"
        return True

    def _deck_gathered(self) -> None:
        """The round is over: its cards go back with the rest of the deck (Super Pan 9 art.
        2(1): "as cartas usadas são colocadas de lado para serem baralhadas de novo
        juntamente com as restantes"), so the shuffler checks the whole deck now, while the
        croupier clears the layout, rather than when the next round asks for its shuffle."""
        if self.mode is Mode.SHUFFLER and self._deck_check == "":
            self._check_deck()

    def _shuffler_answered(self) -> None:
        """A card or hand asked of the shuffler came out; a round that ended while it was on
        its way has its deck checked now. It answers the oldest request: one asked before a
        failure or restart, when that one is still unanswered (the table asks no other
        meanwhile, _ask_shuffler)."""
        self._dispensing = False
        self._unanswered = ""
        if self.state in ("round_complete", "round_void"):
            self._deck_gathered()

    def _request_shuffle(self) -> None:
        """Shuffle the deck for the coming round, after its deck check: a check already asked
        is waited for (the device's own check time, no more); a deck not checked since it was
        gathered (the first round, after a malfunction or a mode switch) is checked first, as
        is one whose check the shuffler refused as busy (asked again: it may be free now). A
        shuffler that cannot take the check now shuffles at once, as without it."""
        self._awaiting_shuffle = True
        if self._deck_check == "busy":
            self._deck_check = ""
        if self._deck_check == "asked" or (self._deck_check == "" and self._check_deck()):
            self._shuffle_after_check = True
        else:
            self.commands.append(Command("shuffler", "shuffle"))

    def _resume_requests(self) -> None:
        """A device was put right (door closed, link restored, jam or malfunction cleared) or
        the shuffle a hand waited for is done: what the round in play needs of the shuffler
        and a failure refused or lost is asked again, as a journaled device command like any
        other. In ``malfunction`` nothing is asked: the supervisor clears first. A deck check
        the shuffler refused as busy is asked again first, in any state (the shuffle it holds
        back is asked on its result, _on_deck_check_result)."""
        if self.state == "malfunction" or self.mode is not Mode.SHUFFLER \
                or not self._shuffler_free():
            return
        if self._deck_check == "busy":
            if self.state != "out_of_service":  # a closed table asks at open_table
                self._check_deck()
            return
        if self.round is None or self.round.void is not None:
            return
        if self._awaiting_shuffle:
            # (A check not asked, or not sent, is asked first: _request_shuffle.)
            if self.state in ("bets_open", "bets_closed", "dice_shaking", "dealing") \
                    and self._deck_check != "asked":
                self._request_shuffle()
            return
        if self.state in ("bets_closed", "dealing") and self.tracker is not None:
            if self.tracker.done and self.state == "dealing":
                self._dealt()
            else:
                self._ask_shuffler()

    def _plan_request(self, dice: tuple[int, ...] | None = None) -> PlanRequest:
        r = self.round
        boxes = r.bet_boxes()
        if self.flow.dice and r.banker is not None and r.banker not in boxes:
            boxes = tuple(sorted(set(boxes) | {r.banker}))
        if self.flow.betting_streets:
            boxes = r.seats
        return PlanRequest(boxes=boxes, mode=self.mode, layout_boxes=self.layout_boxes,
                           button=r.button, banker=r.banker, adjust=r.adjust, dice=dice,
                           interpretations=self.interpretations)

    def _start_dealing(self, e: ev.DeviceEvent, held: bool = False) -> bool:
        """The first card closes betting (Q Poker art. 6(2), Fortune art. 6) and starts the
        plan. ``held``: it came out while the round was held in malfunction; the deal is held
        from it, and goes on once the supervisor clears."""
        blocked = self.blocking_conditions()
        if blocked and not held:
            self._irregular_event(e, f"a card came out while {blocked} is not cleared")
            return False
        if not self.round.bet_boxes() and not self.flow.betting_streets:
            self._irregular_event(e, "a card came out with no bet on the layout")
            return False
        if self.tracker is None:
            self._make_tracker()
        if self.flow.betting_streets and self._holdem is None:
            self._start_hand()
        if self.state == "bets_open" or (held and not self.closed_held()):
            # Held, betting would reopen at the clear: the card has closed it.
            self._publish("bets_closed", by="first card", bets=self.round.bets_json())
        if held:
            self._held_round, self._held_dealing = False, "dealing"
            self._awaiting_shuffle = False      # the deck is being dealt from
        else:
            self.first_card()
        return True

    def _make_tracker(self, dice: tuple[int, ...] | None = None) -> None:
        """The round's dealing plan is fixed: bets closed (and, in Super Pan 9, the dice
        read)."""
        request = self._plan_request(dice=dice)
        self.tracker = DealingTracker(self.game.dealing_plan(request), request.boxes)
        self._needs_shuffle = self._needs_shuffle or self.flow.shuffle_every_round \
            or self.mode is Mode.SHUFFLER
        self._deck_ready = False

    def _start_hand(self) -> None:
        """Hold'em: the hand begins with the blinds posted by the betting engine (art. 5)."""
        from controller.rules.texas_holdem import start_hand

        r = self.round
        o = self.holdem_options
        self._holdem = start_hand(r.seats, self._stacks, r.button, o["small_blind"],
                                  o["big_blind"], o["structure"], self.interpretations,
                                  self.layout_boxes)
        self._last_button = r.button
        self._publish("blinds", button=r.button, small_blind=o["small_blind"],
                      big_blind=o["big_blind"], pot=self._holdem.pot,
                      posted=[a.to_json() for a in self._holdem.history])

    def _ask_shuffler(self) -> None:
        """With the shuffler, the controller asks for each planned hand (or card) in turn."""
        if self.mode is not Mode.SHUFFLER or self.tracker is None or self.tracker.done:
            return
        if self._awaiting_shuffle or not self._shuffler_free():
            return      # asked once the shuffle is done or the shuffler put right
        if self._unanswered:
            # The hand asked before a failure or restart may be on its way: asked again only
            # once the shuffler's status says none is (_on_status), so that no hand comes out
            # twice for one step and none is left over at the end.
            if self._unanswered == "maybe":
                self._unanswered = "asked"
                self._status_ask = self._ask_status()
            return
        n = self.tracker.owed_in_step()     # after a short hand, what the step still owes
        self._dispensing = True
        self._free_ask = ""                 # asked again: whether it is free is moot
        # The deck in the shuffler is being dealt: the next round needs a fresh shuffle.
        self._deck_ready, self._needs_shuffle = False, True
        if n == 1:
            self.commands.append(Command("shuffler", "dispense_card"))
        else:
            self.commands.append(Command("shuffler", "dispense_hand", {"n": n}))

    def _start_shake(self) -> None:
        r = self.round
        if not r.bet_boxes():
            raise TablectlError("no bet is on the layout; mark the bets before the shake")
        if r.banker is None:
            # 261/96/M art. 5(3): the banker's capital is on the table before the dice are
            # shaken, and only the banker shakes (art. 2(2)): the agitator's own button
            # pressed before that is no throw, and betting stays open.
            raise TablectlError("name the banker's seat and capital first (set_banker): the "
                                "banker's capital is on the table before the shake "
                                "(261/96/M art. 5(3))")
        if self.state == "bets_open":
            self._publish("bets_closed", by="shake", bets=r.bets_json())
        self._shaken = True
        self._reshake_owed = False      # the banker shakes (again, after a hold)
        self._needs_shuffle = True
        self._deck_ready = False
        self.shake()

    def _dealt(self) -> None:
        """The plan is complete."""
        if self.flow.betting_streets:
            h = self._holdem
            if h.is_over:
                self.showdown()
                self._reveal_and_settle()
            else:
                self._street_dealt("river")
            return
        if self.flow.hands_open_after_deal:
            if self._read_twice_at_opening():
                return
            # 89/2004 and 78/2008 art. 9(1): the players open their hands, then decide.
            for rec in self._reveal_order():
                if rec.kind == "box" and not self._void_hand(rec):
                    self._publish("hand_opened", recipient=str(rec),
                                  hand=self.vault.reveal(rec))
        self.hands_dealt()
        if self.state == "croupier_reveal":
            self._reveal_and_settle()
        elif self.state == "player_decisions":
            self._publish("decisions_open", pending=self._pending_decisions())
            if not self._pending_decisions() and not self.flow.betting_streets:
                self.decisions_done()
                self._reveal_and_settle()

    def _read_twice_at_opening(self) -> bool:
        """Q Poker and Fortune 3 Card Poker, the deal complete: True when two of the cards the
        opening of the players' hands (89/2004 and 78/2008 art. 9(1)) would show read as the
        same card under one deck (78/2008 art. 1(1); 89/2004 art. 1(1), Q3 ``one``). One of
        the readings is wrong, in every player's sight: an error of the deal, ruled now as the
        dealing device's failure while dealing (89/2004 art. 11(5) and Q5, 78/2008 art. 11(4)
        and F7), not at the settlement after everyone decided on hands known to be wrong.
        Only cards to be shown are compared (the players' hands, a card set aside face up):
        saying that a card of the croupier's or of a void box repeats would tell what it is.
        Ruled once: a reading that lets the round stand goes on to the opening."""
        if self.interpretations.get("decks") == "several" or self.round is None:
            return False
        why = (f"the {self._dealing_class()} read two of the players' cards as the same card: "
               "one 52-card deck holds each card once")
        if any(r.get("detail") == why for r in self.round.rulings):
            return False
        seen: set[Card] = set()
        for i, card in enumerate(self.vault.all_cards_unpublishable()):
            rec = self.vault.slot_recipient(i)
            shown = self.vault.is_face_up(i) if self.vault.is_set_aside(i) else \
                rec.kind == "box" and not self._void_hand(rec)
            if card is None or not shown:
                continue
            if card in seen:
                break
            seen.add(card)
        else:
            return False
        device = next((d for d, c in self.devices.items() if c == self._dealing_class()),
                      self._dealing_class())
        self._device_failure(ev.Misread(device=device, ts=0.0), why)
        return self.state != "dealing"

    def _street_dealt(self, street: str) -> None:
        """Hold'em: a street is out; bet on it unless nobody can (all in), then deal on."""
        h = self._holdem
        index = HOLDEM_STREETS.get(street, 0)
        if h.is_over or h.street_index > index:
            self._ask_shuffler()
            return
        self.hands_dealt()
        self._publish("betting_round", street=h.street, to_act=h.to_act, pot=h.pot)

    def _box_decides(self) -> bool:
        """Q Poker under shared_box_decision=seated_player (89/2004 art. 6(1), 9(2); Q2): one
        decision, the seated player's, binds every bet versus the croupier on the box."""
        return self.interpretations.get("shared_box_decision") == "seated_player"

    def _box_players(self, box: int) -> list[str | None]:
        """The players with a bet of any kind on ``box``, the box's own (no name) first."""
        return sorted({k.player for k, v in self.round.bets.items() if k.box == box and v > 0},
                      key=lambda p: (p is not None, p or ""))

    def seated_marks(self) -> dict[int, str | None]:
        """Q Poker under seated_player: box -> the player marked seated at it this round with
        his bet (``place_bet`` seated=true; None: the box's own player), while he holds a bet
        on it. The table cannot see who sits; the dealer says so when the bet is placed."""
        held, marks = self._seated
        r = self.round
        if r is None or held is not r:
            return {}
        return {b: p for b, p in marks.items()
                if any(k.box == b and k.player == p and v > 0 for k, v in r.bets.items())}

    def _box_deciders(self, box: int) -> list[str | None]:
        """Under seated_player, who may give ``box``'s decision: the player marked seated with
        his bet. Without a mark the table reads the bets: a bet without a name is the box's
        own, so its player is the seated one and every named player backs the box; when every
        bet is named, any player with a bet on the box may be the seated one, and the first
        to decide is taken as him (Q2)."""
        marks = self.seated_marks()
        if box in marks:
            return [marks[box]]
        players = self._box_players(box)
        return [None] if None in players else players

    def _pending_decisions(self) -> list[dict[str, Any]]:
        r = self.round
        wager = self.flow.decision_wager
        if wager is None:
            return []
        open_boxes = {k.box for k, amount in r.bets.items()
                      if k.wager == wager and amount > 0 and k.box not in r.void_boxes}
        if self._box_decides():
            # one decision per box, from its seated player (_box_deciders)
            decided = {b for b, _ in r.decisions}
            return [{"box": b, "player": p} for b in sorted(open_boxes - decided)
                    for p in self._box_deciders(b)]
        out = [{"box": k.box, "player": k.player} for k, amount in r.bets.items()
               if k.wager == wager and amount > 0 and k.box in open_boxes
               and (k.box, k.player) not in r.decisions]
        return sorted(out, key=lambda d: (d["box"], d["player"] or ""))

    def _reveal_and_settle(self) -> None:
        """Every hand still in is shown, in the order the game gives (the croupier's or the
        banker's last), and the game settles the round from revealed cards only."""
        uncontested = self._holdem is not None and self._holdem.won_uncontested
        for rec in [] if uncontested else self._reveal_order():
            if rec.kind in ("box", "croupier") and not self._folded(rec) \
                    and not self._void_hand(rec) and self.vault.revealed_hand(rec) is None:
                self._publish("hand_revealed", recipient=str(rec), hand=self.vault.reveal(rec))
        self._settle_now()

    def _reveal_order(self) -> list[Recipient]:
        """The hands holding cards, in the order the game has them shown (its article on
        opening the hands: 89/2004 and 78/2008 art. 9, 11/2008 art. 8(5), 261/96/M art. 5(6)),
        asked from the round's plan request. A hand the game does not name (none should hold
        cards) is put first, so the hand every other plays against is still shown last."""
        named = self.game.reveal_order(self._plan_request(dice=self.round.dice))
        held = self.vault.recipients()
        return [r for r in held if r not in named] + [r for r in named if r in held]

    def _unknown_hands(self) -> list[str]:
        """Revealed hands holding a card the device could not read (to enter at the console);
        in Hold'em the board too, face up from the moment it is dealt: the showdown ranks
        each hand with it (11/2008 art. 10(1)), and a board of unread cards settles nothing."""
        out = []
        for rec in self.vault.recipients():
            if rec.kind in ("box", "croupier", "board") and self.vault.unknown_face_up(rec):
                out.append(str(rec))
        return out

    def _settle_now(self) -> None:
        unknown = self._unknown_hands()
        if unknown:
            # A card the device could not recognise: the croupier reads it out at the reveal
            # and it is entered at the console (enter_cards) before anything is paid. A
            # Hold'em hand won without a showdown comes here from its betting: the table waits
            # at the reveal, where the cards (the board's) are entered.
            if self.state == "player_decisions":
                self.decisions_done()
            self._publish("cards_needed", recipients=unknown)
            return
        try:
            settlement = self.game.settle(settle_doc.build(self.game.game_id, self))
            check_settlement_amounts(settlement.to_json())
        except TablectlError as exc:
            # The cards or bets recorded do not make a round the rules can settle (e.g. a
            # card read twice): the supervisor decides; nothing is paid meanwhile.
            self._publish("settlement_refused", reason=scrub(str(exc)))
            self._unsettled = True
            self.fail()
            return
        result = self.vault.vouch(settlement.to_json())
        self.round.settlement = result if isinstance(result, dict) else None
        self.settle()
        # The document vouched for above: settling turns no card over, and the event's walk
        # copies what it publishes, so the round's own copy is not shared with anyone.
        self._publish("settlement", **_public_settlement(result))

    def _void_hand(self, rec: Recipient) -> bool:
        """Whether ``rec`` is a void hand on a box without a bet (89/2004 art. 11(4),
        78/2008 art. 11(3)): cards dealt there by mistake. No player holds it, so art. 9(1)
        opens nothing of it, and it is no hand still in at the reveal: its cards stay face
        down at the table and are never shown."""
        return rec.kind == "box" and self.round is not None and rec.box in self.round.void_boxes

    def _folded(self, rec: Recipient) -> bool:
        h = self._holdem
        return h is not None and rec.kind == "box" and rec.box in h.folded

    # ======================================================================================
    # commands
    # ======================================================================================
    def _require(self, *states: str, what: str) -> None:
        if self.state not in states:
            raise TablectlError(f"cannot {what} while the table is in {self.state}; "
                                f"that is allowed in {', '.join(states)}")

    def _require_betting(self, what: str, *, removal: bool = False) -> None:
        """Bets (and Super Pan 9's co-banks) change only while betting is open. Later in a
        round the game says whether its regulation has closed them (89/2004 art. 6(2), 78/2008
        art. 6(3), 261/96/M art. 2(5)), and the refusal cites the article it names."""
        if self.state != "bets_open" and self.round is not None and self.state in ROUND_STATES:
            try:
                self.game.check_bet_change(self._phase(), self.vault.slots(), removal=removal)
            except RuleError as exc:
                raise TablectlError(f"cannot {what} while the table is in {self.state}: "
                                    f"{exc}") from None
        self._require("bets_open", what=what)

    def _cmd_open_table(self) -> None:
        self._require("out_of_service", what="open the table")
        self._round_may_open()
        blocked = self.blocking_conditions(next_round=True)
        if blocked:
            raise _not_ready(blocked, self._gone())
        self._require_linked("open the table")
        self._begin_round()
        self.open_table()

    def _cmd_close_table(self) -> None:
        self._require("round_complete", "round_void", "malfunction", "shuffling", "bets_open",
                      what="take the table out of service")
        if self.state == "bets_open" and self.round and self.round.bets:
            raise TablectlError("bets are on the layout; return them (remove_bet) first")
        if self.state == "bets_open" and self.round and self.round.co_bankers:
            raise TablectlError(f"co-bank capital is on the layout "
                                f"({', '.join(self._co_banker_names())}); return it "
                                "(remove_co_bank) first")
        r = self.round
        if self.state == "malfunction" and r is not None and r.void is None and not r.paid \
                and (r.bets or r.co_bankers or r.seats or self.vault.slots()) \
                and self.replay_accepted is not True:
            # A round held for the supervisor with stakes or cards on the layout: closing
            # the table over it would leave it never ended in the journal, its bets neither
            # settled nor returned. A journal of an earlier version, which took it, replays
            # as it was played.
            raise TablectlError(f"round {r.round_id} is held in malfunction with its bets on "
                                "the layout; void it (void_round with the reason: every bet "
                                "is returned) or clear the malfunction and finish it, then "
                                "take the table out of service")
        if r is not None and r.void is None and not r.paid:
            # Betting or waiting for its deck, or held there in malfunction, with nothing on
            # the layout (refused above otherwise): the round ends here, never played.
            self._not_played(r)
        self.round = None if self.state in ("shuffling", "bets_open") else self.round
        # 261/96/M art. 5(2): the players of the last round may be gone when the table opens
        # again; when every one of them declined the bank, closing the table is the way out
        self._bank_bettors = None
        self._fault_from = ""
        self.close_table()

    def _not_played(self, r: RoundData) -> None:
        """The round that opened (``shuffling``, or ``bets_open`` with nothing on the layout,
        or either held in ``malfunction``) ends with the table taken out of service: its
        ``round_close`` says so (outcome ``not_played``), so the journal never holds a round
        begun and never ended, and an auditor tells a closed table from a lost record."""
        self._publish("round_not_played", reason=NOT_PLAYED_REASON,
                      by=self._role or "supervisor", returned=[])
        # Ended as any round ends: with deck_per_round (Super Pan 9) the deck shuffled for it
        # is never dealt from again (the table reopens on a new one).
        self._release_alarms()
        if self.integrity is not None:
            self._integrity(self.integrity.round_ended())

    def _cmd_deck_ready(self) -> None:
        self._require("shuffling", what="report the deck ready")
        if self.mode is Mode.SHUFFLER:
            raise TablectlError(self._shuffler_deck_refusal())
        blocked = self.blocking_conditions()
        if blocked:
            raise _not_ready(blocked, self._gone())
        self._deck_ready = True
        if self.integrity is not None:
            self._integrity(self.integrity.new_deck())
        self._publish("shuffle", device="croupier", status="done")
        # As the shuffler's shuffle done: a deck alarm under "stop" holds betting back here.
        self._bets_open_on_ready_deck()

    def _shuffler_deck_refusal(self) -> str:
        """Why the croupier does not report the shuffler's deck ready, and what works while
        the round waits in ``shuffling``: switch_mode is refused there, so dealing by the
        shoe takes the table out of service first (the round ends not played)."""
        why = "the shuffler reports its own deck ready (shuffle done); wait for it"
        if self.devices and Mode.SHOE.value not in self.devices.values():
            return f"{why}: this table has no shoe configured to deal by instead"
        return (f"{why}, or, to deal by the shoe instead, a supervisor takes the table out of "
                "service (close_table: this round ends not played), switches it to the shoe "
                "(switch_mode with mode shoe) and opens it again (open_table)")

    def _check_box(self, box: Any) -> int:
        if isinstance(box, bool) or not isinstance(box, int):
            # true would pass for box 1, and "1" be looked up as a box of that name
            raise TablectlError(f"box must be a whole number, one of this table's boxes "
                                f"1-{self.layout_boxes}; got {shown(box)}")
        if not 1 <= box <= self.layout_boxes:
            raise TablectlError(f"box {box} does not exist; this table has boxes "
                                f"1-{self.layout_boxes}")
        return box

    @staticmethod
    def _check_player(player: Any) -> None:
        """A player's name sets his bets apart from the box's own (player left out), which
        the settlement names "box N": a name it could not tell from them is refused."""
        if player is None:
            return
        if not isinstance(player, str):
            raise TablectlError(f"a player's name must be text, got {described(player)}")
        if not player.strip():
            raise TablectlError("a player's name may not be empty; give the name, or leave "
                                "player out for the box's own bet")
        if any(unicodedata.category(ch) in ("Cc", "Cf") for ch in player):
            raise TablectlError(f"a player's name must be printable text, got {shown(player)}; "
                                "type the name again")
        if re.fullmatch(r"box\s*\d+", player.strip(), re.IGNORECASE):
            raise TablectlError(f"{shown(player)} is how the settlement names a box's own bets, so "
                                "it cannot be a player's name; give the player's own name, or "
                                "leave player out for the box's own bet")

    def _cmd_place_bet(self, box: int, wager: str, amount: int, player: str | None = None,
                       seated: bool = False) -> None:
        self._require_betting("place a bet")
        if self.flow.betting_streets:
            raise TablectlError("in Texas Hold'em the blinds and bets come from the betting "
                                "engine: seat the players (seat_players), then holdem_action")
        box = self._check_box(box)
        self._check_player(player)
        amount = check_amount(amount)
        if self.wagers and wager not in self.wagers:
            raise TablectlError(f"{self.game.title} has no wager {shown(wager)}; its wagers are: "
                                f"{', '.join(self.wagers)}")
        if self.flow.decision_wager == "ante":
            # 78/2008 art. 6: a player bets only on his own box. A bet without a name and a
            # named one would be two players, each with a decision the box has only one of.
            others = {k.player for k in self.round.bets if k.box == box} - {player}
            if others:
                owner = sorted(others, key=str)[0]
                mine = ("leave player out" if owner is None
                        else f"give player {shown(owner)}")
                raise TablectlError(
                    f"box {box} belongs to "
                    + ("the player of its bets without a name" if owner is None else owner)
                    + f"; under 78/2008 art. 6 a player bets only on his own box: for a bet of "
                    f"that player {mine}, or place this one on another box")
        if self.flow.dice and box == self.round.banker:
            raise TablectlError(f"box {box} is the banker's seat; no bet is placed on it "
                                "(261/96/M art. 5)")
        if self.flow.dice and player is not None and self._co_banker(player) is not None:
            raise TablectlError(f"{player} co-banks this round: a player who joins the bank may "
                                "not bet on other seats (261/96/M art. 5(5)); withdraw the "
                                "co-bank first (remove_co_bank) to bet instead")
        self._check_seated(box, player, seated)
        key = BetKey(box, wager, player)
        total = self.round.bets.get(key, 0) + amount
        together = sum(self.round.bets.values()) + amount
        if together > MAX_ROUND_STAKES:
            raise TablectlError(f"the bets of this round together would be {together} chip "
                                f"units, above {MAX_ROUND_STAKES:,}: the most a round takes so "
                                "that every figure of its settlement stays within "
                                f"{AMOUNT_LIMIT}; take a smaller bet")
        check_bet = getattr(self.game, "check_bet", None)
        if check_bet is not None:
            check_bet(wager, total, self.interpretations)
        lo, hi = self.limits.get(wager, (0, 0))
        if hi and total > hi:
            raise TablectlError(f"{wager} on box {box} would be {total}, above the table limit "
                                f"{hi}; take a smaller bet")
        if lo and total < lo:
            raise TablectlError(f"{wager} on box {box} would be {total}, below the table minimum "
                                f"{lo}")
        self.round.bets[key] = total
        if seated:
            self._seated = (self.round, {**self.seated_marks(), box: player})
        self._publish("bet", box=box, wager=wager, player=player, amount=total)

    def _check_seated(self, box: int, player: str | None, seated: Any) -> None:
        """Q Poker under seated_player (Q2; 89/2004 art. 6(1), 6(3), 9(2)): one player sits at
        a box, holds its cards and decides for it. ``seated`` marks the player of the bet as
        him, whichever his wager (his own may be only the pair bonus); a bet without a name is
        the box's own, whose player sits there. Refuses a mark that would make two."""
        if not isinstance(seated, bool):
            raise TablectlError(f"seated must be true or false (true: the player of this bet "
                                f"sits at box {box} and decides play or fold for it), got "
                                f"{shown(seated)}")
        if seated and self.game.game_id != "q-poker":
            raise TablectlError(f"{self.game.title} has no shared box decision, so no player is "
                                "marked seated (only Q Poker under shared_box_decision="
                                "seated_player marks him); leave seated out")
        if seated and not self._box_decides():
            raise TablectlError("this table reads shared_box_decision=per_player: each player "
                                "decides for his own bet versus the croupier (89/2004 art. "
                                "9(2), Q2), so nobody is marked seated; leave seated out")
        marks = self.seated_marks() if self._box_decides() else {}
        own = "the player of its bets without a name"
        if box in marks:
            sitting = marks[box]
            if seated and sitting != player:
                raise TablectlError(
                    f"{sitting or own} is marked seated at box {box}: one player sits at a "
                    "box and holds its cards (89/2004 art. 6(3)), and his decision binds it "
                    "(Q2); place this bet without seated, as a backer's, or take the seated "
                    f"player's bets on box {box} back first (remove_bet) to mark another")
            if player is None and sitting is not None:
                raise TablectlError(
                    f"{sitting} is marked seated at box {box}, and a bet without a player's "
                    "name is the seated player's own (Q2): give player "
                    f"{shown(sitting)} for his bet, or the name of the player who backs the box")
        elif seated and player is not None and any(
                k.box == box and k.player is None and v > 0 for k, v in self.round.bets.items()):
            raise TablectlError(
                f"box {box} holds bets without a player's name: their player is the box's own "
                "and sits at it (Q2, 89/2004 art. 6(3)); for his bet leave player out, for "
                f"{player} as a backer leave seated out, or take the bets without a name back "
                f"first (remove_bet) to mark {player} seated")

    def _cmd_remove_bet(self, box: int, wager: str, player: str | None = None) -> None:
        self._require_betting("remove a bet", removal=True)
        key = BetKey(self._check_box(box), wager, player)
        if key not in self.round.bets:
            held = [k.wager + (f" of {shown(k.player)}" if k.player is not None else "")
                    for k in self.round.bets if k.box == box]
            raise TablectlError(f"there is no {wager} bet on box {box}"
                                + (f" for {player}" if player else "")
                                + (f"; box {box} holds {', '.join(held)}" if held
                                   else f"; box {box} holds no bet"))
        del self.round.bets[key]
        # the seated player's last bet on the box taken back: nobody is marked there now
        self._seated = (self.round, self.seated_marks())
        self._publish("bet", box=box, wager=wager, player=player, amount=0)

    def _cmd_close_bets(self) -> None:
        self._require("bets_open", what="close betting")
        if self.flow.betting_streets:
            if len(self.round.seats) < 2:
                raise TablectlError("at least two players are needed (11/2008 art. 2); "
                                    "seat them first (seat_players)")
        elif not self.round.bet_boxes():
            raise TablectlError("no bet is on the layout; mark the bets first")
        if self.flow.dice and self.round.banker is None:
            # Super Pan 9: closed betting takes no banker, and no shake is taken without one
            raise TablectlError("name the banker's seat and capital first (set_banker): the "
                                "banker's capital is on the table before the shake (261/96/M "
                                "art. 5(3)), and set_banker is taken while betting is open")
        self._publish("bets_closed", by="croupier", bets=self.round.bets_json())
        self.close_bets()
        if self.flow.betting_streets:
            self._start_hand()
        if self.flow.close_bets_at == "first_card" and self.mode is Mode.SHUFFLER:
            self._make_tracker()
            self._ask_shuffler()

    def _cmd_set_banker(self, seat: int, capital: int, all_agree: bool = False) -> None:
        self._require("bets_open", what="set the banker")
        if not self.flow.dice:
            raise TablectlError(f"{self.game.title} has no banker seat")
        seat = self._check_box(seat)
        co = self.round.co_bankers
        if co and seat != self.round.banker:
            # art. 5(5): each co-banker entrusted his capital to this banker, so the bank
            # passes to another seat only once they have taken it back
            names = _and(self._co_banker_names())
            raise TablectlError(f"{names} co-bank{'s' if len(co) == 1 else ''} with the banker "
                                f"on seat {self.round.banker} (261/96/M art. 5(5)): withdraw "
                                f"the co-bank{'s' if len(co) > 1 else ''} (remove_co_bank) "
                                "before another seat takes the bank")
        if any(k.box == seat for k in self.round.bets):
            raise TablectlError(f"seat {seat} holds bets; the banker's seat takes none "
                                "(261/96/M art. 5): remove them or choose another seat")
        capital = check_amount(capital, "the banker's capital")
        if not isinstance(all_agree, bool):
            raise TablectlError(f"all_agree must be true or false (every player agrees to the "
                                f"seat banking again, 261/96/M art. 5(1)), got {shown(all_agree)}")
        if self._bank_turn is not None:
            # art. 5(1): two rounds in a row at most; art. 5(4): a winner keeps his win in
            self._bank_turn.check(seat, capital, all_agree=all_agree)
            if seat != self._bank_turn.seat and self._bank_bettors is not None:
                # art. 5(2): the bank given up passes to a player who bet in the previous round
                check_taker(range(1, self.layout_boxes + 1), self._bank_turn.seat, seat,
                            bet_previous_round=self._bank_bettors,
                            interpretations=self.interpretations)
        self.round.banker = seat
        self.round.capital = capital
        self._publish("banker", seat=seat, capital=capital,
                      **({"all_agree": True} if all_agree else {}))

    # The names the settlement gives the bank's other shares (its "bank" rows): a co-banking
    # player so named could not be told from them.
    BANK_SHARE_NAMES = {"banker": "the banker's", "house": "the house's"}

    def _co_banker(self, player: str | None) -> dict[str, Any] | None:
        """The round's co-bank of ``player``, or the house's when ``player`` is None."""
        for entry in self.round.co_bankers:
            if (entry.get("house") and player is None) or \
                    (not entry.get("house") and entry["player"] == player):
                return entry
        return None

    def _co_banker_names(self) -> list[str]:
        return ["the house" if c.get("house") else c["player"] for c in self.round.co_bankers]

    def _co_banking(self, what: str, house: Any, *, removal: bool = False) -> None:
        self._require_betting(what, removal=removal)
        if not self.flow.dice:
            raise TablectlError(f"{self.game.title} has no banker, so no co-bank")
        if not isinstance(house, bool):
            raise TablectlError(f"house must be true or false (true: the house's co-bank, "
                                f"261/96/M art. 5(5)), got {shown(house)}")

    def _check_seat(self, seat: Any) -> int:
        """A seat of the layout, in the words of Super Pan 9 (seat, not box)."""
        if isinstance(seat, bool) or not isinstance(seat, int):
            raise TablectlError(f"seat {shown(seat)} must be a seat number 1-{self.layout_boxes}")
        if not 1 <= seat <= self.layout_boxes:
            raise TablectlError(f"seat {seat} does not exist: this table has seats "
                                f"1-{self.layout_boxes}")
        return seat

    def _cmd_co_bank(self, capital: int | None = None, player: str | None = None,
                     seat: int | None = None, house: bool = False) -> None:
        """261/96/M art. 5(5): the house, or a player of another seat, joins the banker with a
        capital of its own, on the table before the shake (art. 5(3), 2(5)). The house's
        capital is "previamente determinado": where the configuration predetermines it, a
        house co-bank takes it and another amount is refused. What the rules' settlement would
        refuse (super_pan_9 ``co_bankers``) is refused here, when given."""
        self._co_banking("take a co-bank", house)
        r = self.round
        if r.banker is None:
            raise TablectlError("name the banker first (set_banker): co-bankers join the "
                                "banker's capital (261/96/M art. 5(5))")
        if house:
            if player is not None or seat is not None:
                raise TablectlError("the house co-banks in its own name: leave player and seat "
                                    "out, or give house=false for a player's co-bank")
            capital = self._house_co_bank_capital(capital)
            held = self._co_banker(None)
            if held is not None:
                raise TablectlError(f"the house already co-banks {held['capital']} this round: "
                                    "art. 5(5) gives it one capital, settled last; to change "
                                    "it, remove_co_bank house=true and co-bank again")
            entry: dict[str, Any] = {"house": True, "capital": capital}
        else:
            if player is None:
                raise TablectlError("co_bank needs the co-banking player's name (player), or "
                                    "house=true for the house's co-bank (261/96/M art. 5(5))")
            self._check_player(player)
            share = self.BANK_SHARE_NAMES.get(player.strip().lower())
            if share is not None:
                raise TablectlError(f"{shown(player)} is how the settlement names {share} share of "
                                    "the bank, so it cannot be a co-banking player's name; give "
                                    "the player's own name")
            if seat is not None:
                seat = self._check_seat(seat)
                if seat == r.banker:
                    raise TablectlError(f"seat {seat} is the banker's: co-banking players sit "
                                        "at other seats (261/96/M art. 5(5)); give the "
                                        "co-banker's own seat, or leave seat out")
            elif self.interpretations.get("co_banker_order") == "counter_clockwise":
                raise TablectlError("with co_banker_order=counter_clockwise co-banking players "
                                    "are settled by seat from the banker's (interpretation "
                                    f"P10); give {player}'s seat")
            if capital is None:
                raise TablectlError(f"co_bank needs capital: {player}'s capital in chip units "
                                    "(only the house's may be left out, when the table's "
                                    "configuration predetermines it)")
            capital = check_amount(capital, f"co-banker {player}'s capital")
            bet = next((k for k in r.bets if k.player == player), None)
            if bet is not None:
                raise TablectlError(f"{player} bets on seat {bet.box}: a player who joins the "
                                    "bank may not bet on other seats (261/96/M art. 5(5)); "
                                    f"remove the bet (remove_bet) first, or {player} does not "
                                    "co-bank")
            held = self._co_banker(player)
            if held is not None:
                raise TablectlError(f"{player} already co-banks {held['capital']} this round; to "
                                    "change the capital, remove_co_bank and co-bank again with "
                                    "the whole capital")
            entry = {"player": player, "seat": seat, "capital": capital}
        r.co_bankers.append(entry)
        self._publish("co_banker", player=entry.get("player"), seat=entry.get("seat"),
                      house=house, capital=capital)

    def _house_co_bank_capital(self, capital: Any) -> int:
        """The house's co-bank capital: the one predetermined for the round (261/96/M art.
        5(5), [pan9] house_co_bank_capital) when none is given, and only that one; without
        one predetermined, the capital given."""
        fixed = self._house_capital
        if capital is None:
            if fixed is None:
                raise TablectlError("co_bank needs capital: the house's co-bank capital in chip "
                                    "units; or predetermine it for the table as [pan9] "
                                    "house_co_bank_capital in its configuration (261/96/M art. "
                                    "5(5))")
            return fixed
        capital = check_amount(capital, "the house's co-bank capital")
        if fixed is not None and capital != fixed:
            raise TablectlError(f"the house's co-bank capital is predetermined: {fixed} chip "
                                "units ([pan9] house_co_bank_capital, 261/96/M art. 5(5)), not "
                                f"{capital}; leave capital out to co-bank the {fixed}, or change "
                                "house_co_bank_capital in the table's configuration")
        return capital

    def _cmd_remove_co_bank(self, player: str | None = None, house: bool = False) -> None:
        """A co-bank taken back before the shake (art. 2(5), 5(3)); published with capital 0."""
        self._co_banking("withdraw a co-bank", house, removal=True)
        if house and player is not None:
            raise TablectlError("give player, or house=true, not both: one co-bank is "
                                "withdrawn at a time")
        if not house and player is None:
            raise TablectlError("remove_co_bank needs the co-banking player's name (player), or "
                                "house=true for the house's co-bank")
        entry = self._co_banker(None if house else player)
        if entry is None:
            listed = ", ".join(self._co_banker_names()) or "none"
            raise TablectlError(f"{'the house' if house else player} does not co-bank this "
                                f"round; the co-bankers are: {listed}")
        self.round.co_bankers.remove(entry)
        self._publish("co_banker", player=entry.get("player"), seat=entry.get("seat"),
                      house=house, capital=0)

    def _cmd_declare_adjust(self, points: int) -> None:
        self._require("bets_open", "bets_closed", what="declare points")
        if not self.flow.dice:
            raise TablectlError(f"{self.game.title} has no dice")
        if isinstance(points, bool) or not isinstance(points, int):
            raise TablectlError(f"points must be a whole number such as 2 or -1, got "
                                f"{shown(points)}")
        if self._shaken:
            # art. 2(3): "deverá ser declarado antes de agitar os dados" / 庄家在搖骰前. The
            # dice of this round were shaken (the shake an agitator failure or a restart held,
            # P4): the banker shakes them again (art. 2(4)) under the declaration he made.
            raise TablectlError(f"the points are declared before the dice are shaken "
                                f"(261/96/M art. 2(3)); this round's dice were shaken, so the "
                                f"declared {self.round.adjust:+d} stands for the reshake")
        check = getattr(self.game, "check_adjust", None)
        if check is not None:
            # the game's reading of the declaration (261/96/M art. 2(3), P12), before the
            # shake: a declaration it refuses is refused now, not taken for a bad throw later
            check(points, self.interpretations)
        self.round.adjust = points
        self._publish("adjust", points=points)

    def _cmd_shake(self) -> None:
        if self.state == "dice_shaking" and self._reshake_owed:
            # 261/96/M art. 2(4): the banker shakes again (the die back in the cup).
            blocked = self.blocking_conditions()
            if blocked:
                raise _not_ready(blocked, self._gone())
            self.commands.append(Command("dice", "shake"))
            self._reshake_asked = True
            return
        self._require("bets_open", "bets_closed", what="shake the dice")
        if not self.flow.dice:
            raise TablectlError(f"{self.game.title} uses no dice")
        if self.round.banker is None:
            raise TablectlError("name the banker's seat and capital first (set_banker)")
        blocked = self.blocking_conditions()
        if blocked:
            raise _not_ready(blocked, self._gone())
        self._start_shake()
        self.commands.append(Command("dice", "shake"))

    def _cmd_seat_players(self, seats: list[int], stacks: Mapping[Any, int] | list[int],
                          button: int | None = None) -> None:
        self._require("bets_open", what="seat the players")
        if not self.flow.betting_streets:
            raise TablectlError(f"{self.game.title} has no dealer button; mark bets instead")
        if not isinstance(seats, (list, tuple)):
            raise TablectlError("seats must be a list of seat numbers, e.g. [1, 4, 7]")
        seats_t = tuple(sorted({self._check_box(s) for s in seats}))
        if len(seats_t) < len(seats):
            twice = next(s for s in seats_t if list(seats).count(s) > 1)
            raise TablectlError(f"seats names seat {twice} twice; give each occupied seat once, "
                                f"e.g. {list(seats_t)}")
        given: dict[int, Any] | None = None      # a list's stacks, read in the seats' order
        if isinstance(stacks, Mapping):
            try:
                stack_map = {int(k): v for k, v in stacks.items()}
            except ValueError:
                raise TablectlError("stacks maps seat numbers to chips, e.g. {\"1\": 500}") \
                    from None
            if len(stack_map) < len(stacks):
                # "1" and "01" are one seat: which of its two stacks was meant cannot be told
                twice = next(n for n in stack_map if sum(int(k) == n for k in stacks) > 1)
                raise TablectlError(f"stacks names seat {twice} twice "
                                    f"({', '.join(repr(k) for k in stacks if int(k) == twice)});"
                                    " give each seat's chips once")
        elif isinstance(stacks, (list, tuple)) and len(stacks) == len(seats_t):
            stack_map = dict(zip(seats_t, stacks))
            given = dict(zip(seats, stacks))
        else:
            raise TablectlError("stacks must give each seat's chips: {seat: chips} or a list "
                                "in seat order")
        if set(stack_map) != set(seats_t):
            raise TablectlError(f"give a stack for exactly the seats {list(seats_t)}")
        for v in stack_map.values():
            check_amount(v, "a stack")
        if given is not None and given != stack_map:
            # The list goes to the seats in ascending order; seats given in another order make
            # it read two ways, and one of them puts chips on the wrong seat.
            meant = ", ".join(f'"{s}": {v}' for s, v in given.items())
            taken = ", ".join(f"seat {s}: {v}" for s, v in stack_map.items())
            raise TablectlError(f"stacks {list(stacks)} as a list go to the seats in ascending "
                                f"order ({taken}), but the seats were given as {list(seats)}: "
                                f"give the stacks by seat, {{{meant}}}, or list the seats in "
                                "ascending order")
        if sum(stack_map.values()) > MAX_AMOUNT:
            raise TablectlError(f"the stacks together are {sum(stack_map.values())} chip units: "
                                f"a pot can hold them all, and an amount is at most "
                                f"{AMOUNT_LIMIT}; seat smaller stacks")
        if button is not None and (isinstance(button, bool) or not isinstance(button, int)):
            # true or 1.0 would pass for seat 1 below, and "1" be refused as an empty seat
            example = seats_t[0] if seats_t else 1
            raise TablectlError(f"the button is a seat number, such as {example} (or leave it "
                                f"out to move it on), got {shown(button)}")
        from controller.rules.texas_holdem import initial_button, next_button
        due = (next_button(self._last_button, seats_t) if self._last_button
               else initial_button(seats_t))
        if button is None:
            button = due
        if button not in seats_t:
            raise TablectlError(f"the button must be on an occupied seat; got {button}")
        if button != due and self._role != "supervisor":
            # Where the blinds fall is the rule's (art. 1(2)), not the dealer's choice; a
            # supervisor may place it otherwise (a table taken over, a dispute settled).
            raise TablectlError(f"the button is due at seat {due}: it starts before the player "
                                "left of the croupier and moves to the next player clockwise "
                                "after each hand (11/2008 art. 1(2)); leave button out, or have "
                                f"a supervisor place it at seat {button}")
        from controller.rules.texas_holdem import check_players
        check_players(seats_t)
        self.round.seats = seats_t
        self.round.button = button
        self._stacks = stack_map
        self._publish("seats", seats=list(seats_t), button=button,
                      stacks={str(k): v for k, v in stack_map.items()})

    def _cmd_decide(self, box: int, decision: str, player: str | None = None) -> None:
        self._require("player_decisions", what="record a decision")
        if self.flow.decision_wager is None:
            raise TablectlError(f"{self.game.title} has no play/fold decision; "
                                "use holdem_action in Texas Hold'em")
        if decision not in ("play", "fold"):
            raise TablectlError(f"decision must be \"play\" or \"fold\", got {shown(decision)}")
        r = self.round
        key = BetKey(self._check_box(box), self.flow.decision_wager, player)
        if self._box_decides():
            self._check_box_decider(box, player)
        else:
            if key not in r.bets or box in r.void_boxes:
                raise TablectlError(f"box {box}{' ' + player if player else ''} has no "
                                    f"{self.flow.decision_wager} bet in play, so nothing to "
                                    "decide")
            if (box, player) in r.decisions:
                raise TablectlError(f"box {box} already decided {r.decisions[(box, player)]}; "
                                    f"the decision is irrevocable {self._irrevocable()}")
        r.decisions[(box, player)] = decision
        if decision == "play" and self.flow.decision_wager == "ante":
            # 78/2008 art. 9(4): the Play bet equals the Ante.
            r.bets[BetKey(box, "play", player)] = r.bets[key]
        self._publish("decision", box=box, player=player, decision=decision)
        if not self._pending_decisions():
            self.decisions_done()
            self._reveal_and_settle()

    def _irrevocable(self) -> str:
        """Why a decision stands, in the game's own words: Q Poker says so (89/2004 art.
        9(3)); in Fortune 3 Card Poker a fold loses the box, its cards and bets collected
        (78/2008 art. 9(3)), and a play has put the Play down (art. 9(4))."""
        reg = getattr(self.game, "regulation", "")
        if self.flow.decision_wager == "ante":
            return (f"({reg} art. 9(3)): a box that does not play is lost, its cards and bets "
                    f"collected, and one that plays has put its Play down ({reg} art. 9(4))")
        return f"({reg} art. 9(3))"

    def _check_box_decider(self, box: int, player: str | None) -> None:
        """Under seated_player (Q2, 89/2004 art. 6(1), 9(2)): refuse a decision for ``box``
        that is not its seated player's, or that comes after the box's decision."""
        r, wager = self.round, self.flow.decision_wager
        reading = "(interpretation shared_box_decision=seated_player, 89/2004 art. 9(2))"
        if box in r.void_boxes or not any(k.box == box and k.wager == wager and v > 0
                                          for k, v in r.bets.items()):
            raise TablectlError(f"box {box} has no {wager} bet in play, so nothing to decide")
        made = [(p, d) for (b, p), d in r.decisions.items() if b == box]
        if made:
            raise TablectlError(f"box {box} already decided {made[0][1]}"
                                f"{' (' + made[0][0] + ')' if made[0][0] else ''}: the "
                                "seated player's decision binds the box and is irrevocable "
                                f"(art. 9(3)) {reading}")
        deciders = self._box_deciders(box)
        if player in deciders:
            return
        sitting = self.seated_marks().get(box)
        if sitting is not None:
            who = (f"{player} backs box {box}" if player in self._box_players(box) else
                   f"{player} has no bet on box {box}" if player is not None else
                   f"the decision for box {box} needs its seated player's name")
            raise TablectlError(f"{who}: {sitting} is marked seated at it (placed with seated) "
                                "and decides play or fold for every bet versus the croupier "
                                f"on it {reading}; give the decision for box {box} with "
                                f"player {shown(sitting)}")
        if deciders == [None]:
            raise TablectlError(f"{player} backs box {box}: its seated player, whose bets on "
                                "it carry no name, decides play or fold for every bet versus "
                                f"the croupier on it {reading}; give the decision for box "
                                f"{box} without a player")
        named = ", ".join(str(p) for p in deciders)
        if player is None:
            raise TablectlError(f"box {box} has no bet without a player's name, so no player "
                                f"of its own; give the name of the player seated at it "
                                f"({named}), whose decision binds the box {reading}")
        raise TablectlError(f"{player} has no bet on box {box}, so cannot be seated at it; "
                            f"give the decision of the player seated at it "
                            f"({'one of ' if len(deciders) > 1 else ''}{named}), which binds "
                            f"the box {reading}")

    def _cmd_holdem_action(self, seat: int, action: str, amount: int | None = None) -> None:
        self._require("player_decisions", what="record a betting action")
        if not self.flow.betting_streets or self._holdem is None:
            raise TablectlError(f"{self.game.title} has no betting rounds; use decide")
        h = self._holdem
        if amount is not None and str(action).strip().lower() in ("fold", "check"):
            # A check or a fold cannot be taken back; given an amount, it may have been meant
            # as a bet or a raise.
            kind = str(action).strip().lower()
            raise TablectlError(f"a {kind} puts no chips in, but amount {amount!r:.40} was "
                                f"given: leave amount out to {kind}, or bet or raise to it")
        betting = h.street_index
        done = h.act(seat, action, amount)      # RuleError (a TablectlError): nothing changed
        self.round.actions.append({"box": seat, "action": action, "amount": amount})
        self._publish("action", **done.to_json(), pot=h.pot,
                      to_act=h.to_act, street_now=h.street)
        if h.won_uncontested:
            self.tracker.skip_street()
            self._reveal_and_settle()           # no showdown: no hand is shown
        elif h.is_over or h.street_index > betting:
            if self.tracker.done:
                self.decisions_done()
                self._reveal_and_settle()
            else:
                self.next_street()
                self._ask_shuffler()

    def _cmd_enter_cards(self, recipient: str, cards: list[str]) -> None:
        self._require("croupier_reveal", what="enter cards")
        rec = _parse_recipient(recipient, self.layout_boxes)
        if isinstance(cards, str):
            cards = cards.replace(",", " ").split()
        elif not isinstance(cards, (list, tuple)):
            raise TablectlError(f"cards must be text, the cards separated by spaces, or a list "
                                f"with one text per card; got {shown(cards)}")
        parsed = [Card.parse(c) for c in cards]
        # TablectlError when they do not fit the hand. A card the device read for a hand still
        # face down goes to the journal alone: a refusal or an alarm now would tell the
        # console what that hand holds. Journaled when the round ends, not now: the journal
        # is read out while the round is open (journal show, integrity report), with this
        # command and its card, and a conflict record beside it would say the same.
        for card, other in self.vault.fill(rec, parsed):
            self._held_records.append({
                "record": "alarm", "kind": "duplicate_card", "device": None,
                "cards": [str(card)], "message":
                    f"{card} was entered by hand for {rec}, and was read for {other}, whose "
                    "cards are face down: one of the two readings is wrong; check both hands "
                    "when they are turned over"})
        self._publish("cards_entered", recipient=str(rec), hand=self.vault.public_hand(rec))
        self._settle_now()

    def _cmd_confirm_result(self) -> None:
        self._require("settlement", what="confirm the result")
        if self.flow.dice and self.round.banker is not None:
            self._count_bank_round()
        self._publish("round_complete", settlement=self.round.settlement is not None)
        self.round.paid = True
        self._release_alarms()
        if self.integrity is not None:
            self._integrity(self.integrity.round_ended())
        self.confirm_result()

    def _count_bank_round(self) -> None:
        """A settled round counts in the banker's turn (261/96/M art. 5(1)); the banker's own
        net of it, after commission, is what art. 5(4) carries into a second round. A void
        round never comes here: it is not a round banked."""
        doc = self.round.settlement or {}
        net = next((row.get("net", 0) for row in doc.get("bank", ())
                    if row.get("role") == "banker"), 0)
        self._bank_turn = bank_after_round(self._bank_turn, self.round.banker,
                                           self.round.capital, int(net))
        self._bank_bettors = tuple(b for b in self.round.bet_boxes() if b != self.round.banker)

    def _bank_turn_json(self) -> dict[str, Any] | None:
        turn = self._bank_turn
        if turn is None:
            return None
        takers = None
        if self._bank_bettors is not None:
            # art. 5(2): the players who bet in the previous round, counter-clockwise from
            # the banker: those the bank may pass to
            takers = bank_offer_order(range(1, self.layout_boxes + 1), turn.seat,
                                      bet_previous_round=self._bank_bettors,
                                      interpretations=self.interpretations)
        return {**turn.to_json(), "capital_floor": turn.capital_floor,
                "may_keep": may_keep_bank(turn.rounds), "takers": takers}

    def _cmd_next_round(self) -> None:
        self._require("round_complete", "round_void", what="start the next round")
        self._round_may_open()
        blocked = self.blocking_conditions(next_round=True)
        if blocked:
            raise _not_ready(blocked, self._gone())
        self._require_linked("start the next round")
        self._begin_round()
        self.next_round()

    def _cmd_misdeal(self) -> None:
        self._require("dealing", "player_decisions", "croupier_reveal", what="declare a misdeal")
        self._rule(Irregularity.MISDEAL, "the croupier declared a misdeal")

    def _cmd_exposed_card(self, recipient: str, card: Any = None) -> None:
        self._require("dealing", "player_decisions", what="report an exposed card")
        rec = _parse_recipient(recipient, self.layout_boxes)
        if self.flow.dice and rec == CROUPIER and self.round.banker is not None:
            rec = box_recipient(self.round.banker)      # the banker holds a seat's hand
        if card is not None:
            self._exposed_at(rec, card)
            return
        slot = self._last_slot.get(rec)
        if slot is None:
            raise TablectlError(f"{rec} has no card yet; name the recipient whose card "
                                "was exposed")
        phase = self._exposure_phase(rec)
        if phase is Phase.DECISIONS and rec.kind == "box":
            # Hold'em, the hole cards out: the player holds both, and which one was shown
            # cannot be told. It stays in the hand (art. 9(1), 10(3)); the ruling names the
            # seat and no card is shown, as the last one dealt may be the one still face down
            # (art. 6(2)).
            self._rule(self._exposure(rec), f"the croupier reported a card of {rec} exposed",
                       recipient=rec, phase=phase)
            return
        if self.flow.hands_open_after_deal and self.vault.is_set_aside(slot):
            # 78/2008 art. 11(2): reported already, the card (or, when it could not be told,
            # his hand) is set aside and the croupier waits for the cards owed in its place.
            raise TablectlError(f"the exposed card of {rec} is set aside already and the "
                                "next card(s) go to him in its place; report an exposure "
                                "again once they are dealt")
        if self.flow.dice and self.mode is Mode.SHUFFLER:
            # Super Pan 9: the shuffler puts a seat's two cards out as one hand (261/96/M art.
            # 2(3)), so which was exposed cannot be told. It stays valid (art. 4, P6); the
            # ruling names the seat and no card is shown, the other being face down until the
            # seat lays it down (art. 5(6)).
            self._rule(self._exposure(rec), f"the croupier reported a card of {rec} exposed",
                       recipient=rec, phase=phase)
            return
        if self.vault.is_face_up(slot):
            raise TablectlError(f"the last card of {rec} is already face up")
        irr = self._exposure(rec)
        if self._dealt_whole(slot):
            # Q Poker, Fortune 3 Card Poker with the shuffler: the hand came out whole (art.
            # 7(2)) and which of its cards was seen cannot be told. A player's stays in his
            # hand (art. 11(2)), face down until the opening (art. 9(1)); the croupier's
            # hand is set aside whole, none of it shown (_set_aside).
            self._rule(irr, f"the croupier reported a card of {rec} exposed; which card of "
                       "the hand the shuffler put out whole cannot be told, so none is shown",
                       recipient=rec, slot=None if rec.kind == "box" else slot, phase=phase,
                       whole=True)
            return
        self._rule(irr, f"the croupier reported a card of {rec} exposed", recipient=rec, slot=slot,
                   phase=phase)

    def _exposed_at(self, rec: Recipient, position: Any) -> None:
        """The croupier names the exposed card: the ``position``-th card dealt to ``rec``
        (1 = its first, those set aside counted). It is ruled, set aside, replaced and shown
        as the game's article says for that card, and only that one. Refused, nothing
        changed, for a position the table cannot take; no refusal depends on a face-down
        card's face, only on what the table shows (how many cards, which are face up or set
        aside)."""
        mine = self.vault.positions(rec)
        if not mine:
            raise TablectlError(f"{rec} has no card yet; name the recipient whose card "
                                "was exposed")
        n = len(mine)
        named = (f"name its place among the {n} card{'s' if n != 1 else ''} dealt to {rec} so "
                 f"far, in the order dealt, from 1 to {n} (1 = its first), or leave card out "
                 "for the last one dealt")
        if isinstance(position, bool) or not isinstance(position, int):
            raise TablectlError(f"exposed_card: card must be a whole number from 1 to {n}, "
                                f"got {described(position, 20)}; {named}")
        owed = self.tracker.owed_to(rec) if self.tracker is not None else 0
        if n < position <= n + owed:
            raise TablectlError(f"card {position} of {rec} is not dealt yet; {named}")
        if not 1 <= position <= n:
            raise TablectlError(f"card {shown(position, 20)} is out of range for {rec}; {named}")
        slot = mine[position - 1]
        if self.vault.is_set_aside(slot):
            raise TablectlError(f"card {position} of {rec} is set aside already: it is no "
                                "longer in the hand, and nothing more is to be reported for it")
        if self.vault.is_face_up(slot):
            raise TablectlError(f"card {position} of {rec} is already face up")
        if self._in_whole_hand(slot):
            raise TablectlError(
                f"the cards of {rec} came out of the shuffler in one hand, so which of them is "
                f"card {position} cannot be told from the one the croupier saw; report the "
                "exposure without card (the ruling names the recipient and shows no card)")
        self._rule(self._exposure(rec), f"the croupier reported card {position} of {rec} exposed",
                   recipient=rec, slot=slot, phase=self._exposure_phase(rec), position=position)

    def _in_whole_hand(self, slot: int) -> bool:
        """The card of ``slot`` came out of the shuffler in one hand with another card its
        recipient still holds (Q Poker, Fortune 3 Card Poker three at a time, art. 7(2);
        Super Pan 9 a seat's two, 261/96/M art. 2(3)): the device's order in the hand is not
        one the croupier can see at the table. A card dealt on its own (a replacement) is not."""
        if self.mode is not Mode.SHUFFLER or not (self.flow.hands_open_after_deal
                                                  or self.flow.dice):
            return False
        rec = self.vault.slot_recipient(slot)
        return any(0 <= i < self.vault.slots() and self.vault.slot_recipient(i) == rec
                   and not self.vault.is_set_aside(i) for i in (slot - 1, slot + 1))

    def _dealt_whole(self, slot: int) -> bool:
        """Q Poker, Fortune 3 Card Poker: the card of ``slot`` came out of the shuffler in one
        hand with the one before it (three at a time, 89/2004 and 78/2008 art. 7(2)), so a
        report that "the last card" was exposed cannot say which of them it was."""
        if not self.flow.hands_open_after_deal or self.mode is not Mode.SHUFFLER or slot < 1:
            return False
        rec = self.vault.slot_recipient(slot)
        return self.vault.slot_recipient(slot - 1) == rec and \
            not self.vault.is_set_aside(slot - 1) and not self.vault.is_face_up(slot - 1)

    def _exposure_phase(self, rec: Recipient) -> Phase | None:
        """The phase a reported exposure is ruled in. Hold'em: a player's card is dealt only
        with the hole cards; once they are all out (the betting, or a later street being
        dealt, say after an all-in) an exposed hole card is no longer one "na distribuição"
        (11/2008 art. 9(1)): it is ruled in the betting phase, where nothing is replaced."""
        if not self.flow.betting_streets or rec.kind != "box":
            return None
        step = self.tracker.expected if self.tracker is not None else None
        if self.state == "dealing" and step is not None and step.deal.street == "hole":
            return None
        return Phase.DECISIONS

    def _exposure(self, rec: Recipient) -> Irregularity:
        """Which exposure it is: the banker's seat in Super Pan 9 holds the hand the
        regulation treats as the croupier's (261/96/M interpretation P6)."""
        if rec.kind == "box":
            if self.flow.dice and self.round is not None and rec.box == self.round.banker:
                return Irregularity.CROUPIER_CARD_EXPOSED
            return Irregularity.PLAYER_CARD_EXPOSED
        return {"croupier": Irregularity.CROUPIER_CARD_EXPOSED,
                "board": Irregularity.BOARD_CARD_EXPOSED}.get(rec.kind,
                                                              Irregularity.DEALING_ERROR)

    def _cmd_void_round(self, reason: str = "") -> None:
        self._require(*ROUND_STATES, "shuffling", "malfunction", what="void the round")
        if self.round is None or self.round.void is not None:
            raise TablectlError("there is no round in play to void")
        if self.round.paid and self.replay_accepted is not True:
            # Its settlement is in the journal as paid: a void would record the bets returned
            # as well. A journal of a version that took such a void replays it as played.
            raise TablectlError(_paid_round_refusal(self.round.round_id, self.state))
        if not str(reason).strip():
            raise TablectlError("give the reason the round is voided; it goes into the journal")
        ruling = Ruling(Remedy.ROUND_VOID, "supervisor", str(reason))
        self._void(ruling, "supervisor")
        self.void_round()

    def _cmd_clear_malfunction(self) -> None:
        if self.state != "malfunction":
            self._clear_conditions()
            return
        if self._unsettled:
            raise TablectlError("the round could not be settled from what was recorded; void "
                                "it (void_round with the reason) before clearing")
        closed = self.closed_table_held()
        new_round = not (self.round_held() or self.dealing_held() or self.shake_held()
                         or closed)
        # A clear that begins a round looks at the devices that round needs. One that puts
        # back a table out of service, or a round waiting for its deck, after the controller's
        # fault is refused alike (the devices are not put right yet): a journal whose clear
        # began a round there replays with each clear accepted or refused as it was played.
        as_opening = new_round or bool(self._fault_from)
        left = {dev: sorted(c - set(SUPERVISOR_CONDITIONS))
                for dev, c in self.blocking_conditions_sets(next_round=as_opening)
                if c - set(SUPERVISOR_CONDITIONS)}
        if left:
            gone = self._gone()
            ways = [_gone_lost(left, gone)]
            if any(d not in gone or "link_lost" not in c for d, c in left.items()):
                ways.insert(0, "close the door or reconnect the device, or switch the table to "
                            "the other mode")
            raise TablectlError(f"still not ready: {_shown_keys(left)}; "
                                + "; ".join(filter(None, ways)))
        if as_opening:
            self._round_may_open()      # refused before anything is cleared
            self._require_linked("clear the malfunction and begin the next round" if new_round
                                 else "clear the malfunction of the table out of service"
                                 if closed else "clear the malfunction", closed=closed)
        cleared, kept = self._supervisor_conditions()
        for dev in cleared:
            self._sensors_watch_again(dev)
            self.conditions[dev].difference_update(SUPERVISOR_CONDITIONS)
        self._publish("malfunction_cleared", cleared=_shown_keys(cleared),
                      kept=_shown_keys(kept))
        if new_round:
            self._begin_round()
        self.clear()
        self._held_round, self._held_dealing = False, ""
        self._fault_from = ""
        self._held_failure = None
        owed, self._betting_owed = self._betting_owed, None
        if self.state == "dealing" and self.tracker is not None:
            # Cards taken while the table waited may have finished the deal, or a street.
            if self.tracker.done:
                self._dealt()
            elif owed is not None:
                self._street_dealt(owed)
        elif self.state == "shuffling" and self._deck_ready and not self.blocking_conditions():
            # The shuffle asked came while the table waited in malfunction, or the round's
            # deck was ready (shuffle done, or the croupier's deck_ready) and held by a deck
            # alarm under "stop": betting opens as it would have (_bets_open_on_ready_deck).
            self._bets_open_on_ready_deck()
            return
        elif self.state == "shuffling":
            self._shuffle_at_clear()
        self._shuffle_owed = False
        self._resume_requests()

    def _shuffle_at_clear(self) -> None:
        """The clear put the round back in ``shuffling`` and its shuffle is owed: the
        shuffler lost it while the table waited (it failed, lost its link, restarted, or the
        controller restarted and the request may never have left), or its deck check's result
        came meanwhile and nothing was sent then. Asked now, journaled before it is sent, after
        a deck check when the deck has none since it was gathered (_request_shuffle). A
        shuffle still under way refuses the repeat as busy, and its report is taken."""
        if self._shuffle_owed and self.mode is Mode.SHUFFLER and not self._deck_ready \
                and self._shuffler_free():
            self._request_shuffle()

    def _clear_conditions(self) -> None:
        """Outside ``malfunction``: a device that jammed or failed where the round did not need
        it (after the deal, between rounds) is fixed; its condition goes and nothing else
        changes (the round in play goes on as it was)."""
        cleared, kept = self._supervisor_conditions()
        if not cleared:
            raise TablectlError(f"nothing to clear: no device reports a jam or a malfunction "
                                f"or came back as another unit, and the table is in "
                                f"{self.state}, not in malfunction")
        for dev in cleared:
            self.conditions[dev].difference_update(SUPERVISOR_CONDITIONS)
            self._sensors_watch_again(dev)
            self._publish("device_condition", device=_shown_device(dev),
                          what="cleared by the supervisor",
                          conditions=sorted(self.conditions[dev]))
        self._publish("malfunction_cleared", devices=sorted(_shown_keys(cleared)),
                      cleared=_shown_keys(cleared), kept=_shown_keys(kept))
        self._resume_requests()

    def _supervisor_conditions(self) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
        """The conditions a clear_malfunction clears (a jam, a malfunction, another unit), by
        device: on the devices configured now or for the next round (cleared), and on those
        that are not (kept for when one is configured again, and shown in no view). Only the
        conditions' names: a device's own words (a jam's place) are not among them."""
        cleared: dict[str, list[str]] = {}
        kept: dict[str, list[str]] = {}
        for dev, c in self.conditions.items():      # as they came: what is asked follows
            if c & set(SUPERVISOR_CONDITIONS):
                (cleared if self._in_view_or_next(dev) else kept)[dev] = sorted(
                    c & set(SUPERVISOR_CONDITIONS))
        return cleared, kept

    def _cmd_switch_mode(self, mode: str) -> None:
        self._require("malfunction", "round_complete", "round_void", "out_of_service",
                      what="switch the dealing mode")
        new = Mode.parse(mode)
        if new is self.mode:
            raise TablectlError(f"the table already deals by {new.value}")
        if self.devices and new.value not in self.devices.values():
            raise TablectlError(f"this table has no {new.value} configured; add it as a "
                                f"[devices.*] section with class = \"{new.value}\" in "
                                "table.toml and restart the service, or go on dealing by "
                                f"{self.mode.value}")
        if self.round_held():
            raise TablectlError(self._held_round_refusal())
        self.mode = new
        self._needs_shuffle = True
        self._deck_ready = False
        self._deck_check, self._shuffle_after_check, self._dispensing = "", False, False
        self._awaiting_shuffle, self._unanswered = False, ""
        self._publish("mode", mode=new.value)

    def _held_round_refusal(self) -> str:
        """Why the mode is not switched while the malfunction holds a round open: what the
        round holds (its bets, or none yet: held while it waited for its shuffle), and the
        ways out the table takes (void it now, or clear and finish it)."""
        r = self.round
        assert r is not None
        # chips put down: bets, a Super Pan 9 bank, Hold'em's blinds (posted as the hand began)
        holds = bool(r.bets or r.banker is not None or r.co_bankers or self._holdem is not None)
        what = ("its bets are on the layout" if holds else
                "no bet is on the layout yet, but the round is open")
        return (f"round {r.round_id} is held by the malfunction and {what}: it is dealt by the "
                f"{self.mode.value} it opened with. Void it (void_round with the reason"
                + (", its bets returned" if holds else "") + ") and switch, or clear the "
                "malfunction (clear_malfunction), finish the round and switch once it is "
                "complete")

    # ======================================================================================
    # snapshot (taken when a round opens; recovery replays the inputs after it)
    # ======================================================================================
    def snapshot(self) -> dict[str, Any] | None:
        """The table between rounds, as JSON; None when a round already holds bets or cards
        (recovery then starts from an earlier snapshot)."""
        r = self.round
        if r is not None and (r.bets or self.vault.slots() or r.banker is not None
                              or r.co_bankers or r.seats):
            return None
        return {"state": self.state, "mode": self.mode.value, "round_no": self.round_no,
                "round": r.round_id if r else None,
                # a round with nothing on it already void (the controller's fault in the
                # input that opened it, _opening_ruling): restored void, as it was closed
                "void": r.void if r else None,
                "conditions": {d: sorted(c) for d, c in self.conditions.items() if c},
                "identities": self.identities, "replaced_units": self.replaced_units,
                "needs_shuffle": self._needs_shuffle,
                "deck_ready": self._deck_ready, "held_round": self._held_round,
                "held_dealing": self._held_dealing, "button": self._last_button,
                # the controller's fault in the input that opened the round: its clear waits
                # for the devices after a restart as before one
                "fault_from": self._fault_from,
                "integrity_pending": [a.to_json() for a in self.gate.pending],
                "deck_check": self._deck_check,
                "shuffle_after_check": self._shuffle_after_check,
                "dispensing": self._dispensing, "awaiting_shuffle": self._awaiting_shuffle,
                "bank_turn": self._bank_turn.to_json() if self._bank_turn else None,
                "bank_bettors": (list(self._bank_bettors) if self._bank_bettors is not None
                                 else None),
                "house_co_bank_capital": self._house_capital,
                # the panel's key: turned in an earlier round, it still gives the buttons the
                # supervisor's role after a restart replays from this round
                "supervisor_key": self._supervisor_key,
                # the devices linked to the process that opened the round (None: all its
                # links): the replay from here counts them as that process did
                "linked": sorted(self._linked) if self._linked is not None else None,
                # an alarm silenced before the round opened (left out when none, as every
                # snapshot of an earlier version is)
                **({"silenced_alarms": sorted(self.silenced_alarms)}
                   if self.silenced_alarms else {})}

    def restore(self, snap: Mapping[str, Any]) -> None:
        """Put the table back as :meth:`snapshot` described it (before replaying inputs)."""
        self.mode = Mode.parse(snap["mode"])
        self.round_no = int(snap["round_no"])
        self.round = (RoundData(int(snap["round"]), self.game.game_id, self.mode.value)
                      if snap.get("round") is not None else None)
        if self.round is not None and snap.get("void"):
            self.round.void = dict(snap["void"])
        self.vault = CardVault()
        self.tracker = None
        self._last_slot = {}
        self._out_of_play_before_dice = 0
        self.conditions = {d: set(c) for d, c in snap.get("conditions", {}).items()}
        self.identities = dict(snap.get("identities", {}))
        # A process's own: the one that opened the round, which the replay of its inputs
        # plays again; a restart after it (an input of the replay) starts from none.
        linked = snap.get("linked")
        self._linked = set(linked) if linked is not None else None
        self.replaced_units = dict(snap.get("replaced_units", {}))
        self._needs_shuffle = bool(snap["needs_shuffle"])
        self._deck_ready = bool(snap["deck_ready"])
        self._held_round = bool(snap["held_round"])
        self._held_dealing = str(snap.get("held_dealing", ""))
        self._fault_from = str(snap.get("fault_from", ""))
        self._last_button = snap.get("button")
        self._deck_check = str(snap.get("deck_check", ""))
        self._shuffle_after_check = bool(snap.get("shuffle_after_check", False))
        self._dispensing = bool(snap.get("dispensing", False))
        self._unanswered = ""           # a round's own: rebuilt by the replay of its inputs
        self._awaiting_shuffle = bool(snap.get("awaiting_shuffle", False))
        self._shuffle_owed = False      # a held round's own: rebuilt by the replay
        turn = snap.get("bank_turn")
        self._bank_turn = BankTurn.from_json(turn) if turn else None
        bettors = snap.get("bank_bettors")
        self._bank_bettors = tuple(int(b) for b in bettors) if bettors is not None else None
        self._house_capital = snap.get("house_co_bank_capital", self.house_co_bank_capital)
        self._supervisor_key = bool(snap.get("supervisor_key", False))
        self.silenced_alarms = frozenset(snap.get("silenced_alarms", ()))
        from controller.integrity.alarms import Alarm
        self.gate.pending = [Alarm.from_json(a) for a in snap.get("integrity_pending", [])]
        self._held_alarms = []
        self._held_records = []
        self.machine.set_state(snap["state"])

    # ======================================================================================
    # recovery
    # ======================================================================================
    def recover_after_restart(self) -> None:
        """The controller restarted with a round in progress: a restart while dealing or
        shaking is a machine failure (the game's ruling, normally a void round); before dealing
        the bets stand; after the deal the round goes on from the journal. What the round waits
        for of the shuffler, which may never have left, is asked again."""
        self._linked = set()            # the journal's links were the process before's
        self._publish("controller_restarted")
        # With the shuffler, a hand asked for may have come out while the controller was down;
        # none was asked while the round waits for its shuffle, or once the shuffler refused
        # the hand: betting is closed but no card is out or on its way, and the bets stand.
        asked = self.state == "bets_closed" and self.tracker is not None and self._deal_begun()
        if self.state in ("dealing", "dice_shaking") or asked:
            cls = "dice" if self.state == "dice_shaking" else (
                "shoe" if self.mode is Mode.SHOE else "shuffler")
            # With the shuffler every hand is asked for, and journaled, before it comes out:
            # none asked, none out (P3: before the first card). The shoe's cards are drawn by
            # hand: one drawn while the controller was down is still on its way (the shoe
            # sends it again), so a restart while dealing from the shoe is one during the deal.
            known = self.mode is Mode.SHUFFLER or cls == "dice"
            self._rule(DEVICE_FAILURE[cls], "the controller restarted during the "
                       + ("shake" if cls == "dice" else "deal"),
                       phase=Phase.DEALING if asked else
                       self._failure_phase(self._deal_begun()) if known else None)
            if self.state in ("dealing", "bets_closed"):
                # The game let the round stand: the supervisor looks before dealing goes on
                # (from bets_closed: betting stays closed, closed_held).
                self._held_dealing = self.state
                self._held_round = self.state == "bets_closed"
                self.fail()
        elif self.state == "shuffling" and self.mode is Mode.SHUFFLER:
            self._deck_ready = False
        if self._awaiting_shuffle and self._deck_check == "asked" and self.state != "shuffling":
            # The round waits for its shuffle, which waits for a deck check asked before the
            # restart. That command may never have left (a device command is sent after its
            # journal commit), and nothing else would ask it again: it is asked when the
            # shuffler links, as in shuffling (_on_link_up), or once the supervisor clears.
            # A check still under way refuses the repeat as busy, and its result is taken.
            self._deck_check, self._shuffle_after_check = "", False
        # A wait timed before the restart is lost with it; what the round waits for of the
        # shuffler is asked again when it links (or at the clear), not its status.
        self._free_ask, self._status_busy = "", 0
        if self._dispensing or self._unanswered:
            # A hand or card asked of the shuffler before the restart may never have left
            # either, and while it is awaited nothing more is asked of the shuffler (the next
            # round's deck check and hands included). It is no longer awaited: one that did
            # leave comes as the shuffler's event and is taken where it lands (the plan's next
            # while the round is held, _held_card; no hand of a void round). What the round
            # still needs is asked when dealing resumes, once the shuffler's status says that
            # no hand is on its way (_ask_shuffler), and a status asked before the restart may
            # never have been answered.
            self._dispensing = False
            self._status_busy = 0       # a wait timed before the restart is lost with it
            if self.round is not None and self.round.void is None:
                self._unanswered = "maybe"


@functools.lru_cache(maxsize=None)
def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    """A function's signature, worked out once: inspect.signature takes tens of
    microseconds, and a command is checked against its handler's on every call."""
    return inspect.signature(fn)


@functools.lru_cache(maxsize=None)
def _arguments(fn: Callable[..., Any]) -> tuple[frozenset[str], frozenset[str]]:
    """The keyword arguments a command's handler (a method) takes, and those it cannot do
    without, worked out once: checking a command's arguments against them is what binding
    them to the signature checked, without binding (which took ~15 us a command)."""
    by_name = (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    params = [p for p in list(_signature(fn).parameters.values())[1:] if p.kind in by_name]
    return (frozenset(p.name for p in params),
            frozenset(p.name for p in params if p.default is inspect.Parameter.empty))


@functools.lru_cache(maxsize=None)
def _text_params(fn: Callable[..., Any]) -> dict[str, bool]:
    """The parameters of a command's handler that take text: each name, and whether it may
    also be None (annotated ``str | None``)."""
    kinds = {"str": False, "str | None": True}
    return {p.name: kinds[p.annotation] for p in list(_signature(fn).parameters.values())[1:]
            if p.annotation in kinds}


# An example of each text parameter, for the errors that ask for text (the API's too).
TEXT_EXAMPLES = {"wager": "versus_croupier", "player": "A", "decision": "play",
                  "action": "call", "recipient": "box 1", "reason": "a player disputes the deal",
                  "mode": "shoe", "supervisor": "your name"}


# What each free text parameter is, for the refusal of a character it may not hold.
TEXT_WORDS = {"player": "a player's name", "reason": "a reason", "supervisor":
              "the supervisor's name"}


def card_text_refusal(command: str, param: str, value: Any) -> str | None:
    """Why ``command`` cannot take ``value`` for its text parameter ``param``, when the text
    spells a card (``Kd``, ``kd``, ``10h``), with the way out; None when it does not. The table
    publishes what is typed there (a player's name, a reason), and a published field that
    spells a card is refused as a face-down card would be: a fault, which voids a round in
    play. So the command is refused instead, with nothing changed (the console API, before the
    table sees it)."""
    if not isinstance(value, str) or not reads_as_card(value):
        return None
    t = value.strip()
    return (f"{command}: {param} {shown(value)} reads as a card, which the table never shows "
            f"as text; write it otherwise, such as \"{t[:-1]}.{t[-1]}.\" or with a word beside "
            "it")


def card_word_refusal(command: str, param: str, value: Any) -> str | None:
    """Why ``value`` is refused for the text parameter ``param`` of ``command`` when a card is
    spelled inside it (``Mr Kd``, ``shoe Kd jammed``), with the way out; None when none is.
    Such text would be shown as typed, but every message that quotes it back (a refusal, its
    log line and journal record) masks the card, so the name it gives reads ``Mr [card]`` and
    cannot be told from another. The table refuses it for a command given now (the control
    socket's), the console API before the table sees it; a journal that holds it
    taken (written before the table refused it) replays it as it was played."""
    if not isinstance(value, str) or scrub(value) == value:
        return None
    return (f"{command}: {param} {shown(scrub(value))} holds a word that reads as a card, "
            "which the table's messages mask as [card]; write it otherwise, such as "
            f"{shown(written_apart(value.strip()))} or with the card in words")


def _and(names: list[str]) -> str:
    """``a``, ``a and b``, ``a, b and c``."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _parse_recipient(text: str, layout: int) -> Recipient:
    t = str(text).strip().lower()
    if t == "croupier" or t == "banker":
        return CROUPIER
    if t == "board":
        return BOARD
    if t.startswith("box"):
        try:
            n = int(t[3:].strip())
        except ValueError:
            n = 0
        if 1 <= n <= layout:
            return box_recipient(n)
    raise TablectlError(f"recipient {shown(text)} is not \"croupier\", \"board\" or \"box N\" "
                        f"with N in 1-{layout}")


def _paid_round_refusal(round_id: int, state: str) -> str:
    """Why ``void_round`` is refused for a round whose settlement was confirmed as paid."""
    way_out = ("clear the malfunction (clear_malfunction) and the table goes on"
               if state == "malfunction" else "the table goes on with the next round")
    return (f"round {round_id} was settled and paid (confirm_result): its settlement is in the "
            "journal as what was paid, and a void would say its bets were returned as well. "
            f"Nothing was changed; {way_out}. A dispute over a settled round is handled "
            "outside the controller, by the casino's procedure for disputes (docs/controller.md, "
            "\"A round settled and paid\")")


def _public_settlement(doc: Any) -> dict[str, Any]:
    return dict(doc) if isinstance(doc, dict) else {"settlement": doc}
