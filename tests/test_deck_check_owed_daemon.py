"""A ShuffleDone while the deck check is owed, end to end: the real daemon (``tablectl run``)
asks the simulated shuffler, over a pseudo-terminal, for the deck check of the table's first
deck, and the shuffler reports a shuffle nobody asked for as the check begins (the simulator's
``shuffle_report`` fault, fired when that command arrives). The table journals, publishes and
logs it as an irregular event, does not open its bets on it, and asks for the shuffle only once
the check's result is in (tests/test_deck_check_owed.py for the table machine)."""
import json

import pytest

from controller.journal import Journal
from controller.rig import Rig

pytestmark = pytest.mark.hil


def test_the_table_opens_only_on_the_shuffle_asked_after_the_checks_result(tmp_path):
    rig = Rig(tmp_path, "q-poker", "shuffler", seed=11)
    try:
        rig.start_devices()
        rig.start_controller()
        rig.wait_links()
        shuffler = rig.devices["shuffler"]
        # The next command the shuffler gets is the table's deck check at the opening.
        shuffler.inject("shuffle_report", at_command=shuffler.reached("at_command") + 1)
        rig.must("open_table", "supervisor")
        assert rig.wait_state("bets_open", timeout=20) == "bets_open"

        with Journal.open(rig.journal_path, readonly=True) as j:
            assert j.verify().ok
            records = list(j.records())
        seen = []       # the deck check, the shuffle and the shuffler's reports, in order
        for r in records:
            if r.kind == "device_command" and r.payload["action"] in ("deck_check", "shuffle"):
                seen.append(r.payload["action"])
            elif r.kind == "device" and r.payload["event"]["kind"] in (
                    "deck_check_result", "shuffle_started", "shuffle_done"):
                seen.append(r.payload["event"]["kind"])
        assert seen == ["deck_check", "shuffle_done", "deck_check_result", "shuffle",
                        "shuffle_started", "shuffle_done"]
        # The report is an irregular event; the round's shuffle is the one asked after.
        table = [r.payload for r in records if r.kind in ("table", "alarm")]
        irregular = [p for p in table if p.get("kind") == "irregular_event"]
        assert [p["event"] for p in irregular] == ["shuffle_done"]
        assert "deck check" in irregular[0]["reason"]
        shown = [p for p in table if p.get("kind") == "shuffle" and p.get("status") == "done"]
        assert len(shown) == 1
        logged = [json.loads(line) for line in rig.log_path.read_text().splitlines()
                  if line.startswith("{")]
        assert any("irregular_event" in json.dumps(e) and "shuffle_done" in json.dumps(e)
                   for e in logged)
    finally:
        rig.stop()
