"""The unit starts the table after the system's time synchronisation where the system offers
it, and stays a unit systemd-analyze verifies (as tests/test_systemd.py checks it)."""
from test_systemd import UNIT, analyze, needs_analyze, unit_options


def test_the_unit_is_ordered_after_time_synchronisation():
    opts = unit_options()
    after = " ".join(opts.get("After", [])).split()
    # Ordered after both time targets: time-set (the clock set from timesyncd's saved
    # timestamp, at once) and time-sync (synchronised, which waits only where a service such
    # as systemd-time-wait-sync delays it: docs/install.md).
    assert {"time-set.target", "time-sync.target"} <= set(after)
    # Not pulled in: systemd.special(7) says a service that needs accurate time is ordered
    # after time-sync.target "but not pull it in" (the NTP service does), and a table whose
    # clock never synchronises must still start.
    pulls = " ".join(v for k in ("Wants", "Requires", "BindsTo", "Requisite")
                     for v in opts.get(k, []))
    assert "time-sync.target" not in pulls and "time-set.target" not in pulls


@needs_analyze
def test_the_unit_with_its_time_ordering_verifies(tmp_path):
    result = analyze(tmp_path, UNIT.read_text())
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "" and result.stderr.strip() == "", result.stderr
    assert "time-sync.target" in UNIT.read_text()
