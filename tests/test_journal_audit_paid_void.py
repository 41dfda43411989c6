"""`journal rounds` on a journal holding a round settled and paid and voided afterwards (an
earlier version took such a void): the list names it, with both records, for whoever audits
the journal, rather than showing the round as void alone."""
from test_journal_audit import tablectl
from test_table_void_settled import fault, faulty, paid, voided_as_before  # noqa: F401


def test_a_paid_round_voided_afterwards_is_named_by_journal_rounds(faulty, monkeypatch,
                                                                    tmp_path):
    run = paid(tmp_path, "q-poker")
    fault(run)
    voided_as_before(run, monkeypatch)
    closes = list(run.journal.records(kinds=["round_close"]))
    assert [c.payload["outcome"] for c in closes] == ["settled", "void"]
    run.journal.close()
    out = tablectl("journal", "rounds", "--journal", str(tmp_path / "journal.db"))
    assert out.returncode == 0, out.stderr
    line = [ln for ln in out.stdout.splitlines() if ln.startswith("Paid and void:")]
    assert line == [f"Paid and void: round 1 was settled and paid (record {closes[0].seq}) "
                    f"and voided afterwards (record {closes[1].seq}): the journal says both; "
                    "what was paid is the settlement (docs/controller.md, A round settled "
                    "and paid)"], out.stdout


def test_a_round_only_settled_or_only_voided_is_no_finding(tmp_path):
    run = paid(tmp_path, "q-poker")
    run.command("next_round")
    run.command("void_round", "supervisor", reason="test")
    run.journal.close()
    out = tablectl("journal", "rounds", "--journal", str(tmp_path / "journal.db"))
    assert out.returncode == 0, out.stderr
    assert "Paid and void" not in out.stdout and " void" in out.stdout
