"""What a regulator types at the journal's readers: a sequence number of thousands of digits
(Python's int() refuses more than 4,300 with a ValueError) or a digit that is not ASCII is
named with the way out, never a traceback; one past the most a journal can number selects
nothing, as docs/journal.md says of any bound beyond it."""
import pytest

# the journal fixture (a copy of a real run's journal) and its helpers
from test_journal_audit import journal, played  # noqa: F401
from test_journal_audit import digest, tablectl

HUGE = "9" * 5000
HASH = "a" * 64


@pytest.mark.parametrize("anchor", [f"{HUGE}:{HASH}", f"9223372036854775808:{HASH}"])
def test_an_anchor_past_every_record_a_journal_can_number_is_named(journal, anchor):
    out = tablectl("journal", "verify", "--journal", str(journal), "--anchor", anchor)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-800:]
    assert "beyond 2^63 - 1" in out.stderr and "SEQ:HASH" in out.stderr, out.stderr
    assert len(out.stderr) < 400                # the argument is echoed cut short


def test_an_anchor_of_a_digit_that_is_not_ascii_is_named(journal):
    out = tablectl("journal", "verify", "--journal", str(journal), "--anchor", f"²:{HASH}")
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr[-800:]
    assert "must be SEQ:HASH" in out.stderr


@pytest.mark.parametrize("command", [("journal", "export"), ("journal", "rounds"),
                                     ("integrity", "report", "--json")])
def test_a_since_of_thousands_of_digits_selects_nothing(journal, command):
    before = digest(journal)
    out = tablectl(*command, "--journal", str(journal), "--since", HUGE)
    assert out.returncode == 0 and "Traceback" not in out.stderr, out.stderr[-800:]
    assert '"seq"' not in out.stdout and "settled" not in out.stdout, out.stdout
    assert digest(journal) == before
