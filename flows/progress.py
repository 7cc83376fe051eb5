"""Progress on a terminal: one updating line on a TTY, a line every tenth of the batch otherwise."""
from __future__ import annotations

import sys
import threading
import time
from collections import Counter
from typing import TextIO

from docassay.flows.results import Row
from docassay.infra.display import printable


class Progress:
    def __init__(self, total: int, *, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.total = total
        self.done = 0
        self.counts: Counter[str] = Counter()
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.t0 = time.perf_counter()
        self._lock = threading.Lock()
        self._next_mark = 0.1

    def update(self, row: Row) -> None:
        with self._lock:
            self.done += 1
            self.counts[row.status] += 1
            if self.quiet:
                return
            frac = self.done / max(self.total, 1)
            if self.tty:
                self.stream.write("\r\x1b[K" + self._line(row))
                self.stream.flush()
            elif frac + 1e-9 >= self._next_mark or self.done == self.total:
                self.stream.write(self._line(row) + "\n")
                self.stream.flush()
                while self._next_mark <= frac:
                    self._next_mark += 0.1

    def _line(self, row: Row) -> str:
        rate = self.done / max(time.perf_counter() - self.t0, 1e-6)
        counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        name = row.source.rsplit("/", 1)[-1]
        name = printable(name)[:40]
        return f"[{self.done}/{self.total}] {rate:.1f} doc/s {counts}  {name}"

    def close(self) -> None:
        if not self.quiet and self.tty:
            self.stream.write("\n")
            self.stream.flush()
