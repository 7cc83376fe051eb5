"""One `docassay` package (issue 17): the product's folders are imported only as `docassay.<folder>`,
and the wheel installs nothing else at the top level."""
from __future__ import annotations

import ast
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("extractors", "flows", "infra", "rules", "verifiers")
SOURCES = [p for top in (*PRODUCT, "docassay", "bench", "tests") for p in (ROOT / top).rglob("*.py")]


def _old_style_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text("utf-8"), str(path))
    bad = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        bad += [f"{path.relative_to(ROOT)}:{node.lineno}: {n}" for n in names if n.split(".")[0] in PRODUCT]
    return bad


def test_product_modules_are_imported_under_docassay_only():
    assert len(SOURCES) > 300
    bad = [b for p in SOURCES for b in _old_style_imports(p)]
    assert bad == [], "import these as docassay.<folder>...:\n" + "\n".join(bad[:20])


def test_the_guard_sees_an_old_style_import(tmp_path):
    p = tmp_path / "mod.py"
    p.write_text("from flows.cli import main\nimport docassay.flows.cli\n")
    (tmp_path / "x").mkdir()
    assert [b.split(": ")[1] for b in _old_style_imports_at(p, tmp_path)] == ["flows.cli"]


def _old_style_imports_at(path: Path, root: Path) -> list[str]:
    global ROOT
    saved, ROOT = ROOT, root
    try:
        return _old_style_imports(path)
    finally:
        ROOT = saved


def test_source_tree_names_resolve_to_the_folders():
    import docassay.flows.cli as cli
    import docassay.infra.model as model
    assert Path(cli.__file__).resolve() == ROOT / "flows" / "cli.py"
    assert Path(model.__file__).resolve().parent == ROOT / "infra" / "model"


@pytest.mark.slow
def test_the_wheel_installs_one_docassay_package(tmp_path):
    import shutil
    import subprocess
    import sys
    src = tmp_path / "src"                     # setuptools builds in the source tree (build/): use a copy
    shutil.copytree(ROOT, src, ignore=shutil.ignore_patterns(".venv", ".git", "build", "__pycache__", "out",
                                                             "*.egg-info", ".pytest_cache", ".mypy_cache"))
    out = subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
                          str(src), "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    if out.returncode != 0 and "No module named pip" in out.stderr:
        pytest.skip("pip is not in this interpreter")
    assert out.returncode == 0, out.stderr[-2000:]
    wheel = next(tmp_path.glob("docassay-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    tops = {n.split("/")[0] for n in names}
    assert {t for t in tops if not t.endswith(".dist-info")} == {"docassay"}
    for top in PRODUCT:
        assert f"docassay/{top}/__init__.py" in names
    for data in ("infra/model/weights/moe.pt", "infra/model/weights/layout.pt", "verifiers/confidence/weights.json",
                 "flows/review_app/templates/base.html", "flows/review_app/static/review.js",
                 "extractors/instructions/schema.json"):
        assert f"docassay/{data}" in names, data
    assert any(n.startswith("docassay/infra/db/migrations/") and n.endswith(".sql") for n in names)


ALLOWED = {                      # the layers: each folder imports only itself and those named here
    "infra": set(),
    "rules": {"infra"},
    "verifiers": {"rules", "infra"},
    "extractors": {"infra"},
    "flows": {"extractors", "verifiers", "rules", "infra"},
}


def _layer_violations(top: str) -> list[str]:
    bad = []
    for path in (ROOT / top).rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text("utf-8"), str(path))):
            names = ([node.module] if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module else
                     [a.name for a in node.names] if isinstance(node, ast.Import) else [])
            for n in names:
                parts = n.split(".")
                if parts[0] == "docassay" and len(parts) > 1 and parts[1] in ALLOWED and parts[1] != top \
                        and parts[1] not in ALLOWED[top]:
                    bad.append(f"{path.relative_to(ROOT)}:{node.lineno}: {n}")
    return bad


@pytest.mark.parametrize("top", sorted(ALLOWED))
def test_imports_point_one_way(top):
    assert _layer_violations(top) == []
