"""The format index: faiss search, exemplars, metadata filters, persistence, concurrent writers."""
from __future__ import annotations

import multiprocessing as mp
import os
from pathlib import Path

import numpy as np
import pytest

from docassay.extractors.format_index import INDEX_FILE, FormatIndex, FormatIndexBase, Match, matches_filter
from docassay.infra.errors import ConfigError

DIM = 32


def vec(seed: int, dim: int = DIM) -> np.ndarray:
    v = np.random.default_rng(seed).normal(size=dim).astype(np.float32)
    return v / np.linalg.norm(v)


def near(v: np.ndarray, seed: int, noise: float = 0.15) -> np.ndarray:
    """A vector close to v (another document of the same format)."""
    return v + noise * vec(seed, v.shape[0])


def test_is_a_format_index(tmp_path: Path):
    assert isinstance(FormatIndex(tmp_path, DIM), FormatIndexBase)


def test_empty_index_finds_nothing(tmp_path: Path):
    ix = FormatIndex(tmp_path / "index", DIM)
    assert ix.search(vec(1)) == []
    assert ix.match(vec(1), threshold=0.0) is None
    assert len(ix) == 0 and ix.formats() == []


def test_add_and_search_nearest_first(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    for i in range(10):
        ix.add(f"fmt-{i}", vec(i), {"n": i})
    found = ix.search(near(vec(3), 100), k=4)
    assert [m.format_id for m in found][0] == "fmt-3"
    assert len(found) == 4
    assert all(a.similarity >= b.similarity for a, b in zip(found, found[1:]))
    assert found[0].meta == {"n": 3}
    assert ix.search(vec(3), k=1)[0] == Match("fmt-3", pytest.approx(1.0, abs=1e-5), {"n": 3})


def test_similarity_is_max_over_a_formats_exemplars(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    a1, a2 = vec(1), vec(2)                  # two rather different exemplars of one format
    ix.add("A", a1)
    ix.add("A", a2)
    ix.add("B", vec(3))
    assert ix.exemplars("A").shape == (2, DIM)
    found = ix.search(a2, k=5)
    assert [m.format_id for m in found].count("A") == 1
    assert found[0].format_id == "A" and found[0].similarity == pytest.approx(1.0, abs=1e-5)
    assert len(found) == 2


def test_match_applies_the_threshold(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    ix.add("A", vec(1))
    assert ix.match(near(vec(1), 7, 0.1), threshold=0.9).format_id == "A"
    assert ix.match(vec(2), threshold=0.9) is None


def test_remove(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    ix.add("A", vec(1))
    ix.add("A", vec(11))
    ix.add("B", vec(2))
    assert ix.remove("A") is True
    assert ix.remove("A") is False
    assert ix.formats() == ["B"]
    assert ix.exemplars("A").shape == (0, DIM)
    assert [m.format_id for m in ix.search(vec(1))] == ["B"]
    assert FormatIndex(tmp_path).formats() == ["B"]


def test_persists_and_reloads(tmp_path: Path):
    ix = FormatIndex(tmp_path / "index", DIM)
    ix.add("A", vec(1), {"status": "active", "version": 2})
    ix.add("B", vec(2))
    ix.add("B", vec(12))
    again = FormatIndex(tmp_path / "index")            # dim read from the file
    assert again.dim == DIM
    assert again.formats() == ["A", "B"]
    assert again.get_meta("A") == {"status": "active", "version": 2}
    assert np.allclose(again.exemplars("B"), ix.exemplars("B"))
    assert again.search(vec(12), k=1)[0].format_id == "B"
    # one file, written by rename: no temporary files left behind
    assert sorted(os.listdir(tmp_path / "index")) == [INDEX_FILE, "index.lock"]


def test_reader_sees_changes_of_another_instance(tmp_path: Path):
    reader = FormatIndex(tmp_path, DIM)
    writer = FormatIndex(tmp_path, DIM)
    assert reader.search(vec(1)) == []
    writer.add("A", vec(1))
    assert reader.search(vec(1), k=1)[0].format_id == "A"
    writer.remove("A")
    assert reader.search(vec(1)) == []


def test_without_autosave_changes_wait_for_save_and_survive_other_writers(tmp_path: Path):
    mine = FormatIndex(tmp_path, DIM, autosave=False)
    other = FormatIndex(tmp_path, DIM)
    mine.add("mine", vec(1))
    assert FormatIndex(tmp_path, DIM).formats() == []       # not saved yet
    other.add("theirs", vec(2))                              # another process writes meanwhile
    assert mine.formats() == ["mine", "theirs"]              # reloaded, own change kept
    mine.save()
    assert FormatIndex(tmp_path, DIM).formats() == ["mine", "theirs"]


def test_dimension_mismatch(tmp_path: Path):
    FormatIndex(tmp_path, DIM).add("A", vec(1))
    with pytest.raises(ConfigError):
        FormatIndex(tmp_path, DIM * 2)
    ix = FormatIndex(tmp_path)
    with pytest.raises(ValueError):
        ix.add("B", vec(1, DIM * 2))
    with pytest.raises(ValueError):
        ix.search(np.zeros(DIM))
    with pytest.raises(ValueError):
        ix.add("B", np.full(DIM, np.nan))


def test_vectors_are_normalised_on_the_way_in(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    ix.add("A", 5.0 * vec(1))
    assert ix.search(0.1 * vec(1), k=1)[0].similarity == pytest.approx(1.0, abs=1e-5)


def test_metadata_must_be_json(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    with pytest.raises(ValueError):
        ix.add("A", vec(1), {"when": object()})
    with pytest.raises(ValueError):
        ix.add("", vec(1))


def test_set_meta(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    ix.add("A", vec(1), {"status": "pending_review"})
    ix.add("A", vec(11))                                     # meta=None keeps the meta
    assert ix.get_meta("A") == {"status": "pending_review"}
    ix.set_meta("A", {"status": "active"})
    assert FormatIndex(tmp_path).get_meta("A") == {"status": "active"}
    with pytest.raises(KeyError):
        ix.set_meta("missing", {})


def test_filters_by_metadata(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM)
    ix.add("active-far", vec(1), {"status": "active", "version": 3, "tags": ["de", "invoice"]})
    ix.add("pending-near", vec(2), {"status": "pending_review", "version": 1})
    ix.add("archived", vec(3), {"status": "archived", "version": 7})
    q = near(vec(2), 50, 0.05)                               # nearest is pending-near
    assert ix.search(q, k=1)[0].format_id == "pending-near"
    assert ix.search(q, k=1, filter={"status": "active"})[0].format_id == "active-far"
    def ids(flt: dict) -> list[str]:
        return sorted(m.format_id for m in ix.search(q, k=10, filter=flt))
    assert ids({"status": {"$ne": "archived"}}) == ["active-far", "pending-near"]
    assert ids({"status": {"$in": ["archived", "active"]}}) == ["active-far", "archived"]
    assert ids({"version": {"$gte": 3}}) == ["active-far", "archived"]
    assert ids({"tags": "de"}) == ["active-far"]
    assert ids({"tags": {"$exists": False}}) == ["archived", "pending-near"]
    assert ids({"$or": [{"version": 1}, {"version": 7}]}) == ["archived", "pending-near"]
    assert ids({"$and": [{"version": {"$gt": 1}}, {"status": {"$nin": ["archived"]}}]}) == ["active-far"]
    assert ids({"status": "nothing"}) == []
    assert ids(lambda fid, meta: fid.startswith("arch")) == ["archived"]
    with pytest.raises(ValueError):
        ix.search(q, filter={"version": {"$near": 3}})


def test_matches_filter_is_pure():
    meta = {"a": 1, "b": "x"}
    assert matches_filter(meta, {}) is True
    assert matches_filter(meta, {"a": 1, "b": "x"}) is True
    assert matches_filter(meta, {"a": 1, "b": "y"}) is False
    assert matches_filter(meta, {"a": {"$lt": "text"}}) is False      # incomparable: no match
    with pytest.raises(ValueError):
        matches_filter(meta, {"$nor": []})


def test_exemplars_are_capped_and_deduplicated(tmp_path: Path):
    ix = FormatIndex(tmp_path, DIM, max_exemplars=3)
    first = vec(1)
    ix.add("A", first)
    ix.add("A", first.copy())                                # a duplicate is not stored twice
    assert ix.exemplars("A").shape == (1, DIM)
    for s in range(2, 8):
        ix.add("A", vec(s))
    ex = ix.exemplars("A")
    assert ex.shape == (3, DIM)
    assert np.allclose(ex[0], first)                          # the founding exemplar stays


def test_unreadable_file_is_a_config_error(tmp_path: Path):
    (tmp_path / INDEX_FILE).write_bytes(b"not an index")
    with pytest.raises(ConfigError):
        FormatIndex(tmp_path, DIM)


def _writer(directory: str, prefix: str, n: int, barrier) -> None:
    ix = FormatIndex(directory, DIM)
    barrier.wait()
    for i in range(n):
        ix.add(f"{prefix}-{i}", vec(1000 * ord(prefix[0]) + i), {"by": prefix})


def test_two_processes_writing_lose_no_entry(tmp_path: Path):
    ctx = mp.get_context("spawn")
    barrier = ctx.Barrier(2)
    n = 25
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), p, n, barrier)) for p in ("p", "q")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=120)
        assert p.exitcode == 0
    ix = FormatIndex(tmp_path, DIM)
    assert len(ix) == 2 * n
    assert sorted(ix.formats()) == sorted([f"p-{i}" for i in range(n)] + [f"q-{i}" for i in range(n)])
    assert sorted(os.listdir(tmp_path)) == [INDEX_FILE, "index.lock"]
