"""The one error type of the rule engine.

A RuleError is raised for anything a person or a device can get wrong (an unknown card, a bet
on a box that does not exist, a raise below the minimum). Its message names the problem and the
way out; callers print it as is, never a traceback, and nothing has been changed when it is
raised.
"""
from controller.errors import TablectlError


class RuleError(TablectlError, ValueError):
    """Input that the regulation or the table layout does not allow."""
