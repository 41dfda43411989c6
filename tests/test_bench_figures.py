"""The bench's figures: what their Pi notes say."""
from controller.bench.figures import wire_pi_note, wire_time_s


def test_the_pi_note_of_a_wire_time_figure_gives_the_estimate_in_wire_times():
    wire = wire_time_s(12)
    assert "about 4.0 times the wire time" in wire_pi_note(4 * wire, wire)
    assert "about 0.5 times" in wire_pi_note(wire / 2, wire)
    assert wire_pi_note(float("nan"), wire) == "target: below 1"
