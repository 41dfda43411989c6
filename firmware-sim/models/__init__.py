"""Firmware models of the four device classes: pure state machines, no clock, no I/O."""
from .base import Emit, FirmwareModel, Refused, SimulatorError, TIMINGS
from .box_sensors import BoxSensorsModel
from .dice import DiceModel
from .shoe import ShoeModel
from .shuffler import ShufflerModel

MODELS: dict[str, type[FirmwareModel]] = {
    "shuffler": ShufflerModel,
    "shoe": ShoeModel,
    "dice": DiceModel,
    "box-sensors": BoxSensorsModel,
}

__all__ = ["Emit", "FirmwareModel", "Refused", "SimulatorError", "TIMINGS", "MODELS",
           "ShufflerModel", "ShoeModel", "DiceModel", "BoxSensorsModel"]
