"""Errors raised by verification.

    infra.errors.DocassayError
    └── VerifyError               verification could not be set up: a bad `x-docassay` keyword in the
                                  schema, a malformed golden case; `kind` says which (schema | golden)

A malformed *record* is not an error: each gate reports it as a failed gate with its reason.
"""
from __future__ import annotations

from docassay.infra.errors import DocassayError


class VerifyError(DocassayError):
    kind = "verify"
