"""The table: one round machine per table, its dealing tracker and its public view."""
from .machine import COMMANDS, STATES, TRANSITIONS, Command, CommandSpec, Table
from .secrecy import CardVault, PublicEvent, Revealed, SecrecyError

__all__ = ["COMMANDS", "STATES", "TRANSITIONS", "CardVault", "Command", "CommandSpec",
           "PublicEvent", "Revealed", "SecrecyError", "Table"]
