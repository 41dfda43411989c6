"""tablectl: the controller of a casino table's shuffler, shoe, dice agitator and lights."""

__version__ = "0.1.0"
