"""Set-up shared by the hardware-in-the-loop tests that drive a :class:`controller.rig.Rig`."""


def open_for_bets(rig) -> None:
    """Start the simulated devices and the real daemon, wait for their links, open the table
    (declaring the deck ready where the mode asks for it) and wait until bets are open."""
    rig.start_devices()
    rig.start_controller()
    rig.wait_links()
    rig.must("open_table", "supervisor")
    if rig.state() == "shuffling":
        rig.must("deck_ready")
    assert rig.wait_state("bets_open") == "bets_open"
