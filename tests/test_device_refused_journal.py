"""The journal's readers say a ``device_refused`` record in words (``tablectl journal show``
and ``rounds``), for each reason a device is refused at link-up, and the chain verifies with
it; a refusal in the round in play is shown with the round, not withheld (it names no card)."""
import json

import pytest

from controller.cli import main
from controller.journal import Journal, Kind

HASH, APPROVED = "a1" * 32, "ab" * 32


def hello(**kw):
    given = {"device_class": "shuffler", "vendor": "Acme", "model": "T-1", "serial": "S-77",
             "firmware_version": "2.1.0", "firmware_hash": HASH, "protocol": 1}
    return {**given, **kw}


REFUSALS = {
    "firmware_hash": ({"device": "shuffler", "device_class": "shuffler", "port": "/dev/x",
                       "reason": "firmware_hash", "text": "…", "given": hello(),
                       "expected": {"firmware_hash": APPROVED}},
                      ["shuffler refused (firmware_hash)", "serial S-77", "firmware 2.1.0",
                       f"hash {HASH}", f"not the approved hash {APPROVED}"]),
    "device_class": ({"device": "shuffler", "device_class": "shuffler", "port": "/dev/x",
                      "reason": "device_class", "text": "…",
                      "given": hello(device_class="shoe", serial="SHO-1"),
                      "expected": {"device_class": "shuffler"}},
                     ["shuffler refused (device_class)", "it said it is a shoe",
                      "serial SHO-1", "configured as a shuffler"]),
    "duplicate_serial": ({"device": "shoe", "device_class": "shoe", "port": "usb:1d50:6018:7",
                          "reason": "duplicate_serial", "text": "…",
                          "given": {"serial": "SHOE-7", "units": 2},
                          "expected": {"serial": "SHOE-7", "units": 1}},
                         ["shoe refused (duplicate_serial)", "2 USB units give serial SHOE-7"]),
}


def journal_with(tmp_path, payload):
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as j:
        j.append("service", {"event": "start"}, source="service")
        before = j.append(Kind.DEVICE_REFUSED.value, payload, None, source="service")
        j.append(Kind.ROUND_OPEN.value, {"game": "q-poker", "mode": "shoe"}, "1", "table")
        during = j.append(Kind.DEVICE_REFUSED.value, payload, "1", source="service")
    return str(path), before.seq, during.seq


@pytest.mark.parametrize("reason", sorted(REFUSALS))
def test_show_and_rounds_say_the_refusal_in_words(tmp_path, capsys, reason):
    payload, words = REFUSALS[reason]
    path, before, during = journal_with(tmp_path, payload)
    assert main(["journal", "verify", "--journal", path]) == 0
    capsys.readouterr()
    # The round still open: a refusal names no card, so it is shown, not withheld.
    assert main(["journal", "show", "1", "--journal", path]) == 0
    [line] = [ln for ln in capsys.readouterr().out.splitlines() if "device_refused" in ln]
    assert line.split()[0] == str(during) and line.split()[2] == "service"
    for w in words:
        assert w in line, (w, line)
    assert "withheld" not in line
    assert main(["journal", "rounds", "--journal", path]) == 0
    listed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Device")]
    assert [ln.split(":")[0] for ln in listed] == ["Device refused"] * 2
    assert f"record {before} at " in listed[0] and f"record {during} (round 1)" in listed[1]
    for w in words:
        assert w in listed[0], (w, listed[0])
    assert main(["journal", "export", "--journal", path]) == 0
    exported = [json.loads(ln) for ln in capsys.readouterr().out.splitlines()]
    assert [r["payload"] for r in exported if r["kind"] == "device_refused"] == [payload] * 2


def test_a_refusal_is_logged_as_a_warning_like_a_unit_swapped():
    from controller.service import public_log_level
    assert public_log_level("device_refused") == "warning"
