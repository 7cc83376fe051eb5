"""JSON Schema `$ref`s without the network: a schema's references resolve inside its own folder.

jsonschema's default registry fetches any `$ref` it cannot find (http://, https://, file:///etc/..)
as the schema is used. docassay never lets it:

  * `bundle(schema, path, allowed_dirs)` (at load time) finds every `$ref` to another document,
    reads it from the schema file's folder (or a folder in `allowed_dirs`) and embeds it in the
    schema as a resource with its own `$id`, so the schema carries everything it refers to;
    a reference to the network, or to a file outside those folders, is a SchemaRefError;
  * `REGISTRY` is the registry every validator uses: it retrieves nothing, so a reference that
    was not bundled is an error of the schema, never a request.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any, Iterator, Sequence
from urllib.parse import unquote, urldefrag, urljoin, urlparse

import jsonschema
from referencing import Registry, Resource
from referencing.exceptions import NoSuchResource

from docassay.verifiers.errors import VerifyError

__all__ = ["REGISTRY", "SchemaRefError", "bundle", "MAX_REFERENCED_DOCUMENTS"]

MAX_REFERENCED_DOCUMENTS = 64          # documents one schema may pull in (a bound on a ref chain)
_BUNDLE_KEY = "docassay-bundled"       # bundled documents are $defs / definitions "docassay-bundled-<n>"


class SchemaRefError(VerifyError):
    kind = "schema_ref"


def _retrieve_nothing(uri: str) -> Resource:
    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]  # an attrs class; its field is `ref`


REGISTRY: Registry = Registry(retrieve=_retrieve_nothing)   # type: ignore[call-arg]


def bundle(schema: dict[str, Any], path: str | Path, allowed_dirs: Sequence[str | Path] = ()) -> dict[str, Any]:
    """`schema` (read from `path`) with every document it `$ref`s embedded; see the module docstring."""
    path = Path(path).resolve()
    roots = [path.parent, *(Path(d).resolve() for d in allowed_dirs)]
    given_id = schema.get("$id")
    root_uri = given_id if isinstance(given_id, str) else path.as_uri()
    out = copy.deepcopy(schema)
    out.setdefault("$id", root_uri)
    known = set(_ids(out, root_uri))
    defs_key = "definitions" if _old_draft(out) else "$defs"
    todo = [(out, root_uri, path)]
    bundled: dict[str, Any] = {}
    while todo:
        doc, base, file = todo.pop()
        for ref, ref_base in _refs(doc, base):
            target = urldefrag(urljoin(ref_base, ref)).url
            if not target or target in known or target in bundled:
                continue
            local = _local_file(ref, ref_base, file, roots)
            if len(bundled) >= MAX_REFERENCED_DOCUMENTS:
                raise SchemaRefError(f"the schema {path} refers to more than {MAX_REFERENCED_DOCUMENTS} documents")
            try:
                sub = json.loads(local.read_text("utf-8"))
            except (OSError, ValueError) as exc:
                raise SchemaRefError(f"the schema {path}: $ref {ref!r} cannot be read from {local}: {exc}") from exc
            if not isinstance(sub, dict):
                raise SchemaRefError(f"the schema {path}: $ref {ref!r} ({local}) is not a JSON Schema object")
            sub["$id"] = target
            bundled[target] = sub
            known.update(_ids(sub, target))
            todo.append((sub, target, local))
    if bundled:
        defs = out.setdefault(defs_key, {})
        for n, (_, sub) in enumerate(sorted(bundled.items())):
            defs[f"{_BUNDLE_KEY}-{n}"] = sub
    return out


def _local_file(ref: str, base: str, referrer: Path, roots: list[Path]) -> Path:
    """The file a reference to another document names, if it lies inside `roots`; else SchemaRefError."""
    parsed = urlparse(ref)
    if parsed.scheme or parsed.netloc:
        if parsed.scheme == "file" and not parsed.netloc:
            candidate = Path(unquote(parsed.path))
        else:
            raise SchemaRefError(f"the schema's $ref {ref!r} points to the network; docassay makes no outbound "
                                 "requests: save that schema next to yours and refer to it by file name")
    else:
        base_parsed = urlparse(base)
        if base_parsed.scheme not in ("", "file") or base_parsed.netloc:
            folder = referrer.parent                     # a relative ref under an http $id: the file's folder
        else:
            folder = Path(unquote(base_parsed.path)).parent
        candidate = folder / unquote(urldefrag(ref).url)
    resolved = candidate.resolve()
    if not any(resolved == r or r in resolved.parents for r in roots):
        raise SchemaRefError(f"the schema's $ref {ref!r} points outside the schema's folder ({resolved}); "
                             "only files in the schema's folder (or DOCASSAY_SCHEMA_REF_DIRS) are read")
    if not resolved.is_file():
        raise SchemaRefError(f"the schema's $ref {ref!r}: no such file {resolved}")
    return resolved


def _refs(node: Any, base: str) -> Iterator[tuple[str, str]]:
    """(ref, the base URI it is relative to) for every `$ref`/`$dynamicRef` that names another document."""
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            base = urljoin(base, node["$id"])
        for key in ("$ref", "$dynamicRef", "$recursiveRef"):
            ref = node.get(key)
            if isinstance(ref, str) and not ref.startswith("#"):
                yield ref, base
        for k, v in node.items():
            if k not in ("enum", "const", "examples", "default"):
                yield from _refs(v, base)
    elif isinstance(node, list):
        for v in node:
            yield from _refs(v, base)


def _ids(node: Any, base: str) -> Iterator[str]:
    if isinstance(node, dict):
        if isinstance(node.get("$id"), str):
            base = urldefrag(urljoin(base, node["$id"])).url
            yield base
        for k, v in node.items():
            if k not in ("enum", "const", "examples", "default"):
                yield from _ids(v, base)
    elif isinstance(node, list):
        for v in node:
            yield from _ids(v, base)


def _old_draft(schema: dict[str, Any]) -> bool:
    cls = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    return cls in (jsonschema.Draft4Validator, jsonschema.Draft6Validator, jsonschema.Draft7Validator,
                   jsonschema.Draft3Validator)
