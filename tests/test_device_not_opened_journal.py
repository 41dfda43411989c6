"""The journal's readers say ``device_not_opened`` and ``device_opened`` in words (``tablectl
journal show`` and ``rounds``), the chain verifies with them, and a record in the round in
play is shown with the round, not withheld (it names no card). A port written with control
characters (a rewritten journal may hold anything) is printed escaped."""
import pytest

from controller.cli import main
from controller.journal import Journal, Kind
from drivers.transport import causes

NOT_OPENED = {"device": "shoe", "device_class": "shoe", "port": "/dev/tablectl/shoe",
              "cause": causes.DENIED, "way_out": causes.WAY_OUT[causes.DENIED],
              "failing_s": 11.3, "attempts": 8}


def journal_with(tmp_path, not_opened):
    path = tmp_path / "journal.db"
    with Journal.open(path, "T1") as j:
        j.append("service", {"event": "start"}, source="service")
        j.append(Kind.ROUND_OPEN.value, {"game": "q-poker", "mode": "shoe"}, "1", "table")
        first = j.append(Kind.DEVICE_NOT_OPENED.value, not_opened, "1", source="service")
        opened = j.append(Kind.DEVICE_OPENED.value,
                          {**{k: not_opened[k] for k in ("device", "device_class", "port")},
                           "failing_s": 31.0, "attempts": 12, "not_opened": first.seq},
                          "1", source="service")
    return str(path), first.seq, opened.seq


def test_show_and_rounds_say_it_in_words_within_the_round_in_play(tmp_path, capsys):
    path, first, opened = journal_with(tmp_path, NOT_OPENED)
    assert main(["journal", "verify", "--journal", path]) == 0
    capsys.readouterr()
    assert main(["journal", "show", "1", "--journal", path]) == 0
    lines = {ln.split()[0]: ln for ln in capsys.readouterr().out.splitlines()
             if "opened" in ln}
    said = lines[str(first)]
    assert "shoe (/dev/tablectl/shoe) could not be opened for 11.3 s, 8 attempts (denied)" \
        in said
    assert "install the udev rule that gives the device the group tablectl" in said
    assert "withheld" not in said
    assert ("shoe (/dev/tablectl/shoe) opened at last, after 31.0 s, 12 attempts; not opened "
            f"since record {first}") in lines[str(opened)]
    assert main(["journal", "rounds", "--journal", path]) == 0
    listed = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("Device")]
    assert [ln.split(":")[0] for ln in listed] == ["Device not opened", "Device opened"]
    assert f"record {first} (round 1) at " in listed[0] and "(denied)" in listed[0]
    assert f"record {opened} (round 1) at " in listed[1]


@pytest.mark.parametrize("command", ["show", "rounds"])
def test_a_port_with_control_characters_is_printed_escaped(tmp_path, capsys, command):
    path, _, _ = journal_with(tmp_path, {**NOT_OPENED, "port": "/dev/x\x1b[2J\x07"})
    args = ["journal", command, "1", "--journal", path] if command == "show" else \
        ["journal", command, "--journal", path]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "could not be opened" in out
    assert "\x1b" not in out and "\x07" not in out
