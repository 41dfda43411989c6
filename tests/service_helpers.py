"""Helpers for the tests that run the daemon's service in their own event loop."""
# A Q Poker table dealt from a shuffler on the serial port {port}, journaled at {journal}.
SERIAL_SHUFFLER = """
[table]
id = "sf-1"
game = "q-poker"
mode = "shuffler"
boxes = 7

[devices.shuffler]
class = "shuffler"
transport = "serial"
port = "{port}"

[journal]
path = "{journal}"
"""

