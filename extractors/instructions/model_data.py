"""Training examples for the proposal ranker, from the synthetic generator (never from dev data).

For every synthetic document: its proposals (exactly what the generator would score), their
features (`model_features.featurize`, with the baseline's scores as inputs), and two labels:

* `value_ok`: the value the proposal's locator reads on this document equals the truth;
* `gen_ok`: also, replayed on the *other* documents of the same format (`executor.locate`, with this
  document's locale, as stored instructions would be), the locator reads each one's true value.
  This is what teaches the model locators that generalise to the next document of the format.

Documents of a format come together (`docs_per_format` >= 2 for `gen_ok` to mean anything);
`split` keeps training, validation and test formats disjoint (`extractors.synth.SPLITS`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Iterator, Mapping

import numpy as np

from extractors.instructions import baseline
from extractors.instructions.executor import locate
from extractors.instructions.generator import detect_locale, schema_fields
from extractors.instructions.model import Locale
from extractors.instructions.model_features import NUMERIC, featurize
from extractors.instructions.proposals import Proposal, propose
from extractors.labels import FieldSpec
from extractors.normalize import fold
from extractors.spans import DocIndex
from extractors.synth import SynthDoc, generate
from infra.model.tokens import TokenSet

__all__ = ["DocExample", "same_value", "label_document", "synth_examples", "token_set"]


@dataclass
class DocExample:
    doc_id: str
    format_id: str
    tokens: TokenSet            # one document
    fields: list[str]


def same_value(vtype: str, got: object, want: object) -> bool:
    """Whether an extracted value is the true one: numbers within 0.011, dates as ISO strings,
    identifiers without whitespace, case or a leading '#', text after folding."""
    if got is None or want is None:
        return False
    if isinstance(want, (int, float)) and not isinstance(want, bool):
        return isinstance(got, (int, float)) and not isinstance(got, bool) and abs(float(got) - float(want)) <= 0.011
    if vtype == "date":
        return str(got) == str(want)
    if vtype == "identifier":
        return _ident(got) == _ident(want)
    return fold(str(got)) == fold(str(want))


def _ident(v: object) -> str:
    return re.sub(r"\s+", "", str(v)).lstrip("#").casefold()


def _read(ix: DocIndex, p: Proposal, spec: FieldSpec, locale: Locale) -> object:
    if spec.multiline:
        fv = locate(ix, p.locator, p.rule(spec), locale)
        return None if fv is None else fv.value
    return p.value


def label_document(ix: DocIndex, truth: Mapping[str, object], specs: list[FieldSpec],
                   siblings: list[tuple[DocIndex, Mapping[str, object]]], *,
                   negatives: tuple[int, int] | None = None, rng: np.random.Generator | None = None) -> DocExample:
    """Proposals, features and labels of one document (`siblings`: other documents of its format).

    `negatives=(hard, random)` keeps, per field, every proposal with the right value plus the `hard`
    wrong ones the baseline ranks highest and `random` other wrong ones (training: a field has
    dozens of hopeless candidates; validation and inference keep all)."""
    locale = detect_locale(ix)
    proposals = {s.name: propose(ix, s, locale) for s in specs}
    baseline.score_proposals(ix, specs, proposals)
    f = featurize(ix, specs, proposals)
    by_name = {s.name: s for s in specs}
    n = len(f.proposals)
    value_ok = np.zeros(n, dtype=bool)
    gen_ok = np.zeros(n, dtype=bool)
    annotated = np.zeros(n, dtype=bool)
    for i, p in enumerate(f.proposals):
        spec = by_name[p.field]
        want = truth.get(p.field)
        annotated[i] = want is not None
        if want is None or not same_value(spec.type, _read(ix, p, spec, locale), want):
            continue
        value_ok[i] = True
        checks = [same_value(spec.type, (fv.value if (fv := locate(six, p.locator, p.rule(spec), locale)) else None), st[p.field])
                  for six, st in siblings if st.get(p.field) is not None]
        gen_ok[i] = bool(checks) and all(checks)
    keep = np.arange(n) if negatives is None else _sample(f.group, value_ok, f.num[:, _BASELINE], negatives,
                                                           rng or np.random.default_rng(0))
    lens = np.diff(f.id_start)[keep]
    ids = np.concatenate([f.ids[f.id_start[i]:f.id_start[i + 1]] for i in keep]) if len(keep) else f.ids[:0]
    id_start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    ts = TokenSet(ids, id_start, f.num[keep], np.array([0, len(keep)], dtype=np.int64), f.group[keep],
                  value_ok[keep], gen_ok[keep], annotated[keep])
    return DocExample("", "", ts, f.fields)


_BASELINE = NUMERIC.index("baseline")


def _sample(group: np.ndarray, positive: np.ndarray, score: np.ndarray, negatives: tuple[int, int],
            rng: np.random.Generator) -> np.ndarray:
    """Indices kept (in their original order): all positives, the `hard` best-scored negatives and
    `random` other negatives of each group."""
    hard, rand = negatives
    keep = positive.copy()
    noise = rng.random(len(group))
    for g in np.unique(group):
        neg = np.flatnonzero((group == g) & ~positive)
        by_score = neg[np.argsort(-score[neg], kind="stable")]
        keep[by_score[:hard]] = True
        rest = by_score[hard:]
        keep[rest[np.argsort(noise[rest])[:rand]]] = True
    return np.flatnonzero(keep)


def synth_examples(kind: str, schema: Mapping[str, object], n_formats: int, docs_per_format: int, *,
                   split: str, seed: int, negatives: tuple[int, int] | None = None,
                   progress: Callable[[int], None] | None = None) -> Iterator[DocExample]:
    """Labelled examples of `n_formats` synthetic formats of `split`, `docs_per_format` documents each
    (`negatives`: see `label_document`)."""
    specs, _ = schema_fields(schema)
    rng = np.random.default_rng(seed)
    batch: list[SynthDoc] = []
    done = 0

    def flush() -> Iterator[DocExample]:
        nonlocal done
        ixs = [DocIndex(sd.document) for sd in batch]
        for i, sd in enumerate(batch):
            sib = [(ixs[j], batch[j].truth) for j in range(len(batch)) if j != i]
            ex = label_document(ixs[i], sd.truth, specs, sib, negatives=negatives, rng=rng)
            ex.doc_id, ex.format_id = sd.doc_id, sd.format_id
            done += 1
            if progress:
                progress(done)
            yield ex

    for sd in generate(n_formats, docs_per_format, kind=kind, seed=seed, split=split):
        if batch and sd.format_id != batch[0].format_id:
            yield from flush()
            batch = []
        batch.append(sd)
    if batch:
        yield from flush()


def token_set(examples: list[DocExample]) -> TokenSet:
    return TokenSet.concat([e.tokens for e in examples])
