"""The MoE models (the ranker, the layout reader) served with elastic expert parallelism
(`docassay model serve|scale|status`).

    placement.py   pure planning: replicas, placement, moves (tensor -> tensor)
    comm.py        the one world, its active groups (created once), message layouts, memory figures
    shard.py       the expert copies a rank holds; moving copies between ranks
    front.py       rank 0's forward: dense layers and routers, token rows to the experts' ranks and back
                   (`ExpertFront` runs one MoE layer across the ranks; `FrontModel` is the ranker's)
    layout_front.py  the layout reader's forward around the same MoE layer (one document at a time)
    reconfig.py    the scale state machine (rank 0) and its mirror on the workers
    recovery.py    a lost rank: the survivors re-form the world, the lost experts come back
    worker.py      the loop of ranks 1..M-1
    engine.py      rank 0's coordinator thread: bounded queue, batching, scales, heartbeats, status
    http.py        the HTTP front end; admin endpoints need the token
    launch.py      start the world and the server
    client.py      the client (`--model-url`), wire.py its encoding
    autoscale.py   optional policy: queue depth and announced demand -> active ranks

Only the names below are public (pinned by tests/infra/test_serve_placement.py).
"""
from docassay.infra.serve.client import DEFAULT_URL, MODEL_URL_ENV, ModelClient
from docassay.infra.serve.errors import (
    BadRequest,
    RequestTimeout,
    ServeError,
    ServerBusy,
    ServerUnavailable,
    Unauthorized,
)
from docassay.infra.serve.placement import check_placement, plan_moves, plan_placement, replica_counts, slots_per_rank
from docassay.infra.serve.status import ServerStatus

__all__ = ["ModelClient", "MODEL_URL_ENV", "DEFAULT_URL", "ServerStatus", "ServeError", "BadRequest",
           "Unauthorized", "ServerBusy", "ServerUnavailable", "RequestTimeout", "plan_placement", "plan_moves",
           "replica_counts", "slots_per_rank", "check_placement"]
