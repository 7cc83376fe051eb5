"""SIGTERM and SIGINT during a batch: stop within seconds, keep what was written.

`StopRequest` is the flag the batch looks at (flows/extract_batch.py). `stop_on_signals()` sets it
from SIGTERM/SIGINT while a command runs: the batch starts no new document, gives the ones in
flight a grace period, writes its rows and closes its database connections; the CLI then exits
with 128 + the signal number (143 for SIGTERM, 130 for SIGINT). A second signal while it winds
down exits at once with the same status (rows already written stay written: each is fsynced).

A watchdog backs this up: `exit_after_s` after the first signal the process exits with that status
whatever it is doing (a Prefect task runner that waits for its threads, a stuck native call).

The exit after a stop goes through `hard_exit`, which flushes the standard streams and ends the
process without running interpreter teardown: a document abandoned in a worker thread (an OCR
call in native code) must neither delay the exit nor abort it (`terminate called without an
active exception` when native threads are torn down under it).
"""
from __future__ import annotations

import os
import signal
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

__all__ = ["StopRequest", "stop_on_signals", "exit_status", "hard_exit", "SIGNALS"]

SIGNALS = (signal.SIGTERM, signal.SIGINT)
EXIT_AFTER_S = 30.0
"""After the first signal, the latest the process exits (the batch's own grace period is shorter)."""


class StopRequest:
    """Set once, by a signal handler or a caller; read by the batch loop."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self.signum: int | None = None

    def set(self, signum: int | None = None) -> None:
        if self.signum is None:
            self.signum = signum
        self._event.set()

    def is_set(self) -> bool:
        return self._event.is_set()

    @property
    def name(self) -> str:
        return signal.Signals(self.signum).name if self.signum else "a stop request"


def exit_status(signum: int | None) -> int:
    """The shell's convention: 128 + signal number (130 SIGINT, 143 SIGTERM)."""
    return 128 + (signum or signal.SIGTERM)


def hard_exit(status: int) -> None:
    """Flush stdout/stderr and end the process now (see the module docstring)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(status)


@contextmanager
def stop_on_signals(stop: StopRequest, *, exit_after_s: float = EXIT_AFTER_S) -> Iterator[StopRequest]:
    """While inside: SIGTERM/SIGINT set `stop` (the first time; the watchdog starts) or exit at once
    (the second time). Only the main thread can install handlers; elsewhere this does nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield stop
        return

    def handler(signum: int, _frame: object) -> None:
        if stop.is_set():
            print(f"docassay: {signal.Signals(signum).name} again: exiting now", file=sys.stderr)
            hard_exit(exit_status(stop.signum))
        stop.set(signum)
        watchdog = threading.Timer(exit_after_s, hard_exit, (exit_status(signum),))
        watchdog.daemon = True
        watchdog.start()
        print(f"docassay: {signal.Signals(signum).name}: stopping; documents in flight may finish, "
              "rows already written are kept", file=sys.stderr)

    previous = {s: signal.signal(s, handler) for s in SIGNALS}
    try:
        yield stop
    finally:
        for s, h in previous.items():
            signal.signal(s, h)
