"""The ``tablectl`` command: one entry point, one module per subcommand group.

Each module listed in ``SUBCOMMANDS`` has ``register(subparsers)``, which adds its parser and
sets ``func(args) -> int``. Errors a person can cause (TablectlError) print one clear line and
exit 2; nothing is changed when that happens.
"""
from __future__ import annotations

import argparse
import importlib
import os
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
    stdout = sys.stdout
    if stdout is not None:          # None: started with standard output closed (>&-)
        sys.stdout = _Output(stdout)
    try:
        code = int(args.func(args) or 0)
        if sys.stdout is not None:  # a full disk is found here, not at the interpreter's exit
            sys.stdout.flush()
        return code
    except OutputLost as exc:
        _drop_output(stdout)
        print(f"tablectl: error: {exc}", file=sys.stderr)
        return 2
    except TablectlError as exc:
        print(f"tablectl: error: {printable_lines(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        sys.stdout = stdout


class OutputLost(Exception):
    """Standard output refused what was written to it (a full disk, a quota, a failing disk):
    what reached it is incomplete. Not a TablectlError, so that no command takes it for an
    error of its input on the way."""

    def __init__(self, exc: OSError) -> None:
        reason = os.strerror(exc.errno) if exc.errno else str(exc)
        super().__init__(
            f"the output could not be written ({reason}): what was written of it is "
            "incomplete and must not be used; free space on the disk it goes to, or send it "
            "elsewhere, and run the command again")


class _Output:
    """Standard output, whose write errors are told apart from those of the files a command
    reads: a reader of the pipe that went away (``| head -1``) is no error, and any other
    refusal of the output is :class:`OutputLost`, one line instead of a traceback."""

    def __init__(self, stream) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputLost(exc) from None

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputLost(exc) from None

    def __getattr__(self, name: str):
        return getattr(self._stream, name)


def _drop_output(stream) -> None:
    """Let what is left in the output's buffer go, so that the interpreter's own flush at exit
    does not fail again with a traceback of its own."""
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, fd)
    os.close(null)


if __name__ == "__main__":
    sys.exit(main())
