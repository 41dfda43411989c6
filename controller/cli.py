"""The ``tablectl`` command: one entry point, one module per subcommand group.

Each module listed in ``SUBCOMMANDS`` has ``register(subparsers)``, which adds its parser and
sets ``func(args) -> int``. Errors a person can cause (TablectlError) print one clear line and
exit 2; nothing is changed when that happens.
"""
from __future__ import annotations

import argparse
import importlib
import sys

from controller import __version__
from controller.errors import TablectlError
from controller.printable import printable, printable_lines

# name -> module; a module registers one top-level subcommand (with its own sub-subcommands).
SUBCOMMANDS = {
    "rules": "controller.rules.cli",
    "odds": "controller.rules.odds_cli",
    "journal": "controller.journal_cli",
    "config": "controller.config_cli",
    "reload": "controller.reload_cli",
    "panel": "controller.panel_cli",
    "run": "controller.run_cli",
    "sim": "controller.sim_cli",
    "demo": "controller.demo_cli",
    "integrity": "controller.integrity_cli",
    "bench": "controller.bench_cli",
}


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tablectl",
        description="Controller for a casino table's card and dice devices (Macau regulations).")
    parser.add_argument("--version", action="version", version=f"tablectl {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for module in SUBCOMMANDS.values():
        importlib.import_module(module).register(sub)
    return parser


# Subcommands that read a journal: a path given bare is meant for --journal.
JOURNAL_READERS = ("journal", "integrity")


def unrecognized(args: argparse.Namespace, extra: list[str], argv: list[str]) -> str:
    """The error for arguments the command does not take, with the way to give them."""
    words = [args.command] + [w for w in [getattr(args, f"{args.command}_command", None)] if w]
    text = f"unrecognized arguments: {' '.join(extra)}; "
    if args.command in JOURNAL_READERS and len(extra) == 1 and not extra[0].startswith("-") \
            and getattr(args, "journal", None) is None:
        line = " ".join(f"--journal {a}" if a == extra[0] else a for a in argv)
        return text + f"a journal is named with --journal: tablectl {line}"
    return text + f"see tablectl {' '.join(words)} --help"


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:
        print(f"tablectl: error: {printable(unrecognized(args, extra, argv or sys.argv[1:]))}",
              file=sys.stderr)
        return 2
    try:
        return int(args.func(args) or 0)
    except TablectlError as exc:
        print(f"tablectl: error: {printable_lines(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
