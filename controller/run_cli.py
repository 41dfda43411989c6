"""``tablectl run --config FILE``: the table controller daemon (systemd ``Type=notify``)."""
from __future__ import annotations

import argparse
import asyncio

from controller.config import DEFAULT_PATH, load_config
from controller.logs import configure_logging


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("run", help="run the table controller (the systemd service)")
    p.add_argument("--config", default=str(DEFAULT_PATH), metavar="FILE",
                   help=f"the table's configuration (default {DEFAULT_PATH})")
    p.add_argument("--control", metavar="SOCKET", default=None,
                   help="also listen for JSON-line commands on this Unix socket (mode 0600)")
    p.set_defaults(func=cmd_run)


def cmd_run(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    configure_logging(config.log_level, config.log_format)
    from controller.service import Service   # after logging is set up

    return asyncio.run(Service(config, control=args.control).run())
