"""`docassay` with `--generator model` standing in as the metered baseline (budget_support), for
tests that run batches in separate processes: `python budget_cli.py extract ...`."""
from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from budget_support import install  # noqa: E402

if __name__ == "__main__":
    install()
    from docassay.flows.cli import main
    sys.exit(main(sys.argv[1:]))
