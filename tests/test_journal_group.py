"""Group commit: concurrent appends share a transaction, keep their order, are durable."""
import asyncio

import pytest

from controller.journal import Entry, GroupWriter, Journal, JournalError


def test_concurrent_appends_are_grouped_in_order(tmp_path):
    path = tmp_path / "j.db"
    journal = Journal.open(path, "T1")
    commits = []
    real = journal.append_many

    def counting(entries):
        entries = list(entries)
        commits.append(len(entries))
        return real(entries)

    journal.append_many = counting

    async def main():
        writer = GroupWriter(journal)

        async def device(name, n):
            out = []
            for i in range(n):
                out.append(await writer.append("device", {"i": i}, source=name))
            return out

        results = await asyncio.gather(*(device(f"d{k}", 20) for k in range(10)))
        pair = await writer.append_many([Entry("decision", {"x": 1}), Entry("state", {"x": 2})])
        await writer.close()
        return results, pair

    results, pair = asyncio.run(main())
    assert sum(commits) == 202 and len(commits) < 202   # fewer fsyncs than records
    for recs in results:                                 # each task's records in its order
        assert [r.payload["i"] for r in recs] == list(range(20))
        assert [r.seq for r in recs] == sorted(r.seq for r in recs)
    assert pair[1].seq == pair[0].seq + 1
    journal.close()
    with Journal.open(path, readonly=True) as j:          # all there, chain intact
        assert len(j) == 202 and j.verify().ok
        assert [r.payload for r in j.records(since=200)] == [{"x": 1}, {"x": 2}]


def test_bad_payload_fails_alone(tmp_path):
    journal = Journal.open(tmp_path / "j.db", "T1")

    async def main():
        writer = GroupWriter(journal)
        good = asyncio.create_task(writer.append("device", {"ok": True}))
        with pytest.raises(JournalError, match="JSON"):
            await writer.append("device", {"bad": object()})
        rec = await good
        await writer.close()
        with pytest.raises(JournalError, match="closed"):
            await writer.append("device", {})
        return rec

    assert asyncio.run(main()).seq == 1
    assert len(journal) == 1
    journal.close()
