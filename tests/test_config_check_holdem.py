"""`tablectl config check` on a Texas Hold'em table names its [holdem] stakes: the blinds
(11/2008 art. 4(3), 5), the betting structure (art. 11) and the commission (art. 16)."""
import subprocess
import sys
import textwrap

TABLE = textwrap.dedent("""\
    [table]
    id = "t1"
    game = "{game}"
    boxes = {boxes}
    """)


def check(tmp_path, game="texas-holdem", boxes=10, holdem=""):
    path = tmp_path / "table.toml"
    path.write_text(TABLE.format(game=game, boxes=boxes) + holdem)
    out = subprocess.run([sys.executable, "-m", "controller.cli", "config", "check", str(path)],
                         capture_output=True, text=True)
    assert "Traceback" not in out.stderr
    return out, path


def stakes_lines(out, path):
    return [ln for ln in out.stdout.splitlines() if ln.startswith(f"{path}: [holdem]")]


def test_limit_table_with_a_commission(tmp_path):
    out, path = check(tmp_path, holdem=textwrap.dedent("""
        [holdem]
        small_blind = 5
        big_blind = 10
        structure = "limit"
        rake_percent = 3.25
        """))
    assert out.returncode == 0, out.stderr
    assert "valid" in out.stdout
    [line] = stakes_lines(out, path)
    assert "small blind 5," in line and "big blind 10 " in line
    assert "structure limit" in line
    assert "rake 3.25%" in line              # the rate as written, not a binary fraction


def test_no_limit_table_without_a_commission(tmp_path):
    out, path = check(tmp_path, holdem=textwrap.dedent("""
        [holdem]
        small_blind = 25
        big_blind = 50
        structure = "no-limit"
        """))
    assert out.returncode == 0, out.stderr
    [line] = stakes_lines(out, path)
    assert "small blind 25," in line and "big blind 50 " in line
    assert "structure no-limit" in line and "no rake" in line


def test_other_games_print_no_stakes_line(tmp_path):
    out, path = check(tmp_path, game="q-poker", boxes=7)
    assert out.returncode == 0, out.stderr
    assert stakes_lines(out, path) == [] and "holdem" not in out.stdout


def test_wrong_stakes_are_named_and_nothing_is_summarised(tmp_path):
    holdem = textwrap.dedent("""
        [holdem]
        small_blind = 20
        big_blind = 10
        structure = "limit"
        """)
    out, path = check(tmp_path, holdem=holdem)
    assert out.returncode == 2
    assert "holdem.small_blind" in out.stderr
    assert out.stdout == ""


def test_a_layout_one_deck_cannot_deal_is_refused_naming_the_key_and_the_bound(tmp_path):
    """11/2008 art. 1(1)(3), 2(2): the house may have more than 10 player seats, but one deck
    deals at most 22 players. boxes = 1000000 passed the check (and the console would have
    drawn a million seats); 23 and above are refused at table.boxes with the way out."""
    stakes = textwrap.dedent("""
        [holdem]
        small_blind = 5
        big_blind = 10
        structure = "no-limit"
        """)
    for boxes in (23, 1000000):
        out, path = check(tmp_path, boxes=boxes, holdem=stakes)
        assert out.returncode == 2, out.stdout
        assert f"{path}:4: table.boxes" in out.stderr, out.stderr
        assert "at most 22 players" in out.stderr and "art. 1(1)(3)" in out.stderr
        assert "set boxes to the player seats the table deals, 10 to 22" in out.stderr
        assert out.stdout == ""
    out, path = check(tmp_path, boxes=22, holdem=stakes)
    assert out.returncode == 0 and "22 boxes" in out.stdout, out.stderr
