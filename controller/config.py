"""The table's configuration: one TOML file (``/etc/tablectl/table.toml`` by default).

:func:`load_config` reads and validates it into a :class:`TableConfig`, or raises
:class:`ConfigError` listing *every* problem, each with the key, its line in the file, the
reason and the fix. Unknown keys are errors (a typo must not silently fall back to a default)
and come with a "did you mean". docs/configuration.md describes every key; the schema below is
the single source of the defaults.

Tokens of the console API are stored hashed (``sha256:<hex>``, see :func:`hash_token`) and
compared in constant time (:meth:`ApiConfig.role_for`).
"""
from __future__ import annotations

import dataclasses
import difflib
import functools
import hashlib
import hmac
import ipaddress
import math
import os
import re
import tomllib
import unicodedata
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path
from typing import Any, Callable, Mapping

from controller.cpu_latency import MAX_US as CPU_WAKEUP_MAX, OFF as CPU_WAKEUP_OFF
from controller.access import cannot_reach, special
from controller.errors import TablectlError
from controller.config_tokens import Found, Tokens, masked, values as token_values
from controller.inputs import BUTTONS
from controller.printable import printable
from controller.rules import GAME_IDS, get_game
from controller.rules.base import AMOUNT_LIMIT, MAX_AMOUNT, MAX_ROUND_STAKES, Mode
from controller.rules.cards import Card, spells_card
from controller.rules.errors import RuleError
from drivers.spec import CODECS, DEVICE_CLASSES, TRANSPORTS, DeviceSpec, firmware_hash_problem

DEFAULT_PATH = Path("/etc/tablectl/table.toml")
DEFAULT_JOURNAL = "/var/lib/tablectl/journal.db"
ROLES = ("display", "dealer", "supervisor")
# The journal's sources that are not devices (docs/journal.md, source): no device may take
# one of these ids, or its records would be read as theirs (a link session resumed from one).
RESERVED_IDS = {"panel": "dealer panel", "timer": "daemon's timed waits",
                "service": "daemon itself", "table": "table machine",
                "integrity": "deck-integrity monitor", "croupier": "croupier's own shuffle",
                **{role: f"console's {role} role" for role in ROLES}}
LIGHTS = ("green", "amber", "red")
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMATS = ("auto", "json", "console")
ALARM_ACTIONS = ("warn", "stop")
MAX_DECKS = 8                               # decks in one shoe (docs/integrity.md)
MAX_ALPHA = 0.01                            # the sentinel's false-alarm level, per deck
NO_DECK_ID = 0xFFFF                         # the wire's "no deck id" (docs/protocol.md)
# A console token the table refuses this many commands within the window is held back for a
# window (controller.api.throttle): far more than a croupier is refused at the table, far fewer
# than a client looping at HTTP speed sends.
REFUSED_LIMIT, REFUSED_WINDOW_S = 20, 10
REFUSED_LIMIT_MAX, REFUSED_WINDOW_MAX = 10_000, 3600
HOLDEM = "texas-holdem"
PAN9 = "super-pan-9"
STRUCTURES = ("limit", "no-limit")          # 11/2008 art. 11(2)-(3)
RAKE_MIN_PERCENT, RAKE_MAX_PERCENT = 3, 5   # 11/2008 art. 16
# \Z, not $: "$" also matches before a final line break, which an id or a hash would keep.
_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}\Z")
_ID_TEXT = "1-64 letters, digits, '.', '_' or '-', beginning with a letter or digit"
_PIN_RE = re.compile(r"^(GPIO|BCM|BOARD|WPI)\d{1,2}\Z|^J8:\d{1,2}\Z")
# A Raspberry Pi 4B, for gpiozero's data of the 40-pin header (J8): every Pi with that header
# (B+ to 5, Zero) wires it the same, GPIO0 to GPIO27, so the model does not matter.
_HEADER_REVISION = 0xc03111
_TOKEN_RE = re.compile(r"^sha256:[0-9a-f]{64}\Z")


# --- the result -----------------------------------------------------------------------------

@dataclass(frozen=True, slots=True)
class Limits:
    """Table limits in chip units: ``minimum``/``maximum`` for every wager, and per-wager
    overrides (``[limits.<wager>]``)."""

    minimum: int = 1
    maximum: int | None = None
    wagers: Mapping[str, tuple[int, int | None]] = field(default_factory=dict)

    def for_wager(self, wager: str) -> tuple[int, int | None]:
        """``(min, max)`` for ``wager`` (``max`` None: no upper limit)."""
        return self.wagers.get(wager, (self.minimum, self.maximum))


@dataclass(frozen=True, slots=True)
class HoldemConfig:
    """A Texas Hold'em table's stakes (11/2008): the blinds posted at the table (art. 4(3), 5),
    in chip units; the betting structure (art. 11); the house's commission (art. 16) as an
    exact percentage, 0 for none."""

    small_blind: int
    big_blind: int
    structure: str = "no-limit"
    rake_percent: Fraction = Fraction(0)

    @property
    def rake_text(self) -> str:
        """The rate as written in the file: ``"5"``, ``"4.5"``, ``"0"``."""
        whole, hundredths = divmod(int(self.rake_percent * 100), 100)  # at most two decimals
        return f"{whole}.{hundredths:02d}".rstrip("0") if hundredths else str(whole)

    def table_options(self) -> dict[str, Any]:
        """What ``Table(holdem=...)`` takes: the blinds, the structure and the rake rate
        (an integer, or the exact decimal as text, which the rules parse without a float)."""
        r = self.rake_percent
        return {"small_blind": self.small_blind, "big_blind": self.big_blind,
                "structure": self.structure,
                "rake": r.numerator if r.denominator == 1 else self.rake_text}

    def to_json(self) -> dict[str, Any]:
        return {"small_blind": self.small_blind, "big_blind": self.big_blind,
                "structure": self.structure, "rake_percent": self.rake_text}


@dataclass(frozen=True, slots=True)
class Pan9Config:
    """A Super Pan 9 table's house settings (261/96/M): the capital the house co-banks with,
    predetermined (art. 5(5): "capital previamente determinado"), in chip units; None: the
    dealer gives it with each house co-bank."""

    house_co_bank_capital: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"house_co_bank_capital": self.house_co_bank_capital}


@dataclass(frozen=True, slots=True)
class GpioConfig:
    """The dealer panel's pins (gpiozero pin names: an int is a BCM number, or ``"GPIO17"``,
    ``"BOARD11"``, ``"J8:11"``). A pin left out means that input or output is not fitted."""

    buttons: Mapping[str, int | str] = field(default_factory=dict)   # BUTTONS -> pin
    key_switch: int | str | None = None
    box_sensors: tuple[int | str, ...] = ()                           # box 1 first
    light: Mapping[str, int | str] = field(default_factory=dict)     # LIGHTS -> pin
    buzzer: int | str | None = None
    pull_up: bool = True            # buttons and key switch close to ground
    sensors_active_low: bool = True  # a box sensor pulls low when a card lies on it
    # The tower light's lamps and the buzzer are on while their pin is low (a relay board
    # that switches on a low input); gpiozero's active_high, so off is the pin high.
    light_active_low: bool = False
    buzzer_active_low: bool = False
    bounce_ms: int = 20
    # The same button again this soon after its last press is a repeat (a bounce, a double
    # press): reported, not acted on, so one press moves the table one step. 0: no guard.
    repeat_guard_ms: int = 1000


@dataclass(frozen=True, slots=True)
class ApiConfig:
    """Where the console API listens, the hashed token of each role, and how many commands
    the table refuses a token may send within a window before it is held back
    (controller.api.throttle; ``refused_limit`` 0: never)."""

    listen: str = "127.0.0.1"
    port: int = 8740
    tokens: Mapping[str, str] = field(default_factory=dict)  # role -> "sha256:<hex>"
    refused_limit: int = REFUSED_LIMIT
    refused_window_s: int = REFUSED_WINDOW_S

    def role_for(self, token: str | None) -> str | None:
        """The role whose token this is, or None. Every role is compared, in constant time,
        so the answer's timing says nothing about which role (or how much) matched."""
        if not token:
            return None
        found = None
        for role, stored in self.tokens.items():
            if check_token(token, stored):
                found = role
        return found


@dataclass(frozen=True, slots=True)
class TableConfig:
    """One table's validated configuration. Amounts are integers in chip units."""

    table_id: str
    game: str
    mode: Mode
    boxes: int
    chip_unit: int = 1
    currency: str = "MOP"
    limits: Limits = field(default_factory=Limits)
    interpretations: Mapping[str, str] = field(default_factory=dict)
    devices: Mapping[str, DeviceSpec] = field(default_factory=dict)
    gpio: GpioConfig | None = None
    holdem: HoldemConfig | None = None  # Texas Hold'em only
    pan9: Pan9Config | None = None      # Super Pan 9 only
    journal_path: Path = Path(DEFAULT_JOURNAL)
    api: ApiConfig = field(default_factory=ApiConfig)
    integrity_alarm: str = "warn"
    integrity_decks: int = 1                          # decks in play per shoe
    integrity_deck_ids: tuple[int, ...] | None = None  # the table's back ids; None: any
    integrity_alpha: float = 1e-5                     # the sentinel's false-alarm level
    log_level: str = "info"
    log_format: str = "auto"
    cpu_wakeup_us: int = 0          # [service]: the PM QoS bound held while running; -1: none
    path: Path | None = None
    warnings: tuple[str, ...] = ()
    digest: str = ""               # SHA-256 of the file's text ("" when not read from a file)

    def to_json(self) -> dict[str, Any]:
        """What the ``config`` journal record holds: the settings in force and the file's
        digest. Token hashes are left out (only which roles have one)."""
        return {
            "table_id": self.table_id, "game": self.game, "mode": self.mode.value,
            "boxes": self.boxes, "chip_unit": self.chip_unit, "currency": self.currency,
            "limits": {"min": self.limits.minimum, "max": self.limits.maximum,
                       "wagers": {k: list(v) for k, v in self.limits.wagers.items()}},
            "interpretations": dict(self.interpretations),
            "holdem": self.holdem.to_json() if self.holdem else None,
            "pan9": self.pan9.to_json() if self.pan9 else None,
            "devices": {k: {"class": d.device_class, "transport": d.transport, "port": d.port,
                            "codec": d.codec, "usb": [d.usb_vendor, d.usb_product, d.usb_serial],
                            "firmware_hash": d.firmware_hash}
                        for k, d in self.devices.items()},
            "gpio": self.gpio is not None, "journal": str(self.journal_path),
            "api": {"listen": self.api.listen, "port": self.api.port,
                    "roles": sorted(self.api.tokens),
                    "refused_limit": self.api.refused_limit,
                    "refused_window_s": self.api.refused_window_s},
            "integrity_alarm": self.integrity_alarm,
            "integrity": self.integrity_json(),
            "service": {"cpu_wakeup_us": self.cpu_wakeup_us},
            "path": str(self.path) if self.path else None, "digest": self.digest,
        }

    def integrity_json(self) -> dict[str, Any]:
        """The [integrity] settings in force, as journaled."""
        return {"alarm": self.integrity_alarm, "decks": self.integrity_decks,
                "deck_ids": (list(self.integrity_deck_ids)
                             if self.integrity_deck_ids is not None else None),
                "alpha": self.integrity_alpha}

    def device(self, device_class: str) -> DeviceSpec | None:
        """The (first) configured device of a class, e.g. ``config.device("shoe")``."""
        return next((d for d in self.devices.values() if d.device_class == device_class), None)


@dataclass(frozen=True, slots=True)
class Problem:
    """One thing wrong in the file: the dotted ``key``, its ``line`` (None when the key is
    absent), what is wrong and how to fix it."""

    key: str
    line: int | None
    reason: str
    fix: str = ""

    def format(self, path: str | Path | None = None) -> str:
        where = f"{path}:" if path else ""
        where += f"{self.line}:" if self.line else ""
        text = f"{where} {self.key}: {self.reason}" if where else f"{self.key}: {self.reason}"
        # A key is the file's own spelling (TOML spells any character with an escape): a line
        # break or escape sequence in it must not forge a line of the report or reach the
        # terminal.
        return printable(f"{text}; {self.fix}" if self.fix else text)


class ConfigError(TablectlError):
    """The configuration cannot be used; ``problems`` lists every problem found."""

    def __init__(self, problems: list[Problem], path: str | Path | None = None) -> None:
        self.problems = problems
        self.path = path
        lines = [p.format(path) for p in problems]
        # the path as each problem's line prints it (Problem.format): escapes, never raw
        head = f"{printable(str(path)) if path else 'configuration'}: {len(problems)} problem" + \
            ("s" if len(problems) != 1 else "")
        super().__init__("\n  ".join([head, *lines]))


# --- tokens ---------------------------------------------------------------------------------

# The shortest token a console takes (``config hash-token`` refuses a shorter one). A key
# under [api.tokens] as long as that is a token pasted where its role's name goes: a problem
# names its line, never its text. So is a section's or key's name as long as that anywhere
# else, unless it is close to a name allowed there (a misspelling, shown with its suggestion).
TOKEN_MIN_CHARS = 16
# What a problem says in place of such a name.
NOT_SHOWN = "(not shown)"


def _token_like(name: str, allowed: Any) -> bool:
    """Whether an unknown ``name`` may be a token pasted as a section's or key's name: as long
    as a token and close to none of the names ``allowed`` where it stands."""
    return len(name) >= TOKEN_MIN_CHARS and not difflib.get_close_matches(
        name, list(allowed), n=1, cutoff=0.6)


def hash_token(token: str) -> str:
    """The form a token is stored in: ``sha256:<hex of SHA-256 of the token's UTF-8>``.
    Tokens are long random strings (``tablectl config hash-token --new``), so a plain digest
    is enough; the file never holds the token itself."""
    return "sha256:" + hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_token(token: str, stored: str) -> bool:
    """Whether ``token`` hashes to ``stored``, compared in constant time."""
    return hmac.compare_digest(hash_token(token).encode(), str(stored).encode())


# --- where each key is in the file ----------------------------------------------------------

_KEY_PART = r'(?:[A-Za-z0-9_-]+|"(?:[^"\\]|\\.)*"|\'[^\']*\')'
_DOTTED = rf"{_KEY_PART}(?:\s*\.\s*{_KEY_PART})*"
_HEADER_RE = re.compile(rf"^\s*\[\s*({_DOTTED})\s*\]")
_ARRAY_HEADER_RE = re.compile(rf"^\s*\[\[\s*({_DOTTED})\s*\]\]")
_ASSIGN_RE = re.compile(rf"^\s*({_DOTTED})\s*=")
_PART_RE = re.compile(_KEY_PART)


def _split_key(text: str) -> tuple[str, ...]:
    parts = []
    for m in _PART_RE.finditer(text):
        p = m.group(0)
        if p[0] in "\"'":
            p = p[1:-1]
        parts.append(p)
    return tuple(parts)


def key_lines(text: str) -> dict[tuple[str, ...], int]:
    """Map each table header and key of a TOML text to its 1-based line number.

    tomllib gives no positions, so the text is scanned: table headers set the prefix, a
    ``key = value`` at the start of a line (outside multi-line strings) is a key. Keys of an
    inline table are reported at the line of the key that holds it.
    """
    lines: dict[tuple[str, ...], int] = {}
    prefix: tuple[str, ...] = ()
    in_string: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_string:
            if line.count(in_string) % 2 == 1:
                in_string = None
            continue
        m = _ARRAY_HEADER_RE.match(line) or _HEADER_RE.match(line)
        if m:
            prefix = _split_key(m.group(1))
            lines.setdefault(prefix, number)
            continue
        m = _ASSIGN_RE.match(line)
        if m:
            full = prefix + _split_key(m.group(1))
            lines.setdefault(full, number)
            for i in range(len(prefix) + 1, len(full)):  # dotted keys make tables
                lines.setdefault(full[:i], number)
            rest = line[m.end():]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_string = quote
    return lines


# --- the schema -----------------------------------------------------------------------------

REQUIRED = object()


@dataclass(frozen=True)
class Key:
    """One key of the schema: its kind, its default (REQUIRED when it has none), and a check
    returning an error text (or '') with the fix."""

    # "str" | "hex" (a string of hex digits) | "int" | "bool" | "float" | "pin" | "pins" | "ints"
    kind: str
    default: Any = None
    choices: tuple[str, ...] = ()
    check: Callable[[Any], str] | None = None
    help: str = ""
    example: str = ""               # how to write it, when the default is no good example
    # A problem with it never quotes what was written (a token pasted in place of its hash):
    # config check's output goes to the system's log when systemd runs it.
    secret: bool = False


def _positive(v: Any) -> str:
    return "" if v > 0 else "must be greater than 0"


def _wager_limit(v: Any) -> str:
    """A table limit: a bet of it must fit in a round whose settlement the page shows exactly
    (controller.rules.base.MAX_ROUND_STAKES)."""
    if v <= 0:
        return "must be greater than 0"
    return "" if v <= MAX_ROUND_STAKES else (
        f"must be at most {MAX_ROUND_STAKES:,}: a round's bets together are at most that, so "
        f"that every figure of its settlement stays within {AMOUNT_LIMIT}")


def _blind(v: Any) -> str:
    if v <= 0:
        return "must be greater than 0"
    return "" if v <= MAX_AMOUNT else f"must be at most {AMOUNT_LIMIT}"


def _house_capital(v: Any) -> str:
    if v <= 0:
        return ("must be greater than 0: the chip units the house co-banks with each round it "
                "joins the bank (261/96/M art. 5(5)); or leave house_co_bank_capital out and "
                "give the capital with each house co-bank")
    return "" if v <= MAX_AMOUNT else f"must be at most {AMOUNT_LIMIT}"


def _heartbeat(v: Any) -> str:
    # A device takes Hello.heartbeat_ms within 50-10,000 ms (docs/protocol.md 3.1) and clamps
    # anything else, so outside that range the host would expect heartbeats the device never
    # sends at that pace, and lose the link over and over.
    return "" if 0.05 <= v <= 10 else "must be 0.05 to 10 seconds (the protocol's 50-10,000 ms)"


def _baud(v: Any) -> str:
    return "" if 50 <= v <= 12_000_000 else "must be a serial speed such as 9600 or 115200"


def _port(v: Any) -> str:
    return "" if 0 <= v <= 65535 else "must be a TCP port from 1 to 65535 (0: any free port)"


def _table_id(v: Any) -> str:
    return "" if _ID_RE.match(v) else f"must be {_ID_TEXT}, e.g. \"macau-07\""


# Labels written for a currency instead of its ISO 4217 code, with the code meant.
_CURRENCY_LABELS = {"MOP$": "MOP", "PATACA": "MOP", "HK$": "HKD", "US$": "USD",
                    "RMB": "CNY", "KD": "KWD"}
# A label several currencies write: the codes it may mean, none chosen for the operator (in
# Macau "$" is as often the pataca or the Hong Kong dollar as the US dollar).
_CURRENCY_AMBIGUOUS = {"$": ("MOP", "HKD", "USD")}


def _currency(v: Any) -> str:
    """``chips.currency``: the ISO 4217 code of the currency a chip unit is worth, three
    capital letters (a code spells no card: ``KD``, the Kuwaiti dinar's label, reads as the
    king of diamonds, and is refused with its code, KWD)."""
    if re.fullmatch(r"[A-Z]{3}", v):
        return ""
    why = ("must be the currency's ISO 4217 code, three capital letters (MOP for the pataca, "
           "HKD, KWD)")
    meant = _CURRENCY_LABELS.get(v.strip().upper())
    if meant is None and re.fullmatch(r"[A-Za-z]{3}", v.strip()):
        meant = v.strip().upper()
    several = _CURRENCY_AMBIGUOUS.get(v.strip())
    if several:
        return (f"{why}; {v.strip()} is written for several: write the one meant, "
                + " or ".join(f'"{code}"' for code in several))
    if v.strip().upper() == "KD":
        return (f"{why}; {v.strip()} is no such code and reads as a card (the king of "
                "diamonds): write \"KWD\" for the Kuwaiti dinar")
    return why + (f": write \"{meant}\"" if meant else "")


def _rake(v: Any) -> str:
    # A TOML number such as 4.5 arrives as a float; its decimal text is read exactly.
    rate = Fraction(repr(v)) if isinstance(v, float) else Fraction(v)
    if rate != 0 and not RAKE_MIN_PERCENT <= rate <= RAKE_MAX_PERCENT:
        return (f"must be from {RAKE_MIN_PERCENT} to {RAKE_MAX_PERCENT} (11/2008 art. 16: "
                f"{RAKE_MIN_PERCENT} to {RAKE_MAX_PERCENT} % of each pot), or 0 for no "
                "commission")
    if (rate * 100).denominator != 1:
        return "must have at most two decimals, e.g. 4.5 or 4.25"
    return ""


def _address(v: Any) -> str:
    if v in ("localhost",):
        return ""
    try:
        ipaddress.ip_address(v)
    except ValueError:
        return "must be an IP address such as 127.0.0.1 (local only) or 0.0.0.0 (every interface)"
    return ""


def _refused_limit(v: Any) -> str:
    return "" if 0 <= v <= REFUSED_LIMIT_MAX else (
        f"must be 0 (no limit) or 1 to {REFUSED_LIMIT_MAX} refused commands; the default "
        f"{REFUSED_LIMIT} is more than a croupier at the table is refused in "
        f"{REFUSED_WINDOW_S} s")


def _refused_window(v: Any) -> str:
    return "" if 1 <= v <= REFUSED_WINDOW_MAX else (
        f"must be 1 to {REFUSED_WINDOW_MAX} seconds (the default is {REFUSED_WINDOW_S}); to "
        "hold no token back, set refused_limit = 0")


def _token(v: Any) -> str:
    return "" if _TOKEN_RE.match(v) else ("must be a hashed token \"sha256:<64 hex digits>\", "
                                          "never the token itself; make one with "
                                          "`tablectl config hash-token --new`")


def _decks(v: Any) -> str:
    return "" if 1 <= v <= MAX_DECKS else f"must be from 1 to {MAX_DECKS} decks per shoe"


def _deck_ids(v: Any) -> str:
    if not v:
        return "lists no deck: leave deck_ids out to accept any back id, or list the table's"
    bad = [i for i in v if not 0 <= i < NO_DECK_ID]
    if bad:
        return (f"holds {bad[0]}, not a deck id: a back id is a whole number from 0 to "
                f"{NO_DECK_ID - 1} (as the devices report it)")
    return ""


def _cpu_wakeup(v: Any) -> str:
    return "" if v == CPU_WAKEUP_OFF or 0 <= v <= CPU_WAKEUP_MAX else (
        f"must be 0 to {CPU_WAKEUP_MAX} microseconds, or -1 to leave the CPUs' idle states "
        "to the kernel")


def _alpha(v: Any) -> str:
    return "" if 0 < v <= MAX_ALPHA else (f"must be above 0 and at most {MAX_ALPHA} (the "
                                           "chance a shuffled deck raises a sentinel alarm; "
                                           "the default 1e-5 is one deck in 100,000)")


def _journal_path(v: Any) -> str:
    # The service runs in its state directory and `tablectl journal` wherever it is typed:
    # a relative path would name a different file for each.
    if not v.startswith("/") or v.endswith("/"):
        return (f"must be an absolute path ending in the file's name, such as "
                f"{DEFAULT_JOURNAL} (a relative one depends on the directory each command "
                "runs in)")
    return ""


def _serial_port(v: Any) -> str:
    # The daemon runs in its state directory: a port that is no absolute path ("ttyUSB0")
    # names a file there, which no device is, and the link never comes up.
    odd = next((ch for ch in v if unicodedata.category(ch) == "Cc"), None)
    if odd is not None:
        return f"holds U+{ord(odd):04X}, which no device path holds; write the path again"
    if v == "" or v.startswith("/") or "://" in v:
        return ""
    if not v.strip():
        return ("must be a device path such as /dev/tablectl/shoe, or a pyserial URL such "
                "as socket://host:port")
    return (f"must be an absolute device path such as /dev/{v.strip().lstrip('/')}"
            if not v.strip().startswith("dev/") else
            f"must be an absolute device path such as /{v.strip()}") + (
        ", or a pyserial URL such as socket://host:port")


def _usb_backend(v: Any) -> str:
    # The driver reads it only when the daemon opens the device: checked here instead.
    if v == "" or re.fullmatch(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*", v):
        return ""
    return ("must be written as module:function, e.g. usb.backend.libusb1:get_backend (or "
            "left out for libusb)")


def _firmware_hash(v: Any) -> str:
    wrong = firmware_hash_problem(v)
    # The way out: the hash is copied from the regulator's approval, not guessed.
    return (f"{wrong}; copy it from the regulator's approval of the firmware, or leave "
            "firmware_hash out") if wrong else ""


def _usb_id(v: Any) -> str:
    return "" if 0 <= v <= 0xFFFF else "must be a 16-bit USB id such as 0x1d50"


SCHEMA: dict[str, dict[str, Key]] = {
    "table": {
        "id": Key("str", REQUIRED, check=_table_id, help="the table's id, in the journal and logs"),
        "game": Key("str", REQUIRED, choices=GAME_IDS, help="the regulation played"),
        "mode": Key("str", "shoe", choices=tuple(m.value for m in Mode),
                    help="how cards come out: shoe (card by card) or shuffler (hand by hand)"),
        "boxes": Key("int", REQUIRED, check=_positive,
                     help="number of player boxes (Super Pan 9: seats, the banker's included)"),
    },
    "chips": {
        "unit": Key("int", 1, check=_positive,
                    help="value of one chip unit in whole currency units; every amount is an "
                         "integer number of chip units"),
        "currency": Key("str", "MOP", check=_currency,
                        help="the ISO 4217 code of the currency a chip unit is worth (MOP, HKD, "
                             "KWD), journaled in every config record"),
    },
    "limits": {
        "min": Key("int", 1, check=_wager_limit, help="minimum wager in chip units"),
        "max": Key("int", None, check=_wager_limit, help="maximum wager in chip units (none: no "
                                                      "upper limit)"),
    },
    "holdem": {
        "small_blind": Key("int", REQUIRED, check=_blind,
                           help="the small blind in chip units, normally half the big blind "
                                "(11/2008 art. 5)"),
        "big_blind": Key("int", REQUIRED, check=_blind,
                         help="the big blind in chip units (11/2008 art. 5)"),
        "structure": Key("str", REQUIRED, choices=STRUCTURES,
                         help="limit (fixed bet sizes) or no-limit (11/2008 art. 11)"),
        "rake_percent": Key("float", 0, check=_rake, example="5",
                            help="the house's commission in percent of each pot, 3 to 5, or "
                                 "0 for none (11/2008 art. 16)"),
    },
    "pan9": {
        "house_co_bank_capital": Key("int", None, check=_house_capital, example="500",
                                     help="the house's co-bank capital in chip units, "
                                          "predetermined (261/96/M art. 5(5)); left out, the "
                                          "dealer gives it with each house co-bank"),
    },
    "journal": {
        "path": Key("str", DEFAULT_JOURNAL, check=_journal_path,
                    help="the journal file (SQLite), an absolute path; its directory must "
                         "be writable by the service user"),
    },
    "api": {
        "listen": Key("str", "127.0.0.1", check=_address,
                      help="address the console API listens on"),
        "port": Key("int", 8740, check=_port, help="TCP port of the console API"),
        "refused_limit": Key("int", REFUSED_LIMIT, check=_refused_limit,
                             help="commands the table refuses a token may send within "
                                  "refused_window_s before its commands are answered 429 "
                                  "for that long (0: no limit)"),
        "refused_window_s": Key("int", REFUSED_WINDOW_S, check=_refused_window,
                                help="the window the refusals are counted in, and how long "
                                     "a token past the limit is held back, in seconds"),
    },
    "integrity": {
        "alarm": Key("str", "warn", choices=ALARM_ACTIONS,
                     help="on a deck-integrity or shuffle alarm: warn the supervisor, or stop "
                          "the table before the next round"),
        "decks": Key("int", 1, check=_decks,
                     help="decks in play per shoe, 1 to 8 (only Q Poker, under its decks "
                          "interpretation, plays more than one)"),
        "deck_ids": Key("ints", None, check=_deck_ids, example="[1]",
                        help="the back ids of the table's decks; a card of any other is "
                             "foreign (left out: any back id)"),
        "alpha": Key("float", 1e-5, check=_alpha, example="1e-5",
                     help="the shuffle sentinel's false-alarm level per deck, above 0 and at "
                          "most 0.01"),
    },
    "service": {
        "cpu_wakeup_us": Key("int", 0, check=_cpu_wakeup,
                             help="the longest a CPU may take to wake from idle while the "
                                  "service runs (PM QoS); 0 keeps the CPUs in their shallowest "
                                  "idle state, -1 leaves it to the kernel"),
    },
    "logging": {
        "level": Key("str", "info", choices=LOG_LEVELS, help="lowest level logged"),
        "format": Key("str", "auto", choices=LOG_FORMATS,
                      help="json (for journald), console (readable), auto (console on a "
                           "terminal, json otherwise)"),
    },
    "gpio": {
        "key_switch": Key("pin", None, help="the supervisor's key switch"),
        "box_sensors": Key("pins", [], help="card sensor of each box, box 1 first"),
        "buzzer": Key("pin", None, help="the buzzer"),
        "pull_up": Key("bool", True, help="buttons and key switch close to ground (internal "
                                          "pull-up); false: they close to 3.3 V"),
        "sensors_active_low": Key("bool", True, help="a box sensor reads low when a card lies "
                                                     "on it"),
        "light_active_low": Key("bool", False, help="the tower light's lamps are on while their "
                                                    "pin is low (a relay board that switches on "
                                                    "a low input); false: while it is high"),
        "buzzer_active_low": Key("bool", False, help="the buzzer sounds while its pin is low; "
                                                     "false: while it is high"),
        "bounce_ms": Key("int", 20, check=lambda v: "" if 0 <= v <= 1000 else
                         "must be 0-1000 milliseconds", help="debounce time of the inputs"),
        "repeat_guard_ms": Key("int", 1000, check=lambda v: "" if 0 <= v <= 10000 else
                               "must be 0-10000 milliseconds (0: no guard)",
                               help="the same button pressed again within this time after "
                                    "its last press (acted on or refused) is a repeat, "
                                    "journaled and ignored"),
    },
    "gpio.buttons": {name: Key("pin", None, help=f"the {name.replace('_', ' ')} button")
                     for name in BUTTONS},
    "gpio.light": {name: Key("pin", None, help=f"the tower light's {name} lamp")
                   for name in LIGHTS},
    "devices.*": {
        "class": Key("str", REQUIRED, choices=DEVICE_CLASSES, help="the kind of device"),
        "transport": Key("str", "serial", choices=TRANSPORTS, help="serial or usb"),
        "port": Key("str", "", check=_serial_port,
                    help="serial port path (/dev/tablectl/shoe) or pyserial URL"),
        "baudrate": Key("int", 115200, check=_baud, help="serial speed"),
        "codec": Key("str", "tablectl", choices=CODECS, help="the wire protocol"),
        "usb_vendor": Key("int", 0, check=_usb_id, help="USB vendor id (e.g. 0x1d50)"),
        "usb_product": Key("int", 0, check=_usb_id, help="USB product id"),
        "usb_serial": Key("str", "", help="USB serial number, when several are plugged in"),
        "usb_backend": Key("str", "", check=_usb_backend,
                           help="pyusb backend as module:function (empty: libusb)"),
        "heartbeat_s": Key("float", 0.25, check=_heartbeat,
                           help="expected heartbeat interval (0.05-10 s)"),
        "link_timeout_s": Key("float", 1.0, check=_positive,
                              help="silence after which the link is lost"),
        "firmware_hash": Key("hex", "", check=_firmware_hash,
                             example='"9f86d081…" (the hex digits of the approved hash)',
                             help="the approved firmware's hash in hex (empty: any firmware)"),
    },
}
TOP_LEVEL = ("table", "chips", "limits", "holdem", "pan9", "interpretations", "devices", "gpio",
             "journal", "api", "integrity", "service", "logging")
_TYPE_NAMES = {"str": "a string in quotes", "hex": "hex digits in quotes", "int": "a whole number",
               "bool": "true or false",
               "float": "a number", "pin": "a GPIO pin (a BCM number 0-27 such as 17, or \"GPIO17\")",
               "pins": "a list of GPIO pins, e.g. [5, 6, 12]",
               "ints": "a list of whole numbers, e.g. [1, 2]"}


# A key under [gpio] naming a polarity: said with the keys that set one, not a guess at the
# closest key (``active_low`` meant for the buttons is not ``sensors_active_low``).
_POLARITY_RE = re.compile(r"active|pull|invert|polarity|_low|_high|^low|^high", re.I)
_POLARITY_FIX = ("under [gpio]: pull_up = true when the buttons and the key switch close to "
                 "ground (false: to 3.3 V), sensors_active_low = true when a card on a box pulls "
                 "its sensor's pin low, light_active_low = true when the lamps and "
                 "buzzer_active_low = true when the buzzer are on while their pin is low (a "
                 "relay board that switches on a low input; false, the default: on while it is "
                 "high); the lamps take one setting for all of them")


def _suggest(word: str, options: Any) -> str:
    close = difflib.get_close_matches(word, list(options), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else \
        f"the keys allowed here are: {', '.join(sorted(options))}"


class _Checker:
    """Walks the parsed document, collecting problems with their line numbers."""

    def __init__(self, lines: dict[tuple[str, ...], int]) -> None:
        self.lines = lines
        self.problems: list[Problem] = []
        self.warnings: list[str] = []
        # Sections written as a single value: that is their problem, not each key they lack.
        self.not_sections: set[tuple[str, ...]] = set()

    def line(self, path: tuple[str, ...]) -> int | None:
        """The line of ``path``, else of the nearest table holding it (quoted dotted keys such
        as "pan9.rule" = … are found by their dotted spelling)."""
        dotted = {".".join(k): n for k, n in self.lines.items()}
        for n in range(len(path), 0, -1):
            if path[:n] in self.lines:
                return self.lines[path[:n]]
            if ".".join(path[:n]) in dotted:
                return dotted[".".join(path[:n])]
        return None

    def add(self, path: tuple[str, ...], reason: str, fix: str = "") -> None:
        self.problems.append(Problem(".".join(path), self.line(path), reason, fix))

    def token_name(self, path: tuple[str, ...], key: str, value: Any,
                   allowed: list[str]) -> None:
        """An unknown name as long as a token (:func:`_token_like`): named by its line, never
        by its text, since problems go to the system's log and the journal."""
        what = "section" if isinstance(value, dict) else "key"
        self.problems.append(Problem(
            ".".join(path + (NOT_SHOWN,)), self.line(path + (key,)),
            f"unknown {what}, as long as a token: a console token pasted as its name?",
            f"remove the {what} at that line; a token goes nowhere in this file, only its hash, "
            "under [api.tokens] (`ROLE = \"sha256:…\"`, from `tablectl config hash-token "
            "--role ROLE`), and one written here in clear is best replaced (`tablectl config "
            f"hash-token --new --role ROLE`); the names allowed here are: "
            + ", ".join(sorted(allowed))))

    def section(self, doc: Mapping[str, Any], path: tuple[str, ...], schema: dict[str, Key],
                extra: tuple[str, ...] = ()) -> dict[str, Any]:
        """Check one table against its schema; return the values with defaults filled in."""
        out: dict[str, Any] = {}
        for key, value in doc.items():
            if key in extra:
                continue
            if key not in schema:
                allowed = list(schema) + list(extra)
                if path == ("api", "tokens") and len(str(key)) >= TOKEN_MIN_CHARS:
                    if isinstance(value, dict):
                        self.token_name(path, key, value, allowed)
                        continue
                    self.problems.append(Problem(
                        f"api.tokens.{NOT_SHOWN}", self.line(path + (key,)),
                        "unknown key, as long as a token: a token written where a role's "
                        "name goes?", "write the role's name, then = and the token's hash "
                        "(`tablectl config hash-token --role ROLE`); the keys allowed here "
                        "are: " + ", ".join(allowed)))
                    continue
                if _token_like(str(key), allowed):
                    self.token_name(path, key, value, allowed)
                    continue
                if path[0] == "gpio" and _POLARITY_RE.search(str(key)):
                    self.add(path + (key,), "unknown key: the panel's polarity is set by four "
                             "keys of [gpio] only", _POLARITY_FIX)
                    continue
                self.add(path + (key,), "unknown key", _suggest(key, allowed))
        for key, spec in schema.items():
            here = path + (key,)
            if key not in doc:
                if spec.default is REQUIRED and path not in self.not_sections:
                    self.add(here, "is required",
                             f"add `{key} = …` under [{'.'.join(path)}] ({spec.help})")
                out[key] = None if spec.default is REQUIRED else spec.default
                continue
            value = self.value(here, doc[key], spec)
            out[key] = value if value is not _BAD else (
                None if spec.default is REQUIRED else spec.default)
        return out

    def value(self, path: tuple[str, ...], value: Any, spec: Key) -> Any:
        ok = {
            "str": isinstance(value, str),
            "hex": isinstance(value, str),    # its check allows hex digits only
            "int": isinstance(value, int) and not isinstance(value, bool),
            "bool": isinstance(value, bool),
            "float": isinstance(value, (int, float)) and not isinstance(value, bool),
            "pin": _is_pin(value),
            "pins": isinstance(value, list) and all(_is_pin(v) for v in value),
            "ints": isinstance(value, list) and all(
                isinstance(v, int) and not isinstance(v, bool) for v in value),
        }[spec.kind]
        if not ok and spec.kind == "ints" and isinstance(value, list):
            item = next(v for v in value if isinstance(v, bool) or not isinstance(v, int))
            self.add(path, f"holds {_describe(item)}, not a whole number",
                     f"write it as {_example(spec)}")
            return _BAD
        if not ok:
            what = _kind_of(value) if spec.secret else _describe(value)
            self.add(path, f"is {what}, not {_TYPE_NAMES[spec.kind]}",
                     f"write it as {_example(spec)}")
            return _BAD
        if spec.secret:
            written = value = _Hidden(value)
        if spec.kind in ("pin", "pins"):
            for pin in value if spec.kind == "pins" else [value]:
                why = _off_header(pin)
                if why:
                    verb = "holds" if spec.kind == "pins" else "is"
                    self.add(path, f"{verb} {pin!r}, {why[0]}", why[1])
                    return _BAD
        written = value
        if spec.kind == "float":
            value = float(value)
            if not math.isfinite(value):
                self.add(path, f"is {value}", f"write a finite number, e.g. {_example(spec)}")
                return _BAD
        if spec.choices and value not in spec.choices:
            self.add(path, f"{value!r} is not allowed",
                     f"use one of: {', '.join(spec.choices)}"
                     + (f" ({_suggest(value, spec.choices)})"
                        if difflib.get_close_matches(value, spec.choices, 1, 0.6) else ""))
            return _BAD
        if spec.check:
            why = spec.check(value)
            if why:
                self.add(path, f"is {written!r}", why)
                return _BAD
        odd = next((ch for ch in value if unicodedata.category(ch) == "Cc"), None) \
            if spec.kind == "str" else None
        if odd is not None:
            # A pasting mistake: no id, path, label or serial number holds a line break, tab
            # or escape, and one kept would name a file no one can type, break every log line
            # or never match the device's own serial number.
            self.add(path, f"is {written!r}, which holds U+{ord(odd):04X}, a control character",
                     "write the value again without it")
            return _BAD
        return str(value) if spec.secret else value


_BAD = object()


class _Hidden(str):
    """A secret value: itself to the checks, "(not shown)" in a problem's text."""

    def __repr__(self) -> str:
        return "(not shown)"


def _kind_of(v: Any) -> str:
    """What ``v`` is, without its value."""
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    return {str: "a string", list: "a list", dict: "a table"}.get(type(v), type(v).__name__)


def _is_pin(v: Any) -> bool:
    if isinstance(v, bool):
        return False
    if isinstance(v, int):
        return v >= 0       # past 27: the range is said by _off_header, with a way out
    return isinstance(v, str) and bool(_PIN_RE.match(v))


@functools.cache
def _header() -> dict[str, tuple[int, str]]:
    """Every name gpiozero gives a pin of the 40-pin header -> (its physical number, what it
    carries: "GPIO17", "GND", "3V3", "5V"). gpiozero's own board data, so that a name means here
    what it means to the panel; it needs no Pi. Imported here: only a [gpio] section uses it."""
    from gpiozero.pins.pi import PiBoardInfo
    pins = PiBoardInfo.from_revision(_HEADER_REVISION).headers["J8"].pins.values()
    return {str(name): (pin.number, pin.name) for pin in pins for name in pin.names}


def _gpio_number(pin: int | str) -> int | None:
    """The BCM number of a pin however it is written (17, "GPIO17", "BCM17", "BOARD11",
    "J8:11", "WPI0" are one pin), or None when it names no GPIO of the header."""
    _, name = _header().get(str(pin), (0, ""))
    return int(name[4:]) if name.startswith("GPIO") else None


_ANY_GPIO = 'a BCM number 0-27 such as 17, or "GPIO17"'


def _off_header(pin: int | str) -> tuple[str, str] | None:
    """Why a pin of the right shape is no GPIO of the 40-pin header, and the fix; or None."""
    if _gpio_number(pin) is not None:
        return None
    if str(pin) in _header():
        number, carries = _header()[str(pin)]
        kind = "ground" if carries == "GND" else "power"
        return (f"physical pin {number} of the 40-pin header: {carries} ({kind}), not a GPIO",
                f'use a physical pin wired to a GPIO, e.g. "BOARD11" (GPIO17), or {_ANY_GPIO}')
    prefix, digits = re.match(r"^(GPIO|BCM|BOARD|WPI|J8:|)(\d+)$", str(pin)).groups()
    if f"{prefix}{int(digits)}" in _header():      # gpiozero reads "GPIO07" as no pin
        return "written with a leading zero", f'write it as "{prefix}{int(digits)}"'
    if prefix in ("BOARD", "J8:"):
        return "not a physical pin of the 40-pin header (1 to 40)", \
            f'use a pin wired to a GPIO, e.g. "{prefix}11" (GPIO17), or {_ANY_GPIO}'
    if prefix == "WPI":
        return "not a wiringPi number of the 40-pin header", f"use {_ANY_GPIO}"
    why = "not a GPIO of the Raspberry Pi's 40-pin header (GPIO0 to GPIO27)"
    number, carries = _header().get(f"BOARD{digits}", (0, "")) if not prefix else (0, "")
    if carries.startswith("GPIO"):
        # A bare number past 27 is most often the header's pin number, read off the board.
        return why, (f'if you meant physical pin {number} of the header, write "BOARD{number}" '
                     f"({carries}); otherwise use {_ANY_GPIO}")
    if carries:
        kind = "ground" if carries == "GND" else "power"
        why += f"; physical pin {number} of the header is {carries} ({kind}), no GPIO either"
    return why, f"use {_ANY_GPIO}"


def _describe(v: Any) -> str:
    if isinstance(v, bool):
        return f"the boolean {str(v).lower()}"
    if isinstance(v, int):
        return f"the number {v}"
    if isinstance(v, float):
        return f"the number {v}"
    if isinstance(v, str):
        return f"the string {v!r}"
    if isinstance(v, list):
        return "a list"
    if isinstance(v, dict):
        return "a table"
    return type(v).__name__


def _example(spec: Key) -> str:
    if spec.example:
        return spec.example
    if spec.default is not REQUIRED and spec.default not in (None, "", 0, []) \
            and not isinstance(spec.default, bool):
        return repr(spec.default).replace("'", '"')
    if spec.choices:
        return f"\"{spec.choices[0]}\""
    return {"str": '"text"', "hex": '"00ff"', "int": "10", "bool": "true", "float": "0.5",
            "pin": "17", "pins": "[5, 6, 12]", "ints": "[1, 2]"}[spec.kind]


def _flatten(doc: Mapping[str, Any], prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], Any]:
    out: dict[tuple[str, ...], Any] = {}
    for k, v in doc.items():
        if isinstance(v, dict):
            out.update(_flatten(v, prefix + (k,)))
        else:
            out[prefix + (k,)] = v
    return out


def _table(ck: _Checker, doc: Mapping[str, Any], name: str,
           under: tuple[str, ...] = ()) -> dict[str, Any]:
    """The section ``name`` of ``doc`` (itself the section ``under``), or {} when absent. One
    written as a single value (``[gpio] light = "red"``) is a problem named by its full key
    and line, with how to write it as the section it must be."""
    value = doc.get(name, {})
    if not isinstance(value, dict):
        _not_a_section(ck, under + (name,), value)
        return {}
    return value


def _not_a_section(ck: _Checker, path: tuple[str, ...], value: Any) -> None:
    # A value under [api.tokens] may be a token itself: what it is, never what it says.
    what = _kind_of(value) if path[0] == "api" else _describe(value)
    ck.not_sections.add(path)
    ck.add(path, f"is {what}, not a section", _section_fix(path))


def _section_fix(path: tuple[str, ...]) -> str:
    """How to write the section at ``path``: its header, then its keys, one a line."""
    name = ".".join(path)
    head = f"write it as {'an' if name[0] in 'aeiou' else 'a'} [{name}] section"
    if path == ("devices",):
        return ("write each device as a [devices.ID] section with its keys, e.g. "
                "[devices.shoe] then class = \"shoe\" and port = \"/dev/tablectl/shoe\" "
                "(docs/configuration.md)")
    if path[0] == "devices":
        return (f"{head} with its keys, one a line: class (required), "
                + ", ".join(k for k in SCHEMA["devices.*"] if k != "class")
                + f", e.g. [{name}] then class = \"shoe\"")
    if path == ("api", "tokens"):
        return (f"{head} with one ROLE = \"sha256:…\" a line ({', '.join(ROLES)}), the hash "
                "from `tablectl config hash-token --role ROLE`")
    if path == ("interpretations",):
        return (f"{head} with one name = \"reading\" a line (the game's readings: "
                "docs/interpretations.md)")
    if path[0] == "limits":
        return f"{head} with its keys, one a line: min, max (whole numbers of chip units)"
    keys = list(SCHEMA.get(name, {}))
    if path == ("gpio",):
        keys += ["[gpio.buttons]", "[gpio.light]"]
    if path == ("limits",):
        keys += ["[limits.WAGER]"]
    return f"{head} with its keys, one a line: {', '.join(keys)}" if keys else head


def validate(doc: Mapping[str, Any], text: str = "", path: str | Path | None = None
             ) -> TableConfig:
    """Validate a parsed document (``text`` is the file's text, for line numbers). Raises
    ConfigError with every problem found."""
    ck = _Checker(key_lines(text))
    for key, value in doc.items():
        if key not in TOP_LEVEL and _token_like(key, TOP_LEVEL):
            ck.token_name((), key, value, list(TOP_LEVEL))
        elif key not in TOP_LEVEL:
            ck.add((key,), "unknown key" if not isinstance(value, dict) else "unknown section",
                   _suggest(key, TOP_LEVEL))

    table = ck.section(_table(ck, doc, "table"), ("table",), SCHEMA["table"])
    chips = ck.section(_table(ck, doc, "chips"), ("chips",), SCHEMA["chips"])
    journal = ck.section(_table(ck, doc, "journal"), ("journal",), SCHEMA["journal"])
    integrity = ck.section(_table(ck, doc, "integrity"), ("integrity",), SCHEMA["integrity"])
    logging_ = ck.section(_table(ck, doc, "logging"), ("logging",), SCHEMA["logging"])
    service = ck.section(_table(ck, doc, "service"), ("service",), SCHEMA["service"])

    game = _game(ck, table)
    limits = _limits(ck, _table(ck, doc, "limits"), game)
    holdem = _holdem(ck, doc, table.get("game"))
    pan9 = _pan9(ck, doc, table.get("game"))
    interpretations = _interpretations(ck, _table(ck, doc, "interpretations"), game)
    _integrity_decks(ck, integrity["decks"], game, interpretations)
    _layout_deals(ck, game, table.get("boxes"), interpretations, integrity["decks"])
    devices = _devices(ck, _table(ck, doc, "devices"))
    gpio = _gpio(ck, doc, table.get("boxes"))
    _uart_pins(ck, devices, gpio)
    api = _api(ck, _table(ck, doc, "api"))

    sensing = [d for d, spec in (devices or {}).items() if spec.device_class == "box-sensors"]
    if gpio is not None and gpio.box_sensors and sensing:
        # each would report every card put on a box: the table would see it land twice
        ck.add(("gpio", "box_sensors"), f"box sensors are also devices.{sensing[0]} (class "
               "box-sensors): each card on a box would be reported twice",
               f"keep one: remove gpio.box_sensors or [devices.{sensing[0]}]")
    mode = table.get("mode")
    settled = not any(p.key.startswith(("devices", "table.mode")) for p in ck.problems)
    if settled and mode and isinstance(doc.get("devices"), dict):
        if not any(d.device_class == mode for d in devices.values()):
            ck.add(("devices",), f"the table deals from the {mode} (table.mode) but no device "
                   f"has class = \"{mode}\"",
                   f"add a [devices.{mode}] section with class = \"{mode}\", or change "
                   "table.mode")
    _token_values(ck, doc)
    if ck.problems:
        ck.problems.sort(key=lambda p: p.line if p.line is not None else 1 << 30)
        raise ConfigError(ck.problems, path)
    return TableConfig(
        table_id=table["id"], game=table["game"], mode=Mode(table["mode"]),
        boxes=table["boxes"], chip_unit=chips["unit"], currency=chips["currency"],
        limits=limits, interpretations=interpretations, devices=devices or {}, gpio=gpio,
        holdem=holdem, pan9=pan9,
        journal_path=Path(journal["path"]), api=api, integrity_alarm=integrity["alarm"],
        integrity_decks=integrity["decks"],
        integrity_deck_ids=(tuple(integrity["deck_ids"]) if integrity["deck_ids"] is not None
                            else None),
        integrity_alpha=integrity["alpha"],
        log_level=logging_["level"], log_format=logging_["format"],
        cpu_wakeup_us=service["cpu_wakeup_us"],
        path=Path(path) if path else None, warnings=tuple(ck.warnings))


def _configured_tokens(doc: Mapping[str, Any]) -> Tokens:
    """The console tokens the file configures under [api.tokens]: each role's hash, and a
    token written there in clear (a problem of its own, never shown either)."""
    api = doc.get("api")
    section = api.get("tokens") if isinstance(api, dict) else None
    hashes: dict[str, str] = {}
    clear: dict[str, str] = {}
    for role, value in (section.items() if isinstance(section, dict) else ()):
        if role not in ROLES or not isinstance(value, str):
            continue
        if _TOKEN_RE.match(value):
            hashes[value] = role
        elif len(value) >= TOKEN_MIN_CHARS and not value.lower().startswith("sha256:"):
            clear[value] = role
    return Tokens(hashes, clear, TOKEN_MIN_CHARS)


def _token_values(ck: _Checker, doc: Mapping[str, Any]) -> None:
    """A value that is, or holds, a console token the file configures (``table.id =
    "<token>"``): a problem naming its key and line, never its text, and every other problem
    that would quote it quotes "(not shown)" instead. A table id would be published with every
    event, a path or a port logged: a token goes nowhere in the file but as its hash."""
    tokens = _configured_tokens(doc)
    if not tokens:
        return
    found: dict[str, tuple[tuple[str, ...], str, Found]] = {}
    for where, value in token_values(doc):
        hit = tokens.find(value)
        if hit is not None:
            found.setdefault(".".join(where), (where, value, hit))
    if not found:
        return
    kept = []
    for p in ck.problems:
        if p.key in found:          # said by its own problem, below
            continue
        reason, fix = p.reason, p.fix
        for _, value, hit in found.values():
            reason = masked(reason, value, hit, NOT_SHOWN)
            fix = masked(fix, value, hit, NOT_SHOWN)
        if (reason, fix) != (p.reason, p.fix):
            reason += f" ({NOT_SHOWN}: it holds a console token, which is never shown)"
        kept.append(Problem(p.key, p.line, reason, fix))
    ck.problems = kept
    for where, _, hit in found.values():
        new_token = (f"`tablectl config hash-token --new --role {hit.role}`, its hash as "
                     f"api.tokens.{hit.role}")
        # A token found inside a value may be one that value holds by chance (a weak token,
        # "tablectl/journal", in the journal's path): then the value is right, the token not.
        ck.add(where,
               f"is {NOT_SHOWN}: it {'is' if hit.whole else 'holds'} the console token of "
               f"role {hit.role}, and a token is never shown",
               "write the value meant here: a token goes nowhere in this file but as its "
               "hash, under [api.tokens], and one written here in clear is best replaced "
               f"({new_token})" if hit.whole else
               "write the value meant here, without the token: a token goes nowhere in this "
               "file but as its hash, under [api.tokens]. If the value is meant as written, "
               "the token is a part of it, to be guessed from this file: replace the token "
               f"({new_token}), and the value is taken")


def _game(ck: _Checker, table: dict[str, Any]) -> Any:
    """The game's rules, when its module is there; check the layout against them."""
    if not table.get("game"):
        return None
    try:
        game = get_game(table["game"])
    except ImportError:
        ck.warnings.append(f"the rules of {table['game']} are not installed: table.boxes and "
                           "[interpretations] were not checked against them")
        return None
    boxes = table.get("boxes")
    if isinstance(boxes, int) and boxes > 0:
        try:
            game.check_layout(boxes)
        except RuleError as exc:
            ck.add(("table", "boxes"), str(exc),
                   _LAYOUT_FIXES.get(game.game_id, "set boxes to the table's real layout"))
    return game


# Where the real layout may be more than the rules can play: a Hold'em table with more chairs
# than one deck deals (11/2008 art. 1(1)(3), 2(2)) counts only the seats it deals.
_LAYOUT_FIXES = {"texas-holdem": "set boxes to the player seats the table deals, 10 to 22"}


def _layout_deals(ck: _Checker, game: Any, boxes: Any, interpretations: Mapping[str, str],
                  decks: int) -> None:
    """A layout the game's decks can deal in full under the table's readings: Q Poker's one
    deck deals at most 16 boxes, and under ``decks = "several"`` its ``[integrity] decks``
    at most what they hold in threes; the seating article alone was checked with the game."""
    if game is None or isinstance(boxes, bool) or not isinstance(boxes, int) or boxes <= 0:
        return
    try:
        game.check_layout(boxes)
    except RuleError:
        return                                  # reported already, against the seating article
    several = (any(i.key == "decks" for i in game.interpretations)
               and interpretations.get("decks", "one") != "one")
    if not several:
        try:
            game.check_layout(boxes, interpretations)
        except RuleError as exc:
            ck.add(("table", "boxes"), str(exc),
                   "set boxes to the table's real layout (at most 16 with one deck), or, if "
                   "the table deals from several decks, set decks = \"several\" under "
                   "[interpretations] and their count as decks under [integrity] "
                   "(docs/interpretations.md, Q3)")
        return
    if any(p.key == "integrity.decks" for p in ck.problems):
        return                                  # no count of decks to judge the layout by
    try:
        game.check_layout(boxes, interpretations, decks=decks)
    except RuleError as exc:
        ck.add(("table", "boxes"), str(exc),
               _fewer_boxes_or_more_decks(game, interpretations, boxes, decks))


def deck_limits(game: Any, interpretations: Mapping[str, str], boxes: int, decks: int,
                several: bool = True) -> tuple[int, int | None]:
    """What a layout of ``boxes`` that ``decks`` decks cannot deal could be instead: the most
    boxes those decks deal, and the fewest decks up to MAX_DECKS that deal ``boxes`` (None
    when none do, or when the game is read as one deck, ``several`` False). For
    `config check` and `tablectl rules plan`, each in its own words."""
    def deals(n: int, count: int) -> bool:
        try:
            if several:
                game.check_layout(n, interpretations, decks=count)
            else:
                game.check_layout(n, interpretations)
        except RuleError:
            return False
        return True

    lo, hi = 0, boxes - 1                       # the most boxes these decks deal, by bisection
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if deals(mid, decks) else (lo, mid - 1)
    if not several:
        return lo, None
    return lo, next((d for d in range(decks + 1, MAX_DECKS + 1) if deals(boxes, d)), None)


def _fewer_boxes_or_more_decks(game: Any, interpretations: Mapping[str, str], boxes: int,
                               decks: int) -> str:
    """The ways out of a layout ``decks`` decks cannot deal: the most boxes they deal, or the
    fewest decks, up to MAX_DECKS, that deal this layout."""
    lo, more = deck_limits(game, interpretations, boxes, decks)
    fewer = f"set boxes to the table's real layout, at most {lo}"
    if more is not None:
        return (f"{fewer} with {decks} deck{'s' if decks > 1 else ''}, or set decks = {more} "
                f"under [integrity] if the shoe holds that many (at most {MAX_DECKS}; "
                "docs/configuration.md)")
    if decks == MAX_DECKS:
        return (f"{fewer}: {MAX_DECKS} decks, the most a shoe holds ([integrity] decks), deal "
                "no more")
    return (f"{fewer} with {decks} decks; not even {MAX_DECKS} ([integrity] decks, the most a "
            "shoe holds) deal this layout")


def _integrity_decks(ck: _Checker, decks: int, game: Any,
                     interpretations: Mapping[str, str]) -> None:
    """More than one deck only where the regulation allows it: Q Poker's article 1(1) under
    its ``decks`` interpretation reading "several"; the other games deal one 52-card deck."""
    if decks == 1 or game is None:
        return
    if any(i.key == "decks" for i in game.interpretations):
        if interpretations.get("decks", "one") != "one":
            return
        ck.add(("integrity", "decks"), f"{decks} decks, but the interpretation decks is "
               f"{interpretations.get('decks', 'one')!r}: {game.game_id} is played with one "
               "52-card deck under that reading",
               "set decks = 1, or set decks = \"several\" under [interpretations] "
               "(docs/interpretations.md)")
        return
    ck.add(("integrity", "decks"), f"{decks} decks, but {game.game_id} is played with one "
           "52-card deck", "set decks = 1 (or leave it out)")


def _limits(ck: _Checker, doc: dict[str, Any], game: Any) -> Limits:
    wagers_known = getattr(game, "wagers", None)
    subtables = tuple(k for k, v in doc.items() if isinstance(v, dict))
    if getattr(game, "game_id", None) == HOLDEM and len(doc) > len(subtables):
        # Nothing reads them there: an operator who set a table maximum would believe it held.
        # (A [limits.<name>] sub-table is named below: Hold'em has no wager of that name.)
        ck.add(("limits",), f"{HOLDEM} has no wager limits: its bets go into the pot through "
               "the betting, sized by the blinds and the structure (11/2008 art. 11)",
               "remove [limits]; the stakes are set in [holdem]")
        doc = {k: v for k, v in doc.items() if k in subtables}
    # A wager's own limits are a section ([limits.pair_bonus]): one written as a value
    # (pair_bonus = 50) is named so, not as an unknown key.
    scalars = tuple(k for k, v in doc.items() if not isinstance(v, dict)
                    and k not in SCHEMA["limits"] and k in (wagers_known or ()))
    for name in scalars:
        _not_a_section(ck, ("limits", name), doc[name])
    base = ck.section(doc, ("limits",), SCHEMA["limits"], extra=subtables + scalars)
    if base["max"] is not None and base["min"] > base["max"]:
        ck.add(("limits", "max"), f"maximum {base['max']} is below the minimum {base['min']}",
               "raise limits.max or lower limits.min")
    follows = getattr(game, "limits_follow", None) or {}
    per: dict[str, tuple[int, int | None]] = {}
    for name in subtables:
        if wagers_known is not None and name not in wagers_known and \
                _token_like(name, wagers_known):
            ck.token_name(("limits",), name, doc[name], list(wagers_known))
            continue
        if wagers_known is not None and name not in wagers_known:
            ck.add(("limits", name), f"{game.game_id} has no wager {name!r}",
                   _unknown_wager_fix(name, wagers_known, game))
            continue
        if name in follows:
            ck.add(("limits", name), f"the {name} of {game.game_id} has no limits of its own: "
                   f"it follows the {follows[name]}'s", f"set [limits.{follows[name]}] instead")
            continue
        sub = ck.section(doc[name], ("limits", name),
                         {"min": Key("int", base["min"], check=_wager_limit),
                          "max": Key("int", base["max"], check=_wager_limit)})
        if sub["max"] is not None and sub["min"] > sub["max"]:
            ck.add(("limits", name, "max"), f"maximum {sub['max']} is below the minimum "
                   f"{sub['min']}", f"raise limits.{name}.max or lower limits.{name}.min")
        per[name] = (sub["min"], sub["max"])
    return Limits(base["min"], base["max"], per)


def _holdem(ck: _Checker, doc: Mapping[str, Any], game_id: str | None) -> HoldemConfig | None:
    """[holdem]: required at a Texas Hold'em table (the blinds posted there, art. 4(3), and
    the structure are the house's choice: no default could be right), an error at any other."""
    present = "holdem" in doc
    if game_id is not None and game_id != HOLDEM:
        if present:
            ck.add(("holdem",), f"only a {HOLDEM} table has a [holdem] section; this table "
                   f"plays {game_id}", f"remove [holdem], or set table.game = \"{HOLDEM}\"")
        return None
    if game_id is None and not present:
        return None         # the game itself is wrong or missing: that problem is named
    if not present:
        ck.problems.append(Problem(
            "holdem", ck.line(("table", "game")),
            "a texas-holdem table needs a [holdem] section: the blinds posted at the table "
            "(11/2008 art. 4(3), 5) and the betting structure (art. 11)",
            "add [holdem] with small_blind, big_blind, structure and, for a commission, "
            "rake_percent (docs/configuration.md)"))
        return None
    before = len(ck.problems)
    values = ck.section(_table(ck, doc, "holdem"), ("holdem",), SCHEMA["holdem"])
    small, big = values["small_blind"], values["big_blind"]
    if small is not None and big is not None and small > big:
        ck.add(("holdem", "small_blind"), f"the small blind {small} is above the big blind "
               f"{big} (11/2008 art. 5(1): the small blind is normally half the big blind)",
               "lower small_blind or raise big_blind")
    if len(ck.problems) > before or game_id is None:
        return None
    rake = values["rake_percent"]
    return HoldemConfig(small, big, values["structure"],
                        Fraction(repr(rake)) if isinstance(rake, float) else Fraction(rake))


def _pan9(ck: _Checker, doc: Mapping[str, Any], game_id: str | None) -> Pan9Config | None:
    """[pan9]: optional at a Super Pan 9 table (without it the dealer gives the house's co-bank
    capital each time), an error at any other: only Super Pan 9 has a bank to co-bank."""
    present = "pan9" in doc
    if game_id is not None and game_id != PAN9:
        if present:
            ck.add(("pan9",), f"only a {PAN9} table has a [pan9] section (the house's co-bank "
                   f"capital, 261/96/M art. 5(5)); this table plays {game_id}",
                   f"remove [pan9], or set table.game = \"{PAN9}\"")
        return None
    values = ck.section(_table(ck, doc, "pan9"), ("pan9",), SCHEMA["pan9"]) if present \
        else {"house_co_bank_capital": None}
    return Pan9Config(values["house_co_bank_capital"]) if game_id is not None else None


def _unknown_wager_fix(name: str, wagers: tuple[str, ...], game: Any) -> str:
    if not wagers:
        where = "; its blinds are set in [holdem]" if game.game_id == HOLDEM else ""
        return f"{game.game_id} has no wager with limits of its own{where}: remove " \
               f"[limits.{name}]"
    close = difflib.get_close_matches(name, list(wagers), n=1, cutoff=0.6)
    return f"did you mean {close[0]!r}?" if close else \
        f"its wagers are: {', '.join(wagers)}"


def _interpretations(ck: _Checker, doc: dict[str, Any], game: Any) -> dict[str, str]:
    chosen: dict[str, str] = {}
    known = [i.key for i in game.interpretations] if game is not None else []
    named: set[tuple[str, ...]] = set()       # token-like names already named, once each
    for names, value in _flatten(doc).items():
        key = ".".join(names)
        path = ("interpretations",) + tuple(key.split("."))
        if key not in known and _token_name_in(ck, names, doc, known, named):
            continue
        if not isinstance(value, str):
            ck.add(path, f"is {_describe(value)}, not a reading in quotes",
                   f"write it as {key} = \"reading\" (see docs/interpretations.md)")
            continue
        if game is not None:
            try:
                game.resolve_interpretations({key: value})
            except RuleError as exc:
                fix = ""
                keys = [i.key for i in game.interpretations]
                if key not in keys and keys:
                    fix = _suggest(key, keys)
                ck.add(path, str(exc), fix)
                continue
        chosen[key] = value
    if game is not None:
        try:
            return game.resolve_interpretations(chosen)
        except RuleError:
            return chosen
    return chosen


def _token_name_in(ck: _Checker, names: tuple[str, ...], doc: dict[str, Any], known: list[str],
                   named: set[tuple[str, ...]]) -> bool:
    """Whether a name on the way to a value under [interpretations] (``names``: the TOML keys,
    each of which may hold a dot when quoted) may be a token (:func:`_token_like`), at any
    depth: a problem that names the whole path would repeat a token written below the first
    name. Named once, by its line, in ``ck``."""
    value: Any = doc
    for depth, name in enumerate(names):
        value = value[name]
        if _token_like(name, known if depth == 0 else []):
            if names[:depth + 1] not in named:
                named.add(names[:depth + 1])
                ck.token_name(("interpretations",) + names[:depth], name, value, known)
            return True
    return False


def _devices(ck: _Checker, doc: dict[str, Any]) -> dict[str, DeviceSpec] | None:
    out: dict[str, DeviceSpec] = {}
    for dev_id, table in doc.items():
        path = ("devices", dev_id)
        if not isinstance(table, dict):
            _not_a_section(ck, path, table)
            continue
        if not _ID_RE.match(dev_id):
            ck.add(path, f"device id {dev_id!r} is not a plain name",
                   f"use {_ID_TEXT}, e.g. [devices.shoe]")
            continue
        if dev_id in RESERVED_IDS:
            ck.add(path, f"device id {dev_id!r} is reserved: the journal names the "
                   f"{RESERVED_IDS[dev_id]} so, and a device of that name would share its "
                   "records", "name the device by its part, e.g. [devices.shoe] or "
                   "[devices.shuffler-2]")
            continue
        if spells_card(dev_id):
            # The id is published with every event about the device, and the table refuses
            # to publish text that spells a card as it would a face-down card: the first link
            # of the device would fault the table.
            ck.add(path, f"device id {dev_id!r} spells a card ({Card.parse(dev_id).name}): "
                   "the table never shows text that reads as a card, so every event naming "
                   "the device would be refused and stop the table",
                   "rename it by its part, e.g. [devices.shoe-1] or [devices.shuffler-2] (a "
                   "journal written under the old id replays as before)")
            continue
        from controller.table.secrecy import scrub    # the table's, after the config loads
        masked = scrub(dev_id)
        if masked != dev_id:
            # Every message the table gives outside (a refusal on the console or the control
            # socket, the log) masks a card standing apart in it: a refusal naming the device
            # would not say which one it is.
            ck.add(path, f"device id {dev_id!r} holds a card standing apart: every message "
                   f"the table gives masks a card, so a refusal naming the device would name "
                   f"it {masked!r}",
                   "rename it by its part, e.g. [devices.shoe-1] or [devices.shuffler-2] (a "
                   "journal written under the old id replays as before)")
            continue
        before = len(ck.problems)
        values = ck.section(table, path, SCHEMA["devices.*"])
        if len(ck.problems) > before:
            continue
        if _other_transports_keys(ck, path, table, values["transport"]):
            continue
        if values["firmware_hash"] and values["codec"] in _HELLO_WITHOUT_HASH:
            ck.add(path + ("firmware_hash",),
                   f"is set, but codec \"{values['codec']}\" gives no firmware hash at hello: "
                   "the device would never be linked",
                   "leave firmware_hash out, or use codec = \"tablectl\" with a firmware that "
                   "speaks it")
            continue
        if values["link_timeout_s"] <= values["heartbeat_s"]:
            beat = values["heartbeat_s"]
            ck.add(path + ("link_timeout_s",),
                   f"is {values['link_timeout_s']:g}, not longer than heartbeat_s ({beat:g}): "
                   "the link would be lost between two heartbeats",
                   f"make it a few heartbeats long, e.g. {max(1.0, beat * 4):g}")
            continue
        try:
            spec = DeviceSpec(id=dev_id, device_class=values.pop("class"), **values)
        except TablectlError as exc:
            # DeviceSpec's own checks: pin them on the key they are about.
            msg = str(exc).split(": ", 1)[-1]
            if "speaks only for" in msg:
                reason, fix = msg.split("; ", 1)
                ck.add(path + ("codec",), reason, fix)
                continue
            key = "port" if "port" in msg else "usb_vendor" if "usb_vendor" in msg else \
                "link_timeout_s" if "link_timeout_s" in msg else "class"
            ck.add(path + (key,), msg, "")
            continue
        if len(ck.problems) == before:
            out[dev_id] = spec
    _devices_shared(ck, out)
    return out


# Codecs whose HelloInfo carries no firmware hash (docs/protocol.md 8): nothing to approve by.
_HELLO_WITHOUT_HASH = ("dice-binary",)

# The keys that find and speak to a device over one transport, and mean nothing on the other.
_TRANSPORT_KEYS = {"serial": ("port", "baudrate"),
                   "usb": ("usb_vendor", "usb_product", "usb_serial", "usb_backend")}


def _other_transports_keys(ck: _Checker, path: tuple[str, ...], table: Mapping[str, Any],
                           transport: str) -> bool:
    """Name a key of the other transport written in the section (a tty on a USB device, a
    serial number on a serial one): taken, it would be silently unused, and the device opened
    otherwise than its writer believed. True when there was one."""
    other = "usb" if transport == "serial" else "serial"
    found = False
    for key in _TRANSPORT_KEYS[other]:
        if key in table:
            how = ("is opened on its serial port (port)" if transport == "serial" else
                   "is found over USB by usb_vendor, usb_product and usb_serial")
            ck.add(path + (key,), f"is for a device with transport = \"{other}\"; this one "
                   f"{how}", f"remove {key}, or set transport = \"{other}\"")
            found = True
    return found


def _devices_shared(ck: _Checker, devices: Mapping[str, DeviceSpec]) -> None:
    """One device, one section: a serial port or a USB device named twice would be opened by
    the first and never linked by the other."""
    ports: dict[str, str] = {}
    usb: dict[tuple[int, int, str], str] = {}
    usb_ids: dict[tuple[int, int], list[str]] = {}
    for dev_id, spec in devices.items():
        if spec.transport == "serial" and spec.port:
            other = ports.setdefault(spec.port, dev_id)
            if other != dev_id:
                ck.add(("devices", dev_id, "port"),
                       f"{spec.port} is already the port of devices.{other}",
                       "give each device its own port (a stable name from the udev rules, "
                       "such as /dev/tablectl/shoe)")
        elif spec.transport == "usb":
            usb_ids.setdefault((spec.usb_vendor, spec.usb_product), []).append(dev_id)
            key = (spec.usb_vendor, spec.usb_product, spec.usb_serial)
            other = usb.setdefault(key, dev_id)
            if other != dev_id:
                ck.add(("devices", dev_id),
                       f"names the same USB device as devices.{other} (vendor "
                       f"0x{spec.usb_vendor:04x}, product 0x{spec.usb_product:04x}, serial "
                       f"{spec.usb_serial or 'any'})",
                       "set usb_serial in each to pick one of the identical devices")
    # A device without usb_serial takes the one unit of its vendor and product, and opens none
    # while another is plugged in: a second device of those ids, even one with its own serial
    # number, kept it from ever linking.
    for (vendor, product), ids in usb_ids.items():
        named = [i for i in ids if devices[i].usb_serial]
        for dev_id in ids:
            if devices[dev_id].usb_serial or not named:
                continue            # (two without it: named as one device, above)
            ck.add(("devices", dev_id),
                   f"has no usb_serial, so it takes the one USB device of vendor "
                   f"0x{vendor:04x}, product 0x{product:04x}, and devices.{named[0]} is "
                   "another: with both plugged in, this one is never opened",
                   f"set usb_serial in devices.{dev_id} to its unit's serial number")


def _gpio(ck: _Checker, doc: Mapping[str, Any], boxes: Any) -> GpioConfig | None:
    if "gpio" not in doc:
        return None
    gdoc = _table(ck, doc, "gpio")
    subs = ("buttons", "light")
    top = ck.section(gdoc, ("gpio",), SCHEMA["gpio"], extra=subs)
    buttons = {k: v for k, v in ck.section(_table(ck, gdoc, "buttons", ("gpio",)),
                                           ("gpio", "buttons"),
                                           SCHEMA["gpio.buttons"]).items() if v is not None}
    light = {k: v for k, v in ck.section(_table(ck, gdoc, "light", ("gpio",)),
                                         ("gpio", "light"), SCHEMA["gpio.light"]).items()
             if v is not None}
    sensors = tuple(top["box_sensors"] or ())
    if sensors and isinstance(boxes, int) and len(sensors) != boxes:
        ck.add(("gpio", "box_sensors"), f"lists {len(sensors)} sensors for {boxes} boxes",
               "give one pin per box, box 1 first, or leave box_sensors out")
    config = GpioConfig(buttons=buttons, key_switch=top["key_switch"], box_sensors=sensors,
                        light=light, buzzer=top["buzzer"], pull_up=top["pull_up"],
                        sensors_active_low=top["sensors_active_low"],
                        light_active_low=top["light_active_low"],
                        buzzer_active_low=top["buzzer_active_low"],
                        bounce_ms=top["bounce_ms"], repeat_guard_ms=top["repeat_guard_ms"])
    _polarity_fitted(ck, gdoc)
    # One pin, one job: a pin used twice is a wiring mistake.
    used: dict[int, tuple[str, int | str]] = {}
    for name, pin in _panel_pins(ck, config):
        bcm = _gpio_number(pin)     # every spelling of a pin is one number: 17 == "BOARD11"
        if bcm in used:
            path = tuple(name.split("[")[0].split("."))
            other, written = used[bcm]
            same = f"pin {pin!r} is already used by {other}"
            if written != pin:
                same += f" ({written!r}): both are GPIO{bcm}"
            ck.add(path, same, "give every input and output its own pin")
        else:
            used[bcm] = (name, pin)
        _fixed_pull_up(ck, config, name, pin, bcm)
    return config


def _polarity_fitted(ck: _Checker, gdoc: Mapping[str, Any]) -> None:
    """An output set active-low where the output has no pin: the lamps or buzzer the relay
    board was wired for are missing from the file, and would never be driven. (false, the
    default, written for an output not fitted changes nothing.)"""
    # Fitted as written: a pin written wrong is a problem of its own, said at its line.
    lamps = gdoc.get("light")
    for key, fitted, what, way in (
            ("light_active_low", isinstance(lamps, dict) and bool(lamps), "no lamp",
             "give the lamps' pins under [gpio.light] (green, amber, red)"),
            ("buzzer_active_low", "buzzer" in gdoc, "no buzzer",
             "give the buzzer's pin under [gpio] (buzzer = PIN)")):
        if gdoc.get(key) is True and not fitted:
            ck.add(("gpio", key), f"is true (on while the pin is low), but {what} is fitted: "
                   "no pin is given for it, so nothing would be driven this way",
                   f"{way} as wired, or remove {key}")


# GPIO2 and GPIO3 (I2C SDA and SCL) have a 1.8 kOhm pull-up to 3.3 V on the board: gpiozero
# refuses to pull them down (PinFixedPull), so the panel could not open an input so set.
FIXED_PULL_UP = frozenset({2, 3})


def _fixed_pull_up(ck: _Checker, gpio: GpioConfig, name: str, pin: int | str,
                   bcm: int | None) -> None:
    if bcm not in FIXED_PULL_UP:
        return
    if name.startswith("gpio.box_sensors"):
        if gpio.sensors_active_low:
            return
        setting = "sensors_active_low = false"
        other = "a sensor that pulls the pin low with a card on the box (sensors_active_low = true)"
    elif name.startswith(("gpio.buttons.", "gpio.key_switch")):
        if gpio.pull_up:
            return
        setting = "pull_up = false"
        other = "buttons and key switch that close to ground (pull_up = true)"
    else:
        return                                  # an output: the pull-up does not hinder it
    ck.add(_pin_key(name),
           f"pin {pin!r} is GPIO{bcm}, which has a fixed pull-up to 3.3 V on the Pi (the I2C "
           f"pins GPIO2 and GPIO3): with gpio.{setting} the input would have to be pulled down, "
           "which the panel cannot do, so it would not open",
           f"move {name} to another pin, or use {other}")


def _panel_pins(ck: _Checker, gpio: GpioConfig) -> list[tuple[str, int | str]]:
    """Every pin of the panel with its key ("gpio.buttons.confirm", "gpio.box_sensors[3]"),
    in the file's order."""
    assigned = [(f"gpio.buttons.{k}", v) for k, v in gpio.buttons.items()] + \
        [(f"gpio.light.{k}", v) for k, v in gpio.light.items()] + \
        [(f"gpio.{k}", getattr(gpio, k)) for k in ("key_switch", "buzzer")
         if getattr(gpio, k) is not None] + \
        [(f"gpio.box_sensors[{i + 1}]", v) for i, v in enumerate(gpio.box_sensors)]
    assigned.sort(key=lambda item: ck.line(_pin_key(item[0])) or 0)
    return assigned


def _pin_key(name: str) -> tuple[str, ...]:
    return tuple(name.split("[")[0].split("."))


# The Pi's on-board UART on GPIO14 (TXD) and GPIO15 (RXD): ttyAMA0 the PL011, ttyS0 the mini
# UART. /dev/serial0 is the alias Raspberry Pi OS gives the primary UART: that one on a Pi 4
# and earlier, but the debug UART connector (ttyAMA10) on a Pi 5, so it is judged by where it
# points on the machine doing the check, looked up at SERIAL_ALIAS_PATH (a test points it
# elsewhere).
UART_PORTS = frozenset({"/dev/ttyAMA0", "/dev/ttyS0"})
UART_PINS = {14: "TXD", 15: "RXD"}
SERIAL_ALIAS = "/dev/serial0"
SERIAL_ALIAS_PATH = SERIAL_ALIAS
PI5_DEBUG_UART = "/dev/ttyAMA10"


def _gpio_uart(port: str) -> tuple[str, bool] | None:
    """How ``port`` is shown when it is the UART on GPIO14/15, and whether that is only
    presumed (/dev/serial0, not on this machine to be looked at); None when it is not."""
    # A stable name may be a link to the UART or the alias (a udev rule's /dev/tablectl/shoe).
    real = port if port in UART_PORTS | {SERIAL_ALIAS} else os.path.realpath(port)
    presumed = False
    if real == SERIAL_ALIAS:
        if os.path.islink(SERIAL_ALIAS_PATH):
            real = os.path.realpath(SERIAL_ALIAS_PATH)
        else:
            presumed = True                     # checked on another machine: it may be
    if real not in UART_PORTS and not presumed:
        return None
    return (port if real == port else f"{port}, that is {real}"), presumed


def _uart_pins(ck: _Checker, devices: Mapping[str, DeviceSpec] | None,
               gpio: GpioConfig | None) -> None:
    """A panel pin on the UART a device uses: the panel and the device would fight over the
    line (a button reading the device's frames, a lamp driving its line)."""
    if gpio is None or not devices:
        return
    uart = None
    for dev_id, spec in devices.items():
        if spec.transport != "serial" or not spec.port.startswith("/"):
            continue
        found = _gpio_uart(spec.port)
        if found is not None:
            uart = (dev_id, *found)
            if not found[1]:
                break                           # one known to be the UART names it best
    if uart is None:
        return
    dev_id, shown, presumed = uart
    for name, pin in _panel_pins(ck, gpio):
        bcm = _gpio_number(pin)
        if bcm in UART_PINS:
            ck.add(_pin_key(name),
                   f"pin {pin!r} is GPIO{bcm}, the {UART_PINS[bcm]} of the Pi's on-board UART, "
                   f"which devices.{dev_id}.port uses ({shown}"
                   + (f": the UART on GPIO14/15 up to a Raspberry Pi 4; {SERIAL_ALIAS} is not "
                      "on this machine to tell)" if presumed else ")"),
                   f"move {name} to another pin: the UART's pins are fixed (GPIO14 TXD, "
                   f"GPIO15 RXD); or put devices.{dev_id} on a USB serial adapter"
                   + (f"; on a Raspberry Pi 5, {SERIAL_ALIAS} is the debug UART connector "
                      f"not GPIO14/15: name it, devices.{dev_id}.port = "
                      f"\"{PI5_DEBUG_UART}\"" if presumed else ""))


def _api(ck: _Checker, doc: dict[str, Any]) -> ApiConfig:
    base = ck.section(doc, ("api",), SCHEMA["api"], extra=("tokens",))
    tokens: dict[str, str] = {}
    if "tokens" in doc:
        tdoc = doc["tokens"]
        if not isinstance(tdoc, dict):
            _not_a_section(ck, ("api", "tokens"), tdoc)
        else:
            values = ck.section(tdoc, ("api", "tokens"),
                                {r: Key("str", None, check=_token, secret=True)
                                 for r in ROLES})
            tokens = {r: v for r, v in values.items() if v is not None and v is not _BAD}
            first: dict[str, str] = {}
            for role in [r for r in tdoc if r in tokens]:     # in the file's order
                other = first.setdefault(tokens[role].lower(), role)
                if other != role:
                    # The console would give this token the last role it matches.
                    ck.add(("api", "tokens", role), f"is the same token as api.tokens.{other}",
                           f"give each role its own token: tablectl config hash-token --new "
                           f"--role {role}")
    return ApiConfig(base["listen"], base["port"], tokens, base["refused_limit"],
                     base["refused_window_s"])


# --- loading --------------------------------------------------------------------------------

def parse_text(text: str, path: str | Path | None = None) -> TableConfig:
    """Parse and validate TOML text (``path`` only names it in messages)."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        msg = str(exc)
        m = re.search(r"\(at line (\d+), column (\d+)\)", msg)
        line = int(m.group(1)) if m else None
        reason = re.sub(r"\s*\(at line \d+, column \d+\)", "", msg)
        raise ConfigError([Problem("(syntax)", line, f"not valid TOML: {reason}",
                                   "fix the syntax at that line (strings need quotes, tables "
                                   "are [name])")], path) from None
    except RecursionError:
        raise _too_deep(text, path) from None
    try:
        config = validate(doc, text, path)
    except RecursionError:      # a parsed document nested deeper than Python's stack
        raise _too_deep(text, path) from None
    return dataclasses.replace(config, digest=hashlib.sha256(text.encode()).hexdigest())


def _too_deep(text: str, path: str | Path | None) -> ConfigError:
    """A document nested too deeply for the TOML reader (which recurses once per level)."""
    line, depth = _deepest(text)
    where = f" ({depth} levels of arrays or inline tables)"
    if depth < 50:          # not the brackets: a key of very many dotted parts
        keys = key_lines(text)
        longest = max(keys, key=len, default=())
        line, where = keys.get(longest), f" (a key of {len(longest)} dotted parts)"
    return ConfigError([Problem("(syntax)", line, f"nested too deeply to read{where}",
                                "a table's configuration needs two or three levels of "
                                "[ ], { } or dotted keys at most: remove the extra ones")],
                       path)


def _deepest(text: str) -> tuple[int | None, int]:
    """The line where the brackets of values (``[``, ``{``) first reach their deepest nesting,
    and that depth. Strings and comments are skipped; table headers close on their line."""
    depth = best = 0
    line = at = 1
    quote = ""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c == "\n":
            line += 1
        elif quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c == "#":
            while i < n and text[i] != "\n":
                i += 1
            continue
        elif c in "[{":
            depth += 1
            if depth > best:
                best, at = depth, line
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return (at if best else None), best


def load_config(path: str | Path = DEFAULT_PATH) -> TableConfig:
    """Read and validate the table's configuration file."""
    path = Path(path)
    what = special(path)    # a named pipe would hold the read (and the unit's start) for good
    if what:
        raise TablectlError(f"configuration {path} is {what}, not a file; give the table's "
                            f"TOML file, e.g. {DEFAULT_PATH}")
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TablectlError(f"configuration {path} does not exist; copy "
                            "docs/table.toml.example there and edit it") from None
    except IsADirectoryError:
        raise TablectlError(f"configuration {path} is a directory, not a file; give the "
                            f"table's TOML file, e.g. {path / 'table.toml'}") from None
    except UnicodeDecodeError as exc:
        raise TablectlError(f"configuration {path} is not UTF-8 text (byte "
                            f"0x{exc.object[exc.start]:02x} at offset {exc.start}); save it as "
                            "UTF-8") from None
    except OSError as exc:
        retry = f"sudo -u tablectl tablectl config check {path}"
        raise TablectlError(f"configuration {path} cannot be read: "
                            f"{cannot_reach(path, exc, retry)}") from None
    return parse_text(text, path)


def check_file(path: str | Path) -> tuple[TableConfig | None, list[Problem]]:
    """``(config, [])`` when the file is valid, ``(None, problems)`` otherwise."""
    try:
        return load_config(path), []
    except ConfigError as exc:
        return None, exc.problems
