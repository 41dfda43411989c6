"""Transports: move bytes to and from one device, nothing more (framing is the codec's job).

A :class:`Transport` is opened, read and written from asyncio. A local serial port is read by
the event loop on pyserial's non-blocking descriptor (one wake-up per frame, nothing polling
while idle). Where there is no such descriptor (pyserial's URL handlers: ``rfc2217://``
transforms its bytes; pyusb) a reader thread feeds the event loop, the shape of
``serial.threaded``; one interface serves both, which pyserial-asyncio-fast would not.
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
