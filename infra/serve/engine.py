"""Rank 0's coordinator: one thread that owns every collective, batches requests, runs scales.

    HTTP threads ──submit()──▶ bounded queue ──▶ engine thread: batch ─▶ FrontModel.forward ─▶ results
    admin ──request_scale()──▶ control queue ──▶ engine thread, between batches: Reconfiguration.step() ...

A queued control (scale, shutdown) is taken before the next batch, so "stop taking new batches,
finish the batch in flight" is simply the order of the loop; requests that arrive meanwhile wait
in the queue (up to their deadline) and are served once the new group is active. When nothing
happens for `heartbeat_s`, a PING keeps every rank's collectives inside their timeout and refreshes
the memory figures.

A lost rank (its process died: seen by the heartbeat, or by a batch whose exchange with it failed)
does not stop the server. The world cannot carry a collective with a dead member any more, so rank
0 stops using it: it ends the other workers, reads every expert again from the weights file into
its own shard, and serves alone, state `degraded`, `lost_ranks` in the status; the batch that
failed is run again there, so no request is lost. Scores stay bit-identical (the same weights, the
same per-segment products). A scale is then refused with the reason: the operator restarts the
server (`docassay model serve`) to serve on more ranks again.
"""
from __future__ import annotations

import logging
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import torch

from docassay.infra.serve.comm import Ctl, World, memory_stats
from docassay.infra.serve.errors import RequestTimeout, ServeError, ServerBusy, ServerUnavailable
from docassay.infra.serve.front import DocInput, FrontModel
from docassay.infra.serve.placement import EMPTY, holders
from docassay.infra.serve.reconfig import PlanSettings, RankMemory, ReconfigReport, Reconfiguration
from docassay.infra.serve.shard import ExpertShard
from docassay.infra.serve.status import Counters, ModelInfo, ServerStatus

__all__ = ["Engine", "EngineOptions"]

log = logging.getLogger("docassay.serve")
_DEATH_GRACE_S = 2.0     # after a failed exchange, how long to wait for a dying worker to be seen exited


@dataclass(frozen=True)
class EngineOptions:
    max_batch_documents: int = 32
    max_batch_tokens: int = 32768
    max_queue_documents: int = 2048       # beyond: 503, the client retries
    batch_wait_s: float = 0.002           # after the first request, wait this long for others to join
    request_timeout_s: float = 120.0      # a request not answered by then gets 504
    heartbeat_s: float = 20.0
    load_decay: float = 0.98              # per batch, for the load that placement balances
    plan: PlanSettings = field(default_factory=PlanSettings)
    history: int = 16                     # reconfiguration reports kept


@dataclass
class _Request:
    docs: list[DocInput]
    deadline: float
    n_tokens: int
    done: threading.Event = field(default_factory=threading.Event)
    result: list[np.ndarray] | None = None
    error: ServeError | None = None
    abandoned: bool = False


@dataclass
class _Control:
    op: Ctl
    target: int = 0
    source: str = "admin"
    requested: float = field(default_factory=time.perf_counter)
    done: threading.Event = field(default_factory=threading.Event)
    report: ReconfigReport | None = None
    error: ServeError | None = None


class Engine:
    def __init__(self, world: World, front: FrontModel, shard: ExpertShard, model: ModelInfo,
                 options: EngineOptions, procs: list | None = None) -> None:
        self.world, self.front, self.shard = world, front, shard
        self.model_info = model
        self.o = options
        self.procs = procs or []
        cfg = front.cfg
        self.n_experts = cfg.n_experts if front.moe_layers else 0
        n_layer = len(front.moe_layers)
        self.active = 1
        self.placement = torch.full((n_layer, world.size, max(self.n_experts, 1)), EMPTY, dtype=torch.long)
        self.placement[:, 0, :self.n_experts] = torch.arange(self.n_experts)        # rank 0 read every expert
        self.where = holders(self.placement, self.n_experts)
        self.load_total = torch.zeros(n_layer, max(self.n_experts, 1), dtype=torch.long)
        self.load_recent = torch.zeros(n_layer, max(self.n_experts, 1), dtype=torch.float64)
        self.rank_rows = [0] * world.size
        self.memory: list[RankMemory] = []
        self.counters = Counters()
        self.state = "starting"
        self.error: str | None = None
        self.reports: deque[ReconfigReport] = deque(maxlen=options.history)
        self.current: Reconfiguration | None = None
        self._queue: deque[_Request] = deque()
        self._queued_docs = 0
        self._queued_tokens = 0
        self._in_flight = 0
        self._controls: deque[_Control] = deque()
        self._cv = threading.Condition()
        self._started = time.time()
        self._last_comm = time.perf_counter()
        self._rate = 0.0                      # tokens/s while busy, EMA
        self._announced: deque[tuple[float, int]] = deque()
        self._thread: threading.Thread | None = None
        self.autoscale_state: dict | None = None
        self.lost_ranks: list[int] = []           # ranks whose process died; the world is not used after

    # -- called from other threads ------------------------------------------------------------------

    def submit(self, docs: list[DocInput], timeout_s: float | None = None) -> list[np.ndarray]:
        """Scores per document (float32 [N_i]); blocks until served. Raises ServerBusy when the queue
        is full, ServerUnavailable when the server is not serving, RequestTimeout past the deadline."""
        timeout = self.o.request_timeout_s if timeout_s is None else min(timeout_s, self.o.request_timeout_s)
        req = _Request(docs, time.perf_counter() + timeout, sum(d.n_tokens for d in docs))
        with self._cv:
            if self.state in ("failed", "stopping", "stopped"):
                raise ServerUnavailable(f"server is {self.state}" + (f": {self.error}" if self.error else ""))
            if self._queued_docs + len(docs) > self.o.max_queue_documents and self._queue:
                self.counters.rejected_busy += 1
                raise ServerBusy(f"queue full ({self._queued_docs} documents waiting)")
            self._queue.append(req)
            self._queued_docs += len(docs)
            self._queued_tokens += req.n_tokens
            self.counters.requests += 1
            self._cv.notify_all()
        if not req.done.wait(timeout):
            with self._cv:
                if not req.done.is_set():
                    req.abandoned = True
                    self.counters.timeouts += 1
                    raise RequestTimeout(f"no answer within {timeout:.0f} s")
        if req.error is not None:
            raise req.error
        assert req.result is not None
        return req.result

    def request_scale(self, target: int, *, wait: bool = True, timeout_s: float = 600.0,
                      source: str = "admin") -> ReconfigReport | None:
        """Queue a scale to `target` active ranks; with `wait`, block until it is done and return
        its report. Raises ServeError for a bad target or when another scale is queued."""
        if not 1 <= target <= self.world.size:
            raise ServeError(f"active ranks must be between 1 and {self.world.size}, got {target}", status=400)
        with self._cv:
            if self.state in ("failed", "stopping", "stopped"):
                raise ServerUnavailable(f"server is {self.state}")
            if self.lost_ranks:
                raise ServeError(f"rank(s) {self.lost_ranks} were lost; this server now serves on rank 0 alone "
                                 "and cannot scale: restart it (docassay model serve) to serve on more ranks",
                                 status=409)
            if any(c.op == Ctl.SCALE for c in self._controls) or self.current is not None:
                raise ServeError("a scale is already in progress", status=409)
            ctl = _Control(Ctl.SCALE, target, source)
            self._controls.append(ctl)
            self._cv.notify_all()
        if not wait:
            return None
        if not ctl.done.wait(timeout_s):
            raise RequestTimeout(f"scale to {target} not done within {timeout_s:.0f} s")
        if ctl.error is not None:
            raise ctl.error
        return ctl.report

    def refresh_memory(self, timeout_s: float = 30.0) -> None:
        """Ask every rank for its memory figures now (between batches) and wait for the answer."""
        ctl = _Control(Ctl.PING)
        with self._cv:
            if self.state not in ("serving", "scaling", "degraded"):
                return
            self._controls.append(ctl)
            self._cv.notify_all()
        ctl.done.wait(timeout_s)

    def announce(self, tokens: int, ttl_s: float = 60.0) -> None:
        """Work a client expects to send soon (predicted demand, for the autoscaler)."""
        with self._cv:
            self._announced.append((time.perf_counter() + ttl_s, int(tokens)))

    def announced_tokens(self) -> int:
        now = time.perf_counter()
        with self._cv:
            while self._announced and self._announced[0][0] < now:
                self._announced.popleft()
            return sum(t for _, t in self._announced)

    def load_snapshot(self) -> tuple[int, int, float]:
        """(queued tokens, active ranks, tokens/s while busy)."""
        with self._cv:
            return self._queued_tokens, self.active, self._rate

    def status(self) -> ServerStatus:
        self._check_ranks_soon()
        with self._cv:
            cur = self.current
            pending_scale = next((c for c in self._controls if c.op == Ctl.SCALE), None)
            placement = [[sorted(e for e in self.placement[l, r].tolist() if e != EMPTY) for r in range(self.active)]
                         for l in range(self.placement.shape[0])]
            return ServerStatus(
                state=self.state, backend=self.world.backend, max_ranks=self.world.size, active_ranks=self.active,
                placement=placement, expert_load=self.load_total[:, :self.n_experts].tolist(),
                expert_load_recent=[[round(v, 2) for v in row] for row in self.load_recent[:, :self.n_experts].tolist()],
                rank_load=list(self.rank_rows), queue_documents=self._queued_docs, queue_tokens=self._queued_tokens,
                in_flight_documents=self._in_flight, scale_in_progress=cur is not None or pending_scale is not None,
                scale_target=cur.target if cur else (pending_scale.target if pending_scale else None),
                scale_phase=cur.phase.value if cur else ("queued" if pending_scale else None),
                last_reconfiguration=self.reports[-1].to_json() if self.reports else None,
                memory=[vars(m) for m in self.memory], counters=Counters(**vars(self.counters)),
                tokens_per_s=round(self._rate, 1), uptime_s=round(time.time() - self._started, 1),
                model=self.model_info, autoscale=self.autoscale_state, error=self.error,
                announced_tokens=sum(t for _, t in self._announced),
                reconfigurations=[r.to_json() for r in self.reports], lost_ranks=list(self.lost_ranks))

    def _check_ranks_soon(self) -> None:
        """A worker that died while idle is seen by the next heartbeat; a status call asks for it now."""
        if self.lost_ranks or not any(not p.is_alive() for p in self.procs):
            return
        with self._cv:
            if self.state == "serving" and not any(c.op == Ctl.PING for c in self._controls):
                self._controls.append(_Control(Ctl.PING))
                self._cv.notify_all()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="docassay-serve-engine", daemon=True)
        self._thread.start()

    def shutdown(self, timeout_s: float = 60.0) -> None:
        """Serve what is queued, then stop every rank."""
        with self._cv:
            if self.state in ("stopping", "stopped"):
                return
            if self.state not in ("failed", "degraded"):
                self.state = "stopping"
            self._controls.append(_Control(Ctl.SHUTDOWN))
            self._cv.notify_all()
        if self._thread is not None:
            self._thread.join(timeout_s)

    # -- the engine thread ----------------------------------------------------------------------------

    def scale_now(self, target: int) -> ReconfigReport:
        """Run a scale on the calling thread (start-up, before the engine thread runs)."""
        ctl = _Control(Ctl.SCALE, target, "startup")
        self._reconfigure(ctl)
        if ctl.error is not None:
            raise ctl.error
        assert ctl.report is not None
        return ctl.report

    def _loop(self) -> None:
        with self._cv:
            if self.state == "starting":
                self.state = "serving"
        while True:
            ctl, batch = self._next()
            if ctl is not None:
                if ctl.op == Ctl.SHUTDOWN:
                    self._shutdown_ranks()
                    return
                if ctl.op == Ctl.PING:
                    self._heartbeat()
                    ctl.done.set()
                    continue
                self._reconfigure(ctl)
            elif batch:
                self._run_batch(batch)
            else:
                self._heartbeat()

    def _next(self) -> tuple[_Control | None, list[_Request]]:
        with self._cv:
            deadline = self._last_comm + self.o.heartbeat_s
            while not self._controls and not self._queue:
                left = deadline - time.perf_counter()
                if left <= 0:
                    return None, []
                self._cv.wait(left)
            if self._controls:
                ctl = self._controls[0]
                if ctl.op != Ctl.SHUTDOWN or not self._queue or self.state == "failed":
                    self._controls.popleft()
                    return ctl, []
            if self.o.batch_wait_s > 0 and len(self._queue) < self.o.max_batch_documents:
                self._cv.wait(self.o.batch_wait_s)
            batch: list[_Request] = []
            docs, tokens = 0, 0
            while self._queue:
                req = self._queue[0]
                if batch and (docs + len(req.docs) > self.o.max_batch_documents
                              or tokens + req.n_tokens > self.o.max_batch_tokens):
                    break
                self._queue.popleft()
                self._queued_docs -= len(req.docs)
                self._queued_tokens -= req.n_tokens
                if req.abandoned:
                    continue
                batch.append(req)
                docs += len(req.docs)
                tokens += req.n_tokens
            self._in_flight = docs
            return None, batch

    def _run_batch(self, batch: list[_Request]) -> None:
        docs = [d for req in batch for d in req.docs]
        t0 = time.perf_counter()
        try:
            if self.state == "failed":
                raise ServerUnavailable(f"server failed: {self.error}")
            try:
                probs, stats = self.front.forward(self.world, self.active, self.shard, self.where, docs)
            except RuntimeError as exc:
                dead = self._dead_ranks(wait_s=_DEATH_GRACE_S)
                if not dead or not self._degrade(dead, f"a batch failed ({type(exc).__name__}: {exc})"):
                    raise
                probs, stats = self.front.forward(self.world, self.active, self.shard, self.where, docs)
        except (RuntimeError, ServeError) as exc:
            err = exc if isinstance(exc, ServeError) else ServerUnavailable(f"batch failed: {type(exc).__name__}: {exc}")
            self._fail(f"{type(exc).__name__}: {exc}" if not isinstance(exc, ServeError) else None)
            with self._cv:
                self.counters.failed += len(batch)
                self._in_flight = 0
            for req in batch:
                req.error = err
                req.done.set()
            return
        dt = time.perf_counter() - t0
        self._last_comm = time.perf_counter()
        out = [p.numpy().astype(np.float32, copy=False) for p in probs]
        n_tokens = sum(d.n_tokens for d in docs)
        with self._cv:
            if stats.rows_per_expert:
                counts = torch.tensor(stats.rows_per_expert, dtype=torch.long)           # [L, E]
                self.load_total[:, :self.n_experts] += counts
                self.load_recent[:, :self.n_experts] = self.load_recent[:, :self.n_experts] * self.o.load_decay + counts
            for r, n in enumerate(stats.rows_per_rank):
                self.rank_rows[r] += n
            self.counters.batches += 1
            self.counters.documents += len(docs)
            self.counters.tokens += n_tokens
            if dt > 0:
                rate = n_tokens / dt
                self._rate = rate if self._rate == 0 else 0.8 * self._rate + 0.2 * rate
            self._in_flight = 0
        i = 0
        for req in batch:
            req.result = out[i:i + len(req.docs)]
            i += len(req.docs)
            req.done.set()

    def _reconfigure(self, ctl: _Control) -> None:
        with self._cv:
            if self.state == "failed":
                ctl.error = ServerUnavailable(f"server failed: {self.error}")
                ctl.done.set()
                return
            rc = Reconfiguration(self.world, self.shard, self.placement, self.load_recent[:, :self.n_experts].clone(),
                                 self.active, ctl.target, self.o.plan, self.n_experts, requested_at=ctl.requested)
            self.current = rc
            prev_state = self.state
            self.state = "scaling"
        try:
            while not rc.done:
                rc.step()
                if rc.phase.value == "switching":
                    with self._cv:                 # every rank moved: the new placement is in force from here
                        self.placement, self.where = rc.new, holders(rc.new, self.n_experts)
        except (RuntimeError, ValueError) as exc:
            self._fail(f"reconfiguration to {ctl.target} ranks failed: {type(exc).__name__}: {exc}")
            ctl.error = ServerUnavailable(self.error or "reconfiguration failed")
        with self._cv:
            self.current = None
            self.reports.append(rc.report)
            if rc.phase.value == "done":
                self.active = ctl.target
                self.memory = rc.report.memory
                self.counters.reconfigurations += 1
                self.state = prev_state if prev_state != "scaling" else "serving"
            self._last_comm = time.perf_counter()
            self._cv.notify_all()
        ctl.report = rc.report
        if self.world.rank == 0 and rc.phase.value == "done":
            r = rc.report
            log.info("scaled %d -> %d ranks in %.1f ms (pause %.1f, plan %.1f, moves %.1f, switch %.1f); %d copies moved",
                     r.from_ranks, r.to_ranks, r.total_s * 1e3, r.pause_s * 1e3, r.plan_s * 1e3, r.move_s * 1e3,
                     r.switch_s * 1e3, r.moved_copies)
        ctl.done.set()

    def _control(self, op: Ctl) -> None:
        """Send a control message to every rank (leaving the active ranks' serving loop first)."""
        self.world.send_control(self.active, [int(op)])

    def _dead_ranks(self, wait_s: float = 0.0) -> list[int]:
        """Worker ranks whose process has exited (waiting up to `wait_s` for a dying one to be seen)."""
        deadline = time.perf_counter() + wait_s
        while True:
            dead = [i + 1 for i, p in enumerate(self.procs) if not p.is_alive()]
            if dead or time.perf_counter() >= deadline:
                return dead
            time.sleep(0.05)

    def _degrade(self, dead: list[int], why: str) -> bool:
        """Serve on rank 0 alone from here on (module docstring); False when that is not possible."""
        from docassay.infra.model.checkpoint import load
        log.error("model server lost rank(s) %s (%s): serving on rank 0 alone", dead, why)
        for p in self.procs:                       # the others wait on a world that cannot complete
            if p.is_alive():
                p.terminate()
        for p in self.procs:
            p.join(5)
        try:
            model, _ = load(self.model_info.weights)
            experts = FrontModel(model, self.world.device).take_experts()
        except (OSError, RuntimeError, ValueError) as exc:
            self._fail(f"rank(s) {dead} lost and the weights could not be read again: {exc}")
            return False
        shard = ExpertShard(len(experts), self.shard.d, self.shard.h, self.world.device)
        shard.load_all(experts, self.world.device)
        placement = torch.full((self.placement.shape[0], self.world.size, max(self.n_experts, 1)), EMPTY,
                               dtype=torch.long)
        placement[:, 0, :self.n_experts] = torch.arange(self.n_experts)
        with self._cv:
            self.shard, self.placement, self.where = shard, placement, holders(placement, self.n_experts)
            self.active = 1
            self.lost_ranks = sorted(set(self.lost_ranks) | set(dead))
            self.error = (f"rank(s) {self.lost_ranks} lost ({why}); serving on rank 0 alone, "
                          "experts read again from the weights")
            self.state = "degraded"
            self.memory = [RankMemory.from_stats(0, memory_stats(shard.nbytes, shard.n_copies,
                                                                 device=self.world.device).tolist())]
            self._last_comm = time.perf_counter()
        return True

    def _heartbeat(self) -> None:
        if self.state == "degraded":               # the world is not used any more: local figures only
            with self._cv:
                self.memory = [RankMemory.from_stats(0, memory_stats(self.shard.nbytes, self.shard.n_copies,
                                                                     device=self.world.device).tolist())]
                self._last_comm = time.perf_counter()
            return
        dead = self._dead_ranks()
        if dead and self.state != "failed":
            self._degrade(dead, "the process exited")
            return
        if self.state == "failed":
            self._last_comm = time.perf_counter()
            return
        try:
            self._control(Ctl.PING)
            stats = self.world.gather_stats(memory_stats(self.shard.nbytes, self.shard.n_copies, device=self.world.device))
        except RuntimeError as exc:
            dead = self._dead_ranks(wait_s=_DEATH_GRACE_S)
            if not dead or not self._degrade(dead, f"heartbeat failed: {type(exc).__name__}: {exc}"):
                self._fail(f"heartbeat failed: {type(exc).__name__}: {exc}")
            return
        assert stats is not None                       # the engine runs on rank 0, which gathers
        with self._cv:
            self.memory = [RankMemory.from_stats(r, row) for r, row in enumerate(stats.tolist())]
            self._last_comm = time.perf_counter()

    def _shutdown_ranks(self) -> None:
        if self.state != "failed" and not self.lost_ranks:
            try:
                self._control(Ctl.SHUTDOWN)
            except RuntimeError as exc:
                log.warning("shutdown message failed: %s", exc)
        with self._cv:
            self.state = "stopped"
            while self._queue:
                req = self._queue.popleft()
                req.error = ServerUnavailable("server stopped")
                req.done.set()
            for c in self._controls:
                c.error = ServerUnavailable("server stopped")
                c.done.set()
            self._cv.notify_all()

    def _fail(self, message: str | None) -> None:
        with self._cv:
            if message and self.error is None:
                self.error = message
                log.error("model server failed: %s", message)
            self.state = "failed"
            pending = list(self._queue)
            self._queue.clear()
            self._queued_docs = self._queued_tokens = 0
        for req in pending:
            req.error = ServerUnavailable(f"server failed: {self.error}")
            req.done.set()

    def memory_per_rank(self) -> list[RankMemory]:
        with self._cv:
            return list(self.memory)

