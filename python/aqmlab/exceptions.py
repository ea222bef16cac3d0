"""Exceptions raised by aqmlab."""

from __future__ import annotations


class AqmlabError(Exception):
    """Base class of every error aqmlab raises on purpose."""


class ConfigError(AqmlabError, ValueError):
    """A scenario (or a file, or an override) is not valid.

    ``problems`` lists every problem found as ``(key_path, message)`` pairs;
    the key path is empty for problems of the file as a whole.
    """

    def __init__(self, problems: list[tuple[str, str]]):
        self.problems = [(str(p), str(m)) for p, m in problems]
        super().__init__("\n".join(self.lines()))

    def lines(self) -> list[str]:
        """One line per problem, as the command line prints them."""
        return [f"{p}: {m}" if p else m for p, m in self.problems]


class ModelError(AqmlabError, ValueError):
    """An analytic model was given parameters outside its domain (for
    example a queue-dynamics model whose flows cannot fill the link), or a
    value it cannot compute. The message names the parameter, its value and
    what is allowed."""
