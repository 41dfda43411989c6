"""``tablectl panel check``: try the dealer panel's wiring after installing a table.

It shows each tower-light signal in turn (with its buzzer pattern) and prints every button, key
switch and box-sensor input as it happens, for ``--seconds``. The lamps and the buzzer are driven
as the service drives them, with the polarity of [gpio] (light_active_low, buzzer_active_low):
off from the moment the pins are opened, and left off. Stop the service first: the
panel's pins can be held by one process only.
"""
from __future__ import annotations

import argparse
import math
import queue
import sys
import time
from typing import Any, TextIO

from controller.config import DEFAULT_PATH, GpioConfig, load_config
from controller.errors import TablectlError
from controller.panel import COLOURS, Light, Panel

SEQUENCE = (Light.READY, Light.WAITING, Light.ACTION, Light.VOID, Light.MALFUNCTION,
            Light.OUT_OF_SERVICE)


def register(sub: argparse._SubParsersAction) -> None:
    panel = sub.add_parser("panel", help="check the dealer panel's wiring (GPIO)")
    psub = panel.add_subparsers(dest="panel_command", metavar="ACTION")
    psub.required = True
    check = psub.add_parser("check", help="cycle the tower light and print every input")
    check.add_argument("--config", default=str(DEFAULT_PATH), metavar="FILE",
                       help=f"the table's configuration (default {DEFAULT_PATH})")
    check.add_argument("--seconds", type=float, default=30.0,
                       help="how long to listen for inputs (default 30)")
    check.set_defaults(func=cmd_check)


def cmd_check(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    if config.gpio is None:
        raise TablectlError(f"{args.config} has no [gpio] section: this table has no GPIO "
                            "panel to check")
    if not math.isfinite(args.seconds) or args.seconds <= 0:
        raise TablectlError(f"--seconds must be a number of seconds greater than 0, such as "
                            f"30; got {args.seconds}")
    run_check(config.gpio, args.seconds, sys.stdout)
    return 0


def describe_input(event: Any) -> str:
    kind = event.kind
    if kind == "button_pressed":
        return f"button {event.button} pressed"
    if kind == "button_repeated":
        return f"button {event.button} pressed again after {event.after_ms} ms (a repeat)"
    if kind == "key_switched":
        return f"key switch {'on' if event.on else 'off'}"
    if kind == "card_placed":
        return f"card placed on box {event.box}"
    if kind == "card_removed":
        return f"card removed from box {event.box}"
    return kind


def _on_when(active_low: bool) -> str:
    """How an output's polarity is said, so the technician knows what the pin should read."""
    return " (on while the pin is low)" if active_low else " (on while the pin is high)"


def run_check(gpio: GpioConfig, seconds: float, out: TextIO, *, pin_factory: Any = None,
              step_s: float = 2.0) -> list[Any]:
    """Cycle the signals (``step_s`` each) while printing inputs, for ``seconds`` in all.
    Returns the inputs seen."""
    inputs: queue.Queue = queue.Queue()
    seen: list[Any] = []
    with Panel(gpio, inputs.put, pin_factory=pin_factory, announce_key=False) as panel:
        fitted = [f"buttons: {', '.join(gpio.buttons) or 'none'}",
                  f"key switch: {'fitted' if gpio.key_switch is not None else 'none'}",
                  f"box sensors: {len(gpio.box_sensors)}",
                  f"lamps: {', '.join(gpio.light) or 'none'}"
                  + (_on_when(gpio.light_active_low) if gpio.light else ""),
                  f"buzzer: {'fitted' if gpio.buzzer is not None else 'none'}"
                  + (_on_when(gpio.buzzer_active_low) if gpio.buzzer is not None else "")]
        print("panel: " + "; ".join(fitted), file=out)
        if panel.key_on is not None:
            print(f"key switch is {'on' if panel.key_on else 'off'}", file=out)
        if gpio.box_sensors:
            boxes = panel.occupied_boxes()
            print(f"cards on boxes: {', '.join(map(str, boxes)) if boxes else 'none'}", file=out)
        print("press each button, turn the key, put a card on each box ...", file=out)
        out.flush()
        start = time.monotonic()
        signals = list(SEQUENCE)
        next_signal = start
        while True:
            now = time.monotonic()
            if now - start >= seconds:
                break
            if signals and now >= next_signal:
                light = signals.pop(0)
                panel.show(light)
                print(f"tower light: {light.value} ({COLOURS[light]})", file=out)
                out.flush()
                next_signal = now + step_s
            wait = min(0.1, max(0.0, seconds - (now - start)))
            try:
                event = inputs.get(timeout=wait)
            except queue.Empty:
                continue
            seen.append(event)
            print(describe_input(event), file=out)
            out.flush()
        panel.show(Light.OFF)
    print(f"done: {len(seen)} inputs", file=out)
    return seen
