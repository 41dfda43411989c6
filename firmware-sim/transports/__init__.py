"""Byte transports of a simulated device: pseudo-terminal and TCP (USB: usb_backend)."""
