"""The tower light's one rule: what the table's state and its devices' conditions show.

Green when the table is ready, amber while it waits or needs the croupier, red for a void round,
a malfunction or a table out of service. A device condition that stops the next round (a jam,
a malfunction, a door left open, a link lost) turns the light red even while the round in hand
goes on, so the pit sees at once that a supervisor is needed; so does a deck integrity alarm
that stops the table before the next round, until clear_integrity. After a restart of the
controller, a device the round needs that has not linked to the running process yet (the view's
``connecting``) turns green into amber (waiting): nothing is wrong with it that anyone knows
of, so not red, but the croupier must not go on as if the table were ready (and no round
opens meanwhile: the table refuses it, naming the device); the state's colour comes back as
soon as it links. The GPIO panel and the pit display both ask this module, so the lamp on
the table and the one on the page never disagree.

The buzzer sounds with the red blinking light (malfunction) until the croupier's ``silence``
button or the supervisor's ``silence_buzzer`` silences it: the light stays, and an alarm
not silenced yet (another device failing, a door opened) sounds it again.
"""
from __future__ import annotations

from typing import Any

from controller.panel import COLOURS, Light
from controller.table.secrecy import shown_device

LIGHT_OF_STATE = {
    "out_of_service": Light.OUT_OF_SERVICE, "shuffling": Light.WAITING,
    "bets_open": Light.READY, "bets_closed": Light.WAITING, "dice_shaking": Light.WAITING,
    "dealing": Light.READY, "player_decisions": Light.ACTION, "croupier_reveal": Light.WAITING,
    "settlement": Light.ACTION, "round_complete": Light.READY, "round_void": Light.VOID,
    "malfunction": Light.MALFUNCTION,
}
_RED = (Light.VOID, Light.MALFUNCTION, Light.OUT_OF_SERVICE)
# Between rounds the table waits for what the next round needs (a configuration changed
# across a restart takes effect then).
_BETWEEN_ROUNDS = ("round_complete",)


def tower_light(table: Any) -> Light:
    """The signal for ``table`` (a :class:`controller.table.machine.Table`)."""
    signal = LIGHT_OF_STATE.get(table.state, Light.WAITING)
    if signal in _RED:
        return signal
    if table.blocking_conditions_sets(next_round=True) or not table.gate.may_open_round():
        return Light.MALFUNCTION
    if signal is Light.READY and table.devices_connecting(
            next_round=table.state in _BETWEEN_ROUNDS):
        return Light.WAITING
    return signal


def alarm_causes(table: Any) -> frozenset[str]:
    """What sounds the buzzer: each reason for the malfunction light (``"shoe: jam"``, a
    table held ``"malfunction"``, ``"deck integrity"``); empty while the light is not red
    and blinking."""
    if tower_light(table) is not Light.MALFUNCTION:
        return frozenset()
    causes = {f"{shown_device(d)}: {c}" for nxt in (False, True)
              for d, cs in table.blocking_conditions_sets(next_round=nxt) for c in cs}
    if table.state == "malfunction":
        causes.add("malfunction")
    if not table.gate.may_open_round():
        causes.add("deck integrity")
    return frozenset(causes)


def buzzer_silenced(table: Any) -> bool:
    """Whether every alarm sounding now was silenced (the light stays as it is)."""
    return buzzer(table) == "silenced"


def buzzer(table: Any) -> str:
    """The buzzer by the same rule as the panel's: ``sounding`` while an alarm sounds it,
    ``silenced`` once every alarm sounding now was silenced (the light stays red and
    blinking), ``off`` when nothing sounds it."""
    causes = alarm_causes(table)
    if not causes:
        return "off"
    return "silenced" if causes <= table.silenced_alarms else "sounding"


def light_json(table: Any) -> dict[str, str]:
    """``{"signal": …, "colour": green|amber|red, "buzzer": sounding|silenced|off}`` for the
    API and the page: a page opened after the silence still sees it."""
    signal = tower_light(table)
    return {"signal": signal.value, "colour": COLOURS[signal], "buzzer": buzzer(table)}
