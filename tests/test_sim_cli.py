"""``tablectl sim`` as a real process: its printed ports opened with pyserial, its control
channel, a clean stop on SIGTERM and SIGINT, and clear errors."""
from __future__ import annotations

import json
import os
import pathlib
import signal
import subprocess
import sys

import pytest
import serial

from drivers.protocol import messages as m
from firmware_sim.control import ControlClient
from firmware_sim.rawhost import RawHost

ROOT = pathlib.Path(__file__).parents[1]


def sim(*args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "controller.cli", "sim", *args], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def read_ports(proc: subprocess.Popen) -> tuple[dict[str, list[str]], str]:
    ports: dict[str, list[str]] = {}
    while True:
        line = proc.stdout.readline()
        assert line, f"tablectl sim ended early: {proc.stderr.read()}"
        name, *rest = line.split()
        if name == "control":
            return ports, rest[0]
        ports[name] = rest


def stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> int:
    proc.send_signal(sig)
    try:
        return proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sim_prints_ports_that_speak_the_protocol_and_stops_cleanly():
    proc = sim("shuffler", "shoe", "spare=shoe", "--speed", "500", "--seed", "3")
    try:
        ports, control = read_ports(proc)
        assert list(ports) == ["shuffler", "shoe", "spare"]
        for name, (tty, *extra) in ports.items():
            assert tty.startswith("/dev/pts/")
            stable = dict(e.split("=", 1) for e in extra)["stable"]
            assert os.path.realpath(stable) == tty
        port = serial.Serial(ports["shuffler"][0], timeout=0.05)
        host = RawHost.over_serial(port)
        assert host.hello().class_name == "shuffler"
        assert host.command(m.Shuffle()) == 0
        assert host.wait_for(m.ShuffleDone).count == 52
        port.close()
        shoe = serial.Serial(ports["shoe"][0], timeout=0.05)
        host = RawHost.over_serial(shoe)
        host.hello()
        with ControlClient(control) as c:
            drawn = c.request("draw", device="shoe")[0]
        from controller.rules.cards import Card
        assert host.wait_for(m.CardDrawn).card == Card.parse(drawn["card"]).code
        shoe.close()
        stables = [dict(e.split("=", 1) for e in extra)["stable"] for _, *extra in ports.values()]
    finally:
        code = stop(proc)
    assert code == 0
    assert proc.stderr.read() == ""
    assert not any(os.path.lexists(s) for s in stables)      # the ports are gone


def test_sim_json_output_and_sigint():
    proc = sim("dice", "--json", "--speed", "500", "--transport", "tcp")
    try:
        doc = json.loads(proc.stdout.readline())
        assert doc["devices"]["dice"]["port"].startswith("socket://127.0.0.1:")
        port = serial.serial_for_url(doc["devices"]["dice"]["port"], timeout=0.05)
        host = RawHost.over_serial(port)
        assert host.hello().units == 4
        port.close()
    finally:
        code = stop(proc, signal.SIGINT)
    assert code == 0


def test_sim_runs_a_scenario_and_shuts_down_through_the_control_channel(tmp_path):
    sc = tmp_path / "s.toml"
    sc.write_text('speed = 500\n[devices.shoe]\ndeck = ["As", "Kd"]\n'
                  '[[faults]]\nfault = "face_up"\nat_card = 1\n')
    proc = sim("--scenario", str(sc))                       # devices from the scenario
    try:
        ports, control = read_ports(proc)
        assert list(ports) == ["shoe"]
        with ControlClient(control) as c:
            assert c.request("draw", device="shoe")[0] == {
                "kind": "card_drawn", "card": "As", "face_up": True, "deck_id": 1}
            c.request("shutdown")
        assert proc.wait(10) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("args, words", [
    (["table"], ["device 'table' is unknown", "shuffler, shoe, dice, box-sensors"]),
    ([], ["name at least one device"]),
    (["shoe", "shoe"], ["named twice"]),
    (["shoe", "--speed", "0"], ["--speed 0.0 must be a number above 0"]),
    (["shoe", "--speed", "inf"], ["--speed inf must be a number above 0, and finite"]),
    (["shoe", "--codec", "morse"], ["--codec 'morse' is unknown"]),
    (["shoe", "--codec", "dice-binary"], ["does not fit a shoe"]),
    (["shoe", "--scenario", "nope.toml"], ["scenario 'nope.toml' not found", "deck-sorted"]),
    (["dice", "--scenario", "shoe-faults"], ["device shoe is not started", "started: dice"]),
])
def test_sim_errors_are_one_clear_line(args, words, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert proc.stderr.startswith("tablectl: error:") and "Traceback" not in proc.stderr
    for w in words:
        assert w in proc.stderr


@pytest.mark.parametrize("control, words", [
    ("unix:{tmp}/missing/sim.sock", ["the directory", "does not exist"]),
    ("tcp:99999", ["from 0 to 65535"]),
    ("tcp:abc", ["from 0 to 65535"]),
])
def test_sim_bad_control_address_is_one_clear_line(control, words, tmp_path):
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "shoe", "--control",
                           control.format(tmp=tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=30)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("tablectl: error:") and "Traceback" not in proc.stderr
    for w in words:
        assert w in proc.stderr


def test_sim_control_path_that_is_a_file_is_refused_and_kept(tmp_path):
    keep = tmp_path / "notes.txt"
    keep.write_text("the operator's notes\n")
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "shoe", "--control",
                           f"unix:{keep}"], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "is not a socket" in proc.stderr, proc.stderr
    assert keep.read_text() == "the operator's notes\n"


def test_sim_control_port_in_use_is_refused(tmp_path):
    import socket
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "shoe",
                               "--control", f"tcp:{port}"], cwd=ROOT, capture_output=True,
                              text=True, timeout=30)
    assert proc.returncode == 2 and "cannot be bound" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def test_sim_link_dir_that_is_a_file_or_cannot_be_made_is_refused(tmp_path):
    afile = tmp_path / "afile"
    afile.write_text("x")
    for link_dir, words in ((afile, "is not a directory"),
                            (afile / "sub", "cannot be made")):
        proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "shoe",
                               "--link-dir", str(link_dir)], cwd=ROOT, capture_output=True,
                              text=True, timeout=30)
        assert proc.returncode == 2 and words in proc.stderr, proc.stderr
        assert "Traceback" not in proc.stderr
    assert afile.read_text() == "x"


def test_sim_refuses_usb_from_a_scenario(tmp_path):
    sc = tmp_path / "usb.toml"
    sc.write_text('[devices.dice]\ntransport = "usb"\n')
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "--scenario", str(sc)],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2 and "use pty or tcp" in proc.stderr


def test_sim_bad_scenario_key_is_named(tmp_path):
    sc = tmp_path / "bad.toml"
    sc.write_text('[[faults]]\nfault = "jam"\nat_crad = 3\n')
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "shoe", "--scenario",
                           str(sc)], cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 2
    assert "unknown key 'at_crad'" in proc.stderr and "at_card" in proc.stderr


def test_sim_lists_the_bundled_scenarios():
    proc = subprocess.run([sys.executable, "-m", "controller.cli", "sim", "--list-scenarios"],
                          cwd=ROOT, capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0
    lines = dict(line.split(": ", 1) for line in proc.stdout.splitlines())
    assert "deck-sorted" in lines and "sort mode" in lines["deck-sorted"]
