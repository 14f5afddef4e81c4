"""Errors every layer raises, and the bad-record policy shared by all readers.

A :class:`UserError` is the user's to fix (exit code 1, a message, no traceback); anything
else escaping the CLI is an internal error (exit code 2).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import IO


class UserError(Exception):
    """An error caused by input or arguments; the CLI prints it and exits with code 1."""


class InputError(UserError):
    """A bad record in an input file: names the file, the line (1-based) and the reason."""

    def __init__(self, file: str | Path, line: int | None, reason: str) -> None:
        self.file = str(file)
        self.line = line
        self.reason = reason
        where = f"{self.file}:{line}" if line is not None else self.file
        super().__init__(f"{where}: {reason}")


class OnError(Enum):
    """What a reader does with a bad record: ``stop`` (the default) or ``skip`` it."""

    STOP = "stop"
    SKIP = "skip"


@dataclass
class BadRecords:
    """Collects bad records under an :class:`OnError` policy.

    Under ``STOP`` the first report raises :class:`InputError`. Under ``SKIP`` each bad
    record is appended, with its reason, to the dead-letter file (JSON Lines) if one is
    given, counted, and the reader goes on with the next record, so nothing good is lost.
    """

    policy: OnError = OnError.STOP
    dead_letter: Path | None = None
    count: int = 0
    first: list[InputError] = field(default_factory=list)
    _out: IO[str] | None = field(default=None, repr=False)

    @classmethod
    def of(cls, on_error: str, dead_letter: str | Path | None = None) -> BadRecords:
        """A collector for the policy named ``on_error`` (``stop`` or ``skip``), writing
        to ``dead_letter`` (only under ``skip``)."""
        try:
            policy = OnError(on_error)
        except ValueError:
            raise UserError(f"on_error is stop or skip, not {on_error!r}") from None
        if dead_letter is not None and policy is OnError.STOP:
            raise UserError("a dead-letter file takes the bad records that on_error skip skips")
        return cls(policy, None if dead_letter is None else Path(dead_letter))

    def report(self, file: str | Path, line: int | None, reason: str, record: str = "") -> None:
        """Handle one bad record: raise under STOP, else log it to the dead-letter file."""
        error = InputError(file, line, reason)
        if self.policy is OnError.STOP:
            raise error
        self.count += 1
        if len(self.first) < 20:
            self.first.append(error)
        if self.dead_letter is not None:
            if self._out is None:
                self.dead_letter.parent.mkdir(parents=True, exist_ok=True)
                self._out = self.dead_letter.open("a", encoding="utf-8")
            entry = {"file": str(file), "line": line, "reason": reason, "record": record}
            self._out.write(json.dumps(entry, ensure_ascii=False) + "\n")
            self._out.flush()

    def close(self) -> None:
        """Close the dead-letter file, if one was opened."""
        if self._out is not None:
            self._out.close()
            self._out = None
