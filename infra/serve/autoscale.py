"""Optional autoscaling: pick the number of active ranks from the work waiting and the work announced.

Demand = tokens queued at the server + tokens that clients announced they will send soon
(`POST /v1/demand`; a pipeline knows which waiting documents are of a new format and need the
model, and how many tokens each will cost, before it calls). Capacity = the measured throughput
per active rank. The policy wants the demand served within `target_s`:

    wanted = clamp(ceil(demand / (tokens_per_s_per_rank * target_s)), min_ranks, max_ranks)

It scales up at once, and down only after `wanted` has stayed below the active count for
`down_after_s` (a short lull must not shrink the server just before the next burst). `decide` is
pure; `Autoscaler` is the thread that feeds it and asks the engine to scale.
"""
from __future__ import annotations

import logging
import math
import threading
import time
from dataclasses import asdict, dataclass

from docassay.infra.serve.errors import ServeError

__all__ = ["AutoscalePolicy", "AutoscaleInputs", "decide", "Autoscaler"]

log = logging.getLogger("docassay.serve")


@dataclass(frozen=True)
class AutoscalePolicy:
    min_ranks: int = 1
    max_ranks: int = 0                    # 0: the world size
    target_s: float = 2.0                 # serve the waiting demand within this
    down_after_s: float = 30.0
    interval_s: float = 1.0
    default_tokens_per_s: float = 20_000.0  # per rank, until the server has measured its own


@dataclass(frozen=True)
class AutoscaleInputs:
    active: int
    world: int
    queued_tokens: int
    announced_tokens: int
    tokens_per_s: float                   # measured, all active ranks together (0: not yet measured)
    below_since_s: float                  # how long `wanted` has been below `active` (0: it is not)


def decide(x: AutoscaleInputs, p: AutoscalePolicy) -> tuple[int, int]:
    """(wanted ranks, ranks to scale to now) — equal to `x.active` when nothing should change."""
    hi = min(p.max_ranks or x.world, x.world)
    lo = max(1, min(p.min_ranks, hi))
    per_rank = x.tokens_per_s / x.active if x.tokens_per_s > 0 else p.default_tokens_per_s
    demand = x.queued_tokens + x.announced_tokens
    wanted = min(max(math.ceil(demand / max(per_rank * p.target_s, 1e-9)), lo), hi)
    if wanted > x.active:
        return wanted, wanted
    if wanted < x.active and x.below_since_s >= p.down_after_s:
        return wanted, wanted
    return wanted, x.active


class Autoscaler:
    """Every `interval_s`, read the engine's queue and announced demand and scale when `decide` says so."""

    def __init__(self, engine, policy: AutoscalePolicy) -> None:
        self.engine, self.policy = engine, policy
        self._stop = threading.Event()
        self._below_since: float | None = None
        self._thread = threading.Thread(target=self._loop, name="docassay-serve-autoscale", daemon=True)
        self.last: dict | None = None

    def start(self) -> None:
        self.engine.autoscale_state = {"policy": asdict(self.policy), "last": None}
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

    def _loop(self) -> None:
        while not self._stop.wait(self.policy.interval_s):
            if self.engine.state != "serving":
                continue
            queued, active, rate = self.engine.load_snapshot()
            now = time.perf_counter()
            below = now - self._below_since if self._below_since is not None else 0.0
            x = AutoscaleInputs(active, self.engine.world.size, queued, self.engine.announced_tokens(), rate, below)
            wanted, to = decide(x, self.policy)
            self._below_since = (self._below_since or now) if wanted < active else None
            self.engine.autoscale_state = {"policy": asdict(self.policy),
                                           "last": {"inputs": asdict(x), "wanted": wanted, "scale_to": to}}
            if to != active:
                try:
                    self.engine.request_scale(to, wait=True, source="autoscale")
                    self._below_since = None
                except ServeError as exc:         # refused (another scale queued): try again next tick
                    log.warning("autoscale to %d ranks refused: %s", to, exc)
