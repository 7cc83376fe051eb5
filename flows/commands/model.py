"""`docassay model SUBCOMMAND` — the local MoE model that ranks extraction proposals.

Sub-commands are listed in `SUBCOMMANDS` (name -> (add_arguments, run)); each is small:

    docassay model train [--model ranker|layout] [--out PATH] [--seed N] [--schedule switch|token|dense] ...

`--model ranker` (the default) trains the proposal ranker (`infra/model/weights/moe.pt`); `--model
layout` the word-level layout reader (`infra/model/weights/layout.pt`, see `model_layout`).
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
RESIDUAL = 0.3           # default beta of `--residual` (the shipped model)
CORRECTION_COEF = 0.1    # default of `--correction-coef` (the shipped model)
REWORD = 0.0             # default of `--reword`
OCR_SHARE = 0.5          # default of `--ocr-share` (the shipped model)
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
    p.add_argument("--model", choices=("ranker", "layout"), default="ranker",
                   help="ranker: the proposal ranker (moe.pt, default); layout: the word-level layout reader (layout.pt)")
    p.add_argument("--out", type=Path, default=None,
                   help=f"weights file to write (required unless --force: the shipped weights are {DEFAULT_WEIGHTS})")
    p.add_argument("--force", action="store_true",
                   help="without --out, overwrite the shipped weights (infra/model/weights/moe.pt)")
    p.add_argument("--seed", type=int, default=0, help="seeds the data, the initialisation and the batches")
    p.add_argument("--schedule", choices=("switch", "token", "dense"), default="switch",
                   help="switch: token choice, then expert choice with shrinking capacity (LocMoE+); "
                        "token: token choice throughout; dense: a dense model of the same active size")
    p.add_argument("--formats", type=int, default=None,
                   help="synthetic training formats per kind (invoice, receipt; default 160, layout 150)")
    p.add_argument("--docs", type=int, default=None,
                   help="documents per format (ranker: >= 2, locators are checked on siblings; default 3, layout 2)")
    p.add_argument("--val-formats", type=int, default=None,
                   help="synthetic validation formats per kind (dev split; default 24, layout 12)")
    p.add_argument("--epochs", type=int, default=None, help="default 12, layout 7")
    p.add_argument("--extra-docs", type=Path, default=None,
                   help="layout: JSON lines {id, path, truth, kind} of more training documents "
                        "(bench/layout_docs.py writes the dev data's dev-tune split)")
    p.add_argument("--d-model", type=int, default=64, help="layout: width of the word representation")
    p.add_argument("--d-expert", type=int, default=256, help="layout: hidden size of one expert")
    p.add_argument("--layers", type=int, default=2, help="layout: transformer blocks")
    p.add_argument("--max-words", type=int, default=384,
                   help="layout: training reads at most this many words of a document (inference reads all)")
    p.add_argument("--switch-by-epoch", type=int, default=4,
                   help="layout: the latest epoch of the token-choice -> expert-choice switch (forced there, logged)")
    p.add_argument("--synth-limit", type=int, default=None,
                   help="layout: train on the first N synthetic documents only (short comparison runs)")
    p.add_argument("--experts", type=int, default=8)
    p.add_argument("--top-k", type=int, default=2)
    p.add_argument("--features", type=int, choices=(1, 2), default=None,
                   help="feature version (default: the current one; 1 = hashed label/section words and 3-grams)")
    p.add_argument("--residual", type=float, default=RESIDUAL,
                   help=f"beta: the model corrects the baseline's score by at most this much (0: no residual; default {RESIDUAL})")
    p.add_argument("--correction-coef", type=float, default=CORRECTION_COEF,
                   help=f"weight of the penalty on the squared correction (residual models; default {CORRECTION_COEF})")
    p.add_argument("--bce-coef", type=float, default=None,
                   help="weight of the calibration loss (default 1 without a residual; 0 with one, whose map from "
                        "score to probability is the baseline's and is not learned)")
    p.add_argument("--capacity-reference", choices=("expert", "token"), default="expert",
                   help="accuracy the capacity schedule may not fall 1 point below: the first expert-choice "
                        "epoch's (default) or token choice's best (shrinks further)")
    p.add_argument("--ocr-share", type=float, default=OCR_SHARE,
                   help=f"share of one-page training formats read as OCR line files of their scans "
                        f"(no font sizes; default {OCR_SHARE})")
    p.add_argument("--reword", type=float, default=REWORD,
                   help=f"share of training formats whose field labels are reworded with other lexicon phrasings "
                        f"(default {REWORD})")
    p.add_argument("--text-dropout", type=float, default=0.0,
                   help="share of training tokens whose hashed text features are all dropped")
    p.add_argument("--id-dropout", type=float, default=0.0, help="share of the other tokens' hashed ids dropped")
    p.add_argument("--data-cache", type=Path, help="folder to keep the featurised data in and reuse (same seed and sizes)")
    p.add_argument("--threads", type=int, default=1,
                   help="torch threads (default 1: small tensors, and on a shared machine more threads spin-wait)")
    p.add_argument("--log", type=Path, help="also write the epoch log as JSON here")


def train_target(out: Path | None, force: bool) -> Path | None:
    """Where `model train` writes: `--out` when given; the shipped weights only with `--force`;
    None (a usage error) otherwise: training never replaces the shipped weights by default."""
    if out is not None:
        return out
    return DEFAULT_WEIGHTS if force else None


RANKER_DEFAULTS = {"formats": 160, "docs": 3, "val_formats": 24, "epochs": 12}


def _run_train(args: argparse.Namespace) -> int:
    if args.model == "layout":
        from docassay.flows.commands.model_layout import run_layout_train
        return run_layout_train(args)
    for k, v in RANKER_DEFAULTS.items():
        if getattr(args, k) is None:
            setattr(args, k, v)
    target = train_target(args.out, args.force)
    if target is None:
        print(f"docassay: error: model train needs --out FILE (or --force to overwrite the shipped weights "
              f"{DEFAULT_WEIGHTS})", file=sys.stderr)
        return 2
    args.out = target
    import torch

    from docassay.infra.model.checkpoint import save
    from docassay.infra.model.moe import MoEConfig
    from docassay.infra.model.train import TrainConfig, train

    torch.set_num_threads(max(1, args.threads))
    if args.docs < 2 or args.formats < 1:
        print("docassay: error: --docs must be at least 2 and --formats at least 1", file=sys.stderr)
        return 2
    t0 = time.perf_counter()
    train_set, val_set = _data(args)
    t_data = time.perf_counter() - t0
    from docassay.extractors.instructions.generator import MIN_SCORE
    from docassay.extractors.instructions.model_features import N_BUCKETS, numeric_names

    version = _version(args)
    names = numeric_names(version)
    mcfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=len(names), n_experts=args.experts, top_k=args.top_k,
                     residual=args.residual, baseline_index=names.index("baseline"), residual_threshold=MIN_SCORE)
    bce = args.bce_coef if args.bce_coef is not None else (0.0 if args.residual > 0 else 1.0)
    tcfg = TrainConfig(schedule=args.schedule, epochs=args.epochs, seed=args.seed, bce_coef=bce,
                       text_dropout=args.text_dropout, id_dropout=args.id_dropout, correction_coef=args.correction_coef,
                       capacity_reference=args.capacity_reference)
    res = train(mcfg, tcfg, train_set, val_set, log=lambda s: print(s, file=sys.stderr, flush=True))
    meta = {"feature_version": version, "schedule": args.schedule, "seed": args.seed, "residual": args.residual,
            "data": {"kinds": ["invoice", "receipt"], "train_formats_per_kind": args.formats, "docs_per_format": args.docs,
                     "reword": args.reword, "ocr_share": args.ocr_share,
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


def _version(args: argparse.Namespace) -> int:
    from docassay.extractors.instructions.model_features import FEATURE_VERSION
    return args.features or FEATURE_VERSION


def _data(args: argparse.Namespace):
    """(train, validation) TokenSets. With `--data-cache`, the labelled proposals (the slow part:
    locators replayed on sibling documents) are kept per split and kind, and the featurised sets per
    feature version, so a later run with other features or model settings labels nothing again."""
    import pickle

    import numpy as np

    from docassay.extractors.instructions.model_data import synth_labelled, to_tokens
    from docassay.infra.model.tokens import TokenSet

    version = _version(args)
    sets = {}
    for split, n in (("train", args.formats), ("dev", args.val_formats)):
        reword = args.reword if split == "train" else 0.0
        ocr = args.ocr_share if split == "train" else 0.0
        stem = f"{split}-{n}x{args.docs}-seed{args.seed}" + (f"-reword{reword:g}" if reword else "") + \
            (f"-ocr{ocr:g}" if ocr else "")
        cache = args.data_cache / f"{stem}-v{version}.npz" if args.data_cache else None
        if cache is not None and cache.is_file():
            sets[split] = TokenSet.load(cache)
            print(f"{split}: {sets[split].n_docs} documents from {cache}", file=sys.stderr)
            continue
        parts = []
        for kind, folder in (("invoice", "invoices"), ("receipt", "receipts")):
            rng = np.random.default_rng(args.seed)
            raw = args.data_cache / f"{stem}-{kind}.labelled.pkl" if args.data_cache else None
            t = time.perf_counter()
            if raw is not None and raw.is_file():
                labelled = pickle.loads(raw.read_bytes())
            else:
                schema = json.loads((EXAMPLES / folder / "schema.json").read_text())
                labelled = list(synth_labelled(kind, schema, n, args.docs, split=split, seed=args.seed, reword=reword,
                                                ocr_share=ocr))
                print(f"{split} {kind}: {len(labelled)} documents labelled in {time.perf_counter() - t:.0f} s",
                      file=sys.stderr, flush=True)
                if raw is not None:
                    raw.parent.mkdir(parents=True, exist_ok=True)
                    raw.write_bytes(pickle.dumps(labelled, protocol=pickle.HIGHEST_PROTOCOL))
            t = time.perf_counter()
            ex = [to_tokens(lab, version=version, negatives=NEGATIVES if split == "train" else None, rng=rng)
                  for lab in labelled]
            del labelled
            print(f"{split} {kind}: featurised (v{version}) in {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
            parts.append(TokenSet.concat([e.tokens for e in ex]))
        sets[split] = TokenSet.concat(parts)
        if cache is not None:
            cache.parent.mkdir(parents=True, exist_ok=True)
            sets[split].save(cache)
    return sets["train"], sets["dev"]


SUBCOMMANDS: dict[str, tuple[Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int], str]] = {
    "train": (_add_train, _run_train, "train the proposal ranker (or, with --model layout, the layout reader) and write its weights"),
}

from docassay.flows.commands.model_serve import SERVE_SUBCOMMANDS  # noqa: E402  serve|scale|status (issue 5, infra/serve)

SUBCOMMANDS.update(SERVE_SUBCOMMANDS)
