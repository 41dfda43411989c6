"""Wire protocols: framing, typed messages and codecs (bytes in, typed messages out; no I/O).

The simulator and the drivers share these: ``from drivers.protocol import messages as m`` and
``get_codec("tablectl", receive_from="host")`` on the device side (``"device"`` on the host).
"""
from .codec import Codec, CodecError, Received, Rejected, TablectlCodec, get_codec
from .framing import MAX_FRAME, MAX_PAYLOAD, Deframer, crc8, crc16, encode_frame

__all__ = ["Codec", "CodecError", "Received", "Rejected", "TablectlCodec", "get_codec",
           "MAX_FRAME", "MAX_PAYLOAD", "Deframer", "crc8", "crc16", "encode_frame"]
