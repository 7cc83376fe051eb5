"""The calibrator: per field family, a small logistic regression from a field's features to the
probability that its value is right.

    Calibrator.fit(examples, l2=..., min_count=..., l2_by_family=...) -> Calibrator
                                                    (deterministic: no randomness)
    cal.predict(family, features) -> float in (0, 1)
    cal.to_json() / Calibrator.from_json(d) / load(path) / load_default()

`examples` are `Example(family, features, correct)`. Each family gets its own weights over the
features seen at least `min_count` times in its examples; a family without enough examples
(`MIN_FAMILY_EXAMPLES`) uses the model pooled over all families (`"*"`), so any schema field gets
a confidence.

Monotone by construction: a feature that is evidence *for* the value (`<check>:pass`, rules that
held, all gates passed) never gets a negative weight, evidence *against* (`<check>:fail`, a value
that is a label, other readings, errors elsewhere) never a positive one (`sign_of`). The fit is
projected accelerated gradient descent (FISTA) on the mean log loss plus an L2 penalty (the bias
is not penalised); with the same examples it gives the same weights.
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import numpy as np

__all__ = ["Example", "FamilyModel", "Calibrator", "sign_of", "load", "load_default", "DEFAULT_WEIGHTS",
           "POOLED", "MIN_FAMILY_EXAMPLES", "UNSEEN_FAIL", "DEFAULT_L2", "DEFAULT_MIN_COUNT"]

DEFAULT_WEIGHTS = Path(__file__).with_name("weights.json")
POOLED = "*"
MIN_FAMILY_EXAMPLES = 40           # fewer: the family uses the pooled model
DEFAULT_L2 = 1e-3
DEFAULT_MIN_COUNT = 5              # a feature seen fewer times in a family's examples is not used
DEFAULT_ITERATIONS = 4000
# A check failing where the family's training never saw it fail (often enough): "prior" counts it
# at the family's mean failure weight (`Calibrator.fail_prior`), "ignore" drops it (the first two
# rounds' behaviour; a check that only fails on unseen layouts then has no say).
UNSEEN_FAIL = ("prior", "ignore")
_FOR = ("docassay.rules:held", "checks:pass_n", "record:gates_passed")
_AGAINST = ("value_is_label", "reads_as", "checks:fail_n", "record:errors_elsewhere", "alternatives")


def sign_of(feature: str) -> int:
    """+1: the weight may only raise confidence; -1: only lower it; 0: free (bias, how:*)."""
    if feature in _FOR or feature.endswith(":pass"):
        return 1
    if feature in _AGAINST or feature.endswith(":fail"):
        return -1
    return 0


@dataclass(frozen=True)
class Example:
    family: str
    features: Mapping[str, float]
    correct: bool


@dataclass
class FamilyModel:
    features: list[str]
    weights: list[float]
    n: int = 0
    positives: int = 0

    def logit(self, x: Mapping[str, float]) -> float:
        return sum(w * float(x.get(f, 0.0)) for f, w in zip(self.features, self.weights))

    def to_json(self) -> dict:
        return {"n": self.n, "positives": self.positives,
                "weights": {f: round(w, 6) for f, w in zip(self.features, self.weights)}}

    @classmethod
    def from_json(cls, d: Mapping) -> "FamilyModel":
        w = d["weights"]
        return cls(list(w), [float(v) for v in w.values()], int(d.get("n", 0)), int(d.get("positives", 0)))


def _sigmoid(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


class Calibrator:
    def __init__(self, families: Mapping[str, FamilyModel], meta: Mapping | None = None) -> None:
        if POOLED not in families:
            raise ValueError("a calibrator needs the pooled model ('*')")
        self.families = dict(families)
        self.meta = dict(meta or {})

    def model_for(self, family: str) -> FamilyModel:
        return self.families.get(family) or self.families[POOLED]

    def fail_prior(self, family: str) -> float:
        """The weight of a check's failure that `family`'s examples never showed often enough to
        learn (a check that fails only on layouts nobody trained on): the mean of the family's
        learned failure weights below zero, else the pooled model's; 0 when neither has one."""
        for m in (self.model_for(family), self.families[POOLED]):
            neg = [w for f, w in zip(m.features, m.weights) if f.endswith(":fail") and w < 0]
            if neg:
                return sum(neg) / len(neg)
        return 0.0

    def unseen_fails(self, family: str, features: Mapping[str, float]) -> dict[str, float]:
        """feature -> weight for each failing check the family's model does not know: the stronger
        (lower) of the pooled model's weight, where it learned one below zero, and the family's
        failure prior. The pooled weight is learned mostly from other families' fields (a receipt
        total found by its place is usually right; an invoice number so found is not), so it may
        only make the prior stronger, never weaken it."""
        m, pooled = self.model_for(family), self.families[POOLED]
        known = set(m.features)
        learned = dict(zip(pooled.features, pooled.weights)) if m is not pooled else {}
        out = {}
        for f, v in features.items():
            if not v or not f.endswith(":fail") or f in known:
                continue
            w = learned.get(f, 0.0)
            out[f] = min(w, self.fail_prior(family)) * float(v)
        return out

    def predict(self, family: str, features: Mapping[str, float]) -> float:
        z = self.model_for(family).logit(features)
        if self.meta.get("unseen_fail", "prior") == "prior":
            z += sum(self.unseen_fails(family, features).values())
        return _sigmoid(z)

    # -- training ---------------------------------------------------------------------------
    @classmethod
    def fit(cls, examples: Iterable[Example], *, l2: float = DEFAULT_L2, min_count: int = DEFAULT_MIN_COUNT,
            iterations: int = DEFAULT_ITERATIONS, meta: Mapping | None = None,
            l2_by_family: Mapping[str, float] | None = None, unseen_fail: str = "prior") -> "Calibrator":
        ex = list(examples)
        if not ex:
            raise ValueError("no examples to fit the calibrator on")
        groups: dict[str, list[Example]] = {POOLED: ex}
        for e in ex:
            groups.setdefault(e.family, []).append(e)
        fams = {}
        for fam in sorted(groups):
            rows = groups[fam]
            if fam != POOLED and len(rows) < MIN_FAMILY_EXAMPLES:
                continue
            fams[fam] = _fit_family(rows, l2=(l2_by_family or {}).get(fam, l2), min_count=min_count,
                                    iterations=iterations)
        extra = {"l2_by_family": dict(l2_by_family)} if l2_by_family else {}
        if unseen_fail not in UNSEEN_FAIL:
            raise ValueError(f"unseen_fail must be one of {UNSEEN_FAIL}, got {unseen_fail!r}")
        return cls(fams, {**(meta or {}), "l2": l2, "min_count": min_count, "iterations": iterations,
                          "unseen_fail": unseen_fail, **extra})

    # -- persistence ------------------------------------------------------------------------
    def to_json(self) -> dict:
        return {"kind": "docassay-field-calibrator", "version": 1, "meta": self.meta,
                "families": {k: self.families[k].to_json() for k in sorted(self.families)}}

    @classmethod
    def from_json(cls, d: Mapping) -> "Calibrator":
        if d.get("kind") != "docassay-field-calibrator":
            raise ValueError("not a docassay calibrator (kind must be 'docassay-field-calibrator')")
        return cls({k: FamilyModel.from_json(v) for k, v in d["families"].items()}, d.get("meta"))

    def save(self, path: str | Path) -> None:
        Path(path).write_text(json.dumps(self.to_json(), indent=1, sort_keys=True) + "\n", "utf-8")


def _fit_family(rows: list[Example], *, l2: float, min_count: int, iterations: int) -> FamilyModel:
    counts: dict[str, int] = {}
    for e in rows:
        for f, v in e.features.items():
            if v:
                counts[f] = counts.get(f, 0) + 1
    names = sorted(f for f, c in counts.items() if c >= min_count or f == "bias")
    if "bias" not in names:
        names = ["bias", *names]
    X = np.array([[float(e.features.get(f, 0.0)) for f in names] for e in rows])   # (n, d)
    y = np.array([1.0 if e.correct else 0.0 for e in rows])                        # (n,)
    sign = np.array([sign_of(f) for f in names])                                   # (d,)
    pen = np.array([0.0 if f == "bias" else l2 for f in names])                    # (d,)
    n = len(rows)
    lip = 0.25 * float(np.linalg.norm(X, 2)) ** 2 / n + l2                          # gradient's Lipschitz bound
    step = 1.0 / lip

    def grad(w: np.ndarray) -> np.ndarray:
        p = 1.0 / (1.0 + np.exp(-np.clip(X @ w, -30, 30)))                          # (n,)
        return X.T @ (p - y) / n + pen * w                                          # (d,)

    def project(w: np.ndarray) -> np.ndarray:
        return np.where(sign > 0, np.maximum(w, 0.0), np.where(sign < 0, np.minimum(w, 0.0), w))

    w = np.zeros(len(names))
    z, t = w.copy(), 1.0
    for _ in range(iterations):                                                    # FISTA
        w_next = project(z - step * grad(z))
        t_next = (1.0 + math.sqrt(1.0 + 4.0 * t * t)) / 2.0
        z = w_next + ((t - 1.0) / t_next) * (w_next - w)
        w, t = w_next, t_next
    return FamilyModel(names, [float(v) for v in w], n, int(y.sum()))


def load(path: str | Path) -> Calibrator:
    try:
        return Calibrator.from_json(json.loads(Path(path).read_text("utf-8")))
    except (OSError, ValueError, KeyError) as exc:
        raise ValueError(f"cannot load the calibrator at {path}: {exc}") from exc


@lru_cache(maxsize=4)
def _cached(path: str) -> Calibrator:
    return load(path)


def load_default() -> Calibrator:
    """The shipped weights ($DOCASSAY_CALIBRATOR overrides the path), read once per process."""
    import os
    return _cached(os.environ.get("DOCASSAY_CALIBRATOR") or str(DEFAULT_WEIGHTS))
