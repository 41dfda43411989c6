"""``tablectl config check FILE`` and ``tablectl config hash-token``.

``check`` prints on stderr ``tablectl: error: FILE: N problems`` and one indented line per
problem (``FILE:LINE: key: reason; fix``) and exits 2, or a summary and exit 0. ``hash-token`` turns a console token into the ``sha256:<hex>`` form that
``[api.tokens]`` stores; ``--new`` makes a fresh random token first.
"""
from __future__ import annotations

import argparse
import getpass
import os
import secrets
import sys
from pathlib import Path, PurePosixPath

from controller.config import (DEFAULT_JOURNAL, DEFAULT_PATH, ROLES, TOKEN_MIN_CHARS,
                               ConfigError, HoldemConfig, Problem, TableConfig, hash_token,
                               key_lines, load_config)
from controller.errors import TablectlError
from controller.printable import printable


def register(sub: argparse._SubParsersAction) -> None:
    config = sub.add_parser("config", help="check the table's configuration; hash API tokens")
    csub = config.add_subparsers(dest="config_command", metavar="ACTION")
    csub.required = True

    check = csub.add_parser("check", help="validate a table.toml, naming every wrong key")
    check.add_argument("file", nargs="?", default=str(DEFAULT_PATH), metavar="FILE",
                       help=f"the configuration (default {DEFAULT_PATH})")
    check.set_defaults(func=cmd_check)

    token = csub.add_parser("hash-token", help="the hashed form of a console token, for "
                            "[api.tokens]")
    token.add_argument("--new", action="store_true",
                       help="make a new random token, print it once and its hash")
    token.add_argument("--role", choices=ROLES, help="print a ready [api.tokens] line")
    token.set_defaults(func=cmd_hash_token)


def cmd_check(args: argparse.Namespace) -> int:
    config = load_config(args.file)  # ConfigError lists every problem and exits 2
    check_journal_table(config, args.file)
    devices = ", ".join(f"{d.id} ({d.device_class})" for d in config.devices.values()) or "none"
    # printable: a path may hold a right-to-left override or other invisible character.
    print(printable(f"{args.file}: valid. Table {config.table_id}: {config.game}, "
                    f"{config.mode.value}, {config.boxes} boxes; devices: {devices}; "
                    f"journal {config.journal_path}"))
    if config.holdem is not None:
        print(printable(f"{args.file}: {holdem_stakes(config.holdem)}"))
    for warning in [*config.warnings, *service_notes(config)]:
        print(printable(f"{args.file}: note: {warning}"))
    return 0


# What tablectl.service lets the daemon write: its state directory only (ProtectSystem=strict);
# its /tmp and /var/tmp are its own, emptied when it stops (PrivateTmp=yes); homes are hidden
# (ProtectHome=yes). tests/test_systemd.py keeps these in step with the unit.
STATE_DIRECTORY = PurePosixPath(DEFAULT_JOURNAL).parent
PRIVATE_TMP = (PurePosixPath("/tmp"), PurePosixPath("/var/tmp"))
PROTECTED_HOMES = (PurePosixPath("/home"), PurePosixPath("/root"), PurePosixPath("/run/user"))


def service_notes(config: TableConfig) -> list[str]:
    """What the service's sandbox would do to this configuration: a journal it could not keep,
    a console port it may not listen on. Notes, not errors: a journal in a scratch directory
    is right for a test or a demo, and a port another way (as root) may be right there."""
    return [*_journal_note(config), *_port_note(config)]


# The unit holds no capabilities (CapabilityBoundingSet= empty, NoNewPrivileges=yes): it may
# listen only on ports the kernel lets any user have.
UNPRIVILEGED_PORT_START = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")


def _port_note(config: TableConfig) -> list[str]:
    port = config.api.port
    if not config.api.tokens or port == 0:
        return []                   # no console, or any free port
    try:
        first = int(UNPRIVILEGED_PORT_START.read_text())
    except (OSError, ValueError):
        first = 1024
    if port >= first:
        return []
    return [f"api.port {port} is below {first}, the first port the kernel lets any user "
            f"listen on (net.ipv4.ip_unprivileged_port_start), and tablectl.service holds no "
            f"capabilities (CapabilityBoundingSet=): the console would never come up; use "
            f"{first} or above, such as the default 8740"]


def _journal_note(config: TableConfig) -> list[str]:
    journal = PurePosixPath(os.path.normpath(config.journal_path))
    if journal.is_relative_to(STATE_DIRECTORY):
        return []
    where = f"the journal {journal} is outside {STATE_DIRECTORY}"
    keep = f"keep it under {STATE_DIRECTORY} (docs/configuration.md, [journal])"
    if any(journal.is_relative_to(d) for d in PRIVATE_TMP):
        return [f"{where}: tablectl.service has a /tmp and /var/tmp of its own (PrivateTmp=yes), "
                f"emptied when it stops, so the table's record would be lost; {keep}"]
    if any(journal.is_relative_to(d) for d in PROTECTED_HOMES):
        return [f"{where}: tablectl.service cannot see home directories (ProtectHome=yes); "
                f"{keep}"]
    directory = unit_path(journal.parent)
    return [f"{where}, the only directory tablectl.service may write (ProtectSystem=strict): "
            f"the service would fail to open it; {keep}, or let the service write there with "
            f"a drop-in (sudo systemctl edit tablectl): [Unit] RequiresMountsFor={directory} "
            f"and [Service] ReadWritePaths={directory}"]


def unit_path(path: PurePosixPath) -> str:
    """``path`` as a unit file's list of paths takes it: in double quotes when it holds a
    space, a quote or a backslash, which systemd would otherwise split it at or take away."""
    text = str(path)
    if not any(c.isspace() or c in "\"'\\" for c in text):
        return text
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def check_journal_table(config: TableConfig, file: str) -> None:
    """Refuse, as the service would, a table id its journal does not belong to (an id edited
    in the file): a journal never mixes tables. A journal not there yet, or one this user
    cannot read (or damaged), is left to the service, which names what is wrong with it."""
    from controller.journal import Journal

    path = config.journal_path
    try:
        if not path.is_file():
            return
        with Journal.open(path, readonly=True) as journal:
            stored = journal.table_id
    except (TablectlError, OSError):
        return
    if stored == config.table_id:
        return
    line = key_lines(Path(file).read_text(encoding="utf-8")).get(("table", "id"))
    raise ConfigError([Problem(
        "table.id", line, f"is {config.table_id!r}, but the journal {path} ([journal] path) "
        f"belongs to table {stored!r}, and the service opens no journal of another table",
        f"put back id = \"{stored}\", or give this table a journal of its own ([journal] "
        "path)")], file)


def holdem_stakes(h: HoldemConfig) -> str:
    """The [holdem] stakes in one line: blinds in chip units (11/2008 art. 4(3), 5), the
    betting structure (art. 11) and the commission (art. 16)."""
    rake = f"rake {h.rake_text}% of each pot" if h.rake_percent else "no rake"
    return (f"[holdem] small blind {h.small_blind}, big blind {h.big_blind} (chip units); "
            f"structure {h.structure}; {rake}")


def cmd_hash_token(args: argparse.Namespace) -> int:
    if args.new:
        token = secrets.token_urlsafe(32)
        print(f"token: {token}", file=sys.stderr)
        print("(give the token to the console's user; it is not stored anywhere)",
              file=sys.stderr)
    elif sys.stdin.isatty():
        token = getpass.getpass("token: ")
    else:
        token = sys.stdin.readline().rstrip("\r\n")
    if len(token) < TOKEN_MIN_CHARS:
        raise TablectlError(f"a token must be at least {TOKEN_MIN_CHARS} characters; make a "
                            "strong one with "
                            "`tablectl config hash-token --new`")
    check_sendable(token)
    digest = hash_token(token)
    print(f'{args.role} = "{digest}"' if args.role else digest)
    return 0


def check_sendable(token: str) -> None:
    """Refuse a token no console could ever present: the API and the page take it without
    its surrounding spaces, and a browser sends only plain ASCII in a header, so its hash
    would be stored and every use of it refused as a wrong token."""
    if token != token.strip(" "):
        raise TablectlError("the token begins or ends with a space, which the console and the "
                            "API leave out of what they send, so it could never be used; give "
                            "it without, or make one with `tablectl config hash-token --new`")
    odd = next((ch for ch in token if not " " <= ch <= "~"), None)
    if odd is not None:
        raise TablectlError(f"the token holds U+{ord(odd):04X}, which is not a plain ASCII "
                            "letter, digit, space or punctuation mark: a browser cannot send it "
                            "in a header (a full-width keyboard types such letters), so the "
                            "token could never be used; type it in plain ASCII, or make one "
                            "with `tablectl config hash-token --new`")
