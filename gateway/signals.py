"""SIGTERM and SIGINT: the first asks for a clean stop, a late second one forces.

A signal repeated within ``REPEAT_WINDOW_SECONDS`` of the first is the same
request, not an impatient second Ctrl-C: signalling `make run`'s process
group (what systemd and Docker do) delivers SIGTERM twice, once to the
gateway and once forwarded by make. Taking that as "force" would skip the
shutdown and leave the embedded PostgreSQL running. Only a signal after the
window forces an exit.

The rule holds until the process ends, through interpreter exit included:
once the stop is done, :func:`ignore_late_repeats` makes the handlers
SIG_IGN, because interpreter shutdown resets Python-level handlers to the
default, and a repeat landing there would kill the process by signal.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import Callable
from types import FrameType
from typing import Final

log = logging.getLogger("gateway")

REPEAT_WINDOW_SECONDS: Final = 2.0
STOP_SIGNALS: Final = (signal.SIGINT, signal.SIGTERM)


class StopRequests:
    """Reads successive stop signals: stop, repeat (ignored), or force."""

    STOP: Final = "stop"
    REPEAT: Final = "repeat"
    FORCE: Final = "force"

    def __init__(
        self,
        window: float = REPEAT_WINDOW_SECONDS,
        monotonic: Callable[[], float] = time.monotonic,
    ) -> None:
        self.window = window
        self.monotonic = monotonic
        self.first_at: float | None = None

    def on_signal(self) -> str:
        now = self.monotonic()
        if self.first_at is None:
            self.first_at = now
            return self.STOP
        if now - self.first_at <= self.window:
            return self.REPEAT
        return self.FORCE


def ignore_late_repeats() -> None:
    """After a clean stop: a stop signal still arriving has nothing left to stop.

    CPython's finalization puts SIG_DFL back wherever a Python handler was
    installed (it leaves SIG_IGN alone), so a repeat arriving during interpreter
    exit would end a cleanly stopped process with -SIGTERM.
    """
    for sig in STOP_SIGNALS:
        signal.signal(sig, signal.SIG_IGN)


class StopSignals:
    """The gateway's stop signals: ``stopped`` is set on the first one.

    Plain ``signal.signal`` handlers rather than ``loop.add_signal_handler``:
    the loop puts back the default handlers when it closes, and a repeat
    arriving during interpreter exit would then kill the process by signal.
    These stay until the process ends, and wake the loop through
    ``call_soon_threadsafe`` while it runs.
    """

    def __init__(self, on_force: Callable[[], None] = lambda: None) -> None:
        self.stopped = asyncio.Event()
        self.requests = StopRequests()
        self._on_force = on_force
        self._loop = asyncio.get_running_loop()
        for sig in STOP_SIGNALS:
            signal.signal(sig, self._handler)

    def _handler(self, signum: int, frame: FrameType | None) -> None:
        sig = signal.Signals(signum)
        answer = self.requests.on_signal()
        if answer == StopRequests.STOP:
            if not self._loop.is_closed():
                self._loop.call_soon_threadsafe(self.stopped.set)
        elif answer == StopRequests.REPEAT:
            log.info("%s again within %ss: already stopping", sig.name, self.requests.window)
        else:
            # Well after the first: say what is still running, then leave at
            # once. An embedded database left running is stopped by the next start.
            log.warning("%s again: leaving without a clean shutdown", sig.name)
            self._on_force()
            os._exit(1)
