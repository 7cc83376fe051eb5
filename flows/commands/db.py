"""`docassay db start|stop|status [--home DIR]`: the embedded PostgreSQL of a home.

    start    start the server (if needed) and keep it running after commands end; prints its DSN
    stop     stop it (fast shutdown: connected sessions are ended)
    status   whether it runs, its pid, DSN and whether it is kept; starts nothing

Without `db start` (or DOCASSAY_PG_KEEP=1), a command that started the server stops it when it
ends and no other process uses it (infra/db/embedded.py). With `--db`/DOCASSAY_DB nothing here
applies: docassay does not manage an external database.
"""
from __future__ import annotations

import argparse
import json

ACTIONS = ("start", "stop", "status")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("db", help="start, stop or inspect the embedded PostgreSQL of a home",
                       description="Manage the embedded PostgreSQL server of --home (not an external --db).")
    p.add_argument("action", choices=ACTIONS)
    p.add_argument("--home", help="the home whose server to manage (default: $DOCASSAY_HOME, else ~/.docassay)")
    p.add_argument("--json", action="store_true", help="status as one JSON object")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from docassay.infra.config import Settings
    from docassay.infra.db import embedded  # loads psycopg: only when the command runs, not for --help
    home = Settings.load(home=args.home).home
    data_dir = embedded.data_dir_for(home)
    if args.action == "start":
        server = embedded.ensure_running(home, keep=True)
        how = "started" if server.started else "already running"
        print(f"embedded PostgreSQL {how} (kept until `docassay db stop`): {server.dsn}")
        return 0
    if args.action == "stop":
        print("stopped" if embedded.stop(data_dir) else f"not running ({data_dir})")
        return 0
    st = embedded.status(data_dir)
    if args.json:
        print(json.dumps({"data_dir": str(st.data_dir), "running": st.running, "pid": st.pid, "kept": st.kept,
                          "dsn": st.dsn}))
    elif st.running:
        print(f"running (pid {st.pid}{', kept' if st.kept else ''}) in {st.data_dir}: {st.dsn}")
    else:
        print(f"not running ({st.data_dir})")
    return 0
