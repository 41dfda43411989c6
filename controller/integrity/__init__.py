"""Deck integrity: the identity of every deck through its life, and the shuffle sentinel.

The table machine uses three names: :class:`IntegrityMonitor` (feed it every device event),
:class:`IntegrityGate` (what to do about an alarm: warn, or stop before the next round) and
:class:`Alarm`. See docs/integrity.md.
"""
from .alarms import (Alarm, AlarmAction, AlarmKind, IDENTITY_KINDS, IntegrityGate, Reaction,
                     SENTINEL_KINDS, parse_action)
from .ledger import DeckLedger
from .monitor import IntegrityConfig, IntegrityMonitor, Update
from .sentinel import ShuffleSentinel

__all__ = ["Alarm", "AlarmAction", "AlarmKind", "IDENTITY_KINDS", "SENTINEL_KINDS",
           "IntegrityGate", "Reaction", "parse_action", "DeckLedger", "IntegrityConfig",
           "IntegrityMonitor", "Update", "ShuffleSentinel"]
