"""Every command that reads the journal for a person (`journal show`, `journal rounds`,
`integrity report`) reads only what the hash chain vouches for, as `journal export` does: a
journal that does not verify is not reported on as if it did (exit 1, the first bad record
named, the way out), and `--verified-only` reads the records before the first bad one and
still exits 1. The file is left as it was."""
import hashlib
import json

import pytest

from controller.journal import Journal, Kind
from test_journal import fill, sql, tablectl

# fill(): 1 service; round 1: 2-5; round 2: 6 open, 7 card, 8 state, 9 close; round 3: 10-12
# (open). The close of round 2 edited to say the round was void.
EDIT = "UPDATE records SET payload = '{\"outcome\":\"void\"}' WHERE seq = 9"
READERS = {"show": ("journal", "show", "2"), "show last": ("journal", "show", "last"),
           "rounds": ("journal", "rounds"), "integrity report": ("integrity", "report")}


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def read(path, *args):
    before = digest(path)
    out = tablectl(*args, "--journal", str(path))
    assert digest(path) == before, "a reader changed the journal file"
    assert "Traceback" not in out.stderr
    return out


@pytest.fixture
def edited(tmp_path):
    path = tmp_path / "journal.db"
    fill(path)
    with Journal.open(path, readonly=True) as j:
        assert j.verify().ok
    sql(path, EDIT)
    return path


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_journal_that_does_not_verify_is_not_reported_on(edited, reader):
    out = read(edited, *READERS[reader])
    assert out.returncode == 1, (out.stdout, out.stderr)
    assert out.stdout == ""
    assert "NOT VERIFIED" in out.stderr and "record 9" in out.stderr
    assert "records 1-8" in out.stderr and "--verified-only" in out.stderr
    assert "restore the journal from a backup" in out.stderr


def test_show_verified_only_shows_the_part_of_the_round_the_chain_vouches_for(edited):
    out = read(edited, "journal", "show", "2", "--verified-only")
    assert out.returncode == 1
    seqs = [int(line.split()[0]) for line in out.stdout.splitlines()[2:]
            if line.split() and line.split()[0].isdigit()]
    assert seqs == [6, 7, 8]
    assert "void" not in out.stdout
    assert "stops after record 8" in out.stderr and "record 9" in out.stderr
    rows = read(edited, "journal", "show", "2", "--json", "--verified-only").stdout
    assert [json.loads(line)["seq"] for line in rows.splitlines()] == [6, 7, 8]
    # A round wholly past the first bad record: the chain vouches for none of it.
    past = read(edited, "journal", "show", "3", "--verified-only")
    assert past.returncode == 1 and past.stdout == ""
    assert "round '3'" in past.stderr and "record 9" in past.stderr


def test_rounds_verified_only_lists_what_the_chain_vouches_for(edited):
    out = read(edited, "journal", "rounds", "--verified-only")
    assert out.returncode == 1
    lines = out.stdout.splitlines()[1:]
    assert [line.split()[0] for line in lines] == ["1", "2"]
    assert "void" not in out.stdout
    assert "stops after record 8" in out.stderr


def test_integrity_report_verified_only_reads_what_the_chain_vouches_for(edited):
    out = read(edited, "integrity", "report", "--json", "--verified-only")
    assert out.returncode == 1
    assert json.loads(out.stdout)["table_id"] == "T1"
    assert "stops after record 8" in out.stderr


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_sound_journal_reads_as_before(tmp_path, reader):
    path = tmp_path / "journal.db"
    fill(path)
    with Journal.open(path, "T1") as j:
        j.append(Kind.ROUND_CLOSE, {"outcome": "settled"}, round_id="3", source="table")
    out = read(path, *READERS[reader])
    assert out.returncode == 0, out.stderr
    assert out.stdout and out.stderr == ""
    assert read(path, *READERS[reader], "--verified-only").stdout == out.stdout
