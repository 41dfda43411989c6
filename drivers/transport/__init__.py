"""Transports: move bytes to and from one device, nothing more (framing is the codec's job).

A :class:`Transport` is opened, read and written from asyncio; blocking libraries (pyserial,
pyusb) run in a reader thread that feeds the event loop, the shape of ``serial.threaded``.
The reader thread, rather than pyserial-asyncio-fast, is used because it serves every pyserial
URL handler alike: ``rfc2217://`` ports have no file descriptor to watch.
"""
from .base import Transport, TransportClosed, TransportError
from .serialport import SerialTransport
from .usbport import UsbTransport


def make_transport(spec) -> Transport:
    """The transport a :class:`drivers.spec.DeviceSpec` names."""
    if spec.transport == "usb":
        return UsbTransport(vendor=spec.usb_vendor, product=spec.usb_product,
                            serial=spec.usb_serial, backend=spec.usb_backend)
    return SerialTransport(spec.port, baudrate=spec.baudrate)


__all__ = ["Transport", "TransportClosed", "TransportError", "SerialTransport", "UsbTransport",
           "make_transport"]
