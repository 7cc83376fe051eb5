"""`TokenSet`: featurised proposals of many documents, as the ranker reads them.

Produced by `extractors.instructions.model_data` (training) and `model_features` (inference); infra
knows nothing about documents, only these arrays. Tokens are grouped by document, and within a
document by *group* (one schema field: the proposals among which one is chosen).

    ids      [T]  int64    hashed feature ids of all tokens, concatenated
    id_start [N+1] int64   token i's ids are ids[id_start[i]:id_start[i+1]]
    num      [N, F] float32 numeric features
    doc_start [D+1] int64  document j's tokens are [doc_start[j], doc_start[j+1])
    group    [N]  int64    field group of each token, numbered within its document
    value_ok [N]  bool     the proposal's value is the document's true value
    gen_ok   [N]  bool     ... and its locator, replayed on other documents of the format, finds theirs
    annotated [N] bool     the truth has a value for the token's field
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

__all__ = ["TokenSet", "Batch"]


@dataclass
class Batch:
    """A few whole documents, as tensors, with document and group ids renumbered from 0."""
    ids: torch.Tensor          # [T]
    offsets: torch.Tensor      # [N]
    num: torch.Tensor          # [N, F]
    doc: torch.Tensor          # [N] non-decreasing
    group: torch.Tensor        # [N] global within the batch, contiguous per document
    value_ok: torch.Tensor     # [N] bool
    gen_ok: torch.Tensor       # [N] bool
    annotated: torch.Tensor    # [N] bool

    @property
    def n_groups(self) -> int:
        return int(self.group.max()) + 1 if self.group.numel() else 0


@dataclass
class TokenSet:
    ids: np.ndarray
    id_start: np.ndarray
    num: np.ndarray
    doc_start: np.ndarray
    group: np.ndarray
    value_ok: np.ndarray
    gen_ok: np.ndarray
    annotated: np.ndarray

    @property
    def n_docs(self) -> int:
        return len(self.doc_start) - 1

    @property
    def n_tokens(self) -> int:
        return len(self.group)

    @classmethod
    def concat(cls, parts: list["TokenSet"]) -> "TokenSet":
        """Documents of all parts, in order."""
        if not parts:
            raise ValueError("no token sets to concatenate")
        id_shift = np.cumsum([0] + [len(p.ids) for p in parts[:-1]])
        tok_shift = np.cumsum([0] + [p.n_tokens for p in parts[:-1]])
        id_start = np.concatenate([p.id_start[:-1] + s for p, s in zip(parts, id_shift)] + [[sum(len(p.ids) for p in parts)]])
        doc_start = np.concatenate([p.doc_start[:-1] + s for p, s in zip(parts, tok_shift)] + [[sum(p.n_tokens for p in parts)]])
        return cls(np.concatenate([p.ids for p in parts]), id_start.astype(np.int64),
                   np.concatenate([p.num for p in parts]).astype(np.float32), doc_start.astype(np.int64),
                   *(np.concatenate([getattr(p, k) for p in parts]) for k in ("group", "value_ok", "gen_ok", "annotated")))

    def batch(self, docs: list[int] | np.ndarray) -> Batch:
        """The tokens of `docs` (in the order given) as one batch."""
        ids, offs, nums, doc, grp, vok, gok, ann = [], [], [], [], [], [], [], []
        n_ids = 0
        g_shift = 0
        for j, d in enumerate(docs):
            t0, t1 = int(self.doc_start[d]), int(self.doc_start[d + 1])
            i0, i1 = int(self.id_start[t0]), int(self.id_start[t1])
            ids.append(self.ids[i0:i1])
            offs.append(self.id_start[t0:t1] - i0 + n_ids)
            n_ids += i1 - i0
            nums.append(self.num[t0:t1])
            doc.append(np.full(t1 - t0, j, dtype=np.int64))
            g = self.group[t0:t1]
            grp.append(g + g_shift)
            g_shift += int(g.max()) + 1 if len(g) else 0
            vok.append(self.value_ok[t0:t1])
            gok.append(self.gen_ok[t0:t1])
            ann.append(self.annotated[t0:t1])
        cat = np.concatenate
        return Batch(torch.from_numpy(cat(ids).astype(np.int64)), torch.from_numpy(cat(offs).astype(np.int64)),
                     torch.from_numpy(cat(nums).astype(np.float32)), torch.from_numpy(cat(doc)),
                     torch.from_numpy(cat(grp).astype(np.int64)), torch.from_numpy(cat(vok).astype(bool)),
                     torch.from_numpy(cat(gok).astype(bool)), torch.from_numpy(cat(ann).astype(bool)))

    def save(self, path: str | Path) -> None:
        np.savez_compressed(path, **{k: getattr(self, k) for k in self.__dataclass_fields__})

    @classmethod
    def load(cls, path: str | Path) -> "TokenSet":
        with np.load(path) as z:
            return cls(**{k: z[k] for k in cls.__dataclass_fields__})
