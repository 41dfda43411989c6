"""Checks shared by every game's round document (docs/settle.md): no unknown keys, no missing
ones, JSON booleans where a yes/no is meant. Each refusal is one line naming the key and the
way out; the settlement then changes nothing."""
from __future__ import annotations

from typing import Any, Iterable, Mapping

from controller.shown import shown

from .errors import RuleError


def check_keys(obj: Any, allowed: Iterable[str], what: str) -> None:
    """Refuse a key the document format does not know (a typo would otherwise lose a wager)."""
    allowed = set(allowed)
    if not isinstance(obj, Mapping):
        raise RuleError(f"{what} must be a JSON object, got {shown(obj)}; see docs/settle.md")
    unknown = sorted(set(obj) - allowed)
    if unknown:
        raise RuleError(f"{what} has unknown key(s) {', '.join(unknown)}; the keys are: "
                        f"{', '.join(sorted(allowed))} (see docs/settle.md)")


def require(obj: Mapping[str, Any], key: str, what: str, way_out: str) -> Any:
    """``obj[key]``, or a refusal naming the missing key: ``{what} has no "key"; give {way_out}``."""
    value = obj.get(key)
    if value is None:
        raise RuleError(f'{what} has no "{key}"; give {way_out}')
    return value


def flag(obj: Mapping[str, Any], key: str, what: str, default: bool = False) -> bool:
    """A yes/no key: JSON ``true`` or ``false`` only (the text "false" is not false)."""
    value = obj.get(key, default)
    if not isinstance(value, bool):
        raise RuleError(f'{what}: "{key}" must be true or false (JSON, without quotes), '
                        f"got {shown(value)}")
    return value


__all__ = ["check_keys", "flag", "require"]
