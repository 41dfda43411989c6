"""Durability: a real writer process killed with SIGKILL loses no acknowledged record, duplicates
none, and leaves a chain that verifies. Each writer restarts on the same file, as the service
does after a crash."""
import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest

from controller.journal import Journal

WRITER = textwrap.dedent("""
    import sys
    from controller.journal import Journal, Entry
    path, run = sys.argv[1], int(sys.argv[2])
    j = Journal.open(path, "T1")
    i = 0
    while True:
        if i % 3 == 2:   # every third write is a group commit of three records
            recs = j.append_many([Entry("device", {"run": run, "i": i + k}, str(run), "shoe")
                                  for k in range(3)])
            i += 3
        else:
            recs = [j.append("device", {"run": run, "i": i}, round_id=str(run), source="shoe")]
            i += 1
        # Reported only once append returned, i.e. once the records are durable.
        sys.stdout.write("".join(f"{r.seq} {r.payload['run']} {r.payload['i']}\\n"
                                 for r in recs))
        sys.stdout.flush()
""")


def run_and_kill(path, run, rng):
    """Start a writer, let it report a random number of records, SIGKILL it mid-stream;
    return what it reported as appended."""
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(path), str(run)],
                            stdout=subprocess.PIPE, text=True, env=os.environ.copy())
    reported = []
    target = rng.randint(5, 120)
    try:
        for line in proc.stdout:
            reported.append(tuple(int(x) for x in line.split()))
            if len(reported) >= target:
                break
        proc.send_signal(signal.SIGKILL)
        rest = proc.stdout.read()  # lines written before the kill landed
        reported += [tuple(int(x) for x in l.split()) for l in rest.splitlines()
                     if len(l.split()) == 3]
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    return reported


@pytest.mark.parametrize("seed", [1, 2])
def test_sigkill_loses_nothing_acknowledged(tmp_path, seed):
    check_kills(tmp_path / "journal.db", random.Random(seed), runs=4)


@pytest.mark.long
def test_sigkill_many_times(tmp_path):
    check_kills(tmp_path / "journal.db", random.Random(7), runs=60)


def check_kills(path, rng, runs):
    acknowledged = []
    for run in range(runs):
        acknowledged += run_and_kill(path, run, rng)

    with Journal.open(path, readonly=True) as j:
        report = j.verify()
        assert report.ok, str(report)
        records = list(j.records())
    seqs = [r.seq for r in records]
    assert seqs == list(range(1, len(records) + 1))          # unique, no gap
    keys = [(r.payload["run"], r.payload["i"]) for r in records]
    assert len(set(keys)) == len(keys)                        # none duplicated
    by_seq = {r.seq: (r.payload["run"], r.payload["i"]) for r in records}
    for seq, run, i in acknowledged:                          # every acknowledged one is there
        assert by_seq.get(seq) == (run, i)
    # Within a run the records are a prefix 0..n-1: a group commit is there whole or not at all.
    for run in range(runs):
        idx = sorted(i for r, i in keys if r == run)
        assert idx == list(range(len(idx)))
        # Writes are i=0, i=1, then groups of three: a run ends after a whole group.
        assert len(idx) <= 2 or (len(idx) - 2) % 3 == 0

    # And the file takes new records after all the kills.
    with Journal.open(path, "T1") as j:
        rec = j.append("service", {"event": "start"})
        assert rec.seq == len(records) + 1 and j.verify().ok
