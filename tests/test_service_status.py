"""The service's side of the shuffler's status: the request goes out named, its answer comes
back naming it, and a wait the table asks for comes back as a journaled input.

The table machine has no clock (it is replayed from the journal): a wait it needs (asking
again the status a shuffler refused as busy) is a ``wait`` command to the service's timer,
and the end of it the ``wait_over`` input, journaled like a device event before the table
acts on it. The service runs in the test's event loop with its shuffler on a pseudo-terminal.
"""

from controller.inputs import TIMER
from controller.table.machine import Command
from service_helpers import with_serial_shuffler
from test_link import until


def inputs(svc, kind):
    return [r for r in svc.journal.records(kinds=["device"])
            if r.payload["event"]["kind"] == kind]


def test_the_status_request_goes_out_named_and_its_answer_names_it(tmp_path):
    async def body(svc, peer):
        svc._send(Command("shuffler", "status", {"ask": "3.1"}))
        await until(lambda: inputs(svc, "status_answer"), timeout=10)
        (answer,) = inputs(svc, "status_answer")
        assert answer.payload["event"]["ask"] == "3.1" and answer.source == "shuffler"
        assert answer.payload["link"]["seq"] >= 1      # the device's frame, acknowledged
        assert not inputs(svc, "status")
    with_serial_shuffler(tmp_path, body)


def test_the_tables_wait_comes_back_as_a_journaled_input(tmp_path):
    async def body(svc, peer):
        svc._send(Command(TIMER, "wait", {"what": "status", "about": "shuffler",
                                          "ask": "1.1", "after_s": 0.05}))
        await until(lambda: inputs(svc, "wait_over"), timeout=10)
        (over,) = inputs(svc, "wait_over")
        assert over.source == TIMER
        event = over.payload["event"]
        assert (event["device"], event["what"], event["about"], event["ask"],
                event["after_s"]) == (TIMER, "status", "shuffler", "1.1", 0.05)
        assert "link" not in over.payload       # no device's frame: nothing to acknowledge
    with_serial_shuffler(tmp_path, body)
