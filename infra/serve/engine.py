"""Rank 0's coordinator: one thread that owns every collective, batches requests, runs scales.

    HTTP threads ──submit()──▶ bounded queue ──▶ engine thread: batch ─▶ FrontModel.forward ─▶ results
    admin ──request_scale()──▶ control queue ──▶ engine thread, between batches: Reconfiguration.step() ...

A queued control (scale, shutdown) is taken before the next batch, so "stop taking new batches,
finish the batch in flight" is simply the order of the loop; requests that arrive meanwhile wait
in the queue (up to their deadline) and are served once the new group is active. When nothing
happens for `heartbeat_s`, a PING keeps every rank's collectives inside their timeout and refreshes
the memory figures.

A lost rank (its process died) does not stop the server. A watcher thread waits on every worker's
process sentinel, so a death is seen within `watch_interval_s` whether the rank is busy or idle (a
batch whose exchange with it fails sees it at once). Rank 0 then re-forms the world of the
survivors (recovery.py: a new generation of the same rendezvous store, the survivors renumbered in
their order), gathers what every surviving rank holds, reads the experts that no survivor holds a
copy of from the weights file onto itself, and runs a Reconfiguration from the surviving active
ranks to the same number (the scale path), which spreads those copies over them. The batch that
met the dead rank is run again on the new world (its requests are answered, not failed); requests
that arrive meanwhile wait in the queue. Scores stay bit-identical. `status` lists the lost rank
(`lost`: rank, since when, why, how long until it served again); the operator can scale again, up
to the surviving ranks. Should the survivors not re-form (a member does not join within
`reform_timeout_s`), rank 0 ends the workers and serves alone.
"""
from __future__ import annotations

import logging
import signal
import threading
import time
from collections import deque
from dataclasses import dataclass, field

import numpy as np
import torch

from docassay.infra.serve.comm import Ctl, World, memory_stats
from docassay.infra.serve.errors import RequestTimeout, ServeError, ServerBusy, ServerUnavailable, WeightsUnreadable
from docassay.infra.serve.front import ExpertFront
from docassay.infra.serve.placement import EMPTY, holders
from docassay.infra.serve.reconfig import PlanSettings, RankMemory, ReconfigReport, Reconfiguration
from docassay.infra.serve.recovery import ReformPlan, gather_placement, reform, restore_missing, row_width
from docassay.infra.serve.shard import ExpertShard
from docassay.infra.serve.status import Counters, LostRank, ModelInfo, ServerStatus

__all__ = ["Engine", "EngineOptions"]

log = logging.getLogger("docassay.serve")
_DEATH_GRACE_S = 2.0     # after a failed exchange, how long to wait for a dying worker to be seen exited
_DETAIL_CHARS = 240     # of the error that revealed a lost rank, kept in its status record
_BATCH_ATTEMPTS = 3      # a batch whose exchange fails is run again after each re-form, this many runs in all


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
    watch_interval_s: float = 0.5         # the watcher's wait on the workers' process sentinels
    reform_timeout_s: float = 30.0        # survivors that have not joined the re-formed world by then are ended


@dataclass
class _Request:
    docs: list                               # a front's inputs (each with n_tokens)
    deadline: float
    n_tokens: int
    done: threading.Event = field(default_factory=threading.Event)
    result: list | None = None
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


def _numpy(result):
    """A front's result (a tensor, or a tuple of them) as float32 numpy arrays."""
    if isinstance(result, tuple):
        return tuple(_numpy(r) for r in result)
    return result.numpy().astype(np.float32, copy=False)


class Engine:
    def __init__(self, world: World, front: ExpertFront, shard: ExpertShard, model: ModelInfo,
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
        self.lost_ranks: list[int] = []           # idents (generation-0 ranks) of the workers lost
        self.lost: list[LostRank] = []
        self.members: list[int] = list(range(world.size))   # [current rank] -> ident
        self._generation = 0                      # the last generation announced
        self._reported: set[int] = set()          # idents the watcher has already reported
        self._ended: set[int] = set()             # idents rank 0 ended (they did not join a re-formed world)
        self._watcher: threading.Thread | None = None

    # -- called from other threads ------------------------------------------------------------------

    def submit(self, docs: list, timeout_s: float | None = None) -> list:
        """One result per document (the ranker: scores float32 [N_i]; the layout reader: a (begin, end)
        pair of logits, see `layout_front`); blocks until served. Raises ServerBusy when the queue
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
        size = self.world.size
        if not 1 <= target <= size:
            lost = f" ({len(self.lost_ranks)} of {size + len(self.lost_ranks)} lost)" if self.lost_ranks else ""
            raise ServeError(f"active ranks must be between 1 and {size}{lost}, got {target}", status=400)
        with self._cv:
            if self.state in ("failed", "stopping", "stopped"):
                raise ServerUnavailable(f"server is {self.state}")
            if self.state == "recovering":
                raise ServerUnavailable("the server is re-forming its world after a lost rank: retry the scale")
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
            if self.state not in ("serving", "scaling", "recovering"):
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
                reconfigurations=[r.to_json() for r in self.reports], lost_ranks=list(self.lost_ranks),
                lost=list(self.lost), ranks=list(self.members))

    def _check_ranks_soon(self) -> None:
        """A worker that died is seen by the watcher; a status call that sees it first asks for it now."""
        if not self._dead_ranks():
            return
        with self._cv:
            if self.state == "serving" and not any(c.op == Ctl.PING for c in self._controls):
                self._controls.append(_Control(Ctl.PING))
                self._cv.notify_all()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._loop, name="docassay-serve-engine", daemon=True)
        self._thread.start()
        if self.procs:
            self._watcher = threading.Thread(target=self._watch, name="docassay-serve-watch", daemon=True)
            self._watcher.start()

    def _watch(self) -> None:
        """Wait on the workers' process sentinels; a worker that exits queues a check (a PING
        control, which looks for dead ranks first) for the engine thread."""
        from multiprocessing.connection import wait
        while self.state not in ("stopping", "stopped", "failed"):
            with self._cv:
                watched = {self.procs[m - 1].sentinel: m for m in self.members
                           if m > 0 and m not in self._reported}
            if not watched:
                time.sleep(self.o.watch_interval_s)
                continue
            ready = wait(list(watched), timeout=self.o.watch_interval_s)
            if not ready:
                continue
            with self._cv:
                self._reported.update(watched[r] for r in ready)
                if self.state in ("serving", "scaling", "recovering") and \
                        not any(c.op == Ctl.PING and c.source == "watch" for c in self._controls):
                    self._controls.append(_Control(Ctl.PING, source="watch"))
                    self._cv.notify_all()

    def shutdown(self, timeout_s: float = 60.0) -> None:
        """Serve what is queued, then stop every rank."""
        with self._cv:
            if self.state in ("stopping", "stopped"):
                return
            if self.state != "failed":
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
            try:
                if ctl is not None and ctl.op == Ctl.SHUTDOWN:
                    self._shutdown_ranks()
                    return
                self._step(ctl, batch)
            except Exception as exc:                # noqa: BLE001  a bug must not leave callers waiting
                log.exception("model server engine: unexpected error")
                self._fail(f"internal error: {type(exc).__name__}: {exc}")
                waiters: list[_Request | _Control] = [*batch, *([ctl] if ctl is not None else [])]
                for waiter in waiters:
                    if not waiter.done.is_set():
                        waiter.error = ServerUnavailable(f"server failed: {self.error}")
                        waiter.done.set()

    def _step(self, ctl: _Control | None, batch: list[_Request]) -> None:
        if ctl is not None:
            if ctl.op == Ctl.PING:
                self._heartbeat()
                ctl.done.set()
                return
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
        err: ServeError | None = ServerUnavailable(f"server failed: {self.error}") if self.state == "failed" else None
        result = None
        for attempt in range(_BATCH_ATTEMPTS if err is None else 0):
            result, why = self._forward(docs)          # the error as text: no frame keeps the old world alive
            if result is not None:
                break
            if not self._recover(self._dead_ranks(wait_s=_DEATH_GRACE_S), f"a batch failed ({why})", "exchange"):
                err = ServerUnavailable(f"server failed: {self.error}")
                break
            if attempt == _BATCH_ATTEMPTS - 1:
                err = ServerUnavailable(f"the batch failed {_BATCH_ATTEMPTS} times ({why}); the server re-formed "
                                        f"on {self.world.size} ranks: retry the request")
        if result is None:
            with self._cv:
                self.counters.failed += len(batch)
                self._in_flight = 0
            for req in batch:
                req.error = err
                req.done.set()
            return
        probs, stats = result
        dt = time.perf_counter() - t0
        self._last_comm = time.perf_counter()
        out = [_numpy(p) for p in probs]
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

    def _forward(self, docs: list):
        """(probs, stats), or (None, why) when an exchange failed."""
        try:
            return self.front.forward(self.world, self.active, self.shard, self.where, docs), None
        except RuntimeError as exc:
            return None, f"{type(exc).__name__}: {exc}"

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
        lost_during: str | None = None
        try:
            while not rc.done:
                rc.step()
                if rc.phase.value == "switching":
                    with self._cv:                 # every rank moved: the new placement is in force from here
                        self.placement, self.where = rc.new, holders(rc.new, self.n_experts)
        except RuntimeError as exc:
            lost_during = f"{type(exc).__name__}: {exc}"
        except ValueError as exc:
            self._fail(f"reconfiguration to {ctl.target} ranks failed: {type(exc).__name__}: {exc}")
            ctl.error = ServerUnavailable(self.error or "reconfiguration failed")
        if lost_during is not None:
            with self._cv:
                self.current = None
                self.state = prev_state if prev_state != "scaling" else "serving"
            if self._recover(self._dead_ranks(wait_s=_DEATH_GRACE_S),
                             f"the scale to {ctl.target} ranks failed ({lost_during})", "scale"):
                ctl.error = ServerUnavailable(f"the scale to {ctl.target} ranks met a lost rank ({lost_during}); the "
                                              f"server re-formed on {self.world.size} ranks, {self.active} active: "
                                              "retry the scale")
            else:
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
        """Idents of the members whose process has exited (waiting up to `wait_s` for a dying one)."""
        deadline = time.perf_counter() + wait_s
        while True:
            dead = [m for m in self.members if m > 0 and not self.procs[m - 1].is_alive()]
            if dead or time.perf_counter() >= deadline:
                return dead
            time.sleep(0.05)

    def _exit_reason(self, ident: int) -> str:
        code = self.procs[ident - 1].exitcode
        if ident in self._ended:
            return "ended by rank 0: it did not join the re-formed world"
        if code is None:
            return "the process did not answer"
        if code < 0:
            try:
                return f"the process was killed by {signal.Signals(-code).name}"
            except ValueError:
                return f"the process was killed by signal {-code}"
        return f"the process exited with status {code}"

    def _read_experts(self) -> list:
        """Every expert of every MoE layer, read again from the weights file."""
        from docassay.infra.model.checkpoint import load_any
        _, model, _ = load_any(self.model_info.weights)
        return [model.blocks[i].ffn.experts for i in self.front.moe_layers]

    def _recover(self, dead: list[int], why: str, seen_by: str) -> bool:
        """Re-form the world without the `dead` members and serve on (module docstring). False when
        not even rank 0 alone could form a world (the server is then failed)."""
        t0, since = time.perf_counter(), time.time()
        dead_set = set(dead)
        log.error("model server: rank(s) %s lost (%s); re-forming the world of the survivors", sorted(dead_set), why)
        with self._cv:
            prev_state = self.state
            self.state = "recovering"
            self.current = None
        problem = None
        for _ in range(self.world.size + 1):
            survivors = [m for m in self.members if m not in dead_set]
            active = sum(1 for m in self.members[:self.active] if m not in dead_set)
            self._generation += 1
            plan = ReformPlan(self._generation, survivors, active)
            problem, final = None, False
            try:
                restored = self._reform(plan)
            except RuntimeError as exc:            # a member did not join, or died meanwhile
                problem = f"{type(exc).__name__}: {exc}"
            except WeightsUnreadable as exc:       # retrying cannot help
                problem, final = exc.message, True
            except ValueError as exc:              # planning the placement of the survivors
                problem, final = f"{type(exc).__name__}: {exc}", True
            if problem is None or final:
                break
            log.error("model server: re-forming on %s failed (%s)", survivors, problem)
            more = set(self._dead_ranks(wait_s=_DEATH_GRACE_S)) - dead_set
            if not more:                           # someone alive did not join: serve on rank 0 alone
                more = {m for m in survivors if m > 0}
                self._ended |= more
                for m in more:
                    self.procs[m - 1].terminate()
                for m in more:
                    self.procs[m - 1].join(5)
            dead_set |= more
        if problem is not None:
            self._fail(f"rank(s) {sorted(dead_set)} lost ({why}) and the world could not be re-formed: {problem}")
            return False
        recovered_s = time.perf_counter() - t0
        with self._cv:
            for m in sorted(dead_set - set(self.lost_ranks)):
                self.lost.append(LostRank(rank=m, since=round(since, 3), why=self._exit_reason(m), seen_by=seen_by,
                                          detail=why[:_DETAIL_CHARS], recovered_s=round(recovered_s, 4),
                                          serving_ranks=self.world.size, active_ranks=self.active,
                                          restored_copies=restored, generation=self.world.generation))
            self.lost_ranks = sorted(set(self.lost_ranks) | dead_set)
            self._reported |= dead_set
            self.state = prev_state if prev_state not in ("scaling", "recovering") else "serving"
            self._last_comm = time.perf_counter()
            self._cv.notify_all()
        log.warning("model server re-formed on %d rank(s) (%d active) in %.0f ms; %d expert copies read again",
                    self.world.size, self.active, recovered_s * 1e3, restored)
        return True

    def _reform(self, plan: ReformPlan) -> int:
        """Join generation `plan`, take the placement the survivors hold, restore the experts without a
        copy, spread them by a Reconfiguration active -> active. Returns the copies read from the weights."""
        old_members, old_rows = list(self.members), list(self.rank_rows)
        world = reform(self.world, plan, join_timeout_s=self.o.reform_timeout_s,
                       alive=lambda m: self.procs[m - 1].is_alive())
        with self._cv:
            self.world, self.members, self.active = world, list(plan.members), plan.active
            self.rank_rows = [old_rows[old_members.index(m)] for m in plan.members]
        slots = gather_placement(world, self.shard, row_width(self.n_experts))
        if slots is None:
            raise RuntimeError("the re-formed world's placement was not gathered on rank 0")
        if self.n_experts:
            slots, restored = restore_missing(self.shard, slots, self.n_experts, self._read_experts)
        else:
            slots, restored = slots[:, :, :0], 0
        with self._cv:
            self.placement, self.where = slots, holders(slots, self.n_experts)
        rc = Reconfiguration(world, self.shard, slots, self.load_recent[:, :self.n_experts].clone(), plan.active,
                             plan.active, self.o.plan, self.n_experts)
        self.current = rc
        try:
            while not rc.done:
                rc.step()
                if rc.phase.value == "switching":
                    with self._cv:
                        self.placement, self.where = rc.new, holders(rc.new, self.n_experts)
        finally:
            self.current = None
        with self._cv:
            self.memory = rc.report.memory
            self.reports.append(rc.report)
        return restored

    def _heartbeat(self) -> None:
        if self.state == "failed":
            self._last_comm = time.perf_counter()
            return
        dead = self._dead_ranks()
        if dead:
            self._recover(dead, "the process exited", "watcher")
            return
        why = None
        try:
            self._control(Ctl.PING)
            stats = self.world.gather_stats(memory_stats(self.shard.nbytes, self.shard.n_copies, device=self.world.device))
        except RuntimeError as exc:
            why = f"{type(exc).__name__}: {exc}"
        if why is not None:
            if not self._recover(self._dead_ranks(wait_s=_DEATH_GRACE_S), f"heartbeat failed: {why}", "heartbeat"):
                self._fail(f"heartbeat failed: {why}")
            return
        assert stats is not None                       # the engine runs on rank 0, which gathers
        with self._cv:
            self.memory = [RankMemory.from_stats(r, row) for r, row in enumerate(stats.tolist())]
            self._last_comm = time.perf_counter()

    def _shutdown_ranks(self) -> None:
        if self.state != "failed":
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

