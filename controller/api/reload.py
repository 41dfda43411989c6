"""What a reload of table.toml (SIGHUP, ``systemctl reload tablectl``) changes, and how it is
recorded.

Only the console's tokens (``[api.tokens]``) are put in force by a reload: a leaked token can
be rotated in the middle of a round. Every other setting is the table's, and a table takes its
settings at a start (the round in play keeps those it opened with, docs/controller.md): a
reload names those that differ from what is in force, for a restart, and leaves them.

The ``config_reload`` journal record says which roles' tokens changed, were added or removed,
never a token or its hash (docs/journal.md).
"""
from __future__ import annotations

import dataclasses
import re
import tomllib
from typing import Any, Iterable, Mapping

from controller.config import ROLES, TOKEN_MIN_CHARS, Problem, TableConfig

KIND = "config_reload"      # the journal record of a reload, applied or refused


def role_changes(before: Mapping[str, str], after: Mapping[str, str]) -> dict[str, list[str]]:
    """The roles whose token was replaced (``changed``), that got one (``added``) or lost
    theirs (``removed``), from the role -> stored hash of each side."""
    return {"changed": sorted(r for r in before if r in after and before[r] != after[r]),
            "added": sorted(r for r in after if r not in before),
            "removed": sorted(r for r in before if r not in after)}


def restart_keys(before: TableConfig, after: TableConfig) -> list[str]:
    """The keys of table.toml, as the file spells them, whose setting in ``after`` is not the
    one in force (``before``), tokens apart: they take effect at the next start. A section
    added or removed as a whole is named once (``gpio``, ``devices.dice``)."""
    old, new = settings(before), settings(after)
    changed = sorted(k for k in set(old) | set(new) if old.get(k, _NONE) != new.get(k, _NONE))
    return [k for k in changed if not any(k.startswith(p + ".") for p in changed)]


_NONE = object()

# TableConfig's fields by the key that sets them (docs/configuration.md).
_KEYS = {"table_id": "table.id", "game": "table.game", "boxes": "table.boxes",
         "chip_unit": "chips.unit", "currency": "chips.currency",
         "journal_path": "journal.path", "integrity_alarm": "integrity.alarm",
         "integrity_decks": "integrity.decks", "integrity_deck_ids": "integrity.deck_ids",
         "integrity_alpha": "integrity.alpha", "log_level": "logging.level",
         "log_format": "logging.format", "cpu_wakeup_us": "service.cpu_wakeup_us"}
# What a reload does not compare: the tokens (applied), where the file is and what it hashes
# to (the daemon reads the same path), and check's notes.
_NOT_SETTINGS = {"api", "path", "warnings", "digest"}


def settings(cfg: TableConfig) -> dict[str, Any]:
    """Every setting of ``cfg`` but the tokens, by its key in the file."""
    out: dict[str, Any] = {"table.mode": cfg.mode.value, "api.listen": cfg.api.listen,
                           "api.port": cfg.api.port,
                           "api.refused_limit": cfg.api.refused_limit,
                           "api.refused_window_s": cfg.api.refused_window_s,
                           "limits.min": cfg.limits.minimum,
                           "limits.max": cfg.limits.maximum}
    out.update({f"limits.{w}": list(v) for w, v in cfg.limits.wagers.items()})
    out.update({f"interpretations.{k}": v for k, v in cfg.interpretations.items()})
    for dev, spec in cfg.devices.items():
        for f in dataclasses.fields(spec):
            if f.name != "id":
                name = "class" if f.name == "device_class" else f.name
                out[f"devices.{dev}.{name}"] = getattr(spec, f.name)
    for section in ("gpio", "holdem", "pan9"):
        value = getattr(cfg, section)
        if value is None:
            out[section] = None
            continue
        for f in dataclasses.fields(value):
            v = getattr(value, f.name)
            if isinstance(v, Mapping):          # gpio.buttons, gpio.light
                out.update({f"{section}.{f.name}.{k}": p for k, p in v.items()})
            else:
                out[f"{section}.{f.name}"] = list(v) if isinstance(v, tuple) else v
    for f in dataclasses.fields(cfg):
        if f.name in _KEYS:
            v = getattr(cfg, f.name)
            out[_KEYS[f.name]] = str(v) if f.name == "journal_path" else v
        elif f.name not in _NOT_SETTINGS and f.name not in ("mode", "limits", "interpretations",
                                                            "devices", "gpio", "holdem",
                                                            "pan9"):
            out[f.name] = getattr(cfg, f.name)      # a setting without a key above: its name
    return out


def problems_json(problems: Iterable[Problem], text: str | None) -> list[dict[str, Any]]:
    """The problems of a refused file as the journal and the log hold them: key, line, reason
    and fix, with any value written under [api.tokens] masked (``config check`` shows the
    file's own values; a token pasted there instead of its hash must go no further)."""
    secrets = _token_values(text)
    out = []
    for p in problems:
        doc = {"key": p.key, "line": p.line, "reason": p.reason, "fix": p.fix}
        if secrets:
            doc = {k: _mask(v, secrets) if isinstance(v, str) else v for k, v in doc.items()}
        out.append(doc)
    return out


def problem_text(doc: Mapping[str, Any]) -> str:
    """One problem as ``config check`` words it: ``LINE: key: reason; fix``."""
    where = f"{doc['line']}: " if doc.get("line") else ""
    fix = f"; {doc['fix']}" if doc.get("fix") else ""
    return f"{where}{doc['key']}: {doc['reason']}{fix}"


def _token_values(text: str | None) -> list[str]:
    """Every value written under [api.tokens], and every key there as long as a token (or
    the text of every quoted string in that section when the file is not TOML), longest
    first."""
    if not text:
        return []
    found: set[str] = set()
    try:
        tokens = tomllib.loads(text).get("api", {}).get("tokens")
    except (tomllib.TOMLDecodeError, AttributeError, RecursionError):
        tokens = None
        section = re.search(r"^\s*\[\s*api\s*\.\s*tokens\s*\](.*?)(?=^\s*\[|\Z)", text,
                            re.S | re.M)
        body = section.group(1) if section else text
        found.update(m.group(2) for m in re.finditer(r"([\"'])(.+?)\1", body))
    if isinstance(tokens, Mapping):
        for key, value in tokens.items():
            found.update(_strings(value))
            if len(str(key)) >= TOKEN_MIN_CHARS:
                # A token pasted where its role's name goes (``TOKEN = "sha256:…"``) is
                # named by the problem's key; a misspelt role's name is shorter, and shown.
                found.add(str(key))
    elif tokens is not None:
        found.update(_strings(tokens))
    found -= set(ROLES)         # a role's name quoted as a key, not a secret
    return sorted((s for s in found if len(s) >= 4), key=len, reverse=True)


def _strings(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)] if not isinstance(value, bool) else []


def _mask(text: str, secrets: list[str]) -> str:
    for s in secrets:
        text = text.replace(repr(s), "(not shown)").replace(s, "(not shown)")
    return text


# The control socket's request for a reload (``tablectl reload``): this and nothing more, so no
# request ever carries a token (the daemon reads them from its own file).
REQUEST = {"reload": True}
REQUEST_TEXT = '{"reload": true}'


@dataclasses.dataclass(frozen=True)
class Outcome:
    """What one reload came to, as the control socket answers ``{"reload": true}``.

    ``record`` is the ``config_reload`` payload journaled (``seq`` its record), or None when
    none could be (the journal failed, the service is stopping); ``error`` says why the file's
    tokens are not in force, None when they are."""

    record: dict[str, Any] | None
    seq: int | None = None
    error: str | None = None

    @property
    def applied(self) -> bool:
        return self.error is None and self.record is not None \
            and self.record.get("outcome") == "applied"

    def reply(self) -> dict[str, Any]:
        """``{"ok": true, "seq": N, "reload": RECORD}`` applied; ``{"ok": false, "error": ...}``
        (with ``seq`` and ``reload`` when a refusal was journaled) otherwise. The record is
        the journal's, tokens masked as there: nothing a reply holds was not journaled."""
        out: dict[str, Any] = {"ok": self.applied}
        if self.error is not None:
            out["error"] = self.error
        if self.record is not None:
            out["seq"] = self.seq
            out["reload"] = self.record
        return out


def refusal(record: Mapping[str, Any]) -> str:
    """The error of a reload refused for the file's problems: how many, and the way out."""
    n = len(record.get("problems") or ())
    return (f"{record.get('path')}: {n} problem{'s' if n != 1 else ''}; the configuration in "
            "force is unchanged: fix the file (tablectl config check names each problem) and "
            "reload again")


def request_problem(req: Mapping[str, Any]) -> str | None:
    """What is wrong with a reload request, or None for ``{"reload": true}``. Nothing of the
    request is repeated: what it carried beside may be a token."""
    if dict(req) == REQUEST and req["reload"] is True:
        return None
    return (f"a reload is asked with {REQUEST_TEXT} and nothing more: the daemon reads the "
            "tokens from its own table.toml, and a request carries none (nothing was reloaded)")
