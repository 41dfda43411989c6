"""The wire codec: time to decode one frame against the time the frame takes on the wire.

Frames are the ones a table sends most (a card drawn, a dice result, a jam), encoded by the
codec itself and fed back to a host-side decoder one frame at a time, the way bytes arrive
from a port. The baseline is the frame's time on a 115,200-baud serial line (8N1): the codec
must be far faster than the line it reads.
"""
from __future__ import annotations

import time

from .figures import Figure, wire_time_s

NAME = "codec"
TITLE = "Codec: decode time per frame against its time on a 115,200-baud line"
KEYS = ("codec.card", "codec.dice", "codec.jam")


def frames() -> dict[str, bytes]:
    """One encoded frame of each kind the latency figures use."""
    from drivers.protocol import messages as m
    from drivers.protocol.codec import TablectlCodec

    enc = TablectlCodec("host")
    return {"card": enc.encode(m.CardDrawn(card=37, face_up=False), seq=17),
            "dice": enc.encode(m.DiceResult(dice=(3, 5, 1, 6)), seq=18),
            "jam": enc.encode(m.Jam(where="gate"), seq=19)}


def decode_time(frame: bytes, n: int) -> float:
    """Seconds per frame to decode ``n`` copies fed one frame at a time."""
    from drivers.protocol.codec import Received, TablectlCodec

    dec = TablectlCodec("device")
    t0 = time.perf_counter()
    for _ in range(n):
        out = dec.feed(frame)
    took = time.perf_counter() - t0
    if not (len(out) == 1 and isinstance(out[0], Received)):
        raise RuntimeError(f"the decoder did not give back the frame: {out}")
    return took / n


def run(quick: bool = False) -> list[Figure]:
    n = 2_000 if quick else 50_000
    out = []
    for kind, frame in frames().items():
        per = decode_time(frame, n)
        wire = wire_time_s(len(frame))
        out.append(Figure(
            f"codec.{kind}", f"decode one {kind} frame ({len(frame)} bytes)", per, "s",
            wire, f"the frame's time at 115,200 baud ({len(frame)} bytes x 10 bits)", "lower",
            pi_note="ten times slower still leaves the decoder far ahead of the line",
            extra={"frames_decoded": n, "frame_bytes": len(frame),
                   "frames_per_s": 1 / per, "wire_frames_per_s": 1 / wire}))
    return out
