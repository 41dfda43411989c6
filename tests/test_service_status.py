"""The service's side of the shuffler's status: the request goes out named, and its answer
comes back naming it. The service runs in the test's event loop with its shuffler on a
pseudo-terminal.
"""
import asyncio

from controller.config import parse_text
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
