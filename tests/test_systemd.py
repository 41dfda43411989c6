"""The service unit, udev rules, sysusers/tmpfiles entries and install script are valid."""
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from controller.config import load_config

ROOT = Path(__file__).resolve().parents[1]
SYSTEMD = ROOT / "systemd"
UNIT = SYSTEMD / "tablectl.service"
EXEC = "/opt/tablectl/venv/bin/tablectl"

needs_analyze = pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                                   reason="systemd-analyze is not installed (Debian: systemd)")


def analyze(tmp_path, text):
    """systemd-analyze verify on a copy whose commands point at a real executable (the
    daemon is not installed in /opt here)."""
    fake = tmp_path / "tablectl"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    unit = tmp_path / "tablectl.service"
    unit.write_text(text.replace(EXEC, str(fake)))
    return subprocess.run(["systemd-analyze", "verify", str(unit)], capture_output=True,
                          text=True, cwd=tmp_path, env={**os.environ, "SYSTEMD_LOG_COLOR": "0"})


@needs_analyze
def test_unit_passes_systemd_analyze_verify(tmp_path):
    result = analyze(tmp_path, UNIT.read_text())
    assert result.returncode == 0, result.stderr
    # verify only warns about unknown keys or bad values: any output is a problem.
    assert result.stdout.strip() == "" and result.stderr.strip() == "", result.stderr


@needs_analyze
def test_verify_would_catch_a_mistake(tmp_path):
    """The check above can fail: a misspelt option and a bad value are reported."""
    bad = UNIT.read_text().replace("ProtectHome=yes", "ProtectHomee=yes") \
                          .replace("Type=notify", "Type=notifyy")
    result = analyze(tmp_path, bad)
    assert "Unknown key 'ProtectHomee'" in result.stderr
    assert "notifyy" in result.stderr


@needs_analyze
def test_unit_exposure_is_low(tmp_path):
    """systemd's own assessment of the hardening: 'OK' is its best band (exposure below 2)."""
    fake = tmp_path / "tablectl"
    fake.write_text("#!/bin/sh\nexit 0\n")
    fake.chmod(0o755)
    unit = tmp_path / "tablectl.service"
    unit.write_text(UNIT.read_text().replace(EXEC, str(fake)))
    result = subprocess.run(["systemd-analyze", "security", "--offline=true", "--no-pager",
                             str(unit)], capture_output=True, text=True, cwd=tmp_path)
    if "--offline" in result.stderr and result.returncode != 0:
        pytest.skip("this systemd-analyze has no --offline (systemd 250 or later)")
    m = re.search(r"Overall exposure level for tablectl.service: ([0-9.]+) (\w+)", result.stdout)
    assert m, result.stdout[-2000:] + result.stderr
    assert float(m.group(1)) < 2.0 and m.group(2) == "OK", m.group(0)


def unit_options():
    """Every Key=value of the unit (keys repeat in systemd units: a list per key)."""
    lines = {}
    for line in UNIT.read_text().splitlines():
        if "=" in line and not line.startswith(("#", "[")):
            key, value = line.split("=", 1)
            lines.setdefault(key, []).append(value)
    return lines


def test_unit_says_what_the_service_needs():
    opts = unit_options()
    assert opts["Type"] == ["notify"] and opts["WatchdogSec"]
    start = opts["ExecStart"][0].split()
    assert start[:4] == [EXEC, "run", "--config", "/etc/tablectl/table.toml"]
    # Every argument is one `tablectl run` accepts.
    from controller.cli import build_parser
    args = build_parser().parse_args(start[1:])
    assert args.config == "/etc/tablectl/table.toml"
    if getattr(args, "control", None):
        assert args.control.startswith("/run/tablectl/") and opts["RuntimeDirectory"] == ["tablectl"]
    check = opts["ExecStartPre"][0].split()
    assert build_parser().parse_args(check[1:]).file == "/etc/tablectl/table.toml"
    # systemctl reload: one command that asks the daemon on the socket ExecStart gives it and
    # waits for its outcome (applied, or refused: the reload fails), never a signal whose
    # outcome systemctl cannot see.
    (reload,) = (v.split() for v in opts["ExecReload"])
    assert reload[:2] == [EXEC, "reload"]
    asked = build_parser().parse_args(reload[1:])
    assert asked.control == args.control == "/run/tablectl/control.sock"
    from controller.reload_cli import DEFAULT_CONTROL
    assert DEFAULT_CONTROL == args.control       # `tablectl reload` alone asks this daemon
    assert opts["User"] == ["tablectl"]
    assert set(opts["SupplementaryGroups"][0].split()) == {"dialout", "gpio"}
    assert opts["Restart"][0] in ("always", "on-failure")
    # A start whose journal cannot be replayed is not started again and again.
    from controller.service import EXIT_UNRECOVERABLE
    assert opts["RestartPreventExitStatus"] == [str(EXIT_UNRECOVERABLE)]
    assert opts["StateDirectory"] == ["tablectl"]
    # The journal's default path is in the state directory the unit makes writable.
    assert str(load_config(ROOT / "docs" / "table.toml.example").journal_path) \
        .startswith("/var/lib/tablectl/")
    allowed = {v.split()[0] for v in opts["DeviceAllow"]}
    assert {"char-ttyUSB", "char-ttyACM", "char-usb_device", "char-gpiochip",
            "/dev/cpu_dma_latency"} <= allowed
    assert opts["DevicePolicy"] == ["closed"] and opts["ProtectSystem"] == ["strict"]
    assert "PrivateDevices" not in opts and "PrivateUsers" not in opts
    assert set(opts["RestrictAddressFamilies"][0].split()) == {"AF_UNIX", "AF_INET",
                                                               "AF_INET6", "AF_NETLINK"}


def test_a_start_refused_again_and_again_ends_in_a_failed_unit():
    """A refusal a restart does not mend (exit 2: a journal on a read-only file system, a
    configuration's mistake) is not in RestartPreventExitStatus, since a passing fault may be;
    the start limit ends its loop: its tries, each at least RestartSec apart, all fall within
    StartLimitIntervalSec, so systemd leaves the unit failed (docs/install.md)."""
    opts = unit_options()

    def seconds(value):
        return float(value.removesuffix("s"))
    burst, interval = int(opts["StartLimitBurst"][0]), seconds(opts["StartLimitIntervalSec"][0])
    restart = seconds(opts["RestartSec"][0])
    assert opts["Restart"] == ["always"] and 0 < burst and restart > 0
    # Each try: its pause and a start that is refused at once (a few seconds on a Pi).
    assert burst * (restart + 5) < interval, (burst, restart, interval)
    doc = " ".join((ROOT / "docs" / "install.md").read_text().split())
    assert f"StartLimitBurst={burst}" in doc and "reset-failed tablectl" in doc


# The kernel modules that register a device group (a major number in /proc/devices) only when
# loaded: usbserial registers ttyUSB (FTDI, CP210x, CH340 adapters), cdc_acm ttyACM.
GROUP_MODULES = {"ttyUSB": "usbserial", "ttyACM": "cdc_acm"}


def unit_dependencies(key):
    """The unit names of a dependency option (After=, Wants=), however many lines give them."""
    return {name for value in unit_options().get(key, []) for name in value.split()}


def test_every_device_group_is_registered_before_the_service_starts():
    """systemd resolves DeviceAllow=char-<group> against /proc/devices once, when the service
    starts (systemd.resource-control(5)): a group whose driver is not loaded yet (no USB serial
    adapter plugged in at boot, or udev still loading its module) is left out of the device
    policy, and the daemon is refused its tty with EPERM until the next restart, however often
    the device is plugged in. The unit loads those modules first (modprobe@.service, as the
    manual advises)."""
    groups = {v.split()[0].removeprefix("char-") for v in unit_options()["DeviceAllow"]
              if v.startswith("char-")}
    wants, after = unit_dependencies("Wants"), unit_dependencies("After")
    for group, module in GROUP_MODULES.items():
        assert group in groups, group
        assert f"modprobe@{module}.service" in wants, f"{group}: Wants=modprobe@{module}.service"
        assert f"modprobe@{module}.service" in after, f"{group}: After=modprobe@{module}.service"
    # The other groups are the kernel's own from boot: the Pi's UART (amba-pl011) and a PC's
    # (8250), USB device nodes (usbcore), GPIO chips (gpiolib).
    assert groups - set(GROUP_MODULES) <= {"ttyAMA", "ttyS", "usb_device", "gpiochip"}


# --- udev rules -----------------------------------------------------------------------------

MATCH_KEYS = {"ACTION", "KERNEL", "SUBSYSTEM", "SUBSYSTEMS", "DRIVER", "DRIVERS", "ATTR", "ATTRS",
              "ENV", "TAG", "KERNELS", "DEVPATH"}
ASSIGN_KEYS = {"SYMLINK", "GROUP", "MODE", "OWNER", "ENV", "TAG", "RUN", "NAME", "ATTR"}
PAIR = re.compile(r'^\s*([A-Z_]+)(\{[^}]+\})?\s*(==|!=|\+=|-=|:=|=)\s*"([^"]*)"\s*$')


def parse_udev(text):
    """The rules as (match, assign) lists; AssertionError naming a bad line."""
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        matches, assigns = [], []
        for part in line.split(","):
            m = PAIR.match(part)
            assert m, f"line {number}: cannot parse {part!r}"
            key, attr, op, value = m.groups()
            if op in ("==", "!="):
                assert key in MATCH_KEYS, f"line {number}: {key} is not a match key"
                matches.append((key, attr, value))
            else:
                assert key in ASSIGN_KEYS, f"line {number}: {key} cannot be assigned"
                if key == "MODE":
                    assert re.fullmatch(r"0[0-7]{3}", value), f"line {number}: MODE {value}"
                assigns.append((key, attr, value))
        assert matches and assigns, f"line {number}: a rule needs a match and an assignment"
        rules.append((number, matches, assigns))
    return rules


def test_udev_rules_parse_and_name_every_device():
    rules = parse_udev((SYSTEMD / "99-tablectl.rules").read_text())
    links = {v for _, _, assigns in rules for k, _, v in assigns if k == "SYMLINK"}
    for role in ("shuffler", "shoe", "dice", "box-sensors"):
        assert f"tablectl/{role}" in links
    for number, matches, assigns in rules:
        keys = {k for k, _, _ in matches}
        if ("SYMLINK" in {k for k, _, _ in assigns}) and "tty" in {v for k, _, v in matches}:
            # a stable name is matched on vendor, product and serial number
            attrs = {a for k, a, _ in matches if k == "ATTRS"}
            assert {"{idVendor}", "{idProduct}", "{serial}"} <= attrs, number
        assert "SUBSYSTEM" in keys, number
    # the service user may hold the CPU wake-up latency request ([service] cpu_wakeup_us)
    assert any(("KERNEL", None, "cpu_dma_latency") in matches
               and ("GROUP", None, "tablectl") in assigns for _, matches, assigns in rules)
    # the configured example's serial port is one of the stable names
    example = load_config(ROOT / "docs" / "table.toml.example")
    assert example.device("shuffler").port.removeprefix("/dev/") in links


def test_udev_rules_take_an_ftdi_adapters_frames_at_once():
    # An FTDI USB serial adapter keeps what it received for up to its latency timer (16 ms by
    # default) before it sends it on: a card frame, 1.04 ms on the wire at 115,200 baud, would
    # reach the controller up to 16 ms late. The rules set the timer to its least, 1 ms.
    rules = parse_udev((SYSTEMD / "99-tablectl.rules").read_text())
    assert any(("SUBSYSTEM", None, "usb-serial") in matches
               and ("DRIVER", None, "ftdi_sio") in matches
               and ("ATTR", "{latency_timer}", "1") in assigns
               for _, matches, assigns in rules)


def test_udev_links_named_by_a_serial_number_are_made_only_for_devices_that_give_one():
    # A USB device may give no serial number (usb_serial is then left empty): its link was
    # /dev/tablectl/usb-, which every other such device fought it for. Its access to the
    # service's group is granted all the same.
    rules = parse_udev((SYSTEMD / "99-tablectl.rules").read_text())
    named = [(number, matches) for number, matches, assigns in rules
             if any(k == "SYMLINK" and "{serial}" in v for k, _, v in assigns)]
    assert named
    for number, matches in named:
        assert {("ATTR", "{serial}", "?*"), ("ATTRS", "{serial}", "?*")} & set(matches), number
    assert any(("SUBSYSTEM", None, "usb") in matches and ("GROUP", None, "tablectl") in assigns
               and not any(a == "{serial}" for _, a, _ in matches)
               for _, matches, assigns in rules)


def test_the_rule_install_md_gives_for_an_adapter_without_a_serial_number_parses():
    doc = (ROOT / "docs" / "install.md").read_text()
    block = re.search(r"no serial number.*?```\n(.*?)```", doc, re.S)
    assert block, "docs/install.md's rule for an adapter without a serial number"
    [(_, matches, assigns)] = parse_udev(block.group(1))
    assert ("SUBSYSTEM", None, "tty") in matches and any(k == "KERNELS" for k, _, _ in matches)
    assert ("SYMLINK", None, "tablectl/shoe") in assigns


def test_udev_parser_rejects_mistakes():
    with pytest.raises(AssertionError, match="cannot parse"):
        parse_udev('SUBSYSTEM=="tty", SYMLINK+=tablectl/x')
    with pytest.raises(AssertionError, match="not a match key"):
        parse_udev('SUBSYSTM=="tty", SYMLINK+="x"')
    with pytest.raises(AssertionError, match="MODE"):
        parse_udev('SUBSYSTEM=="tty", MODE="rw"')


def _udevadm_verify_available():
    if not shutil.which("udevadm"):
        return False
    return subprocess.run(["udevadm", "verify", "--help"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _udevadm_verify_available(),
                    reason="udevadm verify (systemd 254 or later) is not installed here; "
                           "the rules are checked by the parser test above")
def test_udevadm_verify():
    result = subprocess.run(["udevadm", "verify", str(SYSTEMD / "99-tablectl.rules")],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


# --- sysusers, tmpfiles, install ------------------------------------------------------------

needs_root_tools = pytest.mark.skipif(
    not (shutil.which("systemd-sysusers") and shutil.which("systemd-tmpfiles"))
    or os.geteuid() != 0, reason="needs systemd-sysusers/systemd-tmpfiles and root (chown)")


@needs_root_tools
def test_sysusers_and_tmpfiles_in_a_scratch_root(tmp_path):
    (tmp_path / "etc").mkdir()
    subprocess.run(["systemd-sysusers", f"--root={tmp_path}",
                    str(SYSTEMD / "tablectl.sysusers")], check=True, capture_output=True)
    passwd = (tmp_path / "etc" / "passwd").read_text()
    group = (tmp_path / "etc" / "group").read_text()
    uid = int(re.search(r"^tablectl:x:(\d+):", passwd, re.M).group(1))
    assert re.search(r"^dialout:x:\d+:.*\btablectl\b", group, re.M)
    assert re.search(r"^gpio:x:\d+:.*\btablectl\b", group, re.M)
    subprocess.run(["systemd-tmpfiles", f"--root={tmp_path}", "--create",
                    str(SYSTEMD / "tablectl.tmpfiles")], check=True, capture_output=True)
    state = (tmp_path / "var" / "lib" / "tablectl").stat()
    assert state.st_uid == uid and (state.st_mode & 0o777) == 0o750
    assert ((tmp_path / "etc" / "tablectl").stat().st_mode & 0o007) == 0  # tokens: not world


def test_install_script_lays_out_files(tmp_path):
    root = tmp_path / "root"
    env = {**os.environ, "DESTDIR": str(root)}
    run = subprocess.run(["bash", str(SYSTEMD / "install.sh")], env=env, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stderr
    for path in ("etc/systemd/system/tablectl.service", "etc/udev/rules.d/99-tablectl.rules",
                 "usr/lib/sysusers.d/tablectl.conf", "usr/lib/tmpfiles.d/tablectl.conf",
                 "usr/share/doc/tablectl/install.md", "etc/tablectl/table.toml"):
        assert (root / path).is_file(), path
    # Every document, since they point at each other (configuration.md at interpretations.md).
    docs = ROOT / "docs"
    for doc in [*docs.glob("*.md"), *docs.glob("regulations/*.md")]:
        installed = root / "usr/share/doc/tablectl" / doc.relative_to(docs)
        assert installed.read_bytes() == doc.read_bytes(), doc
    config = root / "etc" / "tablectl" / "table.toml"
    assert (config.stat().st_mode & 0o777) == 0o640
    assert load_config(config).table_id == "macau-07"
    # A second install keeps the table's own configuration.
    config.write_text(config.read_text().replace('"macau-07"', '"macau-08"'))
    assert subprocess.run(["bash", str(SYSTEMD / "install.sh")], env=env,
                          capture_output=True).returncode == 0
    assert load_config(config).table_id == "macau-08"
    bad = subprocess.run(["bash", str(SYSTEMD / "install.sh"), "--bogus"], env=env,
                         capture_output=True, text=True)
    assert bad.returncode == 2 and "unknown option" in bad.stderr


def test_install_script_knows_a_configuration_still_the_example(tmp_path):
    """An install that stopped half way (pip without a network) left the example in
    /etc/tablectl: run again, the script still takes it for a new table, so --start does not
    start a table on the example's settings; once edited, it is the table's own."""
    root = tmp_path / "root"
    env = {**os.environ, "DESTDIR": str(root)}
    install = ["bash", str(SYSTEMD / "install.sh")]
    first = subprocess.run(install, env=env, capture_output=True, text=True)
    assert first.returncode == 0 and "is the example" in first.stdout, first.stderr
    again = subprocess.run([*install, "--start"], env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "is the example" in again.stdout, again.stderr
    config = root / "etc" / "tablectl" / "table.toml"
    config.write_text(config.read_text().replace('"macau-07"', '"macau-08"'))
    edited = subprocess.run(install, env=env, capture_output=True, text=True)
    assert edited.returncode == 0 and "is the example" not in edited.stdout


def test_install_script_keeps_the_tables_udev_rules(tmp_path):
    """docs/install.md has the technician put each device's ids and serial number in
    /etc/udev/rules.d/99-tablectl.rules: an upgrade keeps them (or the stable names, and with
    them the table's devices, are gone at the next replug or boot), and puts this version's
    rules beside the documentation to compare."""
    root = tmp_path / "root"
    env = {**os.environ, "DESTDIR": str(root)}
    install = ["bash", str(SYSTEMD / "install.sh")]
    assert subprocess.run(install, env=env, capture_output=True).returncode == 0
    rules = root / "etc" / "udev" / "rules.d" / "99-tablectl.rules"
    shipped = (SYSTEMD / "99-tablectl.rules").read_text()
    assert rules.read_text() == shipped
    again = subprocess.run(install, env=env, capture_output=True, text=True)
    assert again.returncode == 0 and "Kept" not in again.stdout   # unchanged: nothing to say
    rules.write_text(shipped.replace("SHUF-0001", "A50TK9QX"))
    upgrade = subprocess.run(install, env=env, capture_output=True, text=True)
    assert upgrade.returncode == 0, upgrade.stderr
    assert 'ATTRS{serial}=="A50TK9QX"' in rules.read_text()
    assert "Kept /etc/udev/rules.d/99-tablectl.rules" in upgrade.stdout
    assert (root / "usr/share/doc/tablectl/99-tablectl.rules").read_text() == shipped


def test_install_script_builds_from_a_copy_of_the_tree(tmp_path):
    """pip builds in the directory it is given (build/, tablectl.egg-info/): run as root on
    the technician's clone, that left root's files there and the clone's own scripts/venv
    failed ("Cannot update time stamp of directory 'tablectl.egg-info'"). The script installs
    from a copy without the clone's build products, virtual environment or history."""
    script = (SYSTEMD / "install.sh").read_text()
    pip_installs = [line for line in script.splitlines() if '/pip" install' in line]
    assert pip_installs and not any("${SRC}" in line or "$SRC" in line for line in pip_installs)
    assert any('"${BUILD}[pi]"' in line for line in pip_installs)
    copy = re.search(r"^tar -C \"\$SRC\".*?-xf -$", script, re.M | re.S)
    assert copy, "the copy of the tree"
    src = tmp_path / "src"
    for name in ("controller/x.py", ".venv/bin/python", "build/lib/old.py", ".git/HEAD",
                 "tablectl.egg-info/PKG-INFO", "controller/__pycache__/x.pyc", "pyproject.toml"):
        (src / name).parent.mkdir(parents=True, exist_ok=True)
        (src / name).write_text("x")
    build = tmp_path / "build"
    build.mkdir()
    subprocess.run(["bash", "-c", copy.group(0)], check=True,
                   env={**os.environ, "SRC": str(src), "BUILD": str(build)})
    copied = {str(p.relative_to(build)) for p in build.rglob("*") if p.is_file()}
    assert copied == {"controller/x.py", "pyproject.toml"}, copied


def test_install_script_checks_the_configuration_as_the_service_reads_it():
    """A table.toml put in place by hand (moved from a home directory, mode 0600) was made
    the service's group's by the installer but not readable by it: the installer's check, run
    as root, passed, and `--start` started a unit whose own check (ExecStartPre, as the
    service user) failed at every restart. The installer gives the group read access and
    checks the file as the unit's user; the way it prints to check by hand is that one too."""
    script = (SYSTEMD / "install.sh").read_text()
    user = unit_options()["User"][0]
    lines = [line.strip() for line in script.splitlines() if not line.lstrip().startswith("#")]
    checks = [line for line in lines if "tablectl config check" in line]
    assert checks, "the installer checks the configuration"
    for line in checks:
        assert re.search(rf"(runuser -u|sudo -u) {user}\b", line), line
    chgrp = lines.index(f"chgrp {user} /etc/tablectl/table.toml")
    assert "chmod g+r,o-rwx /etc/tablectl/table.toml" in lines[chgrp:], lines[chgrp:chgrp + 5]


def test_install_script_starts_a_unit_that_hit_its_start_limit():
    """A table whose starts were refused again and again is left failed by its start limit
    (docs/install.md), and systemctl refuses to start it until StartLimitIntervalSec has
    passed: `install.sh --start` with the upgrade that mends it then failed ("start request
    repeated too quickly"). It resets the unit's failed state before it starts it."""
    lines = [line.strip() for line in (SYSTEMD / "install.sh").read_text().splitlines()]
    restart = lines.index("systemctl restart tablectl.service")
    assert "systemctl reset-failed tablectl.service" in lines[restart - 3:restart]


def test_install_script_help_is_its_comment_only():
    run = subprocess.run(["bash", str(SYSTEMD / "install.sh"), "--help"], capture_output=True,
                         text=True)
    assert run.returncode == 0 and "--start" in run.stdout
    assert all(line.startswith("#") for line in run.stdout.splitlines()), run.stdout


def test_install_script_applies_every_udev_rule_to_present_devices():
    """Each subsystem the rules name is triggered by the installer, so a rule holds without a
    reboot (the CPU wake-up latency device is a misc device)."""
    ruled = set(re.findall(r'^(?!#).*?\bSUBSYSTEM=="([^"]+)"',
                           (SYSTEMD / "99-tablectl.rules").read_text(), re.M))
    assert {"tty", "usb", "gpio", "misc"} <= ruled
    triggered = set()
    for line in (SYSTEMD / "install.sh").read_text().splitlines():
        if line.strip().startswith("udevadm trigger"):
            triggered |= set(re.findall(r"--subsystem-match=(\S+)", line))
    assert ruled <= triggered, ruled - triggered


def test_unit_directory_modes_match_tmpfiles():
    """systemd keeps an existing ConfigurationDirectory's mode but notes a different one at
    every start: the unit says the modes tablectl.tmpfiles makes."""
    modes = {}
    for line in (SYSTEMD / "tablectl.tmpfiles").read_text().splitlines():
        if line.startswith("d "):
            _, path, mode, *_ = line.split()
            modes[path] = mode
    opts = unit_options()
    assert opts["ConfigurationDirectoryMode"] == [modes["/etc/tablectl"]]
    assert opts["StateDirectoryMode"] == [modes["/var/lib/tablectl"]]


@pytest.mark.skipif(shutil.which("shellcheck") is None,
                    reason="shellcheck is not installed (Debian: shellcheck)")
@pytest.mark.parametrize("script", ["systemd/install.sh", "scripts/test", "scripts/demo",
                                    "scripts/venv",
                                    "scripts/reliability", ".ci/run"])
def test_shell_scripts_pass_shellcheck(script):
    result = subprocess.run(["shellcheck", str(ROOT / script)], capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stdout


# --- what the unit lets the service write, and the journal's path ----------------------------

def _check(tmp_path, journal):
    import sys
    example = (ROOT / "docs" / "table.toml.example").read_text()
    config = tmp_path / "table.toml"
    config.write_text(example.replace('path = "/var/lib/tablectl/journal.db"',
                                      f'path = "{journal}"'))
    return subprocess.run([sys.executable, "-m", "controller.cli", "config", "check",
                           str(config)], capture_output=True, text=True, cwd=ROOT)


def test_config_check_names_a_journal_the_service_could_not_keep(tmp_path):
    """The unit lets the service write its state directory only (ProtectSystem=strict), gives
    it a /tmp of its own that goes when it stops (PrivateTmp=yes) and hides the homes
    (ProtectHome=yes). A journal put anywhere else (a disk of its own mounted on /srv, say)
    passed the check, also the one run as the service user by hand, and the service then
    failed to write it, or wrote the table's record where it is lost at the next stop. The
    check, which the unit runs before every start, says so and how to open the path."""
    opts = unit_options()
    assert opts["ProtectSystem"] == ["strict"] and opts["StateDirectory"] == ["tablectl"]
    assert opts["PrivateTmp"] == ["yes"] and opts["ProtectHome"] == ["yes"]
    kept = _check(tmp_path, "/var/lib/tablectl/journal.db")
    assert kept.returncode == 0 and "note:" not in kept.stdout, kept.stdout
    mounted = _check(tmp_path, "/srv/table/journal.db")
    assert mounted.returncode == 0, mounted.stderr
    assert "note: the journal /srv/table/journal.db" in mounted.stdout
    assert "ReadWritePaths=/srv/table" in mounted.stdout
    assert "RequiresMountsFor=/srv/table" in mounted.stdout
    lost = _check(tmp_path, "/tmp/journal.db")
    assert "PrivateTmp" in lost.stdout and "/var/lib/tablectl" in lost.stdout, lost.stdout
    hidden = _check(tmp_path, "/home/pit/journal.db")
    assert "ProtectHome" in hidden.stdout and "/var/lib/tablectl" in hidden.stdout


@needs_analyze
def test_the_drop_in_the_check_offers_for_a_journal_path_with_a_space_is_one_systemd_takes(
        tmp_path):
    """The check's note gave ReadWritePaths=/srv/table one, which systemd splits at the space:
    /srv/table, and "one", which it ignores (not absolute), so the service still could not
    write the journal's directory (or failed to start on a /srv/table that is not there)."""
    out = _check(tmp_path, "/srv/table one/journal.db")
    assert out.returncode == 0, out.stderr
    note = " ".join(out.stdout.split())
    m = re.search(r"\[Unit\] (RequiresMountsFor=.*) and \[Service\] (ReadWritePaths=.*)$", note)
    assert m, note
    drop_in = tmp_path / "tablectl.service.d"
    drop_in.mkdir()
    (drop_in / "override.conf").write_text(f"[Unit]\n{m.group(1)}\n[Service]\n{m.group(2)}\n")
    result = analyze(tmp_path, UNIT.read_text())
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), \
        result.stdout + result.stderr
    assert m.group(2) == 'ReadWritePaths="/srv/table one"'


def test_install_script_lays_out_readable_files_whatever_the_umask(tmp_path):
    """sudo keeps the caller's umask when it is stricter than 0022: on a Pi hardened to 0027
    or 0077 the installer made directories (and the virtual environment in /opt/tablectl)
    that the service user could not read, so the service could not even start its check. The
    script sets its own umask; /etc/tablectl is made 0750 from the start (token hashes), not
    left 0755 until systemd-tmpfiles runs."""
    root = tmp_path / "root"
    run = subprocess.run(["bash", str(SYSTEMD / "install.sh")],
                         env={**os.environ, "DESTDIR": str(root)}, capture_output=True,
                         text=True, preexec_fn=lambda: os.umask(0o077))
    assert run.returncode == 0, run.stderr
    for directory in ("etc/systemd/system", "usr/lib/sysusers.d", "usr/lib/tmpfiles.d",
                      "usr/share/doc/tablectl", "usr/share/doc/tablectl/regulations"):
        assert ((root / directory).stat().st_mode & 0o777) == 0o755, directory
    assert ((root / "etc/tablectl").stat().st_mode & 0o777) == 0o750
    assert ((root / "etc/tablectl/table.toml").stat().st_mode & 0o777) == 0o640
    script = (SYSTEMD / "install.sh").read_text()
    assert script.index("\numask 022\n") < script.index('-m venv')


@needs_analyze
def test_the_drop_in_install_md_shows_passes_systemd_analyze_verify(tmp_path):
    """docs/install.md's example drop-in (another kind of serial port) is one systemd takes,
    beside the unit as installed."""
    doc = (ROOT / "docs" / "install.md").read_text()
    block = re.search(r"`sudo systemctl edit tablectl`.*?```ini\n(.*?)```", doc, re.S)
    assert block and "DeviceAllow=" in block.group(1)
    drop_in = tmp_path / "tablectl.service.d"
    drop_in.mkdir()
    (drop_in / "override.conf").write_text(block.group(1))
    result = analyze(tmp_path, UNIT.read_text())
    assert result.returncode == 0 and not (result.stdout + result.stderr).strip(), \
        result.stdout + result.stderr
    # the check reads the drop-in: a misspelt key in it is reported
    (drop_in / "override.conf").write_text(block.group(1).replace("DeviceAllow=",
                                                                  "DeviceAlow="))
    assert "DeviceAlow" in analyze(tmp_path, UNIT.read_text()).stderr


def test_config_check_notes_a_console_port_the_service_may_not_listen_on(tmp_path):
    """The unit holds no capabilities (CapabilityBoundingSet= empty), so the service may not
    listen below net.ipv4.ip_unprivileged_port_start (1024 unless lowered): port = 80 passed
    the check and the console then never came up, the log retrying it for ever. The check
    notes it; a port above, or 0 (any free port), is not noted."""
    import sys
    opts = unit_options()
    assert opts["CapabilityBoundingSet"] == [""] and opts["NoNewPrivileges"] == ["yes"]
    start = Path("/proc/sys/net/ipv4/ip_unprivileged_port_start")
    if not start.exists() or int(start.read_text()) <= 80:
        pytest.skip("this kernel lets anyone listen on port 80")
    example = (ROOT / "docs" / "table.toml.example").read_text()

    def check(port):
        config = tmp_path / "table.toml"
        config.write_text(example.replace("port = 8740", f"port = {port}"))
        out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check",
                              str(config)], capture_output=True, text=True, cwd=ROOT)
        assert out.returncode == 0, out.stderr
        return out.stdout
    low = check(80)
    assert "note: api.port 80" in low and "CapabilityBoundingSet" in low, low
    assert "8740" in low and "ip_unprivileged_port_start" in low
    assert "api.port" not in check(8740) and "api.port" not in check(0)


# --- an upgrade while the service runs -------------------------------------------------------

# Every command the installer runs that changes the machine (and `id`, so that it runs as
# "root" wherever the tests do). Each logs its call and fails, so a run of the script under
# them changes nothing here, whatever the script does: the first one it calls stops it.
CHANGERS = ("install", "systemd-sysusers", "systemd-tmpfiles", "chgrp", "chmod", "ln", "tar",
            "mktemp", "udevadm", "tablectl", "runuser", "python3")


def stub_commands(tmp_path, state):
    """A bin directory of stubs: `systemctl` says the service is ``state`` (exit 0 only when
    active, as systemctl does) and logs every call; the changers log and fail."""
    bin_dir, log = tmp_path / "bin", tmp_path / "calls.log"
    bin_dir.mkdir()
    log.write_text("")
    stubs = {"systemctl": f'echo "systemctl $*" >> "{log}"\n'
                          f'if [ "$1" = is-active ]; then\n'
                          f'    [ "$2" = --quiet ] || echo {state}\n'
                          f'    [ {state} = active ]; exit\nfi\nexit 0\n',
             "id": 'echo 0\n'}
    for name in CHANGERS:
        stubs[name] = f'echo "{name} $*" >> "{log}"\nexit 1\n'
    for name, body in stubs.items():
        (bin_dir / name).write_text("#!/bin/sh\n" + body)
        (bin_dir / name).chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k != "DESTDIR"}
    env.update(PATH=f"{bin_dir}:{env['PATH']}", PYTHON=str(bin_dir / "python3"))
    return env, log


def run_installer(env, *args):
    return subprocess.run(["bash", str(SYSTEMD / "install.sh"), *args], env=env,
                          capture_output=True, text=True, cwd=ROOT)


@pytest.mark.parametrize("state", ["active", "activating"])
def test_install_script_refuses_to_upgrade_a_running_service(tmp_path, state):
    """The daemon imports some modules only when first needed (the console's HTTP stack, for
    one): a virtual environment upgraded under it left the running table with old and new code
    mixed until its next restart. Run while the service is active (or starting: a restart
    could take the half-upgraded program), the installer refuses before it changes anything,
    and names the ways out."""
    env, log = stub_commands(tmp_path, state)
    run = run_installer(env)
    assert run.returncode == 1, run.stdout + run.stderr
    said = " ".join(run.stderr.split())
    assert f"tablectl is {state}" in said and "nothing was changed" in said
    assert "stop it after the round in play (sudo systemctl stop tablectl)" in said
    assert "--start, which stops it, upgrades and starts it again" in said
    calls = log.read_text().splitlines()
    assert calls and all(c.startswith("systemctl is-active") for c in calls), calls


def test_install_script_with_start_stops_the_service_before_it_installs(tmp_path):
    """With --start the installer stops the running service first, then upgrades (here the
    first file copy fails, as every stub that would change something does) and leaves the
    table stopped when the upgrade does not finish, saying so, rather than starting it on a
    program half upgraded."""
    env, log = stub_commands(tmp_path, "active")
    run = run_installer(env, "--start")
    calls = log.read_text().splitlines()
    assert "systemctl stop tablectl" in calls, calls
    stop = calls.index("systemctl stop tablectl")
    changes = [i for i, c in enumerate(calls) if not c.startswith("systemctl")]
    assert changes and stop < changes[0], calls
    assert run.returncode != 0
    said = " ".join(run.stderr.split())
    assert "left stopped" in said and "--start" in said, said
    assert not any(c.startswith(("systemctl start", "systemctl restart")) for c in calls)


@pytest.mark.parametrize("state", ["inactive", "failed"])
def test_install_script_upgrades_a_stopped_service_without_stopping_anything(tmp_path, state):
    env, log = stub_commands(tmp_path, state)
    run = run_installer(env)
    calls = log.read_text().splitlines()
    assert "nothing was changed" not in run.stderr and run.returncode != 0
    assert calls[-1].startswith("install "), calls      # went on to copy the files
    assert not any(c.startswith("systemctl stop") for c in calls)


def test_install_script_lays_out_files_for_a_package_whatever_the_service(tmp_path):
    """DESTDIR mode (packaging) touches no service: it never asks systemctl, also when the
    building machine runs tablectl."""
    env, log = stub_commands(tmp_path, "active")
    env["PATH"] = env["PATH"].split(":", 1)[1]          # the real install, cp, ...
    (tmp_path / "bin2").mkdir()
    shutil.copy(tmp_path / "bin" / "systemctl", tmp_path / "bin2" / "systemctl")
    env.update(PATH=f"{tmp_path / 'bin2'}:{env['PATH']}", DESTDIR=str(tmp_path / "root"))
    run = run_installer(env)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "root/etc/systemd/system/tablectl.service").is_file()
    assert log.read_text() == ""
