"""What `GET /v1/status` and `docassay model status` report."""
from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = ["ServerStatus", "ModelInfo", "Counters", "LostRank", "format_status"]


@dataclass
class ModelInfo:
    weights: str
    config: dict[str, Any]
    feature_version: int | None
    expert_bytes: int                      # one copy of one expert
    kind: str = "ranker"                   # ranker | layout (the checkpoint's format)


@dataclass
class Counters:
    requests: int = 0
    documents: int = 0
    tokens: int = 0
    batches: int = 0
    rejected_busy: int = 0                 # 503: queue full
    timeouts: int = 0                      # 504
    failed: int = 0                        # 500: a batch raised
    reconfigurations: int = 0


@dataclass
class LostRank:
    """A worker rank whose process died, and how the server worked around it."""
    rank: int                              # its rank when the server started (the name the log and status use)
    since: float                           # when rank 0 saw it (Unix time)
    why: str                               # how the process ended ("the process was killed by SIGKILL")
    seen_by: str                           # watcher | exchange (a batch) | heartbeat | scale
    detail: str                            # what rank 0 was doing when it saw it
    recovered_s: float                     # seen -> the survivors' world serving again (seconds)
    serving_ranks: int                     # ranks in the re-formed world
    active_ranks: int                      # of which active
    restored_copies: int                   # expert copies read again from the weights file (no survivor held one)
    generation: int                        # the world's generation after the re-form


@dataclass
class ServerStatus:
    state: str                             # starting | serving | scaling | recovering | stopping | stopped | failed
    backend: str
    max_ranks: int
    active_ranks: int
    placement: list[list[list[int]]]       # [MoE layer][active rank] -> experts held (one entry per copy)
    expert_load: list[list[int]]           # [MoE layer][expert] token assignments served, since start
    expert_load_recent: list[list[float]]  # the decayed load that placement planning balances
    rank_load: list[int]                   # [rank] expert rows run, since start
    queue_documents: int
    queue_tokens: int
    in_flight_documents: int
    scale_in_progress: bool
    scale_target: int | None
    scale_phase: str | None
    last_reconfiguration: dict[str, Any] | None
    memory: list[dict[str, int]]           # per rank: rss_bytes, expert_bytes, copies (last report)
    counters: Counters
    tokens_per_s: float                    # recent throughput while busy
    uptime_s: float
    model: ModelInfo
    autoscale: dict[str, Any] | None = None
    error: str | None = None
    announced_tokens: int = 0
    reconfigurations: list[dict[str, Any]] = field(default_factory=list)   # the last few, oldest first
    lost_ranks: list[int] = field(default_factory=list)    # worker ranks whose process died (start-up numbering)
    lost: list[LostRank] = field(default_factory=list)     # one per lost rank, oldest first
    ranks: list[int] = field(default_factory=list)         # [current rank] -> its start-up rank (after losses)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> "ServerStatus":
        d = dict(d)
        d["counters"] = Counters(**d["counters"])
        d["model"] = ModelInfo(**d["model"])
        d["lost"] = [LostRank(**x) for x in d.get("lost", [])]
        return cls(**d)


def format_status(s: ServerStatus) -> str:
    """A few lines for a person."""
    lines = [f"state {s.state}, {s.active_ranks} of {s.max_ranks} ranks active ({s.backend}), "
             f"up {s.uptime_s:.0f} s, {s.counters.documents} documents / {s.counters.tokens} tokens served, "
             f"{s.tokens_per_s:.0f} tokens/s recently"]
    lines.append(f"model {s.model.kind} {s.model.weights} ({s.model.expert_bytes / 2**20:.2f} MiB per expert)")
    lines.append(f"queue {s.queue_documents} documents ({s.queue_tokens} tokens), in flight {s.in_flight_documents}; "
                 f"busy {s.counters.rejected_busy}, timeouts {s.counters.timeouts}, failed {s.counters.failed}")
    if s.scale_in_progress:
        lines.append(f"scaling to {s.scale_target} ranks: {s.scale_phase}")
    for l, ranks in enumerate(s.placement):
        lines.append(f"layer {l}: " + "  ".join(f"r{r}={sorted(ex)}" for r, ex in enumerate(ranks)))
    total = sum(s.rank_load) or 1
    lines.append("rank load: " + "  ".join(f"r{r} {n} ({n / total:.0%})" for r, n in enumerate(s.rank_load)))
    lines.append("memory: " + "  ".join(f"r{m['rank']} rss {m['rss_bytes'] / 2**20:.0f} MiB experts "
                                        f"{m['expert_bytes'] / 2**10:.0f} KiB" for m in s.memory))
    r = s.last_reconfiguration
    if r:
        lines.append(f"last reconfiguration {r['from_ranks']}->{r['to_ranks']} ({r['phase']}): total "
                     f"{r['total_s'] * 1e3:.1f} ms = pause {r['pause_s'] * 1e3:.1f} + plan {r['plan_s'] * 1e3:.1f} + "
                     f"moves {r['move_s'] * 1e3:.1f} + switch {r['switch_s'] * 1e3:.1f}; "
                     f"{r['moved_copies']} copies moved ({r['moved_bytes'] / 2**10:.0f} KiB)")
    if s.autoscale:
        lines.append(f"autoscale: {s.autoscale}")
    for x in s.lost:
        when = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(x.since))
        lines.append(f"lost rank {x.rank} at {when} UTC ({x.why}; seen by the {x.seen_by}): re-formed on "
                     f"{x.serving_ranks} ranks ({x.active_ranks} active) in {x.recovered_s * 1e3:.0f} ms, "
                     f"{x.restored_copies} expert copies read again")
    if s.lost_ranks:
        lines.append(f"ranks now: {s.ranks} (start-up numbering); scale up to {s.max_ranks}")
    if s.error:
        lines.append(f"error: {s.error}")
    return "\n".join(lines)
