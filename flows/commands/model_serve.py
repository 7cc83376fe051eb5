"""`docassay model serve|scale|status` — the MoE model behind one shared server (infra/serve).

    docassay model serve --max-ranks 4 --ranks 1 [--port 8765] [--weights PATH] [--autoscale]
    docassay model serve --model layout ...         # the layout reader (infra/model/weights/layout.pt)
    docassay model scale 2 [--url URL] [--token TOKEN]
    docassay model status [--url URL] [--json]

The admin token: `--admin-token` / `--token`, else `$DOCASSAY_ADMIN_TOKEN`, else the file
`$DOCASSAY_HOME/serve/admin-token` that `serve` writes (mode 0600) when neither is given.
"""
from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from pathlib import Path
from typing import Callable

__all__ = ["SERVE_SUBCOMMANDS"]


def _default_url() -> str:
    from docassay.infra.serve.client import DEFAULT_URL, MODEL_URL_ENV
    return os.environ.get(MODEL_URL_ENV, DEFAULT_URL)


# -- serve ------------------------------------------------------------------------------------------

def _add_serve(p: argparse.ArgumentParser) -> None:
    p.add_argument("--max-ranks", type=int, default=4, help="worker processes started once (the world size; default 4)")
    p.add_argument("--ranks", type=int, default=1, help="ranks active at start (default 1)")
    p.add_argument("--model", choices=("ranker", "layout"), default=None,
                   help="which model: the proposal ranker or the layout reader (default: the kind of --weights, "
                        "else the ranker); picks the default weights and must match the checkpoint's own kind")
    p.add_argument("--weights", type=Path, help="checkpoint (default: $DOCASSAY_MODEL_WEIGHTS, else the shipped "
                                                "weights; with --model layout $DOCASSAY_LAYOUT_WEIGHTS, else layout.pt)")
    p.add_argument("--host", default="127.0.0.1", help="HTTP address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8765, help="HTTP port (default 8765; 0: any free port)")
    p.add_argument("--admin-token", help=f"token for the admin endpoints (default: ${'DOCASSAY_ADMIN_TOKEN'}, "
                                         "else a random one written to --token-file)")
    p.add_argument("--token-file", type=Path, help="where the generated admin token is kept "
                                                   "(default $DOCASSAY_HOME/serve/admin-token)")
    p.add_argument("--threads", type=int, default=1, help="torch threads per rank (default 1)")
    p.add_argument("--max-batch-documents", type=int, default=32)
    p.add_argument("--max-queue-documents", type=int, default=2048, help="beyond this, 503 (clients retry)")
    p.add_argument("--request-timeout", type=float, default=120.0, help="seconds before a queued request gets 504")
    p.add_argument("--autoscale", action="store_true",
                   help="scale on queue depth and announced demand (POST /v1/demand)")
    p.add_argument("--min-ranks", type=int, default=1, help="autoscale floor (default 1)")
    p.add_argument("--verbose", action="store_true", help="log every HTTP request")


def _run_serve(args: argparse.Namespace) -> int:
    from docassay.extractors.instructions.model_scorer import DEFAULT_WEIGHTS, WEIGHTS_ENV
    from docassay.infra.serve.autoscale import AutoscalePolicy
    from docassay.infra.serve.engine import EngineOptions
    from docassay.infra.serve.launch import ServeOptions, resolve_admin_token, serve_until_stopped, start

    logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, stream=sys.stderr,
                        format="%(asctime)s %(name)s %(levelname)s %(message)s")
    if args.model == "layout" and not args.weights:
        from docassay.extractors.instructions.layout_scorer import DEFAULT_LAYOUT_WEIGHTS, LAYOUT_WEIGHTS_ENV
        weights = Path(os.environ.get(LAYOUT_WEIGHTS_ENV) or DEFAULT_LAYOUT_WEIGHTS).expanduser()
    else:
        weights = Path(args.weights or os.environ.get(WEIGHTS_ENV) or DEFAULT_WEIGHTS).expanduser()
    token, token_path = resolve_admin_token(args.admin_token, args.token_file, create=True)
    engine = EngineOptions(max_batch_documents=args.max_batch_documents, max_queue_documents=args.max_queue_documents,
                           request_timeout_s=args.request_timeout)
    opts = ServeOptions(weights=weights, model=args.model, max_ranks=args.max_ranks, ranks=args.ranks, host=args.host, port=args.port,
                        admin_token=token, threads_per_rank=args.threads, engine=engine,
                        autoscale=AutoscalePolicy(min_ranks=args.min_ranks) if args.autoscale else None)
    server = start(opts)
    ready = {"url": server.url, "model": server.engine.front.kind, "max_ranks": args.max_ranks, "active_ranks": args.ranks,
             "backend": server.engine.world.backend, "startup_s": round(server.startup_s, 3), "pid": os.getpid(),
             "token_file": str(token_path) if token_path else None}
    print(json.dumps(ready), flush=True)                     # one line on stdout: scripts wait for it
    serve_until_stopped(server)
    return 0


# -- scale ------------------------------------------------------------------------------------------

def _add_scale(p: argparse.ArgumentParser) -> None:
    p.add_argument("ranks", type=int, metavar="K", help="active ranks wanted")
    add_model_url(p)
    p.add_argument("--token", help="admin token (default $DOCASSAY_ADMIN_TOKEN, else the server's token file)")
    p.add_argument("--token-file", type=Path)
    p.add_argument("--no-wait", action="store_true", help="return once the scale is queued")


def _run_scale(args: argparse.Namespace) -> int:
    from docassay.infra.serve.client import ModelClient
    from docassay.infra.serve.launch import resolve_admin_token

    token, _ = resolve_admin_token(args.token, args.token_file, create=False)
    report = ModelClient(args.url or _default_url()).scale(args.ranks, token=token, wait=not args.no_wait)
    print(json.dumps(report))
    if "total_s" in report:
        print(f"scaled {report['from_ranks']} -> {report['to_ranks']} ranks in {report['total_s'] * 1e3:.1f} ms "
              f"(pause {report['pause_s'] * 1e3:.1f}, plan {report['plan_s'] * 1e3:.1f}, moves "
              f"{report['move_s'] * 1e3:.1f}, switch {report['switch_s'] * 1e3:.1f}); "
              f"{report['moved_copies']} expert copies moved", file=sys.stderr)
    return 0


def add_model_url(p: argparse.ArgumentParser) -> None:
    """`--model-url`, the one spelling on every command (`extract`, `model scale`, `model status`);
    `--url` stays accepted, hidden from the help."""
    p.add_argument("--model-url", dest="url", default=None,
                   help="URL of the model server (default $DOCASSAY_MODEL_URL, else http://127.0.0.1:8765)")
    p.add_argument("--url", dest="url", help=argparse.SUPPRESS)


# -- status -----------------------------------------------------------------------------------------

def _add_status(p: argparse.ArgumentParser) -> None:
    add_model_url(p)
    p.add_argument("--json", action="store_true", help="the full status as JSON")


def _run_status(args: argparse.Namespace) -> int:
    from docassay.infra.serve.client import ModelClient
    from docassay.infra.serve.status import format_status

    status = ModelClient(args.url or _default_url(), timeout_s=30).status()
    print(json.dumps(status.to_json()) if args.json else format_status(status))
    return 0


SERVE_SUBCOMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {
    "serve": (_add_serve, _run_serve, "serve the model: M ranks in one world, N active (elastic expert parallelism)"),
    "scale": (_add_scale, _run_scale, "change the number of active ranks of a running server (admin token)"),
    "status": (_add_status, _run_status, "active ranks, placement, load, memory and the last reconfiguration"),
}
