"""Start a model server: M processes in one world, the weights loaded, N ranks active, HTTP up.

    server = start(ServeOptions(weights, max_ranks=4, ranks=2))     # this process becomes rank 0
    server.url                                                      # http://127.0.0.1:8765
    server.wait()                                                   # until shut down (admin call, signal)

Start-up order: the worker processes are started first (forked while this process has one thread
and no CUDA context; otherwise through a fork server), then every rank joins the world and creates
the active groups; rank 0 reads the checkpoint (a ranker or a layout reader: the file's own format
says which, `FRONTS` names the front that runs its dense part), keeps the dense layers and routers,
holds every expert at first, and tells the workers the expert shape. The initial placement for N ranks is then
made by the same `Reconfiguration` a later scale uses (1 -> N), so start-up exercises that path too.
"""
from __future__ import annotations

import logging
import multiprocessing as mp
import os
import secrets
import signal
import socket
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import torch

from docassay.infra.errors import ConfigError
from docassay.infra.serve.autoscale import AutoscalePolicy, Autoscaler
from docassay.infra.serve.comm import init_world, release_memory
from docassay.infra.serve.engine import Engine, EngineOptions
from docassay.infra.serve.front import ExpertFront, FrontModel
from docassay.infra.serve.http import ModelHTTPServer
from docassay.infra.serve.layout_front import LayoutFront
from docassay.infra.serve.shard import ExpertShard
from docassay.infra.serve.status import ModelInfo
from docassay.infra.serve.worker import receive_shape, worker_main

__all__ = ["ServeOptions", "Server", "start", "resolve_admin_token", "ADMIN_TOKEN_ENV", "default_token_file", "FRONTS"]

log = logging.getLogger("docassay.serve")

ADMIN_TOKEN_ENV = "DOCASSAY_ADMIN_TOKEN"
RENDEZVOUS_HOST = "127.0.0.1"       # the workers are children of this process
FRONTS: dict[str, type[ExpertFront]] = {"ranker": FrontModel, "layout": LayoutFront}
"""A checkpoint's kind (`infra.model.checkpoint.kind_of`) -> the front that serves it."""


@dataclass
class ServeOptions:
    weights: Path
    model: str | None = None          # "ranker" | "layout": the kind the weights must be (None: whatever they are)
    max_ranks: int = 4
    ranks: int = 1
    host: str = "127.0.0.1"
    port: int = 8765                  # 0: any free port (see Server.url)
    admin_token: str = ""
    threads_per_rank: int = 1
    collective_timeout_s: float = 300.0
    engine: EngineOptions = field(default_factory=EngineOptions)
    autoscale: AutoscalePolicy | None = None


class Server:
    """A running server: this process is rank 0 (HTTP, coordinator), `procs` are ranks 1..M-1."""

    def __init__(self, engine: Engine, httpd: ModelHTTPServer | None, procs: list, startup_s: float) -> None:
        self.engine, self.httpd, self.procs = engine, httpd, procs
        self.startup_s = startup_s
        self.autoscaler: Autoscaler | None = None
        self._stopped = threading.Event()
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return self.httpd.url if self.httpd else ""

    def wait(self, timeout_s: float | None = None) -> bool:
        return self._stopped.wait(timeout_s)

    def shutdown(self) -> None:
        """Stop taking requests, serve what is queued, stop every rank, join the workers."""
        with self._lock:
            if self._stopped.is_set():
                return
            if self.autoscaler:
                self.autoscaler.stop()
            self.engine.shutdown()
            if self.httpd is not None:
                self.httpd.shutdown()
                self.httpd.server_close()
            for p in self.procs:
                p.join(10)
                if p.is_alive():
                    p.terminate()
                    p.join(5)
            if self.engine.state != "failed":      # a world that could not be re-formed is left as it is
                self.engine.world.close()
            self._stopped.set()
            log.info("model server stopped")


def start(opts: ServeOptions) -> Server:
    """Start the server described by `opts` in this process (rank 0). Raises ConfigError for bad
    options or weights."""
    if not 1 <= opts.ranks <= opts.max_ranks:
        raise ConfigError(f"--ranks must be between 1 and --max-ranks ({opts.max_ranks}), got {opts.ranks}",
                          setting="ranks")
    if not opts.admin_token:
        raise ConfigError("an admin token is required", setting="admin_token")
    weights = Path(opts.weights)
    if not weights.is_file():
        raise ConfigError(f"model weights not found: {weights}", setting="model_weights")
    from docassay.infra.model.checkpoint import kind_of
    kind = kind_of(weights)                       # before any process starts: a foreign file is a clear error
    if opts.model is not None and opts.model != kind:
        raise ConfigError(f"--model {opts.model}: {weights} holds a {kind} checkpoint", setting="model")
    t0 = time.perf_counter()
    port = _free_port(RENDEZVOUS_HOST)
    fork = threading.active_count() == 1 and not torch.cuda.is_initialized() and not torch.cuda.is_available()
    ctx = mp.get_context("fork") if fork else mp.get_context("forkserver")
    procs = [ctx.Process(target=worker_main, name=f"docassay-serve-rank{r}", daemon=True,
                         args=(r, opts.max_ranks, RENDEZVOUS_HOST, port, opts.threads_per_rank,
                               opts.collective_timeout_s))
             for r in range(1, opts.max_ranks)]
    for p in procs:
        p.start()
    world = None
    try:
        torch.set_num_threads(opts.threads_per_rank)
        world = init_world(0, opts.max_ranks, RENDEZVOUS_HOST, port, timeout_s=opts.collective_timeout_s)
        from docassay.infra.model.checkpoint import load_any
        _, model, meta = load_any(weights)
        front = FRONTS[kind](model, world.device)
        cfg = front.cfg
        experts = front.take_experts()
        shard = ExpertShard(len(experts), cfg.d_model, cfg.d_expert, world.device)
        shard.load_all(experts, world.device)
        del experts
        release_memory(world.device)
        receive_shape(world, [len(front.moe_layers), cfg.d_model, cfg.d_expert, cfg.n_experts])
        info = ModelInfo(str(weights.resolve()), cfg.to_json(), meta.get("feature_version"), shard.numel * 4, kind)
        engine = Engine(world, front, shard, info, opts.engine, procs)
        httpd = ModelHTTPServer((opts.host, opts.port), engine, opts.admin_token)     # bind before scaling
        engine.scale_now(opts.ranks)
    except BaseException:
        for p in procs:
            p.terminate()
        if world is not None:
            world.close()
        raise
    engine.start()
    server = Server(engine, httpd, procs, time.perf_counter() - t0)
    httpd.on_shutdown = server.shutdown
    threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.2}, name="docassay-serve-http",
                     daemon=True).start()
    if opts.autoscale is not None:
        server.autoscaler = Autoscaler(engine, opts.autoscale)
        server.autoscaler.start()
    log.info("model server on %s: %d of %d ranks active (%s), started in %.1f s", server.url, opts.ranks,
             opts.max_ranks, world.backend, server.startup_s)
    return server


def serve_until_stopped(server: Server) -> None:
    """Block until the server is shut down (admin call) or this process gets SIGINT/SIGTERM."""
    def stop(signum, frame):                       # noqa: ARG001
        threading.Thread(target=server.shutdown, daemon=True).start()
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, stop)
        signal.signal(signal.SIGINT, stop)
    while not server.wait(0.5):
        pass


def default_token_file() -> Path:
    from docassay.infra.config import default_home
    return default_home() / "serve" / "admin-token"


def resolve_admin_token(explicit: str | None, token_file: Path | None, *, create: bool) -> tuple[str, Path | None]:
    """The admin token: `explicit`, else $DOCASSAY_ADMIN_TOKEN, else the token file (created with a
    random token, mode 0600, when `create`). Returns (token, the file it came from or None)."""
    token = explicit or os.environ.get(ADMIN_TOKEN_ENV, "")
    if token:
        return token, None
    path = token_file or default_token_file()
    if path.is_file():
        return path.read_text().strip(), path
    if not create:
        raise ConfigError(f"no admin token: pass --token, set ${ADMIN_TOKEN_ENV}, or run the server that writes {path}",
                          setting="admin_token")
    path.parent.mkdir(parents=True, exist_ok=True)
    token = secrets.token_urlsafe(24)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        fh.write(token + "\n")
    return token, path


def _free_port(host: str) -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return s.getsockname()[1]
