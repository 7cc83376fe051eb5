"""`python -m docassay ...` is the `docassay` command."""
from docassay.flows.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
