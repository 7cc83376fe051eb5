"""Scheduled deployments of the inbox flow.

Fast: how a deployment is built (schedule, parameters, concurrency limit) and the CLI's checks.
Slow (a real `prefect server` on loopback, `docassay deploy serve` in a subprocess): a cron schedule
that fires within the test processes a folder inbox and an S3 inbox (moto server on loopback)
end to end, after a run over the folder was killed with SIGKILL midway; and a run on a local
Dask cluster of processes.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Callable, Iterator

import psycopg
import pytest

from awsmock import FAKE_ENV, free_port, moto_server
from docassay.flows.cli import main
from docassay.flows.deploy import deployment_name
from docassay.flows.inbox import ARCHIVE, InboxSpec
from tests.flows.test_inbox import drop_invoices

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = ROOT / "examples/invoices/schema.json"
RULES = ROOT / "examples/invoices/rules"


def spec(tmp_path: Path, **kw: Any) -> InboxSpec:
    return InboxSpec.of(**{"inbox": str(tmp_path / "in"), "schema": str(SCHEMA), "dest": str(tmp_path / "out"), **kw})


# ------------------------------------------------------------------------------------------ fast

def test_a_deployment_has_its_schedule_parameters_and_a_concurrency_limit_of_one(tmp_path: Path) -> None:
    from prefect.client.schemas.objects import ConcurrencyLimitStrategy

    from docassay.flows.deploy import InboxDeployment, deployment_name, to_runner_deployment

    s = spec(tmp_path, inbox="s3://docs/incoming/", rules=str(RULES), concurrency=3)
    d = to_runner_deployment(InboxDeployment(s, cron="*/5 * * * *", timezone="Europe/Berlin"))
    assert d.name == deployment_name("s3://docs/incoming/") == "inbox-s3-docs-incoming"
    (sched,) = d.schedules
    assert sched.schedule.cron == "*/5 * * * *" and sched.schedule.timezone == "Europe/Berlin"
    assert d.parameters == s.parameters() and d.parameters["inbox"] == "s3://docs/incoming/"
    assert d.concurrency_limit == 1
    assert d.concurrency_options.collision_strategy == ConcurrencyLimitStrategy.CANCEL_NEW
    enq = to_runner_deployment(InboxDeployment(s, cron="0 6 * * 1-5", name="weekday", collision="enqueue"))
    assert enq.name == "weekday" and enq.concurrency_options.collision_strategy == ConcurrencyLimitStrategy.ENQUEUE


def test_bad_schedules_and_runners_are_refused(tmp_path: Path) -> None:
    from docassay.flows.deploy import InboxDeployment
    from docassay.flows.runners import is_in_process, make_task_runner
    from docassay.infra.errors import ConfigError

    with pytest.raises(ConfigError):
        InboxDeployment(spec(tmp_path), cron="every five minutes")
    with pytest.raises(ConfigError):
        InboxSpec.of(inbox="x", schema="s", dest="d", after="delete")
    with pytest.raises(ConfigError):
        make_task_runner("ray", 2)
    with pytest.raises(ConfigError):
        make_task_runner("dask:many", 2)
    assert is_in_process(make_task_runner("threads", 2))


def test_dask_runners() -> None:
    pytest.importorskip("prefect_dask")
    from docassay.flows.runners import is_in_process, make_task_runner
    dask = make_task_runner("dask:3", 2)
    assert not is_in_process(dask) and dask.cluster_kwargs["n_workers"] == 3 and dask.cluster_kwargs["processes"]
    assert make_task_runner("tcp://10.0.0.5:8786", 2).address == "tcp://10.0.0.5:8786"


def test_cli_checks_its_arguments(tmp_path: Path, capsys: pytest.CaptureFixture) -> None:
    base = ["deploy", "serve", "--cron", "* * * * *", "--schema", str(SCHEMA)]
    assert main(base + ["--inbox", "a", "--inbox", "b", "--dest", "x"]) == 2
    assert "one --dest per --inbox" in capsys.readouterr().err
    assert main(["deploy", "run-once", "--inbox", "a", "--dest", "x", "--schema", str(tmp_path / "nope.json")]) == 2
    assert "schema not found" in capsys.readouterr().err


# ------------------------------------------------------------------------------------------ slow

def _wait(what: str, check: Callable[[], Any], timeout: float, every: float = 0.5) -> Any:
    end = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(every)


def _stop(proc: subprocess.Popen, sig: int = signal.SIGTERM) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, sig)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)


@pytest.fixture(scope="module")
def prefect_server() -> Iterator[dict[str, str]]:
    """A real Prefect server on loopback with its own PREFECT_HOME; yields the environment that
    points a process at it."""
    import httpx

    home = Path(tempfile.mkdtemp(prefix="docassay-prefect-"))
    port = free_port()
    env = {**os.environ, "PREFECT_HOME": str(home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
           "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "60", "PREFECT_UI_ENABLED": "false",
           "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "5",
           "PREFECT_SERVER_SERVICES_TRIGGERS_ENABLED": "false",
           "PREFECT_SERVER_LOGGING_LEVEL": "WARNING", "PREFECT_LOGGING_LEVEL": "WARNING"}
    log = open(home / "server.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1",
                             "--port", str(port)], env=env, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f"http://127.0.0.1:{port}/api"

    def healthy() -> bool:
        if proc.poll() is not None:
            raise AssertionError(f"prefect server exited: {(home / 'server.log').read_text()[-2000:]}")
        try:
            return httpx.get(url + "/health", timeout=2).status_code == 200
        except httpx.HTTPError:
            return False
    try:
        _wait("the Prefect server", healthy, timeout=180)
        client_home = home / "client"
        client_home.mkdir()
        yield {"PREFECT_API_URL": url, "PREFECT_HOME": str(client_home), "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
               "PREFECT_LOGGING_LEVEL": "WARNING"}
    finally:
        _stop(proc)
        log.close()
        shutil.rmtree(home, ignore_errors=True)      # the server's database and logs: nothing left in /tmp


def _api(env: dict[str, str], path: str, body: dict | None = None) -> Any:
    import httpx
    r = httpx.post(env["PREFECT_API_URL"] + path, json=body or {}, timeout=10)
    r.raise_for_status()
    return r.json()


def _docassay(args: list[str], env: dict[str, str], log: Path) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "docassay.flows.cli", *args], env=env, cwd=ROOT,
                            stdout=open(log, "w"), stderr=subprocess.STDOUT, start_new_session=True)


def _done(dsn: str, inbox: str) -> int:
    try:
        with psycopg.connect(dsn) as conn:
            row = conn.execute("SELECT count(*) FROM inbox_claims WHERE inbox = %s AND state = 'done'", (inbox,)).fetchone()
            return int(row[0])
    except psycopg.errors.UndefinedTable:
        return 0


def _reports_in_folder(dest: Path) -> list[dict]:
    return [json.loads(line) for p in sorted((dest / "runs").glob("*/results.jsonl")) for line in p.read_text().splitlines()]


@pytest.mark.slow
@pytest.mark.prefect
@pytest.mark.timeout(900)
def test_scheduled_runs_process_a_folder_and_an_s3_inbox_after_a_killed_run(
        prefect_server: dict[str, str], tmp_path: Path, pg_fresh_dsn: str, aws_offline: list[str]) -> None:
    boto3 = pytest.importorskip("boto3")
    pytest.importorskip("moto")
    folder, results, home = tmp_path / "inbox", tmp_path / "results", tmp_path / "home"
    docs = drop_invoices(folder, 4, 2, seed=71)
    common = ["--schema", str(SCHEMA), "--rules", str(RULES), "--db", pg_fresh_dsn, "--home", str(home),
              "--settle-s", "0"]
    with moto_server() as s3_url:
        env = {**os.environ, **prefect_server, **FAKE_ENV, "AWS_ENDPOINT_URL": s3_url}
        for k in ("AWS_PROFILE", "AWS_CONFIG_FILE", "AWS_SHARED_CREDENTIALS_FILE"):
            env.pop(k, None)

        # 1. a run over the folder, killed with SIGKILL once it has finished two documents
        killed = _docassay(["deploy", "run-once", "--inbox", str(folder), "--dest", str(results),
                            "--concurrency", "1", "--lease-s", "6", *common], env, tmp_path / "killed.log")
        inbox_url = str(folder.resolve()) + "/"
        try:
            _wait("the first run to finish two documents",
                  lambda: killed.poll() is not None or _done(pg_fresh_dsn, inbox_url) >= 2, timeout=300, every=0.05)
        finally:
            _stop(killed, signal.SIGKILL)
        done_before = _done(pg_fresh_dsn, inbox_url)
        with psycopg.connect(pg_fresh_dsn) as conn:
            finished_by_killed = dict(conn.execute(
                "SELECT sha256, run_id FROM inbox_claims WHERE inbox = %s AND state = 'done'", (inbox_url,)).fetchall())
        assert killed.returncode == -signal.SIGKILL, (tmp_path / "killed.log").read_text()[-3000:]
        assert 2 <= done_before < len(docs), "the run was killed midway"
        left = [p for p in folder.iterdir() if p.is_file()]
        assert left, "documents were left in the inbox by the killed run"

        # 2. an S3 inbox with documents of its own
        s3 = boto3.client("s3", region_name="us-east-1", endpoint_url=s3_url)
        s3.create_bucket(Bucket="docs")
        s3_docs = drop_invoices(tmp_path / "s3src", 1, 2, seed=72)
        for p in s3_docs:
            s3.put_object(Bucket="docs", Key=f"incoming/{p.name}", Body=p.read_bytes())

        # 3. both inboxes on a schedule that fires every 10 seconds
        serve = _docassay(["deploy", "serve", "--cron", "* * * * * */10",
                           "--inbox", str(folder), "--dest", str(results),
                           "--inbox", "s3://docs/incoming", "--dest", "s3://docs/results", "--lease-s", "20",
                           *common], env, tmp_path / "serve.log")
        try:
            def finished() -> bool:
                if serve.poll() is not None:
                    raise AssertionError((tmp_path / "serve.log").read_text()[-3000:])
                s3_left = sum(not o["Key"].startswith(f"incoming/{ARCHIVE}/") for o in
                              s3.list_objects_v2(Bucket="docs", Prefix="incoming/").get("Contents", []))
                reports = s3.list_objects_v2(Bucket="docs", Prefix="results/runs/").get("KeyCount", 0)
                return (not any(p.is_file() for p in folder.iterdir()) and s3_left == 0 and reports >= 1
                        and len(_reports_in_folder(results)) >= len(docs))
            _wait("the scheduled runs to empty both inboxes", finished, timeout=420, every=1.0)
            deployments = _api(prefect_server, "/deployments/filter")
            runs = _api(prefect_server, "/flow_runs/filter",
                        {"flow_runs": {"state": {"type": {"any_": ["COMPLETED"]}}}})
        finally:
            _stop(serve)

        # the folder: every document in exactly one report, none lost, none twice
        rows = _reports_in_folder(results)
        assert sorted(Path(r["source"]).name for r in rows) == sorted(p.name for p in docs)
        assert len({r["sha256"] for r in rows}) == len(docs)
        assert all((results / "documents" / f"{r['sha256']}.json").exists() for r in rows)
        archived = sorted(p.name for p in (folder / ARCHIVE).rglob("*.pdf"))
        assert archived == sorted(p.name for p in docs)
        with psycopg.connect(pg_fresh_dsn) as conn:
            claims = conn.execute("SELECT state, attempts, reported_in FROM inbox_claims WHERE inbox = %s",
                                  (inbox_url,)).fetchall()
            stored = conn.execute("SELECT count(*) FROM documents").fetchone()[0]
            after = dict(conn.execute("SELECT sha256, run_id FROM inbox_claims WHERE inbox = %s", (inbox_url,)).fetchall())
        assert len(claims) == len(docs) and all(c[0] == "done" and c[2] for c in claims)
        assert all(after[sha] == run for sha, run in finished_by_killed.items()), "what the killed run finished was not redone"
        assert max(c[1] for c in claims) <= 2
        assert stored == len(docs) + len(s3_docs), "records in PostgreSQL for every document"

        # the S3 inbox: results in S3, one object per document, documents moved
        keys = [o["Key"] for o in s3.list_objects_v2(Bucket="docs").get("Contents", [])]
        s3_rows = [json.loads(line) for k in keys if k.startswith("results/runs/") and k.endswith("results.jsonl")
                   for line in s3.get_object(Bucket="docs", Key=k)["Body"].read().decode().splitlines()]
        assert sorted(r["source"] for r in s3_rows) == sorted(f"s3://docs/incoming/{p.name}" for p in s3_docs)
        assert sum(k.startswith("results/documents/") for k in keys) == len(s3_docs)
        assert sum(k.startswith(f"incoming/{ARCHIVE}/") for k in keys) == len(s3_docs)

    # the deployments, their schedule and concurrency limit, as the Prefect server holds them
    by_name = {d["name"]: d for d in deployments}
    assert set(by_name) == {deployment_name(str(folder.resolve())), "inbox-s3-docs-incoming"}
    for d in by_name.values():
        assert d["global_concurrency_limit"]["limit"] == 1 and d["concurrency_options"]["collision_strategy"] == "CANCEL_NEW"
        assert d["schedules"][0]["schedule"]["cron"] == "* * * * * */10"
    assert {r["deployment_id"] for r in runs} >= {d["id"] for d in by_name.values()}, "each deployment ran on its schedule"


@pytest.mark.slow
@pytest.mark.prefect
@pytest.mark.timeout(600)
def test_documents_spread_over_a_local_dask_cluster(prefect_server: dict[str, str], tmp_path: Path,
                                                    pg_fresh_dsn: str) -> None:
    pytest.importorskip("prefect_dask")
    folder = tmp_path / "inbox"
    docs = drop_invoices(folder, 2, 3, seed=81)
    env = {**os.environ, **prefect_server}
    proc = _docassay(["deploy", "run-once", "--inbox", str(folder), "--dest", str(tmp_path / "results"),
                      "--schema", str(SCHEMA), "--rules", str(RULES), "--db", pg_fresh_dsn,
                      "--home", str(tmp_path / "home"), "--settle-s", "0", "--task-runner", "dask:2"],
                     env, tmp_path / "dask.log")
    try:
        proc.wait(timeout=500)
    finally:
        _stop(proc, signal.SIGKILL)
    out = (tmp_path / "dask.log").read_text()
    assert proc.returncode == 0, out[-3000:]
    summary = json.loads(out[out.index("{\n"):])
    assert summary["outcomes"] == {"processed": len(docs)} and summary["reported"] == len(docs)
    workers = summary["workers"]
    assert len(workers) == 2, f"documents went to both worker processes: {workers}"
    assert all(not w.endswith(f":{proc.pid}") for w in workers), "not in the flow's own process"
