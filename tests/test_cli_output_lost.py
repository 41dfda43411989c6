"""An output that cannot be written (a full disk: /dev/full) is one clear error line with the
way out and exit status 2, never a traceback; a reader that went away (`| head -1`) is no
error. An auditor writes exports and settlements to files."""
import subprocess
import sys

import pytest

from controller.journal import Journal
from test_cli_errors import REPO, refused
from test_journal import fill

SETTLE = ('{"game": "q-poker", "croupier": {"cards": ["Kd", "8c", "4h"]}, "boxes": '
          '[{"box": 1, "cards": ["7s", "7h", "Qc"], "pair_bonus": 10}]}')


def run(args, stdout, stdin=None):
    return subprocess.run([sys.executable, "-m", "controller.cli", *args], stdout=stdout,
                          stderr=subprocess.PIPE, input=stdin, text=True, cwd=REPO,
                          timeout=60)


@pytest.fixture
def journal(tmp_path):
    path = tmp_path / "journal.db"
    fill(path, rounds=40)
    return path


@pytest.mark.parametrize("command", [("journal", "export"), ("journal", "show", "1"),
                                     ("journal", "rounds"), ("journal", "verify")])
def test_a_full_disk_is_named_for_the_journal_readers(journal, command):
    with open("/dev/full", "w") as full:
        out = run([*command, "--journal", str(journal)], full)
    refused(out, "could not be written (No space left on device)", "incomplete",
            "free space")


def test_a_full_disk_is_named_for_a_settlement(tmp_path):
    with open("/dev/full", "w") as full:
        out = run(["rules", "settle", "--json"], full, stdin=SETTLE)
    refused(out, "could not be written", "incomplete")


def test_a_reader_that_went_away_is_no_error(journal):
    proc = subprocess.Popen([sys.executable, "-m", "controller.cli", "journal", "export",
                             "--journal", str(journal)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=REPO)
    first = proc.stdout.readline()
    proc.stdout.close()                 # as `| head -1` does
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 0 and first.startswith(b'{"v": 1')
    assert err == "", err
    with Journal.open(journal, readonly=True) as j:
        assert j.verify().ok


def test_a_command_started_with_its_output_closed_runs_as_it_did(journal):
    """`>&-`: Python starts with no sys.stdout and print() writes nothing; the verification
    still runs and exits by what it found."""
    proc = subprocess.run(f'"{sys.executable}" -m controller.cli journal verify --journal '
                          f'"{journal}" >&-', shell=True, capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr

