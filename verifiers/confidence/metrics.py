"""How well confidences are calibrated: expected calibration error and the reliability table.

    reliability(conf, correct, bins=10) -> [Bin(lo, hi, n, mean_confidence, accuracy)]
    ece(conf, correct, bins=10)         -> sum over bins of n_bin / n * |accuracy - mean confidence|

Bins are equal-width on [0, 1]; the last bin includes 1.0. Empty bins are left out of the table
and weigh nothing in the ECE.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["Bin", "reliability", "ece", "DEFAULT_BINS"]

DEFAULT_BINS = 10


@dataclass(frozen=True)
class Bin:
    lo: float
    hi: float
    n: int
    mean_confidence: float
    accuracy: float


def reliability(conf: Sequence[float], correct: Sequence[bool], bins: int = DEFAULT_BINS) -> list[Bin]:
    c = np.asarray(conf, dtype=np.float64)                      # (n,)
    y = np.asarray(correct, dtype=np.float64)                   # (n,)
    if c.shape != y.shape:
        raise ValueError(f"confidences and outcomes differ in length ({c.shape} vs {y.shape})")
    idx = np.minimum((c * bins).astype(int), bins - 1)          # (n,) bin of each confidence
    out = []
    for b in range(bins):
        m = idx == b
        if m.any():
            out.append(Bin(b / bins, (b + 1) / bins, int(m.sum()), float(c[m].mean()), float(y[m].mean())))
    return out


def ece(conf: Sequence[float], correct: Sequence[bool], bins: int = DEFAULT_BINS) -> float:
    table = reliability(conf, correct, bins)
    n = sum(b.n for b in table)
    return float(sum(b.n / n * abs(b.accuracy - b.mean_confidence) for b in table)) if n else 0.0
