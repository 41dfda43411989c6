"""The service's side of the shuffler's status: the request goes out named, its answer comes
back naming it, and a wait the table asks for comes back as a journaled input.

The table machine has no clock (it is replayed from the journal): a wait it needs (asking
again the status a shuffler refused as busy) is a ``wait`` command to the service's timer,
and the end of it the ``wait_over`` input, journaled like a device event before the table
acts on it. The service runs in the test's event loop with its shuffler on a pseudo-terminal.
"""
import asyncio

from controller.config import parse_text
from controller.inputs import TIMER
from controller.sdnotify import Notifier
from controller.service import Service
from controller.table.machine import Command
from service_helpers import SERIAL_SHUFFLER
from test_link import Peer, until


def inputs(svc, kind):
    return [r for r in svc.journal.records(kinds=["device"])
            if r.payload["event"]["kind"] == kind]


def run_service(tmp_path, body):
    port = str(tmp_path / "tty-shuffler")
    cfg = parse_text(SERIAL_SHUFFLER.format(port=port, journal=tmp_path / "j.db"))

    async def main():
        peer = Peer(port, "shuffler")
        peer.plug()
        svc = Service(cfg, notifier=Notifier(None), open_panel=False)
        task = asyncio.create_task(svc.run())
        try:
            await until(lambda: "shuffler" in svc.drivers and svc.drivers["shuffler"].is_up,
                        timeout=15)
            await body(svc)
        finally:
            svc.stop()
            await asyncio.wait_for(task, 30)
            peer.unplug()
    asyncio.run(asyncio.wait_for(main(), 60))


def test_the_status_request_goes_out_named_and_its_answer_names_it(tmp_path):
    async def body(svc):
        svc._send(Command("shuffler", "status", {"ask": "3.1"}))
        await until(lambda: inputs(svc, "status_answer"), timeout=10)
        (answer,) = inputs(svc, "status_answer")
        assert answer.payload["event"]["ask"] == "3.1" and answer.source == "shuffler"
        assert answer.payload["link"]["seq"] >= 1      # the device's frame, acknowledged
        assert not inputs(svc, "status")
    run_service(tmp_path, body)


def test_the_tables_wait_comes_back_as_a_journaled_input(tmp_path):
    async def body(svc):
        svc._send(Command(TIMER, "wait", {"what": "status", "about": "shuffler",
                                          "ask": "1.1", "after_s": 0.05}))
        await until(lambda: inputs(svc, "wait_over"), timeout=10)
        (over,) = inputs(svc, "wait_over")
        assert over.source == TIMER
        event = over.payload["event"]
        assert (event["device"], event["what"], event["about"], event["ask"],
                event["after_s"]) == (TIMER, "status", "shuffler", "1.1", 0.05)
        assert "link" not in over.payload       # no device's frame: nothing to acknowledge
    run_service(tmp_path, body)
