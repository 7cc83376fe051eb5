"""One pass of the pipeline over a list of documents, in this process or in a fresh one.

A pass is `flows.batch.run_batch` with one `flows.pipeline.Job` (format reuse, repair, generator),
sequential (one document at a time, so that per-document latencies are not mixed), on a given
format-library home and database. `run_isolated` runs it in a child process
(`python -m bench.passes SPEC.json OUT.json`) so that the pass's peak memory (max RSS) is its own.

    spec = PassSpec("learn", "invoice", sources, home="/tmp/h", dsn=dsn)
    result = run_isolated(spec, workdir)          # or run_pass(spec)
"""
from __future__ import annotations

import importlib.util
import json
import os
import resource
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL_SCORER = "docassay.extractors.instructions.model_scorer"


@dataclass(frozen=True)
class PassSpec:
    name: str
    kind: str                                   # invoice | receipt: picks examples/<kind>s/{schema.json,rules}
    sources: list[str]
    home: str                                   # format library (vector index) folder
    dsn: str                                    # PostgreSQL DSN
    reuse_formats: bool = True
    repair: bool = True
    generator: str = "baseline"                 # baseline | model
    fixer: bool = True                          # with repair: the fixer (new formats) runs
    troubleshooter: bool = True                 # with repair: the troubleshooter (known formats) runs
    einvoice: str = "ignore"                    # use | check | ignore: e-invoice XML (ignore = the layout path)
    min_confidence: float | None = None         # the confidence target (None: the shipped default)
    doubt_repair: bool = False                  # try other readings of doubtful required fields


@dataclass
class BenchRow:
    """What the benchmark keeps of one results row."""
    source: str
    status: str
    match: str | None                           # new | known | None (not read)
    record: dict
    pages: int
    timings_ms: dict
    attempts: int = 0
    error: str | None = None
    flags: list[str] = field(default_factory=list)   # rules of the row's error-severity violations
    fields: dict = field(default_factory=dict)      # the row's per-field value, confidence, status, checks
    features: dict = field(default_factory=dict)    # the calibrator's features per field (bench.calibrate)


@dataclass
class PassResult:
    spec: PassSpec
    rows: list[BenchRow]
    wall_s: float                               # the batch alone (imports and database start excluded)
    peak_rss_mb: float                          # max RSS of the process that ran the pass
    start_rss_mb: float                         # max RSS before the first document (imports, models)
    isolated: bool = False
    extra: dict = field(default_factory=dict)

    def to_json(self) -> dict:
        return {"spec": asdict(self.spec), "rows": [asdict(r) for r in self.rows], "wall_s": self.wall_s,
                "peak_rss_mb": self.peak_rss_mb, "start_rss_mb": self.start_rss_mb, "isolated": self.isolated}

    @classmethod
    def from_json(cls, d: dict) -> "PassResult":
        return cls(PassSpec(**d["spec"]), [BenchRow(**r) for r in d["rows"]], d["wall_s"], d["peak_rss_mb"],
                   d["start_rss_mb"], d.get("isolated", False))


def model_status() -> tuple[bool, str]:
    """Whether the MoE model generator (`--generator model`) can run here, and if not, why: its
    module must be in the checkout and its weights (`$DOCASSAY_MODEL_WEIGHTS`, else the module's
    default) must load with this code (the scorer is built once here to find out)."""
    try:
        if importlib.util.find_spec(MODEL_SCORER) is None:
            return False, f"{MODEL_SCORER} is not in this checkout yet"
    except ModuleNotFoundError:
        return False, f"{MODEL_SCORER} is not in this checkout yet"
    module = importlib.import_module(MODEL_SCORER)
    env = getattr(module, "WEIGHTS_ENV", "DOCASSAY_MODEL_WEIGHTS")
    weights = Path(os.environ.get(env) or getattr(module, "DEFAULT_WEIGHTS", "")).expanduser()
    if not weights.is_file():
        return False, f"no trained weights at {weights} (train them, or set ${env})"
    try:
        module.model_scorer()
    except Exception as exc:                     # noqa: BLE001 - any load failure means "cannot run", with why
        return False, f"the weights at {weights} do not load: {type(exc).__name__}: {exc}"
    return True, f"weights {weights}"


def model_available() -> bool:
    return model_status()[0]


def peak_rss_mb() -> float:
    """This process's peak resident set size in MB: VmHWM from /proc/self/status (reset by exec,
    so a child does not inherit its parent's peak, as getrusage's ru_maxrss does on Linux), else
    getrusage's ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError, IndexError):
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def build_job(spec: PassSpec):  # -> flows.pipeline.Job
    from docassay.flows.batch import load_rule_pack, load_schema
    from docassay.flows.context import Job
    from docassay.infra.config import Settings

    folder = ROOT / "examples" / f"{spec.kind}s"
    settings = Settings.load(home=Path(spec.home), db=spec.dsn, concurrency=1)
    job = Job(schema=load_schema(folder / "schema.json"), rules=load_rule_pack(folder / "rules"),
              settings=settings, generator=spec.generator, reuse_formats=spec.reuse_formats, repair=spec.repair,
              fixer=spec.fixer, troubleshooter=spec.troubleshooter, einvoice=spec.einvoice,
              min_confidence=spec.min_confidence, doubt_repair=spec.doubt_repair)
    if spec.generator == "model":
        ok, why = model_status()
        if not ok:
            raise RuntimeError(f"--generator model cannot run: {why}")
        module = importlib.import_module(MODEL_SCORER)
        job.scorer = module.model_scorer()
    return job


def run_pass(spec: PassSpec) -> PassResult:
    """Run the pass here, as `docassay extract` runs a batch (flows.extract_batch.run_documents:
    drift proposed after the last document, the held documents of a format it improved read
    again), one document at a time; rows in input order."""
    from docassay.flows.context import open_context
    from docassay.flows.extract_batch import ThreadDispatch, run_documents
    from docassay.flows.output import OutputFolder

    job = build_job(spec)
    Path(spec.home).mkdir(parents=True, exist_ok=True)
    with open_context(job.settings) as ctx:
        ctx.conn  # noqa: B018                   # connect and migrate before the clock starts
    start_rss = peak_rss_mb()
    t = time.perf_counter()
    # a pass's own output folder: later passes (a replay) share the home, not the folder
    with OutputFolder(Path(spec.home) / "out" / spec.name, overwrite=True) as folder:
        rows = run_documents(list(spec.sources), job, folder, dispatch=ThreadDispatch(1), quiet=True).rows
    wall = time.perf_counter() - t
    out = [BenchRow(r.source, r.status, r.format.get("match"), r.record, r.pages or 1, dict(r.timings_ms),
                    r.attempts, (r.error or {}).get("kind"),
                    flags=sorted({v.get("rule", "") for v in (r.verification or {}).get("violations", [])
                                  if v.get("severity") == "error"}),
                    fields=r.fields, features=r.features) for r in rows]
    return PassResult(spec, out, round(wall, 3), round(peak_rss_mb(), 1), round(start_rss, 1))


def run_isolated(spec: PassSpec, workdir: Path) -> PassResult:
    """Run the pass in a fresh Python process (its own peak memory); raises on a crash, with its stderr."""
    workdir.mkdir(parents=True, exist_ok=True)
    spec_path = workdir / f"{spec.name}.spec.json"
    out_path = workdir / f"{spec.name}.result.json"
    spec_path.write_text(json.dumps(asdict(spec)), "utf-8")
    proc = subprocess.run([sys.executable, "-m", "bench.passes", str(spec_path), str(out_path)], cwd=ROOT,
                          capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"pass {spec.name} failed (exit {proc.returncode}):\n{proc.stderr[-4000:]}")
    res = PassResult.from_json(json.loads(out_path.read_text("utf-8")))
    res.isolated = True
    return res


def _main(argv: list[str]) -> int:
    spec = PassSpec(**json.loads(Path(argv[0]).read_text("utf-8")))
    Path(argv[1]).write_text(json.dumps(run_pass(spec).to_json(), ensure_ascii=False, default=str), "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
