"""The simulated shuffler keeps the protocol's order of a deck check and a shuffle (check,
then its result; shuffle, then its ShuffleDone), and its ``shuffle_report`` fault sends a
ShuffleDone nobody asked for, as a firmware that reports a shuffle again or shuffles on its own
would: the only way a ShuffleDone reaches the table while its deck check is owed."""
from __future__ import annotations

import pytest

from controller.errors import TablectlError
from firmware_sim.faults import make_fault
from firmware_sim.models import Refused, ShufflerModel

LONG = 10_000.0


def test_a_shuffle_asked_during_the_check_is_refused_and_the_result_comes_first():
    m = ShufflerModel(seed=1, speed=1000)
    assert m.command("deck_check", 0) == []
    with pytest.raises(Refused) as exc:
        m.command("shuffle", 0)                   # the check is under way
    assert exc.value.code == "busy"
    assert [e.kind for e in m.advance(LONG)] == ["deck_check_result"]
    assert [e.kind for e in m.command("shuffle", LONG)] == ["shuffle_started"]
    assert [e.kind for e in m.advance(2 * LONG)] == ["shuffle_done"]


def test_the_shuffle_report_fault_sends_a_shuffle_done_and_the_check_goes_on():
    m = ShufflerModel(seed=1, speed=1000)
    m.command("deck_check", 0)
    (report,) = m.inject(make_fault("shuffle_report", "shuffler"), 0)
    assert report.kind == "shuffle_done" and report.fields["count"] == 52
    assert m.state == "checking" and m.shuffles == 0      # nothing was shuffled
    assert [e.kind for e in m.advance(LONG)] == ["deck_check_result"]


def test_the_shuffle_report_fault_is_the_shufflers_only():
    with pytest.raises(TablectlError) as exc:
        make_fault("shuffle_report", "shoe")
    assert "does not apply to a shoe; it applies to shuffler" in str(exc.value)
