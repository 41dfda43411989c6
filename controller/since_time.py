"""The ISO 8601 time a ``--since`` names, to the nanosecond the journal stamps records in.

``datetime.fromisoformat`` keeps six digits of a fraction and drops the rest, so a time given
to the nanosecond (as a record's ``wall_ns`` reads) would start a few hundred nanoseconds
early, taking in records stamped before it. It also reads ``19:00.5`` as half a second past
19:00 and ``19.5`` as half a second past 19, not 30 minutes. The fraction is therefore read
here, whole, and only as a fraction of the seconds.
"""
from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from controller.errors import TablectlError

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_FRACTION = re.compile(r"[.,](\d+)")
_SECONDS = re.compile(r"\d\d:?\d\d:?\d\d$")          # HH:MM:SS or HHMMSS, before a fraction
# The time of day after the date (T or a space): its hour, and its second, when given.
_HOUR = re.compile(r"^(?P<date>[^Tt ]+[Tt ])(?P<hour>\d\d)(?P<rest>.*)$")
_LEAP = re.compile(r"^\d\d:?\d\d:?60(?![\d])")
_END_OF_DAY = re.compile(r"^(:?00(:?00([.,]0+)?)?)?(?=[Zz+-]|$)")
# What the journal's readers suggest for a zone: the tables run in Macau.
LOCAL_ZONE = ("+08:00", "Macau time")


@dataclass(frozen=True, slots=True)
class SinceTime:
    """A ``--since`` time: ``ns`` since 1970 UTC, rounded up to a whole nanosecond (a record
    is stamped at or after the time exactly when it is at or after ``ns``); ``zoned``, whether
    the text named its zone; ``text``, the time as read, in UTC with every digit given."""

    ns: int
    zoned: bool
    wall: str

    def zone_note(self, given: str) -> str | None:
        """What stderr says of a time typed without a zone (read as UTC, as documented), with
        the way to mean another zone; None for a time that names its zone."""
        if self.zoned:
            return None
        return (f"tablectl: note: --since {given} names no zone, so it is read as UTC, "
                f"{self.wall}Z; write the zone to mean another: {self.wall}{LOCAL_ZONE[0]} "
                f"for {LOCAL_ZONE[1]}")


class Refused(ValueError):
    """A time ISO 8601 writes that no record can be at: ``str`` says why and what to write."""


def parse_time(text: str) -> SinceTime:
    """``text`` as an ISO 8601 time (a date alone is its midnight; no zone: UTC; ``24:00`` the
    end of its day, the next day's 00:00). A fraction is taken only of the seconds, every digit
    of it. Raises ValueError for anything else (:class:`Refused` for a leap second's 60 and an
    hour 24 past the end of the day, saying so)."""
    day = _HOUR.match(text)
    if day and _LEAP.match(day["hour"] + day["rest"]):
        # POSIX time, which stamps the records, has no such second: the system clock repeats
        # 23:59:59 or smears it, so a record written then is stamped in another second.
        raise Refused("second 60 is a leap second, which no record is stamped in (the "
                      "system clock repeats the second before it or smears it); write the "
                      "next minute's :00, or :59 for the second before it")
    if day and day["hour"] == "24":
        if not _END_OF_DAY.match(day["rest"]):
            raise Refused("24:00 is the end of a day, and only 24:00:00 is (the next day's "
                          "00:00); write the next day's time, e.g. 00:30 for 24:30")
        # The end of the day is the next day's midnight, in the same zone.
        at = parse_time(day["date"] + "00" + day["rest"])
        after = dt.datetime.fromisoformat(at.wall) + dt.timedelta(days=1)
        return SinceTime(at.ns + 86400 * 10**9, at.zoned, after.isoformat())
    iso = text.replace("Z", "+00:00").replace("z", "+00:00")
    when = dt.datetime.fromisoformat(iso)                 # the whole text must be a time
    fractions = list(_FRACTION.finditer(iso))
    digits = ""
    if fractions:
        head = iso[:fractions[0].start()]
        if len(fractions) > 1 or not _SECONDS.search(head) \
                or dt.datetime.fromisoformat(head).tzinfo is not None:
            raise ValueError("a fraction is taken only of the seconds")
        digits = fractions[0].group(1)
    # Nanoseconds of the fraction, rounded up: the first whole nanosecond at or after it.
    frac_ns = int(digits[:9].ljust(9, "0")) + (1 if digits[9:].strip("0") else 0)
    wall = when.replace(microsecond=0, tzinfo=None).isoformat() + (f".{digits}" if digits else "")
    zoned = when.tzinfo is not None
    delta = when.replace(microsecond=0, tzinfo=when.tzinfo or dt.timezone.utc) - _EPOCH
    ns = (delta.days * 86400 + delta.seconds) * 10**9 + frac_ns
    return SinceTime(ns, zoned, wall)


def parse_since_time(text: str) -> SinceTime:
    """:func:`parse_time` for ``--since``, with its error in the command line's words."""
    try:
        return parse_time(text)
    except ValueError as exc:
        if isinstance(exc, Refused):
            raise TablectlError(f"--since {text!r}: {exc}") from None
        fraction = "fraction" in str(exc)
        raise TablectlError(
            f"--since {text!r} is neither a sequence number (e.g. 120) nor an ISO time (e.g. "
            "2026-11-21T19:00:00Z or 2026-11-21)"
            + ("; a fraction is taken only of the seconds (19:00:30.5, not 19:00.5)"
               if fraction else "")) from None
