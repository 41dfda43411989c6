"""The daemon started on a journal holding a record it cannot read (its payload column edited
to something that is not JSON): recovery reads the last round from the journal, so the start
fails, and it must say which record and what to do, in one line, not with a traceback. The
real daemon (`tablectl run` through controller.rig) and simulated devices."""
import sqlite3

import pytest

from controller.errors import TablectlError
from controller.journal import Journal
from controller.rig import Rig
from rig_helpers import open_for_bets

pytestmark = pytest.mark.hil


def test_a_record_that_cannot_be_read_stops_the_start_with_its_number_and_the_way_out(
        tmp_path):
    rig = Rig(tmp_path, "q-poker", "shoe")
    try:
        open_for_bets(rig)
        rig.must("place_bet", box=3, wager="versus_croupier", amount=10)
        rig.kill()
        with Journal.open(rig.journal_path, readonly=True) as j:
            opened = j.last(kind="round_open").seq
        con = sqlite3.connect(rig.journal_path)
        con.execute("UPDATE records SET payload = '{\"game\":' WHERE seq = ?", (opened,))
        con.commit()
        con.close()
        log_before = rig.log_path.read_text()
        with pytest.raises(TablectlError, match="exited"):
            rig.start_controller(timeout=30)
        log = rig.log_path.read_text()[len(log_before):]
        assert "Traceback" not in log and "JSONDecodeError" not in log
        error = [line for line in log.splitlines() if line.startswith("tablectl: error:")]
        assert len(error) == 1, log[-2000:]
        assert f"record {opened}" in error[0] and "tablectl journal verify" in error[0]
        with Journal.open(rig.journal_path, readonly=True) as j:
            report = j.verify()
        assert not report.ok and report.bad_seq == opened
    finally:
        rig.stop()
