"""The simulator over TCP (pyserial's socket:// URL) and over USB (pyusb with the simulator's
backend, real bulk transfers), and several devices in one table."""
from __future__ import annotations

import errno

import pytest
import serial
import usb.core
import usb.util

from drivers.protocol import messages as m
from drivers.spec import DeviceSpec
from firmware_sim import SimulatedTable, SimulatorError, start_device
from firmware_sim.rawhost import RawHost
from firmware_sim.usb_backend import EP_IN, EP_OUT, PRODUCT_ID, VENDOR_ID, get_backend

FAST = 500.0


def find_usb(serial_number=None):
    kw = {}
    if serial_number is not None:
        kw["custom_match"] = lambda d: usb.util.get_string(d, d.iSerialNumber) == serial_number
    return usb.core.find(idVendor=VENDOR_ID, idProduct=PRODUCT_ID, backend=get_backend(), **kw)


# --- TCP ----------------------------------------------------------------------------------

def test_tcp_socket_url_with_pyserial_and_reconnect_on_the_same_url():
    dev = start_device("shuffler", transport="tcp", speed=FAST, seed=4)
    try:
        assert dev.port.startswith("socket://127.0.0.1:")
        port = serial.serial_for_url(dev.port, timeout=0.05)
        host = RawHost.over_serial(port)
        assert host.hello().serial == dev.serial
        assert host.command(m.Shuffle()) == 0
        assert host.wait_for(m.ShuffleDone).count == 52
        url = dev.port
        dev.disconnect()
        with pytest.raises(serial.SerialException):
            host.collect(0.3)                    # the peer closed the connection
        port.close()
        with pytest.raises(serial.SerialException):
            serial.serial_for_url(url, timeout=0.05)
        dev.reconnect()
        port = serial.serial_for_url(url, timeout=0.05)
        host = RawHost.over_serial(port)
        host.hello()
        assert host.command(m.DispenseCard()) == 0
        host.wait_for(m.CardDispensed)
        port.close()
    finally:
        dev.stop()


# --- USB ----------------------------------------------------------------------------------

def test_usb_layout_and_strings():
    dev = start_device("shoe", transport="usb", speed=FAST, seed=8)
    try:
        found = find_usb(dev.serial)
        assert found is not None
        assert (found.idVendor, found.idProduct) == (0x1D50, 0x6018)
        assert usb.util.get_string(found, found.iSerialNumber) == dev.serial
        assert usb.util.get_string(found, found.iManufacturer) == dev.identity.vendor
        found.set_configuration()
        cfg = found.get_active_configuration()
        intf = cfg[(0, 0)]
        assert intf.bInterfaceClass == 0xFF
        eps = {e.bEndpointAddress: e for e in intf}
        assert set(eps) == {EP_OUT, EP_IN}
        assert usb.util.endpoint_type(eps[EP_IN].bmAttributes) == usb.util.ENDPOINT_TYPE_BULK
        assert usb.util.endpoint_direction(eps[EP_IN].bEndpointAddress) == usb.util.ENDPOINT_IN
        assert eps[EP_OUT].wMaxPacketSize == 64
    finally:
        dev.stop()
    assert find_usb(dev.serial) is None


def test_usb_bulk_transfers_carry_the_protocol():
    dev = start_device("dice", transport="usb", speed=FAST)
    try:
        found = find_usb(dev.serial)
        found.set_configuration()
        usb.util.claim_interface(found, 0)
        with pytest.raises(usb.core.USBTimeoutError):
            found.read(EP_IN, 64, timeout=1)          # nothing yet: a timeout is no error
        host = RawHost.over_usb(found)
        assert host.hello().device_class == m.DEVICE_CLASS_CODES["dice"]
        dev.set_next_dice([2, 2, 5, 6])
        assert host.command(m.Shake()) == 0
        assert host.wait_for(m.DiceResult).dice == (2, 2, 5, 6)
        usb.util.dispose_resources(found)
    finally:
        dev.stop()


def test_usb_unplug_fails_transfers_and_the_device_is_found_again_by_serial():
    dev = start_device("shoe", transport="usb", speed=FAST, seed=9)
    try:
        found = find_usb(dev.serial)
        found.set_configuration()
        host = RawHost.over_usb(found)
        host.hello()
        dev.disconnect()
        assert find_usb(dev.serial) is None
        with pytest.raises(usb.core.USBError) as exc:
            found.read(EP_IN, 64, timeout=50)
        assert exc.value.errno == errno.ENODEV
        card = dev.draw()[0]["card"]                 # drawn while unplugged
        dev.reconnect()
        again = find_usb(dev.serial)
        assert again is not None
        again.set_configuration()
        host = RawHost.over_usb(again)
        host.hello()
        from controller.rules.cards import Card
        assert host.wait_for(m.CardDrawn).card == Card.parse(card).code
    finally:
        dev.stop()


def test_usb_reboot_reenumerates_with_a_boot_notice():
    dev = start_device("box-sensors", transport="usb", speed=FAST)
    try:
        found = find_usb(dev.serial)
        found.set_configuration()
        RawHost.over_usb(found).hello()
        dev.reboot()
        with pytest.raises(usb.core.USBError):
            found.read(EP_IN, 64, timeout=50)
        again = find_usb(dev.serial)
        again.set_configuration()
        host = RawHost.over_usb(again)
        # The notice was sent before this handle was opened; the next hello works as usual.
        info = host.hello()
        assert info.units == 7
        dev.place_card(4)
        assert host.wait_for(m.CardPlaced).box == 3
    finally:
        dev.stop()


def test_backend_is_reachable_by_its_configuration_string():
    import importlib
    mod, _, fn = "firmware_sim.usb_backend:get_backend".partition(":")
    backend = getattr(importlib.import_module(mod), fn)()
    assert backend is get_backend()


# --- a table of devices --------------------------------------------------------------------

def test_table_runs_several_devices_and_hands_out_ready_specs():
    with SimulatedTable(seed=11, speed=FAST) as table:
        shoe = table.add("shoe")
        shuffler = table.add("shuffler", transport="tcp")
        boxes = table.add("box-sensors", transport="usb")
        spare = table.add("shoe", name="spare-shoe")
        assert set(table.devices) == {"shoe", "shuffler", "box-sensors", "spare-shoe"}
        assert shoe.serial != spare.serial and shoe.port != spare.port
        spec = shoe.spec()
        assert isinstance(spec, DeviceSpec)
        assert (spec.transport, spec.port, spec.device_class) == ("serial", shoe.port, "shoe")
        assert shuffler.spec().port.startswith("socket://")
        uspec = boxes.spec(heartbeat_s=0.1)
        assert (uspec.transport, uspec.usb_vendor, uspec.usb_product, uspec.usb_serial,
                uspec.usb_backend, uspec.heartbeat_s) == (
            "usb", 0x1D50, 0x6018, boxes.serial, "firmware_sim.usb_backend:get_backend", 0.1)
        with pytest.raises(SimulatorError, match="already running"):
            table.add("shoe")
        with pytest.raises(SimulatorError, match="draw is an action of a shoe"):
            shuffler.draw()
        # Same seed, same class: the two shoes hold the same deck order.
        assert [shoe.draw()[0]["card"] for _ in range(5)] == [
            spare.draw()[0]["card"] for _ in range(5)]
    with pytest.raises(SimulatorError, match="stopped"):
        shoe.draw()


def test_wait_for_and_emitted():
    dev = start_device("shuffler", speed=FAST)
    try:
        port = serial.Serial(dev.port, timeout=0.05)
        host = RawHost.over_serial(port)
        host.hello()
        host.command(m.Shuffle())
        done = dev.wait_for("shuffle_done", timeout=5)
        assert done[0]["count"] == 52
        with pytest.raises(SimulatorError, match="0 of 1 'jam'"):
            dev.wait_for("jam", timeout=0.1)
        assert [e["kind"] for e in dev.emitted()] == ["shuffle_started", "shuffle_done"]
        port.close()
    finally:
        dev.stop()


@pytest.mark.parametrize("transport", ["pty", "usb"])
def test_a_device_rebooted_while_unplugged_stays_unplugged_until_plugged_back(transport):
    """A reboot (a power cycle of the unit) does not plug its cable back in: the disconnect
    fault keeps its effect until reconnect, over USB as over a serial adapter."""
    dev = start_device("box-sensors", transport=transport, speed=FAST)
    try:
        dev.disconnect()
        dev.reboot()
        assert dev.status()["connected"] is False
        if transport == "usb":
            assert find_usb(dev.serial) is None
        dev.reconnect()
        assert dev.status()["connected"] is True
        if transport == "usb":
            found = find_usb(dev.serial)
            found.set_configuration()
            assert RawHost.over_usb(found).hello().units == 7
    finally:
        dev.stop()
