"""CLI sub-commands, one module each, listed in one explicit registry.

Each module has `register(subparsers)` which adds its parser and sets `run=func(args) -> int`.
"""
from docassay.flows.commands import db, deploy, extract, formats, model, quota, review, synth

REGISTRY = {
    "db": db,
    "deploy": deploy,
    "extract": extract,
    "formats": formats,
    "model": model,
    "quota": quota,
    "review": review,
    "synth": synth,
}
