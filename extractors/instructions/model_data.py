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
from functools import lru_cache
from typing import Callable, Iterator, Mapping, Sequence

import numpy as np

from docassay.extractors.document import BBox, Document, Page, Word
from docassay.extractors.instructions import baseline
from docassay.extractors.instructions.executor import locate
from docassay.extractors.instructions.generator import detect_locale, schema_fields
from docassay.extractors.instructions.language import Locale
from docassay.extractors.instructions.model_features import FEATURE_VERSION, featurize
from docassay.extractors.instructions.proposals import Proposal, propose
from docassay.extractors.labels import LEXICON, FieldSpec
from docassay.extractors.normalize import fold
from docassay.extractors.spans import DocIndex
from docassay.extractors.synth import SynthDoc, generate
from docassay.infra.model.tokens import TokenSet

__all__ = ["DocExample", "Labelled", "same_value", "label_proposals", "to_tokens", "label_document", "synth_labelled",
           "as_ocr_lines", "synth_examples", "token_set"]


@dataclass
class DocExample:
    doc_id: str
    format_id: str
    tokens: TokenSet            # one document
    fields: list[str]


@dataclass
class Labelled:
    """One document's proposals with their labels, before featurisation: what the slow part of
    building training data produces (replaying locators on sibling documents), kept so that other
    feature versions can be computed from it without labelling again (picklable)."""
    doc_id: str
    format_id: str
    ix: DocIndex
    specs: list[FieldSpec]
    proposals: dict[str, list[Proposal]]      # baseline-scored, each field's best first
    value_ok: dict[str, np.ndarray]           # per field, aligned with proposals[field]
    gen_ok: dict[str, np.ndarray]
    annotated: dict[str, bool]                # the truth has a value for the field


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


def label_proposals(ix: DocIndex, truth: Mapping[str, object], specs: list[FieldSpec],
                    siblings: Sequence[tuple[DocIndex, Mapping[str, object]]]) -> Labelled:
    """Every proposal of one document, scored by the baseline, with `value_ok` and `gen_ok`
    (`siblings`: the other documents of its format, with their truth)."""
    locale = detect_locale(ix)
    proposals = {s.name: propose(ix, s, locale) for s in specs}
    baseline.score_proposals(ix, specs, proposals)
    for props in proposals.values():                    # kept: a scorer may overwrite .score later
        for p in props:
            p.features["baseline"] = p.score
    value_ok: dict[str, np.ndarray] = {}
    gen_ok: dict[str, np.ndarray] = {}
    for spec in specs:
        props = proposals[spec.name]
        want = truth.get(spec.name)
        v = np.zeros(len(props), dtype=bool)
        g = np.zeros(len(props), dtype=bool)
        for i, p in enumerate(props):
            if want is None or not same_value(spec.type, _read(ix, p, spec, locale), want):
                continue
            v[i] = True
            checks = [same_value(spec.type, (fv.value if (fv := locate(six, p.locator, p.rule(spec), locale)) else None),
                                 st[spec.name]) for six, st in siblings if st.get(spec.name) is not None]
            g[i] = bool(checks) and all(checks)
        value_ok[spec.name], gen_ok[spec.name] = v, g
    return Labelled("", "", ix, specs, proposals, value_ok, gen_ok,
                    {s.name: truth.get(s.name) is not None for s in specs})


def to_tokens(lab: Labelled, *, version: int = FEATURE_VERSION, negatives: tuple[int, int] | None = None,
              rng: np.random.Generator | None = None) -> DocExample:
    """Features (of `version`) and labels of one labelled document as a one-document TokenSet.

    `negatives=(hard, random)` keeps, per field, every proposal with the right value plus the `hard`
    wrong ones the baseline ranks highest and `random` other wrong ones (training: a field has
    dozens of hopeless candidates; validation and inference keep all)."""
    for props in lab.proposals.values():                # featurize reads .score as the baseline's
        for p in props:
            p.score = p.features.get("baseline", p.score)
    f = featurize(lab.ix, lab.specs, lab.proposals, version=version)
    n = len(f.proposals)
    value_ok = np.concatenate([lab.value_ok[name] for name in f.fields]) if n else np.zeros(0, dtype=bool)
    gen_ok = np.concatenate([lab.gen_ok[name] for name in f.fields]) if n else np.zeros(0, dtype=bool)
    annotated = np.array([lab.annotated[p.field] for p in f.proposals], dtype=bool)
    score = np.array([p.score for p in f.proposals], dtype=np.float64)
    keep = np.arange(n) if negatives is None else _sample(f.group, value_ok, score, negatives,
                                                           rng or np.random.default_rng(0))
    lens = np.diff(f.id_start)[keep]
    ids = np.concatenate([f.ids[f.id_start[i]:f.id_start[i + 1]] for i in keep]) if len(keep) else f.ids[:0]
    id_start = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
    ts = TokenSet(ids, id_start, f.num[keep], np.array([0, len(keep)], dtype=np.int64), f.group[keep],
                  value_ok[keep], gen_ok[keep], annotated[keep])
    return DocExample(lab.doc_id, lab.format_id, ts, f.fields)


def label_document(ix: DocIndex, truth: Mapping[str, object], specs: list[FieldSpec],
                   siblings: list[tuple[DocIndex, Mapping[str, object]]], *,
                   negatives: tuple[int, int] | None = None, rng: np.random.Generator | None = None,
                   version: int = FEATURE_VERSION) -> DocExample:
    """Proposals, features and labels of one document (`siblings`: other documents of its format);
    `label_proposals` then `to_tokens`."""
    return to_tokens(label_proposals(ix, truth, specs, siblings), version=version, negatives=negatives, rng=rng)


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


def synth_labelled(kind: str, schema: Mapping[str, object], n_formats: int, docs_per_format: int, *,
                   split: str, seed: int, reword: float = 0.0, ocr_share: float = 0.0,
                   progress: Callable[[int], None] | None = None) -> Iterator[Labelled]:
    """Labelled documents of `n_formats` synthetic formats of `split`, `docs_per_format` each; a
    `reword` share of the formats (drawn with `seed`) get their field labels reworded (`reword_format`);
    an `ocr_share` of the others (one-page formats) are read as OCR line files (`as_ocr_lines`)."""
    specs, _ = schema_fields(schema)
    batch: list[SynthDoc] = []
    done = 0
    rng = np.random.default_rng([seed, 7])
    ocr_rng = np.random.default_rng([seed, 11])          # its own stream: ocr_share=0 draws as before

    def flush() -> Iterator[Labelled]:
        nonlocal done
        if reword and rng.random() < reword:
            pairs = reword_format(batch, rng)
        elif ocr_share and ocr_rng.random() < ocr_share and all(len(sd.document.pages) == 1 for sd in batch):
            pairs = [(as_ocr_lines(sd), sd.truth) for sd in batch]
        else:
            pairs = [(sd.document, sd.truth) for sd in batch]
        ixs = [DocIndex(doc) for doc, _ in pairs]
        for i, sd in enumerate(batch):
            sib = [(ixs[j], batch[j].truth) for j in range(len(batch)) if j != i]
            lab = label_proposals(ixs[i], sd.truth, specs, sib)
            lab.doc_id, lab.format_id = sd.doc_id, sd.format_id
            done += 1
            if progress:
                progress(done)
            yield lab

    for sd in generate(n_formats, docs_per_format, kind=kind, seed=seed, split=split):
        if batch and sd.format_id != batch[0].format_id:
            yield from flush()
            batch = []
        batch.append(sd)
    if batch:
        yield from flush()


def as_ocr_lines(sd: SynthDoc) -> Document:
    """A one-page synthetic document as the OCR-lines parser reads a line file of its scan (the input
    of the dev receipts): pixel boxes of a slightly rotated image, no font sizes, no bold, lines
    rebuilt from word geometry. Text and truth are unchanged."""
    import json

    from docassay.extractors.parsers.ocr_lines import OcrLinesParser
    from docassay.extractors.synth import to_ocr_lines

    data = json.dumps(to_ocr_lines(sd, augment=True)).encode()
    return OcrLinesParser().parse(data, f"{sd.doc_id}.ocr.json", _settings())


@lru_cache(maxsize=1)
def _settings():
    from docassay.infra.config import Settings
    return Settings.load()


def synth_examples(kind: str, schema: Mapping[str, object], n_formats: int, docs_per_format: int, *,
                   split: str, seed: int, negatives: tuple[int, int] | None = None,
                   progress: Callable[[int], None] | None = None, version: int = FEATURE_VERSION) -> Iterator[DocExample]:
    """Featurised examples of `n_formats` synthetic formats of `split`, `docs_per_format` documents each
    (`negatives`: see `to_tokens`)."""
    rng = np.random.default_rng(seed)
    for lab in synth_labelled(kind, schema, n_formats, docs_per_format, split=split, seed=seed, progress=progress):
        yield to_tokens(lab, version=version, negatives=negatives, rng=rng)


def token_set(examples: list[DocExample]) -> TokenSet:
    return TokenSet.concat([e.tokens for e in examples])


# -- label wording perturbation ---------------------------------------------------------------------

def reword_format(docs: list[SynthDoc], rng: np.random.Generator) -> list[tuple[Document, dict]]:
    """The documents of one synthetic format with the printed label of every field that has one
    replaced by another phrasing of the same concept from `labels.LEXICON` (the same phrase on every
    document of the format, as a real format would print it), in a random casing (as listed, Title,
    UPPER) and now and then abbreviated ("Rechnungsnummer" -> "Rechn."); the label's trailing
    punctuation is kept. So the generator's own wording of a label is not a shortcut to its field.
    Returns (document, truth) pairs; the truth is unchanged."""
    first = docs[0]
    choice: dict[str, str] = {}
    for name, fs in sorted(first.truth_spans.fields.items()):
        words = LEXICON.get(name)
        if fs.anchor is None or not words:
            continue
        phrase = str(words[int(rng.integers(len(words)))])
        case = int(rng.integers(3))
        phrase = phrase.title() if case == 1 else phrase.upper() if case == 2 else phrase
        toks = phrase.split()
        if len(toks) == 1 and len(toks[0]) >= 8 and rng.random() < 0.25:
            phrase = toks[0][:int(rng.integers(3, 6))] + "."
        choice[name] = phrase
    return [(_reword(sd, choice), sd.truth) for sd in docs]


def _reword(sd: SynthDoc, choice: dict[str, str]) -> Document:
    by_page: dict[int, list[tuple[tuple[int, ...], str]]] = {}
    for name, phrase in choice.items():
        fs = sd.truth_spans.fields.get(name)
        if fs is None or fs.anchor is None or not fs.anchor.word_ids:
            continue
        by_page.setdefault(fs.page, []).append((fs.anchor.word_ids, phrase))
    pages = []
    for page in sd.document.pages:
        edits = by_page.get(page.number)
        if not edits:
            pages.append(page)
            continue
        words = list(page.words)
        drop: set[int] = set()
        added: list[Word] = []
        for ids, phrase in edits:
            olds = [words[i] for i in ids]
            if len({w.line for w in olds}) != 1 or drop & set(ids):
                continue                                   # a label over two lines (or shared): left as printed
            tail = re.search(r"[:.\s]*$", olds[-1].text)
            punct = tail.group(0).strip() if tail else ""
            new_toks = phrase.split()
            if punct and not new_toks[-1].endswith(punct):
                new_toks[-1] += punct
            box = BBox.enclosing(w.bbox for w in olds)
            n_chars = sum(len(t) for t in new_toks) + len(new_toks) - 1
            x = box.x0
            for t in new_toks:
                w_ = box.width * len(t) / max(n_chars, 1)
                added.append(Word(t, BBox(x, box.y0, x + w_, box.y1), olds[0].font_size, olds[0].bold))
                x += w_ + box.width / max(n_chars, 1)
            drop |= set(ids)
        kept = [Word(w.text, w.bbox, w.font_size, w.bold) for i, w in enumerate(words) if i not in drop]
        pages.append(Page.from_words(page.number, page.width, page.height, kept + added, source=page.source))
    return Document(sd.document.source, sd.document.sha256, sd.document.kind, pages, sd.document.parser,
                    dict(sd.document.meta))
