"""table.toml: every problem is named with its key, its line, the reason and the fix."""
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from config_helpers import BASE, line_of, only, problems
from controller.config import (ConfigError, TableConfig, check_token, hash_token, key_lines,
                               load_config, parse_text)
from controller.errors import TablectlError
from drivers.spec import DeviceSpec

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "table.toml.example"



# --- the example ----------------------------------------------------------------------------

def test_example_passes_the_check():
    config = load_config(EXAMPLE)
    assert isinstance(config, TableConfig)
    assert config.table_id == "macau-07" and config.mode.value == "shuffler"
    assert config.device("shuffler").port == "/dev/tablectl/shuffler"
    assert config.device("shoe").usb_vendor == 0x1d50
    assert config.limits.for_wager("pair_plus") == (1, 100)
    assert config.limits.for_wager("ante") == (4, 400)
    assert config.gpio.buttons["misdeal"] == 27 and len(config.gpio.box_sensors) == config.boxes
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check",
                          str(EXAMPLE)], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert "valid" in out.stdout


def test_minimal_file_and_defaults():
    config = parse_text(BASE)
    assert config.device("shoe") == DeviceSpec(id="shoe", device_class="shoe",
                                               port="/dev/tablectl/shoe")
    assert config.chip_unit == 1 and config.limits.maximum is None
    assert str(config.journal_path) == "/var/lib/tablectl/journal.db"
    assert config.api.listen == "127.0.0.1" and config.api.tokens == {}
    assert config.gpio is None and config.integrity_alarm == "warn"
    # Every interpretation of the game gets its default reading.
    assert config.interpretations["decks"] == "one"


# --- each kind of problem, at the right line ------------------------------------------------

def test_unknown_key_with_suggestion():
    text = BASE + "baudrat = 9600\n"
    p = only(text)
    assert p.key == "devices.shoe.baudrat" and p.reason == "unknown key"
    assert "did you mean 'baudrate'" in p.fix and p.line == line_of(text, "baudrat =")


def test_unknown_section_with_suggestion():
    text = BASE + "\n[logigng]\nlevel = \"info\"\n"
    p = only(text)
    assert p.key == "logigng" and "'logging'" in p.fix and p.line == line_of(text, "[logigng]")


def test_wrong_type_and_choice():
    text = BASE.replace("boxes = 7", "boxes = \"five\"") + "\n[logging]\nlevel = \"verbose\"\n"
    found = {p.key: p for p in problems(text)}
    assert found["table.boxes"].line == line_of(text, "boxes =")
    assert "not a whole number" in found["table.boxes"].reason
    assert found["logging.level"].line == line_of(text, "verbose")
    assert "debug, info, warning, error" in found["logging.level"].fix


def test_missing_required_key():
    text = BASE.replace('game = "q-poker"\n', "")
    p = only(text)
    assert p.key == "table.game" and p.reason == "is required"
    assert p.line == line_of(text, "[table]")  # the table it belongs in


def test_missing_table_section():
    found = {p.key for p in problems("[journal]\npath = \"/tmp/j.db\"\n")}
    assert {"table.id", "table.game", "table.boxes"} <= found


def test_interpretations_checked_against_the_game():
    text = BASE + '\n[interpretations]\ndecks = "three"\nodd_chps = "house"\n'
    found = {p.key: p for p in problems(text)}
    assert "one, several" in found["interpretations.decks"].reason
    assert found["interpretations.decks"].line == line_of(text, 'decks = "three"')
    assert "did you mean 'odd_chip'" in found["interpretations.odd_chps"].fix
    good = parse_text(BASE + '\n[interpretations]\nodd_chip = "house"\n')
    assert good.interpretations["odd_chip"] == "house"


def test_dotted_interpretation_keys_bare_or_quoted():
    """A dotted key may be written bare (TOML makes it a sub-table) or quoted: both reach the
    game as one dotted key, and a wrong one is named at its line."""
    import tomllib
    from controller.config import _Checker, _interpretations
    from controller.rules.base import Interpretation
    from controller.rules.q_poker import GAME

    class Dotted(type(GAME)):
        interpretations = (Interpretation("house.odd_chip", "art. 1", "who gets an odd chip?",
                                          ("house", "player"), "house"),)

    for line in ('house.odd_chip = "player"', '"house.odd_chip" = "player"'):
        doc = tomllib.loads(f"[interpretations]\n{line}\n")
        ck = _Checker(key_lines(f"[interpretations]\n{line}\n"))
        assert _interpretations(ck, doc["interpretations"], Dotted()) == {"house.odd_chip":
                                                                         "player"}
        assert ck.problems == []
        bad = f"[interpretations]\n\n{line.replace('player', 'nobody')}\n"
        ck = _Checker(key_lines(bad))
        _interpretations(ck, tomllib.loads(bad)["interpretations"], Dotted())
        assert [(p.key, p.line) for p in ck.problems] == [("interpretations.house.odd_chip", 3)]
    # Through the whole loader: an unknown dotted key of a real game, at its line.
    text = BASE + '\n[interpretations]\n"odd.chip" = "house"\n'
    p = only(text)
    assert p.key == "interpretations.odd.chip" and p.line == line_of(text, '"odd.chip"')


def test_layout_checked_by_the_regulation():
    # 78/2008 art. 2(1): eight places including the croupier's, so seven boxes.
    f3 = BASE.replace('"q-poker"', '"fortune-3-card-poker"')
    assert parse_text(f3.replace("boxes = 7", "boxes = 7")).boxes == 7
    p = only(f3.replace("boxes = 7", "boxes = 6"))
    assert p.key == "table.boxes" and "78/2008" in p.reason
    # 261/96/M art. 3(1): at least two seats, the banker's included.
    pan9 = BASE.replace('"q-poker"', '"super-pan-9"').replace("boxes = 7", "boxes = 1")
    assert only(pan9).key == "table.boxes"


def test_limits():
    text = BASE + "\n[limits]\nmin = 50\nmax = 10\n\n[limits.pair_bonus]\nmin = 5\nmax = 2\n"
    found = {p.key: p for p in problems(text)}
    assert found["limits.max"].line == line_of(text, "max = 10")
    assert found["limits.pair_bonus.max"].line == line_of(text, "max = 2")
    ok = parse_text(BASE + "\n[limits]\nmin = 5\nmax = 500\n[limits.pair_bonus]\nmax = 50\n")
    assert ok.limits.for_wager("pair_bonus") == (5, 50)
    assert ok.limits.for_wager("versus_croupier") == (5, 500)
    assert only(BASE + "\n[limits]\nmin = 1.5\n").key == "limits.min"  # money is integers


def test_devices():
    text = BASE + textwrap.dedent("""
        [devices.shuffler]
        class = "shuffler"
        transport = "usb"
        usb_vendor = 0x1d50
        usb_product = 0x6018

        [devices.dice]
        class = "dice"
        transport = "serial"
        codec = "dice-binary"
        port = "/dev/ttyACM0"
        link_timeout_s = 0.1
        """)
    p = only(text)
    assert p.key == "devices.dice.link_timeout_s" and p.line == line_of(text, "0.1")
    # The problem is the link timeout against the heartbeat, not the baud rate, and it has a fix.
    assert "heartbeat_s (0.25)" in p.reason and "baudrate" not in p.reason, p.reason
    assert "e.g. 1" in p.fix, p.fix
    good = parse_text(text.replace("link_timeout_s = 0.1", "link_timeout_s = 2"))
    assert good.devices["shuffler"].usb_product == 0x6018
    assert good.devices["dice"].codec == "dice-binary"
    nodev = BASE.replace('mode = "shoe"', 'mode = "shuffler"')
    p = only(nodev)
    assert p.key == "devices" and 'class = "shuffler"' in p.reason


@pytest.mark.parametrize("device_class", ["shuffler", "shoe", "dice", "box-sensors"])
@pytest.mark.parametrize("codec", ["tablectl", "dice-binary"])
def test_codec_and_class_checked_as_the_driver_does(device_class, codec):
    """`config check` (run as the unit's ExecStartPre) accepts a device exactly when its
    driver can be made, so a codec speaking for another class fails before start."""
    import asyncio
    from drivers.factory import make_driver
    try:
        make_driver(DeviceSpec(id="dev", device_class=device_class, port="/dev/null",
                               codec=codec), asyncio.Queue())
        driver_error = None
    except TablectlError as exc:
        driver_error = str(exc)
    text = BASE + textwrap.dedent(f"""
        [devices.dev]
        class = "{device_class}"
        port = "/dev/null"
        codec = "{codec}"
        """)
    if driver_error is None:
        assert parse_text(text).devices["dev"].codec == codec
        return
    p = only(text)
    assert p.key == "devices.dev.codec" and p.line == line_of(text, f'codec = "{codec}"')
    assert f"speaks only for dice, not a {device_class}" in p.reason
    assert 'codec = "tablectl"' in p.fix


def test_cli_check_refuses_a_codec_the_run_refuses(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(BASE + 'codec = "dice-binary"\n')
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}:10: devices.shoe.codec: codec 'dice-binary' speaks only for dice, not a " \
           "shoe" in out.stderr
    assert 'codec = "tablectl"' in out.stderr


def test_gpio():
    text = BASE + textwrap.dedent("""
        [gpio]
        box_sensors = [5, 6, 12, 16]
        key_switch = "GPIO24"

        [gpio.buttons]
        close_bets = 17
        confirm = "BCM24"
        misdeal = 99

        [gpio.light]
        gren = 13
        """)
    found = {p.key: p for p in problems(text)}
    assert "4 sensors for 7 boxes" in found["gpio.box_sensors"].reason
    assert "already used by gpio.key_switch" in found["gpio.buttons.confirm"].reason
    assert found["gpio.buttons.confirm"].line == line_of(text, '"BCM24"')
    assert found["gpio.buttons.misdeal"].line == line_of(text, "misdeal = 99")
    assert "did you mean 'green'" in found["gpio.light.gren"].fix
    good = parse_text(BASE + "\n[gpio]\nbuzzer = 19\n[gpio.buttons]\nmisdeal = 27\n")
    assert good.gpio.buttons == {"misdeal": 27} and good.gpio.buzzer == 19
    assert good.gpio.repeat_guard_ms == 1000


def test_gpio_repeat_guard():
    """The interval within which a button pressed again is a repeat: 0 (no guard) to 10 s."""
    assert parse_text(BASE + "\n[gpio]\nrepeat_guard_ms = 0\n").gpio.repeat_guard_ms == 0
    assert parse_text(BASE + "\n[gpio]\nrepeat_guard_ms = 600\n").gpio.repeat_guard_ms == 600
    for bad in ("-1", "10001", '"1s"', "0.5"):
        found = {p.key: p for p in problems(BASE + f"\n[gpio]\nrepeat_guard_ms = {bad}\n")}
        assert "gpio.repeat_guard_ms" in found, bad


def test_integrity_keys():
    text = BASE + '\n[interpretations]\ndecks = "several"\n' \
        + "\n[integrity]\nalarm = \"stop\"\ndecks = 3\ndeck_ids = [1, 2]\nalpha = 1e-4\n"
    cfg = parse_text(text)
    assert (cfg.integrity_alarm, cfg.integrity_decks, cfg.integrity_deck_ids,
            cfg.integrity_alpha) == ("stop", 3, (1, 2), 1e-4)
    assert cfg.to_json()["integrity"] == {"alarm": "stop", "decks": 3, "deck_ids": [1, 2],
                                          "alpha": 1e-4}
    default = parse_text(BASE)
    assert (default.integrity_decks, default.integrity_deck_ids, default.integrity_alpha) == \
        (1, None, 1e-5)
    bad = BASE + "\n[integrity]\ndecks = 9\ndeck_ids = [1, true]\nalpha = 0.05\n"
    found = {p.key: p for p in problems(bad)}
    assert set(found) == {"integrity.decks", "integrity.deck_ids", "integrity.alpha"}
    assert found["integrity.decks"].line == line_of(bad, "decks = 9")
    assert "1 to 8" in found["integrity.decks"].fix
    assert found["integrity.deck_ids"].line == line_of(bad, "deck_ids")
    assert "boolean true" in found["integrity.deck_ids"].reason
    assert found["integrity.alpha"].line == line_of(bad, "alpha")
    assert "0.01" in found["integrity.alpha"].fix
    for value, why in (("[]", "leave deck_ids out"), ("[65535]", "0 to 65534"),
                       ('"1"', "list of whole numbers")):
        p = only(BASE + f"\n[integrity]\ndeck_ids = {value}\n")
        assert p.key == "integrity.deck_ids" and why in f"{p.reason}; {p.fix}"
    for value in ("0", "-1e-5", "0.0100001", "nan"):
        assert only(BASE + f"\n[integrity]\nalpha = {value}\n").key == "integrity.alpha"
    assert parse_text(BASE + "\n[integrity]\nalpha = 0.01\n").integrity_alpha == 0.01


def test_service_cpu_wakeup():
    assert parse_text(BASE).cpu_wakeup_us == 0          # held at 0 µs unless told otherwise
    for value in (-1, 0, 50, 2_000_000_000):
        cfg = parse_text(BASE + f"\n[service]\ncpu_wakeup_us = {value}\n")
        assert cfg.cpu_wakeup_us == value
        assert cfg.to_json()["service"] == {"cpu_wakeup_us": value}
    for value, why in (("-2", "or -1 to leave"), ("2000000001", "0 to 2000000000"),
                       ('"fast"', "not a whole number"), ("1.5", "not a whole number"),
                       ("true", "not a whole number")):
        text = BASE + f"\n[service]\ncpu_wakeup_us = {value}\n"
        p = only(text)
        assert p.key == "service.cpu_wakeup_us" and why in f"{p.reason}; {p.fix}", p
        assert p.line == line_of(text, "cpu_wakeup_us")
    assert only(BASE + "\n[service]\ncpu_wakeup = 0\n").key == "service.cpu_wakeup"


@pytest.mark.parametrize("game,boxes,interpretations,ok", [
    ("q-poker", 7, "", False),                            # decks = "one" by default
    ("q-poker", 7, 'decks = "one"', False),
    ("q-poker", 7, 'decks = "several"', True),            # 89/2004 art. 1(1), Portuguese
    ("fortune-3-card-poker", 7, "", False),
    ("texas-holdem", 10, "", False),
    ("super-pan-9", 8, "", False),
])
def test_integrity_decks_checked_against_the_game(game, boxes, interpretations, ok):
    text = BASE.replace('"q-poker"', f'"{game}"').replace("boxes = 7", f"boxes = {boxes}")
    if game == "texas-holdem":
        text += '\n[holdem]\nsmall_blind = 1\nbig_blind = 2\nstructure = "limit"\n'
    if interpretations:
        text += f"\n[interpretations]\n{interpretations}\n"
    text += "\n[integrity]\ndecks = 2\n"
    assert parse_text(text.replace("decks = 2", "decks = 1")).integrity_decks == 1
    if ok:
        assert parse_text(text).integrity_decks == 2
        return
    p = only(text)
    assert p.key == "integrity.decks" and p.line == line_of(text, "decks = 2")
    assert "one 52-card deck" in p.reason and "decks = 1" in p.fix
    if game == "q-poker":
        assert '"several"' in p.fix


def test_syntax_error_line():
    text = BASE + "\n[api]\nport = 80 80\n"
    p = only(text)
    assert p.key == "(syntax)" and p.line == line_of(text, "80 80")


@pytest.mark.parametrize("deep", ["[" * 10_000, "{b = " * 3_000,
                                  "[" * 2_000 + "1" + "]" * 2_000])
def test_nesting_too_deep_is_a_config_error_at_its_line(deep):
    # tomllib recurses once per level: the RecursionError must become a named problem.
    text = BASE + '\n# "[[[" in a comment and "[" in a string = do not count\n' \
        + 'note = "[[[["\n' + "a = " + deep + "\n"
    p = only(text)
    assert p.key == "(syntax)" and p.line == line_of(text, "a = ")
    assert "nested too deeply" in p.reason and "levels" in p.reason


def test_dotted_key_too_deep_is_a_config_error_at_its_line():
    text = BASE + "\n[interpretations]\n" + ".".join(["k"] * 3_000) + ' = "x"\n'
    p = only(text)
    assert p.key == "(syntax)" and "nested too deeply" in p.reason
    assert p.line == line_of(text, "k.k.k")


def test_cli_check_on_a_deeply_nested_file(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text("a = " + "[" * 10_000)
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}:1: (syntax): nested too deeply" in out.stderr


def test_line_scanner_skips_multiline_strings():
    text = textwrap.dedent('''\
        [table]
        note = """
        boxes = 3
        """
        boxes = 7
        [devices."box-sensors"]
        port = "x"
        ''')
    lines = key_lines(text)
    assert lines[("table", "boxes")] == 5
    assert lines[("devices", "box-sensors", "port")] == 7


def test_missing_file(tmp_path):
    with pytest.raises(TablectlError, match="does not exist"):
        load_config(tmp_path / "none.toml")


def check_as_another_user(path):
    """`tablectl config check PATH` by a user the modes keep out: nobody when the tests run
    as root (root reads anything), else this user."""
    import os
    import shutil
    command = [sys.executable, "-m", "controller.cli", "config", "check", str(path)]
    if os.geteuid() == 0:
        if not shutil.which("setpriv"):
            pytest.skip("running as root without setpriv: cannot act as another user")
        command = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", *command]
    return subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                          env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT)})


@pytest.mark.parametrize("locked", ["file", "directory"])
def test_cli_check_of_a_file_this_user_may_not_read_says_the_way_out(locked):
    # As installed: /etc/tablectl is 0750 root:tablectl and table.toml 0640 (token hashes).
    import tempfile
    with tempfile.TemporaryDirectory() as top:   # in /tmp: pytest's tmp_path is 0700 above
        Path(top).chmod(0o755)
        etc = Path(top) / "tablectl"
        etc.mkdir()
        path = etc / "table.toml"
        path.write_text(BASE)
        path.chmod(0o000 if locked == "file" else 0o644)     # 000: not even for its owner
        etc.chmod(0o000 if locked == "directory" else 0o755)
        try:
            out = check_as_another_user(path)
        finally:
            etc.chmod(0o755)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stderr
    assert "Errno" not in out.stderr
    assert f"configuration {path} cannot be read" in out.stderr
    assert f"may not {'read ' + str(path) if locked == 'file' else 'enter ' + str(etc)}" \
        in out.stderr
    assert f"sudo -u tablectl tablectl config check {path}" in out.stderr


def test_other_read_errors_say_what_is_wrong(tmp_path, monkeypatch):
    import errno
    from pathlib import Path
    with pytest.raises(TablectlError) as info:
        load_config(tmp_path)
    assert str(info.value) == f"configuration {tmp_path} is a directory, not a file; give the " \
                              f"table's TOML file, e.g. {tmp_path / 'table.toml'}"
    latin = tmp_path / "latin.toml"
    latin.write_bytes(BASE.encode() + b'# caf\xe9\n')
    with pytest.raises(TablectlError, match=r"not UTF-8 text \(byte 0xe9 at offset \d+\); "
                                            "save it as UTF-8"):
        load_config(latin)

    def failing(self, *args, **kwargs):
        raise OSError(errno.EIO, "Input/output error", str(self))
    monkeypatch.setattr(Path, "read_text", failing)
    with pytest.raises(TablectlError) as info:
        load_config(latin)
    assert "Errno" not in str(info.value)
    assert str(info.value).startswith(f"configuration {latin} cannot be read: input/output "
                                      "error; ")


# --- tokens ---------------------------------------------------------------------------------

def test_tokens_hashed_and_matched():
    import hashlib
    digest = hash_token("correct horse battery staple")
    assert digest == "sha256:" + hashlib.sha256(b"correct horse battery staple").hexdigest()
    assert check_token("correct horse battery staple", digest)
    assert not check_token("correct horse battery stapler", digest)
    text = BASE + f'\n[api]\nlisten = "0.0.0.0"\n[api.tokens]\ndealer = "{digest}"\n' \
                  f'supervisor = "{hash_token("another long secret token")}"\n'
    api = parse_text(text).api
    assert api.listen == "0.0.0.0"
    assert api.role_for("correct horse battery staple") == "dealer"
    assert api.role_for("another long secret token") == "supervisor"
    assert api.role_for("guess") is None and api.role_for("") is None
    bad = only(BASE + '\n[api.tokens]\nowner = "x"\n')
    assert bad.key == "api.tokens.owner"


def test_cli_hash_token():
    run = lambda *a, **k: subprocess.run([sys.executable, "-m", "controller.cli", "config",
                                          "hash-token", *a], capture_output=True, text=True, **k)
    out = run(input="correct horse battery staple\n")
    assert out.returncode == 0 and out.stdout.strip() == hash_token("correct horse battery staple")
    new = run("--new", "--role", "dealer", input="")
    token = new.stderr.split("token: ")[1].split()[0]
    assert new.stdout.strip() == f'dealer = "{hash_token(token)}"'
    short = run(input="abc\n")
    assert short.returncode == 2 and "16 characters" in short.stderr



@pytest.mark.parametrize("token, words", [
    (" correct horse battery staple", "space"),
    ("correct horse battery staple\t", "U+0009"),
    ("ｃｏｒｒｅｃｔ ｈｏｒｓｅ ｂａｔｔｅｒｙ", "U+FF43"),      # typed with a full-width keyboard
    ("correct horse battery stäple", "U+00E4")])
def test_cli_hash_token_refuses_a_token_no_console_could_ever_send(token, words):
    """The API and the page take the token without its surrounding spaces, and a browser
    sends only plain ASCII in the Authorization header: such a token was hashed and stored,
    and every use of it was a 401. Refused now, naming why, and nothing is printed to store."""
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "hash-token"],
                         input=token + "\n", capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert words in out.stderr and "--new" in out.stderr

def test_cli_check_names_every_problem(tmp_path):
    path = tmp_path / "table.toml"
    path.write_text(BASE.replace('"q-poker"', '"q-pokr"') + "bauds = 1\n")
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and "Traceback" not in out.stderr
    assert f"{path}:3: table.game: 'q-pokr' is not allowed" in out.stderr
    assert "did you mean 'q-poker'" in out.stderr
    assert f"{path}:10: devices.shoe.bauds: unknown key" in out.stderr


def test_every_key_is_documented():
    from controller.config import SCHEMA
    doc = (ROOT / "docs" / "configuration.md").read_text()
    for section, keys in SCHEMA.items():
        title = "[" + section.replace(".*", ".<id>") + "]"
        assert title in doc, title
        for key, spec in keys.items():
            assert f"| `{key}` |" in doc, f"{section}.{key} is not in docs/configuration.md"


def doc_blocks(language=""):
    """The fenced blocks of docs/configuration.md in ``language`` ("": plain ``` blocks)."""
    blocks, open_as, lines = [], None, []
    for line in (ROOT / "docs" / "configuration.md").read_text().splitlines(keepends=True):
        if open_as is None and line.startswith("```"):
            open_as, lines = line[3:].strip(), []
        elif open_as is not None and line.rstrip() == "```":
            if open_as == language:
                blocks.append("".join(lines))
            open_as = None
        elif open_as is not None:
            lines.append(line)
    return blocks


def test_the_documented_error_output_is_the_real_one(tmp_path):
    etc = tmp_path / "etc" / "tablectl"
    etc.mkdir(parents=True)
    path = etc / "table.toml"
    path.write_text(textwrap.dedent("""\
        [table]
        id = "macau-07"
        game = "fortune-3-card-poker"
        mode = "shoe"
        boxes = 6

        [devices.shoe]
        class = "shoe"
        prot = "/dev/tablectl/shoe"

        [gpio.buttons]
        close_bets = 17
        confirm = "BOARD11"
        """))
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    shown = [b for b in doc_blocks() if b.startswith("tablectl: error:")]
    assert len(shown) == 1, "docs/configuration.md shows no `tablectl: error:` output"
    assert shown[0] == out.stderr.replace(str(path), "/etc/tablectl/table.toml")


def test_the_documented_toml_blocks_pass_the_check():
    """The ```toml blocks of docs/configuration.md together, at a Hold'em table (the [holdem]
    block is the doc's own), make a valid configuration."""
    text = BASE.replace('game = "q-poker"', 'game = "texas-holdem"').replace(
        "boxes = 7", "boxes = 10")
    blocks = doc_blocks("toml")
    assert any(b.startswith("[interpretations]") for b in blocks)
    parse_text(text + "\n" + "\n".join(blocks))


def test_journal_summary_has_no_token_hashes():
    import hashlib
    import json
    config = load_config(EXAMPLE)
    doc = json.loads(json.dumps(config.to_json()))
    assert doc["digest"] == hashlib.sha256(EXAMPLE.read_bytes()).hexdigest()
    assert doc["api"]["roles"] == ["dealer", "display", "supervisor"]
    assert "sha256:" not in json.dumps(doc)
    assert doc["devices"]["shoe"]["usb"] == [0x1d50, 0x6018, "SHOE-0042"]


# --- hostile input: a clear ConfigError, never another exception ----------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_scalars = st.one_of(st.booleans(), st.integers(-2**70, 2**70),
                     st.floats(allow_nan=True), st.text(max_size=12))
_values = st.recursive(_scalars,
                       lambda inner: st.one_of(st.lists(inner, max_size=4),
                                               st.dictionaries(st.text(max_size=8), inner,
                                                               max_size=4)), max_leaves=12)
_keys = st.sampled_from(["table", "chips", "limits", "holdem", "interpretations", "devices",
                         "gpio", "journal", "api", "integrity", "logging", "id", "game", "mode",
                         "boxes", "class", "port", "buttons", "light", "tokens", "min", "max",
                         "small_blind", "x"])
_docs = st.dictionaries(_keys, st.one_of(_values, st.dictionaries(_keys, _values, max_size=5)),
                        max_size=8)


@settings(max_examples=120, deadline=None)
@given(_docs)
def test_any_document_gives_a_config_or_a_config_error(doc):
    from controller.config import validate
    try:
        validate(doc, "")
    except ConfigError as exc:
        assert exc.problems and all(p.key and p.reason for p in exc.problems)


@settings(max_examples=80, deadline=None)
@given(st.text(max_size=300))
def test_any_text_gives_a_config_or_a_config_error(text):
    try:
        parse_text(BASE + text)
    except ConfigError as exc:
        assert exc.problems


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(["table", "devices", "gpio", "api", "limits", "interpretations"]),
       _keys, _values)
def test_one_wrong_value_in_a_good_file(section, key, value):
    """The example with one key of one section replaced by anything."""
    import tomllib
    from controller.config import validate
    doc = tomllib.loads(EXAMPLE.read_text())
    target = doc[section]
    if section == "devices":
        target = target["shoe"]
    target[key] = value
    try:
        validate(doc, EXAMPLE.read_text())
    except ConfigError as exc:
        assert exc.problems and all(p.key and p.reason for p in exc.problems)


def test_non_finite_and_absurd_numbers():
    text = BASE + "heartbeat_s = inf\nbaudrate = 1000000000000\n"
    found = {p.key: p for p in problems(text)}
    assert found["devices.shoe.heartbeat_s"].line == line_of(text, "inf")
    assert "115200" in found["devices.shoe.baudrate"].fix


@pytest.mark.parametrize("value, ok", [(0.01, False), (0.049, False), (0.05, True), (0.25, True),
                                       (10, True), (10.5, False)])
def test_heartbeat_within_the_protocols_range(value, ok):
    # Hello.heartbeat_ms is 50-10,000 ms; a device clamps anything else, so a host expecting
    # 10 ms heartbeats with a 30 ms timeout would lose the link over and over.
    text = BASE + f"heartbeat_s = {value}\nlink_timeout_s = {max(1.0, value * 4)}\n"
    if ok:
        assert parse_text(text, "table.toml").devices["shoe"].heartbeat_s == value
    else:
        p = {p.key: p for p in problems(text)}["devices.shoe.heartbeat_s"]
        assert p.reason == f"is {value}" and "0.05 to 10 seconds" in p.fix
        assert p.line == line_of(text, f"heartbeat_s = {value}")


def test_a_device_spec_refuses_a_heartbeat_the_protocol_cannot_carry():
    from drivers.spec import DeviceSpec
    with pytest.raises(TablectlError, match="heartbeat_s must be 0.05 to 10 seconds"):
        DeviceSpec(id="shoe", device_class="shoe", port="/dev/null", heartbeat_s=0.01,
                   link_timeout_s=0.03)
    assert DeviceSpec(id="shoe", device_class="shoe", port="/dev/null", heartbeat_s=0.05,
                      link_timeout_s=0.5).heartbeat_s == 0.05


@pytest.mark.parametrize("path", ["", "journal.db", "./var/journal.db", "/var/lib/tablectl/"])
def test_a_journal_path_that_is_empty_relative_or_a_directory_is_refused(path):
    """The service runs in /var/lib/tablectl, `tablectl journal` wherever it is typed: a
    relative path names a different file for each (an empty one is the directory itself)."""
    text = BASE + f'\n[journal]\npath = "{path}"\n'
    p = only(text)
    assert p.key == "journal.path" and p.line == line_of(text, "path = ")
    assert p.reason == f"is {path!r}"
    assert "absolute" in p.fix and "/var/lib/tablectl/journal.db" in p.fix


def test_an_absolute_journal_path_is_taken():
    assert str(parse_text(BASE + '\n[journal]\npath = "/srv/t1/journal.db"\n').journal_path) \
        == "/srv/t1/journal.db"


def test_one_token_for_two_roles_is_refused():
    """The console takes a token for the last role it matches: the dealer's token, pasted
    again as the supervisor's, would open the supervisor's console to every dealer."""
    h = "sha256:" + "ab" * 32
    text = BASE + f'\n[api.tokens]\ndealer = "{h}"\nsupervisor = "{h}"\n'
    p = only(text)
    assert p.key == "api.tokens.supervisor" and p.line == line_of(text, "supervisor = ")
    assert "dealer" in p.reason
    assert "hash-token --new --role supervisor" in p.fix


def test_one_serial_port_for_two_devices_is_refused():
    """The first to open it locks it; the other then never links, and the log says to check
    that it is plugged in."""
    text = BASE.replace('mode = "shoe"', 'mode = "shuffler"') + \
        '\n[devices.shuffler]\nclass = "shuffler"\nport = "/dev/tablectl/shoe"\n'
    p = only(text)
    assert p.key == "devices.shuffler.port"
    assert p.line == [n for n, line in enumerate(text.splitlines(), 1)
                      if line == 'port = "/dev/tablectl/shoe"'][-1]
    assert "devices.shoe" in p.reason and "its own port" in p.fix


def test_one_usb_device_named_by_two_sections_is_refused():
    usb = '\nclass = "{cls}"\ntransport = "usb"\nusb_vendor = 0x1d50\nusb_product = 0x6018\n'
    text = BASE + "\n[devices.shuffler]" + usb.format(cls="shuffler") + \
        "\n[devices.spare]" + usb.format(cls="shoe")
    p = only(text)
    assert p.key == "devices.spare" and "devices.shuffler" in p.reason
    assert "usb_serial" in p.fix


def test_a_usb_device_without_its_serial_beside_another_of_its_ids_is_refused():
    # The one without usb_serial finds two units of its ids whenever the other is plugged in,
    # and opens neither (it cannot tell which is its own): it never linked at that table.
    usb = '\nclass = "{cls}"\ntransport = "usb"\nusb_vendor = 0x1d50\nusb_product = 0x6018\n'
    text = BASE + "\n[devices.shuffler]" + usb.format(cls="shuffler") + \
        "\n[devices.dice]" + usb.format(cls="dice") + 'usb_serial = "DICE-7"\n'
    p = only(text)
    assert p.key == "devices.shuffler" and "devices.dice" in p.reason
    assert "usb_serial in devices.shuffler" in p.fix
    both = text.replace('class = "shuffler"\n', 'class = "shuffler"\nusb_serial = "SHUF-1"\n')
    assert parse_text(both).device("shuffler").usb_serial == "SHUF-1"


@pytest.mark.parametrize("port, words", [
    ("ttyUSB0", "/dev/ttyUSB0"), ("dev/tablectl/shoe", "/dev/tablectl/shoe"),
    ("  ", "a device path"), ("/dev/tty\\u0000USB0", "U+0000")])
def test_a_serial_port_that_is_no_path_nor_url_is_named(port, words):
    """config check passed port = "ttyUSB0": the daemon then tried a file of that name in
    its own working directory, and the shoe never linked. A serial port is a device path
    (absolute) or a pyserial URL such as socket://host:port."""
    text = BASE.replace('port = "/dev/tablectl/shoe"', f'port = "{port}"')
    p = only(text)
    assert p.key == "devices.shoe.port" and p.line == line_of(text, "port =")
    assert words in p.format()
    for good in ("/dev/serial/by-id/usb-FTDI-if00", "socket://10.0.0.7:4000",
                 "rfc2217://10.0.0.7:4001"):
        assert parse_text(BASE.replace("/dev/tablectl/shoe", good)).device("shoe").port == good


@pytest.mark.parametrize("backend", ["usb.backend.libusb1 get_backend", "usb.backend.libusb1",
                                     ":get_backend", "usb.backend.libusb1:"])
def test_a_usb_backend_not_written_as_module_function_is_named(backend):
    """config check passed it; the driver refused it only when the daemon opened the device."""
    text = BASE.replace('port = "/dev/tablectl/shoe"',
                        'transport = "usb"\nusb_vendor = 0x1d50\nusb_product = 0x6018\n'
                        f'usb_backend = "{backend}"')
    p = only(text)
    assert p.key == "devices.shoe.usb_backend" and p.line == line_of(text, "usb_backend")
    assert "module:function" in p.format() and "usb.backend.libusb1:get_backend" in p.format()
    good = text.replace(backend, "usb.backend.libusb1:get_backend")
    assert parse_text(good).device("shoe").usb_backend == "usb.backend.libusb1:get_backend"


def test_box_sensors_on_gpio_and_as_a_device_both_are_refused():
    """Each card put on a box would be reported twice, once by each: config check passed
    it. The sensors are one or the other."""
    text = BASE + textwrap.dedent("""\

        [devices.sensors]
        class = "box-sensors"
        port = "/dev/tablectl/sensors"

        [gpio]
        box_sensors = [5, 6, 12, 16, 20, 21, 25]
        """)
    p = only(text)
    assert p.key == "gpio.box_sensors" and p.line == line_of(text, "box_sensors =")
    assert "devices.sensors" in p.format() and "twice" in p.format()
    assert parse_text(text.replace("box_sensors = [5, 6, 12, 16, 20, 21, 25]\n", "")).gpio


# --- a layout the table's deck cannot deal ---------------------------------------------------

def test_a_q_poker_layout_one_deck_cannot_deal_is_refused_at_its_line_with_the_way_out():
    """89/2004 art. 1(1), 7: one 52-card deck deals three cards to at most 16 boxes and the
    croupier. A layout of 20 boxes under decks = "one" would take bets a full table could not
    be dealt; the check names the limit and both ways out. Under "several" it is a layout two
    decks deal (tests/test_config_decks_layout.py holds the limit the decks set)."""
    text = BASE.replace("boxes = 7", "boxes = 20")
    problem = only(text)
    assert problem.key == "table.boxes" and problem.line == line_of(text, "boxes = 20")
    assert "16" in problem.reason and "89/2004 art. 1(1)" in problem.reason
    assert "decks" in problem.fix and "16" in problem.fix
    several = parse_text(text + '\n[interpretations]\ndecks = "several"\n'
                         '\n[integrity]\ndecks = 2\n')
    assert several.boxes == 20


def test_a_table_built_for_a_layout_its_deck_cannot_deal_is_refused():
    """The same limit where a table is built (the daemon's own check, and recovery's)."""
    from controller.rules import get_game
    from controller.rules.base import RuleError
    from controller.table.machine import Table
    with pytest.raises(RuleError, match="at most 16 boxes"):
        Table("t", get_game("q-poker"), "shoe", layout_boxes=17)
    Table("t", get_game("q-poker"), "shoe", layout_boxes=17,
          interpretations={"decks": "several"})
    Table("t", get_game("q-poker"), "shoe", layout_boxes=16)


@pytest.mark.parametrize("dev_id", ["panel", "timer", "service", "table", "integrity",
                                    "croupier", "dealer", "supervisor", "display"])
def test_a_device_id_the_journal_gives_another_source_is_refused(dev_id):
    # The journal names where each record came from by the device's id, and by these names
    # the panel, the daemon's timer, the daemon, the table, the integrity monitor, the croupier
    # and the console's roles: a device so named would share their records, and its link
    # session be resumed from one of theirs.
    text = BASE.replace("[devices.shoe]", f"[devices.{dev_id}]")
    p = only(text)
    assert p.key == f"devices.{dev_id}" and p.line == line_of(text, f"[devices.{dev_id}]")
    assert "reserved" in p.reason and dev_id in p.reason, p.reason
    assert "[devices.shoe]" in p.fix, p.fix


def test_a_holdem_table_built_for_more_seats_than_one_deck_deals_is_refused():
    """11/2008 art. 1(1)(3): at most 22 players from one deck, also where a table is built."""
    from controller.rules import get_game
    from controller.rules.base import RuleError
    from controller.table.machine import Table
    holdem = {"small_blind": 5, "big_blind": 10, "structure": "no-limit", "rake": 0}
    with pytest.raises(RuleError, match="at most 22 players"):
        Table("t", get_game("texas-holdem"), "shoe", layout_boxes=23, holdem=holdem)
    Table("t", get_game("texas-holdem"), "shoe", layout_boxes=22, holdem=holdem)
