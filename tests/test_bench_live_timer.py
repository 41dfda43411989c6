"""The reliability suite's live table (controller/bench/live.py) times the table's waits as the
daemon does: the table has no clock, so a shuffler's status refused as busy is asked again
only once the wait it asked for comes back as a journaled ``wait_over``. A harness that drops
the wait leaves every such round waiting for the supervisor, which the daemon never does."""
import asyncio

from controller.bench.live import LiveTable
from controller.inputs import TIMER
from controller.table.machine import Command


def test_the_live_table_puts_the_end_of_a_wait_the_table_asked_for_on_its_queue(tmp_path):
    async def main():
        async with LiveTable(tmp_path, "q-poker", "shuffler") as live:
            live._send(Command(TIMER, "wait", {"what": "status", "about": "shuffler",
                                               "ask": "r1.1", "after_s": 0.05}))
            await live.wait(lambda: live.processed.get((TIMER, "wait_over"), 0) == 1, 10.0,
                            "the wait's end to be taken")
            return [r.payload for r in live.journal.records(kinds=["device"])
                    if r.source == TIMER]

    records = asyncio.run(main())
    assert len(records) == 1
    event = records[0]["event"]
    assert event["kind"] == "wait_over" and event["what"] == "status"
    assert event["about"] == "shuffler" and event["ask"] == "r1.1"
