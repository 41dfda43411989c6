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

# name -> module; a module registers one top-level subcommand (with its own sub-subcommands).
SUBCOMMANDS = {
    "rules": "controller.rules.cli",
    "odds": "controller.rules.odds_cli",
    "journal": "controller.journal_cli",
    "config": "controller.config_cli",
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


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except TablectlError as exc:
        print(f"tablectl: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
