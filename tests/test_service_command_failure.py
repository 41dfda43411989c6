"""A device command the controller fails to carry out (neither refused by the device nor lost
with the link) reaches the table as a refusal naming the problem, so its rules rule on it
instead of waiting for ever for what was asked; the log keeps the traceback.

The daemon's service runs in the test's event loop, with its real journal and driver; the
shuffler is the scriptable device of tests/test_link.py on a real pseudo-terminal.
"""
import structlog

from controller.table.machine import Command
from drivers.protocol import messages as m
from service_helpers import with_serial_shuffler
from test_link import until

def refusals(svc):
    return [r for r in svc.journal.records(kinds=["device"])
            if r.payload["event"]["kind"] == "command_refused"]


def test_a_command_the_driver_fails_on_reaches_the_table_as_a_refusal(tmp_path):
    async def body(svc, peer):
        with structlog.testing.capture_logs() as logs:
            # A hand of no card: the driver refuses to ask it (1 to 255).
            svc._send(Command("shuffler", "dispense_hand", {"n": 0}))
            await until(lambda: refusals(svc), timeout=10)
        (refusal,) = refusals(svc)
        event = refusal.payload["event"]
        assert (event["device"], event["action"]) == ("shuffler", "dispense_hand")
        assert event["reason"] == "controller-error"
        assert "1 to 255" in event["text"] and "not 0" in event["text"]
        assert not [msg for msg in peer.acted if isinstance(msg, m.DispenseHand)]
        # The table heard of it: the shuffler cannot deal, shown as its condition.
        alarms = [r.payload for r in svc.journal.records(kinds=["alarm"])
                  if r.seq > refusal.seq and r.payload.get("kind") == "device_condition"]
        assert alarms and alarms[0]["what"] == event["text"]
        failed = [e for e in logs if e["event"] == "device command failed"]
        assert failed and failed[0].get("exc_info") and failed[0]["action"] == "dispense_hand"
    with_serial_shuffler(tmp_path, body)
