"""format gate: the record validates against the user's JSON Schema — every error, with its path."""
from __future__ import annotations

import json
from functools import lru_cache

import jsonschema
from referencing.exceptions import Unresolvable

from docassay.verifiers.context import VerifyContext
from docassay.verifiers.errors import VerifyError
from docassay.verifiers.result import GateResult, Violation
from docassay.verifiers.schema_refs import REGISTRY

NAME = "format"


@lru_cache(maxsize=32)
def _validator(schema_json: str) -> jsonschema.protocols.Validator:
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    try:
        cls.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise VerifyError(f"the target schema is not a valid JSON Schema: {exc.message}", kind="schema") from exc
    return cls(schema, format_checker=cls.FORMAT_CHECKER, registry=REGISTRY)   # retrieves nothing (schema_refs)


def validator_for(schema: object) -> jsonschema.protocols.Validator:
    return _validator(json.dumps(schema, sort_keys=True))


def check(ctx: VerifyContext) -> GateResult:
    try:
        v = validator_for(ctx.schema)
    except (VerifyError, TypeError, ValueError) as exc:
        msg = exc.message if isinstance(exc, VerifyError) else f"the target schema cannot be used: {exc}"
        return GateResult(NAME, False, {"errors": 1}, [Violation(NAME, "schema", None, msg)])
    try:
        errors = sorted(v.iter_errors(ctx.record), key=lambda e: [str(p) for p in e.absolute_path])
    except Unresolvable as exc:
        return GateResult(NAME, False, {"errors": 1}, [Violation(
            NAME, "schema", None, f"the target schema has a $ref that docassay does not fetch: {exc}"[:300])])
    violations = []
    for e in errors:
        path = "/".join(str(p) for p in e.absolute_path)
        field = path or None
        if e.validator == "required" and isinstance(e.instance, dict):
            missing = [r for r in e.validator_value if r not in e.instance]
            field = "/".join(filter(None, [path] + missing[:1])) if missing else field
        violations.append(Violation(NAME, str(e.validator), field,
                                    f"{path or '<record>'}: {e.message}"[:300], actual=_short(e.instance)))
    return GateResult(NAME, not violations, {"errors": len(violations)}, violations)


def _short(v: object) -> object:
    if isinstance(v, (dict, list)):
        return None
    if isinstance(v, str) and len(v) > 120:
        return v[:120] + "…"
    return v
