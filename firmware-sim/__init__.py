"""The firmware simulator: every tablectl device class, with no hardware.

Start devices with :func:`start_device` or a :class:`SimulatedTable`; the host opens
``device.port`` (a pseudo-terminal, a ``socket://`` URL) or finds it over USB through
``firmware_sim.usb_backend:get_backend``. See firmware-sim/README.md.
"""
from .faults import FAULT_NAMES, FAULTS, TRIGGER_KINDS
from .models import SimulatorError
from .scenario import Scenario, ScenarioError, load_scenario, parse_scenario
from .table import DEVICE_CLASSES, TRANSPORTS, SimulatedDevice, SimulatedTable, start_device

__all__ = ["start_device", "SimulatedDevice", "SimulatedTable", "SimulatorError", "Scenario",
           "ScenarioError", "load_scenario", "parse_scenario", "FAULTS", "FAULT_NAMES",
           "TRIGGER_KINDS", "DEVICE_CLASSES", "TRANSPORTS"]
