"""The layout reader as a generator scorer: `layout_scorer()` -> a `Scorer` with `tokens()`.

    scorer = layout_scorer()                    # infra/model/weights/layout.pt, loaded once per process
    ranked = scorer(ix, specs, proposals)       # {field: [Proposal, best first, .score in [0, 1]]}

The model runs **once per document** (all fields at once) and reads the words; the generator still
chooses among the existing proposals, so the instructions it writes replay without the model.

**A proposal's score** is the model's probability that the field's value is the proposal's value:
p(span) = p_begin(first word) x p_end(last word) (p_begin's softmax includes "absent", so
p(span) <= 1 - p(absent)), summed over the distinct spans among the field's proposals that read the
same value (a total printed twice is one value). It is a probability, so `generator.MIN_SCORE`
(an optional field below it is left out) and the calibrator keep their meaning.

**Level and blend** (chosen on dev-tune, LAYOUT_CARD.md): within a field the order is the model's
(p(value) / the field's best p(value)); the field's *level*, its best proposal's score, which decides
whether an optional field is kept and which field claims a contested span, is `LEVEL`: "model" (the
model's p(value) itself), "present" (1 - p(absent)) or "baseline" (the baseline's best score, as the
ranker does). The score used is then `BLEND` x that + (1 - `BLEND`) x the baseline's score of the
proposal. `$DOCASSAY_LAYOUT_LEVEL` / `$DOCASSAY_LAYOUT_BLEND` override both. Proposals of equal
score (one span, several locators) keep the baseline's order: which locator finds the span is the
baseline's call. A `detect` proposal (the currency) is not a span the model reads: it keeps the
baseline's score.

**Where the locator and the model disagree**: every proposal's `features` get `layout_p_absent`
and `layout_top` (1.0 when its span is the model's own best span for the field, 0.0 otherwise), so
a check can flag a written locator that does not reproduce the model's reading.

**Tokens** (`model_tokens` in a results row): input = the document's words, output = the fields read.
"""
from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path

import torch

from docassay.extractors.instructions import baseline
from docassay.extractors.instructions.layout_features import doc_words, layout_doc
from docassay.extractors.instructions.proposals import Proposal
from docassay.extractors.labels import FieldSpec
from docassay.extractors.spans import DocIndex
from docassay.infra.model.checkpoint import load_layout
from docassay.infra.model.layout import LayoutReader, collate

__all__ = ["LayoutScorer", "layout_scorer", "DEFAULT_LAYOUT_WEIGHTS", "LAYOUT_WEIGHTS_ENV", "MAX_SPAN_WORDS", "BLEND",
           "BLEND_ENV", "MAX_READ_WORDS", "LEVELS", "LEVEL", "LEVEL_ENV"]

DEFAULT_LAYOUT_WEIGHTS = Path(__file__).resolve().parents[2] / "infra" / "model" / "weights" / "layout.pt"
LAYOUT_WEIGHTS_ENV = "DOCASSAY_LAYOUT_WEIGHTS"
MAX_SPAN_WORDS = 24          # the model's own best span: at most this many words from its first
MAX_READ_WORDS = 3000        # words read per document (attention is quadratic); later words' spans get p = 0
BLEND = 0.5                  # weight of the model's probability against the baseline's score
BLEND_ENV = "DOCASSAY_LAYOUT_BLEND"
LEVELS = ("model", "present", "baseline")
LEVEL = "model"              # a field's best score: the model's p(value) | 1 - p(absent) | the baseline's best
LEVEL_ENV = "DOCASSAY_LAYOUT_LEVEL"


class LayoutScorer:
    """Ranks proposals with a trained `LayoutReader` (inference only, no state: thread-safe)."""

    def __init__(self, model: LayoutReader, meta: dict, path: Path, blend: float | None = None,
                 level: str | None = None) -> None:
        self.blend = float(os.environ.get(BLEND_ENV) or BLEND) if blend is None else blend
        self.level = level or os.environ.get(LEVEL_ENV) or LEVEL
        if self.level not in LEVELS:
            raise ValueError(f"layout level must be one of {LEVELS}, got {self.level!r}")
        if not 0.0 <= self.blend <= 1.0:
            raise ValueError(f"layout blend must be in [0, 1], got {self.blend}")
        self.model = model
        self.cfg = model.cfg
        self.meta = meta
        self.path = path
        self.name = f"layout:{path.stem}"

    @torch.no_grad()
    def read(self, ix: DocIndex, specs: list[FieldSpec]) -> tuple[torch.Tensor, torch.Tensor, object]:
        """(p_begin [F, N+1] with the last column = absent, p_end [F, N], the document's words)."""
        words = doc_words(ix)
        d = layout_doc(ix, specs, words)
        if not d.n_words:
            f = len(specs)
            return torch.cat([torch.zeros(f, 0), torch.ones(f, 1)], 1), torch.zeros(f, 0), words
        out = self.model(collate([d], MAX_READ_WORDS))
        return torch.softmax(out.begin[0], -1), torch.softmax(out.end[0], -1), words

    def __call__(self, ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> dict[str, list[Proposal]]:
        baseline.score_proposals(ix, specs, proposals)          # tie-break among a span's locators
        if not any(proposals.values()):
            return proposals
        pb, pe, words = self.read(ix, specs)
        n = pe.shape[1]
        for j, spec in enumerate(specs):
            props = proposals.get(spec.name) or []
            if not props:
                continue
            p_absent = float(pb[j, n]) if n else 1.0
            top = _best_span(pb[j, :n], pe[j]) if n else None
            span_p: dict[tuple, float] = {}
            value_p: dict[str, float] = {}
            cover: dict[int, tuple[int, int] | None] = {}
            for i, p in enumerate(props):
                fl = words.span_words(ix, p.span) if p.relation != "detect" else None
                cover[i] = fl
                if fl is None or p.span.key in span_p:
                    continue
                sp = float(pb[j, fl[0]] * pe[j, fl[1]]) if fl[1] < n else 0.0     # past MAX_READ_WORDS: unread
                span_p[p.span.key] = sp
                value_p[repr(p.value)] = value_p.get(repr(p.value), 0.0) + sp
            top_v = max(value_p.values(), default=0.0)
            level = {"model": min(1.0, top_v), "present": 1.0 - p_absent,
                     "baseline": max((q.score for q in props), default=0.0)}[self.level]
            for i, p in enumerate(props):
                p.features["baseline"] = p.score
                p.features["layout_p_absent"] = p_absent
                fl = cover[i]
                p.features["layout_top"] = 1.0 if fl is not None and fl == top else 0.0
                if fl is not None:
                    p.features["layout_p"] = min(1.0, value_p[repr(p.value)])
                    own = level * (value_p[repr(p.value)] / top_v if top_v > 0 else 0.0)
                    p.score = self.blend * own + (1 - self.blend) * p.features["baseline"]
            props.sort(key=lambda p: (-p.score, -p.features["baseline"], p.span.key))
        return proposals

    def tokens(self, ix: DocIndex, specs: list[FieldSpec], proposals: dict[str, list[Proposal]]) -> tuple[int, int]:
        """(input, output) tokens of one call: the document's words, the fields read."""
        return sum(len(line.word_ids) for page in ix.doc.pages for line in page.lines), len(specs)


def _best_span(pb: torch.Tensor, pe: torch.Tensor) -> tuple[int, int]:
    """The model's own most likely (first, last) word pair with last - first < MAX_SPAN_WORDS."""
    n = pb.numel()
    joint = pb[:, None] * pe[None, :]                                        # [N, N]
    i = torch.arange(n)
    ok = (i[None, :] >= i[:, None]) & (i[None, :] - i[:, None] < MAX_SPAN_WORDS)
    flat = int(joint.masked_fill(~ok, -1.0).argmax())
    return flat // n, flat % n


def layout_scorer(weights: str | Path | None = None) -> LayoutScorer:
    """The scorer for `weights` (default: `$DOCASSAY_LAYOUT_WEIGHTS`, else the shipped layout.pt),
    loaded once per process and path."""
    path = Path(weights or os.environ.get(LAYOUT_WEIGHTS_ENV) or DEFAULT_LAYOUT_WEIGHTS).expanduser().resolve()
    return _load(path)


@lru_cache(maxsize=8)
def _load(path: Path) -> LayoutScorer:
    torch.set_num_threads(1)
    model, meta = load_layout(path)
    return LayoutScorer(model, meta, path)
