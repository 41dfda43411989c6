"""Set-up shared by the hardware-in-the-loop tests that drive a :class:`controller.rig.Rig`."""
from controller.config import hash_token
from controller.rig import Rig


class ApiRig(Rig):
    """A rig whose table.toml also opens the console API on ``port`` (set it before the
    devices start), with a token for each role of ``tokens`` (role -> token)."""

    port = 0
    tokens: dict[str, str] = {}

    def write_config(self) -> None:
        super().write_config()
        with open(self.config_path, "a", encoding="utf-8") as f:
            f.write(f'\n[api]\nlisten = "127.0.0.1"\nport = {self.port}\n\n[api.tokens]\n')
            f.writelines(f'{role} = "{hash_token(token)}"\n'
                         for role, token in self.tokens.items())


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


def times_logged(rig, event: str, device: str) -> int:
    """How many lines of the daemon's JSON log are ``event`` about ``device``."""
    import json

    n = 0
    for line in rig.log_path.read_text().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        n += doc.get("event") == event and doc.get("device") == device
    return n
