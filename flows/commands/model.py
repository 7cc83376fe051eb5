"""`docassay model SUBCOMMAND` — the local MoE model that ranks extraction proposals.

Sub-commands are listed in `SUBCOMMANDS` (name -> (add_arguments, run)); each is small:

    docassay model train [--out PATH] [--seed N] [--schedule switch|token|dense] [--formats N] ...
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Callable

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
NEGATIVES = (8, 16)      # per field in training: the baseline's 8 best wrong proposals and 16 random others
DEFAULT_WEIGHTS = Path(__file__).resolve().parents[2] / "infra" / "model" / "weights" / "moe.pt"


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("model", help="train the MoE model that ranks extraction proposals",
                       description="The local Mixture-of-Experts model that writes instructions for new formats.")
    msub = p.add_subparsers(dest="model_command", metavar="SUBCOMMAND")
    msub.required = True
    for name, (add, run, help_) in SUBCOMMANDS.items():
        q = msub.add_parser(name, help=help_, description=help_)
        add(q)
        q.set_defaults(run=run)


# -- train ------------------------------------------------------------------------------------------

def _add_train(p: argparse.ArgumentParser) -> None:
    p.add_argument("--out", type=Path, default=DEFAULT_WEIGHTS, help=f"weights file (default {DEFAULT_WEIGHTS})")
    p.add_argument("--seed", type=int, default=0, help="seeds the data, the initialisation and the batches")
    p.add_argument("--schedule", choices=("switch", "token", "dense"), default="switch",
                   help="switch: token choice, then expert choice with shrinking capacity (LocMoE+); "
                        "token: token choice throughout; dense: a dense model of the same active size")
    p.add_argument("--formats", type=int, default=160, help="synthetic training formats per kind (invoice, receipt)")
    p.add_argument("--docs", type=int, default=3, help="documents per format (>= 2: locators are checked on siblings)")
    p.add_argument("--val-formats", type=int, default=24, help="synthetic validation formats per kind (dev split)")
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--text-dropout", type=float, default=0.0,
                   help="share of training tokens whose hashed text features are all dropped")
    p.add_argument("--id-dropout", type=float, default=0.0, help="share of the other tokens' hashed ids dropped")
    p.add_argument("--data-cache", type=Path, help="folder to keep the featurised data in and reuse (same seed and sizes)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: small tensors, and on a shared machine more threads spin-wait)")
    p.add_argument("--log", type=Path, help="also write the epoch log as JSON here")


def _run_train(args: argparse.Namespace) -> int:
    import torch

    from infra.model.checkpoint import save
    from infra.model.moe import MoEConfig
    from infra.model.train import TrainConfig, train

    torch.set_num_threads(max(1, args.threads))
    if args.docs < 2 or args.formats < 1:
        print("docassay: error: --docs must be at least 2 and --formats at least 1", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    train_set, val_set = _data(args)
    t_data = time.perf_counter() - t0
    from extractors.instructions.model_features import FEATURE_VERSION, N_BUCKETS, N_NUMERIC

    mcfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=N_NUMERIC, n_experts=args.experts, top_k=args.top_k)
    tcfg = TrainConfig(schedule=args.schedule, epochs=args.epochs, seed=args.seed,
                       text_dropout=args.text_dropout, id_dropout=args.id_dropout)
    res = train(mcfg, tcfg, train_set, val_set, log=lambda s: print(s, file=sys.stderr, flush=True))
    meta = {"feature_version": FEATURE_VERSION, "schedule": args.schedule, "seed": args.seed,
            "data": {"kinds": ["invoice", "receipt"], "train_formats_per_kind": args.formats, "docs_per_format": args.docs,
                     "val_formats_per_kind": args.val_formats, "train_docs": train_set.n_docs,
                     "train_tokens": train_set.n_tokens, "val_docs": val_set.n_docs},
            "train": {**res.summary(), "config": vars(tcfg) if hasattr(tcfg, "__dict__") else {}},
            "data_seconds": round(t_data, 1)}
    path = save(args.out, res.model, meta)
    if args.log:
        args.log.write_text(json.dumps(meta, indent=1, default=str))
    last = res.log[-1]
    print(f"trained in {t_data + res.seconds:.0f} s (data {t_data:.0f} s); val accuracy {last.val_accuracy:.4f}, "
          f"generalising {last.val_generalising:.4f}; weights -> {path} ({path.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)
    return 0


def _data(args: argparse.Namespace):
    from extractors.instructions.model_data import synth_examples, token_set
    from extractors.instructions.model_features import FEATURE_VERSION
    from infra.model.tokens import TokenSet

    sets = {}
    for split, n in (("train", args.formats), ("dev", args.val_formats)):
        cache = args.data_cache / f"{split}-{n}x{args.docs}-seed{args.seed}-v{FEATURE_VERSION}.npz" if args.data_cache else None
        if cache is not None and cache.is_file():
            sets[split] = TokenSet.load(cache)
            print(f"{split}: {sets[split].n_docs} documents from {cache}", file=sys.stderr)
            continue
        parts = []
        for kind, folder in (("invoice", "invoices"), ("receipt", "receipts")):
            schema = json.loads((EXAMPLES / folder / "schema.json").read_text())
            t = time.perf_counter()
            ex = list(synth_examples(kind, schema, n, args.docs, split=split, seed=args.seed,
                                     negatives=NEGATIVES if split == "train" else None))
            print(f"{split} {kind}: {len(ex)} documents labelled in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
            parts.append(token_set(ex))
        sets[split] = TokenSet.concat(parts)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            sets[split].save(cache)
    return sets["train"], sets["dev"]


SUBCOMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {
    "train": (_add_train, _run_train, "train the proposal ranker on synthetic documents and write its weights"),
}

from flows.commands.model_serve import SERVE_SUBCOMMANDS  # noqa: E402  serve|scale|status (issue 5, infra/serve)

SUBCOMMANDS.update(SERVE_SUBCOMMANDS)
