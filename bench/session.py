"""A benchmark session: one database server, one scratch folder, the sets, and the passes run so far.

Every pass gets an empty format library (a fresh home) and an empty database on ONE PostgreSQL
server: the embedded one, started once in the scratch folder and stopped at the end, or `--db`
(a fresh database per pass is created there when the role may, else the DSN is shared and the
fresh homes keep the format libraries apart). Passes are memoised per (set, variant), so that one
run of `bench.report` reuses the first-batch pass for the accuracy table, the ablation baseline
and the invoice2data comparison.

    with Session(SessionConfig(...)) as s:
        docs = s.docs("synth-invoices-unseen")
        first = s.first_batch("synth-invoices-unseen", VARIANTS["full"])
"""
from __future__ import annotations

import shutil
import signal
import tempfile
import threading
import uuid
from dataclasses import dataclass, field
from pathlib import Path

from bench.datasets import DEFAULT_DATA, BenchDoc, SynthSize, kind_of, load_set
from bench.passes import PassResult, PassSpec, run_isolated, run_pass


@dataclass(frozen=True)
class Variant:
    """How the pipeline is configured for a pass (the ablations switch one thing off)."""
    name: str
    reuse_formats: bool = True
    repair: bool = True
    generator: str = "baseline"
    fixer: bool = True
    troubleshooter: bool = True
    einvoice: str = "ignore"                    # use | check | ignore (the layout path, the default here)


VARIANTS = {
    "full": Variant("full"),
    "no-repair": Variant("no-repair", repair=False),
    "no-fixer": Variant("no-fixer", fixer=False),
    "no-troubleshooter": Variant("no-troubleshooter", troubleshooter=False),
    "no-reuse": Variant("no-reuse", reuse_formats=False),
    "model": Variant("model", generator="model"),
}


@dataclass
class SessionConfig:
    data: Path = DEFAULT_DATA
    db: str | None = None                       # PostgreSQL DSN; None = embedded server in the scratch folder
    synth: SynthSize = field(default_factory=SynthSize)
    limit: int | None = None                    # first N documents of each set
    images: bool = False                        # dev receipts: read the scans (OCR) where present
    isolate: bool = True                        # each pass in its own process (peak memory per pass)
    scratch: Path | None = None                 # default: a new folder under /var/tmp, deleted at the end
    keep: bool = False                          # keep the scratch folder


def _terminate(signum: int, frame: object) -> None:
    raise SystemExit(128 + signum)


class Session:
    def __init__(self, config: SessionConfig | None = None) -> None:
        self.config = config or SessionConfig()
        self._own_scratch = self.config.scratch is None
        base = self.config.scratch or Path(tempfile.mkdtemp(prefix="docassay-bench-", dir=_tmp_base()))
        self.scratch = Path(base)
        self.scratch.mkdir(parents=True, exist_ok=True)
        self._server = None
        self._sigterm = None
        self._admin_dsn: str | None = None
        self._databases: list[str] = []
        self._docs: dict[str, list[BenchDoc]] = {}
        self._first: dict[tuple[str, str], tuple[PassResult, PassSpec]] = {}

    # -- lifecycle ---------------------------------------------------------------------------
    def __enter__(self) -> "Session":
        # A SIGTERM (`timeout`, a killed job) ends the session as Ctrl-C does, through `close`:
        # by default Python dies at once and the embedded server outlives it.
        if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            self._sigterm = signal.signal(signal.SIGTERM, _terminate)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.close()
        finally:
            if self._sigterm is not None:
                signal.signal(signal.SIGTERM, self._sigterm)
                self._sigterm = None

    def close(self) -> None:
        """Drop the databases made on an external server, stop the embedded one, remove scratch."""
        if self.config.db and self._databases:
            import psycopg
            from psycopg import sql
            try:
                with psycopg.connect(self.config.db, autocommit=True) as admin:
                    for name in self._databases:
                        admin.execute(sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name)))
            except psycopg.Error:
                pass                             # best effort: the databases are named bench_*
        self._databases.clear()
        if self._server is not None:
            from docassay.infra.db import embedded
            embedded.stop(self._server.data_dir)
            self._server = None
        if self._own_scratch and not self.config.keep:
            shutil.rmtree(self.scratch, ignore_errors=True)

    # -- database ----------------------------------------------------------------------------
    def admin_dsn(self) -> str:
        if self._admin_dsn is None:
            if self.config.db:
                self._admin_dsn = self.config.db
            else:
                from docassay.infra.db import embedded
                self._server = embedded.ensure_running(data_dir=self.scratch / "pg")
                self._admin_dsn = self._server.dsn
        return self._admin_dsn

    def fresh_dsn(self) -> str:
        """A new, empty database on the session's server (or the shared DSN if none may be made)."""
        import psycopg
        from psycopg import sql
        from psycopg.conninfo import make_conninfo

        admin = self.admin_dsn()
        name = f"bench_{uuid.uuid4().hex[:12]}"
        try:
            with psycopg.connect(admin, autocommit=True) as conn:
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(name)))
        except psycopg.Error:
            return admin
        self._databases.append(name)
        return make_conninfo(admin, dbname=name)

    # -- documents and passes ----------------------------------------------------------------
    def docs(self, set_name: str) -> list[BenchDoc]:
        if set_name not in self._docs:
            self._docs[set_name] = load_set(set_name, data=self.config.data, folder=self.scratch / "docs",
                                            size=self.config.synth, limit=self.config.limit,
                                            images=self.config.images)
        return self._docs[set_name]

    def _run(self, spec: PassSpec) -> PassResult:
        if self.config.isolate:
            return run_isolated(spec, self.scratch / "passes")
        return run_pass(spec)

    def _spec(self, set_name: str, variant: Variant, label: str, *, home: str | None = None,
              dsn: str | None = None, reuse: bool | None = None) -> PassSpec:
        tag = f"{set_name}.{variant.name}.{label}.{uuid.uuid4().hex[:6]}"
        return PassSpec(tag, kind_of(set_name), [d.path for d in self.docs(set_name)],
                        home or str(self.scratch / "homes" / tag), dsn or self.fresh_dsn(),
                        variant.reuse_formats if reuse is None else reuse, variant.repair, variant.generator,
                        fixer=variant.fixer, troubleshooter=variant.troubleshooter, einvoice=variant.einvoice)

    def first_batch(self, set_name: str, variant: Variant = VARIANTS["full"]) -> PassResult:
        """The documents as a first batch on an empty library (memoised): with reuse, the first
        document of a format takes the new-format path and later ones replay its instructions."""
        key = (set_name, variant.name)
        if key not in self._first:
            spec = self._spec(set_name, variant, "first")
            self._first[key] = (self._run(spec), spec)
        return self._first[key][0]

    def replay(self, set_name: str, variant: Variant = VARIANTS["full"]) -> PassResult:
        """The same documents again on the library the first batch learned (known-format path)."""
        self.first_batch(set_name, variant)
        learned = self._first[(set_name, variant.name)][1]
        spec = self._spec(set_name, variant, "replay", home=learned.home, dsn=learned.dsn, reuse=True)
        return self._run(spec)

    def all_new(self, set_name: str, variant: Variant = VARIANTS["full"]) -> PassResult:
        """Every document on the new-format path (reuse off), on an empty library (not memoised)."""
        return self._run(self._spec(set_name, variant, "new", reuse=False))


def _tmp_base() -> str:
    base = Path(tempfile.gettempdir())
    # The embedded server must not live under /root (see infra/db/embedded.py).
    return "/var/tmp" if base.resolve().is_relative_to("/root") or not base.exists() else str(base)
