"""``--since TIME`` (journal export, integrity report): a time typed without a zone is read as
UTC, as documented, and stderr says so with the way to mean Macau time; a time is read to the
nanosecond, so no record stamped before it is exported; a fraction is only of the seconds."""
import datetime as dt
import json

import pytest
from hypothesis import given, strategies as st

from controller.journal import Journal
from controller.since_time import parse_time
from test_journal import FakeClock, fill, tablectl

T0 = 1_795_000_000 * 10**9                 # 2026-11-18T11:06:40Z, a whole second
T0_TEXT = "2026-11-18T11:06:40"


def export(path, since):
    return tablectl("journal", "export", "--journal", str(path), "--since", since)


def seqs(out):
    return [json.loads(line)["seq"] for line in out.stdout.splitlines()]


@pytest.fixture
def stamped(tmp_path):
    """A journal whose records 1-5 are stamped 0, 300, 600, 1000 and 1400 ns after T0."""
    path, clock = tmp_path / "journal.db", FakeClock()
    with Journal.open(path, "T1", clock=clock) as j:
        for n, after in enumerate((0, 300, 600, 1000, 1400), 1):
            clock.wall = T0 + after - 1_000_000          # FakeClock adds 1 ms per reading
            j.append("table", {"n": n}, source="table")
        assert [r.wall_ns - T0 for r in j.records()] == [0, 300, 600, 1000, 1400]
    return path


@pytest.mark.parametrize("fraction, first", [
    (".000000500", 3),            # 500 ns: record 2 (300 ns) is before it, record 3 is not
    (".0000006", 3),              # exactly record 3's stamp: at or after it
    (".0000006000000001", 4),     # a hair after record 3: the next whole nanosecond is 601
    (".000001", 4),
    (",0000010001", 5),
    ("", 1),
])
def test_a_since_time_is_read_to_the_nanosecond(stamped, fraction, first):
    out = export(stamped, f"{T0_TEXT}{fraction}Z")
    assert out.returncode == 0 and out.stderr == ""
    assert seqs(out) == list(range(first, 6))


def test_a_time_without_a_zone_is_utc_and_stderr_says_so(stamped):
    """Read as UTC (scripts rely on it), exit status unchanged; the note gives the way to
    write Macau time, which reads 8 hours earlier."""
    out = export(stamped, T0_TEXT + ".0000005")
    assert out.returncode == 0 and seqs(out) == [3, 4, 5]
    assert out.stderr == (
        f"tablectl: note: --since {T0_TEXT}.0000005 names no zone, so it is read as UTC, "
        f"{T0_TEXT}.0000005Z; write the zone to mean another: {T0_TEXT}.0000005+08:00 for "
        "Macau time\n")
    zoned = parse_time(f"{T0_TEXT}.0000005+08:00")
    assert zoned.zoned and zoned.ns == T0 + 500 - 8 * 3600 * 10**9
    macau = export(stamped, f"{T0_TEXT}.0000005+08:00")
    assert macau.stderr == "" and seqs(macau) == [1, 2, 3, 4, 5]


def test_a_date_alone_is_utc_midnight_and_said_so(tmp_path):
    path = tmp_path / "journal.db"
    fill(path)
    out = export(path, "2026-11-18")
    assert out.returncode == 0 and len(seqs(out)) == 12
    assert ("--since 2026-11-18 names no zone, so it is read as UTC, 2026-11-18T00:00:00Z; "
            "write the zone to mean another: 2026-11-18T00:00:00+08:00 for Macau time"
            in out.stderr)


def test_the_integrity_report_says_so_too_and_exits_as_before(stamped, capsys):
    from controller.cli import main
    assert main(["integrity", "report", "--journal", str(stamped), "--since",
                 "2026-11-26T19:00"]) == 0
    err = capsys.readouterr().err
    assert "2026-11-26T19:00 names no zone, so it is read as UTC, 2026-11-26T19:00:00Z" in err
    assert "2026-11-26T19:00:00+08:00 for Macau time" in err
    assert main(["integrity", "report", "--journal", str(stamped), "--since",
                 "2026-11-26T19:00+08:00"]) == 0
    assert capsys.readouterr().err == ""


@pytest.mark.parametrize("text", [
    "2026-11-26T19:00.5",           # Python reads it as 19:00:00.5, ISO 8601 as 19:00:30
    "2026-11-26T19.5Z",
    "2026-11-26T19:00:00+08:00:00.5",
    "2026-11-26T19:00:00.5+08:00:00.5",
])
def test_a_fraction_of_anything_but_the_seconds_is_refused(stamped, text):
    out = export(stamped, text)
    assert out.returncode == 2 and out.stdout == ""
    assert "a fraction is taken only of the seconds" in out.stderr
    assert "Traceback" not in out.stderr


@given(st.datetimes(min_value=dt.datetime(1678, 1, 1), max_value=dt.datetime(2262, 1, 1)),
       st.integers(0, 999), st.sampled_from(["Z", "+08:00", "-03:30", ""]))
def test_parse_time_is_exact(when, below_us, zone):
    """Every digit counts: the nanoseconds are the datetime's microseconds and the three
    digits below them, in the zone given (none: UTC)."""
    text = when.isoformat(timespec="microseconds") + f"{below_us:03d}" + zone
    got = parse_time(text)
    offset = {"Z": 0, "+08:00": 8 * 3600, "-03:30": -(3 * 3600 + 1800), "": 0}[zone]
    aware = when.replace(tzinfo=dt.timezone.utc) - dt.timedelta(seconds=offset)
    secs = (aware - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // dt.timedelta(seconds=1)
    assert got.ns == secs * 10**9 + when.microsecond * 1000 + below_us
    assert got.zoned == (zone != "")


@pytest.mark.parametrize("text, same_as", [
    ("2026-11-18T24:00Z", "2026-11-19T00:00:00Z"),          # the end of the day, ISO 8601
    ("2026-11-18T24:00:00+08:00", "2026-11-19T00:00:00+08:00"),
    ("2026-11-18T24:00:00.000", "2026-11-19T00:00:00"),
    ("2026-12-31T24:00:00Z", "2027-01-01T00:00:00Z"),
])
def test_24_00_is_the_end_of_its_day(text, same_as):
    got, want = parse_time(text), parse_time(same_as)
    assert (got.ns, got.zoned, got.wall) == (want.ns, want.zoned, want.wall)


@pytest.mark.parametrize("text, why", [
    ("2026-11-18T24:00:01Z", "24:00 is the end of a day, and only 24:00:00 is"),
    ("2026-11-18T24:30", "24:00 is the end of a day, and only 24:00:00 is"),
    ("2026-12-31T23:59:60Z", "second 60 is a leap second, which no record is stamped in"),
    ("2026-12-31T23:59:60.5+08:00", "second 60 is a leap second"),
])
def test_an_hour_24_past_the_end_of_the_day_and_a_leap_second_are_named(stamped, text, why):
    out = export(stamped, text)
    assert out.returncode == 2 and out.stdout == "" and "Traceback" not in out.stderr
    assert why in out.stderr, out.stderr


def test_eight_digits_that_read_as_a_date_are_a_sequence_number_and_stderr_says_so(stamped):
    """ISO 8601's basic date (20261118) is all digits, as a sequence number is: --since takes
    it for the sequence number, as documented, and says how to write the date instead."""
    out = export(stamped, "20261118")
    assert out.returncode == 0 and seqs(out) == []
    assert ("--since 20261118 is read as a sequence number (the records after record "
            "20261118); for the date, write 2026-11-18") in out.stderr, out.stderr
    plain = export(stamped, "3")
    assert plain.stderr == "" and seqs(plain) == [4, 5]
    assert "sequence number" not in export(stamped, "20261399").stderr   # no such date
