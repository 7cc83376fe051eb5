"""Typed view of extraction instructions, with a JSON round trip validated by `schema.json`.

Instructions are data: `Instructions.to_json()` gives the document a person reads, diffs and edits;
`Instructions.from_json()` validates it against the shipped JSON Schema and raises
`InstructionError` with every problem's path.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from functools import lru_cache
from importlib import resources
from typing import Any, Literal, Mapping

import jsonschema

from docassay.extractors.errors import InstructionError

__all__ = ["Locale", "Locator", "FieldRule", "Column", "TableRule", "Instructions", "instruction_schema"]

Relation = Literal["right", "below", "above", "left"]


@lru_cache(maxsize=1)
def instruction_schema() -> dict:
    return json.loads(resources.files("docassay.extractors.instructions").joinpath("schema.json").read_text("utf-8"))


@lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    schema = instruction_schema()
    cls = jsonschema.validators.validator_for(schema)
    return cls(schema)


@dataclass(frozen=True)
class Locale:
    decimal: str = "."
    date_order: str = "DMY"
    currency: str | None = None
    language: str | None = None

    def to_json(self) -> dict:
        out: dict[str, object] = {"decimal": self.decimal, "date_order": self.date_order}
        if self.currency:
            out["currency"] = self.currency
        if self.language:
            out["language"] = self.language
        return out


@dataclass(frozen=True)
class Locator:
    by: str                                  # anchor | region | pattern | detect
    label: str | None = None                 # anchor
    relation: str | None = None              # anchor
    occurrence: int = 0                      # anchor, pattern
    page: int | None = None                  # anchor, region, pattern
    max_distance: float | None = None        # anchor
    skip: int = 0                            # anchor
    exact: bool = False                      # anchor: only whole-segment label matches count
    bbox: tuple[float, float, float, float] | None = None   # region (relative)
    pick: str | None = None                  # region
    regex: str | None = None                 # pattern
    what: str | None = None                  # detect

    def to_json(self) -> dict:
        d: dict[str, object] = {"by": self.by}
        if self.by == "anchor":
            d.update(label=self.label, relation=self.relation)
            if self.occurrence:
                d["occurrence"] = self.occurrence
            if self.page is not None:
                d["page"] = self.page
            if self.max_distance is not None:
                d["max_distance"] = round(self.max_distance, 4)
            if self.skip:
                d["skip"] = self.skip
            if self.exact:
                d["exact"] = True
        elif self.by == "region":
            d["bbox"] = [round(v, 4) for v in (self.bbox or (0, 0, 1, 1))]
            if self.page is not None:
                d["page"] = self.page
            if self.pick:
                d["pick"] = self.pick
        elif self.by == "pattern":
            d["regex"] = self.regex
            if self.occurrence:
                d["occurrence"] = self.occurrence
            if self.page is not None:
                d["page"] = self.page
        elif self.by == "detect":
            d["what"] = self.what
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "Locator":   # parsed JSON (validate_instructions checks it)
        bbox = d.get("bbox")
        return cls(by=str(d["by"]), label=d.get("label"), relation=d.get("relation"),
                   occurrence=int(d.get("occurrence", 0)), page=d.get("page"),
                   max_distance=d.get("max_distance"), skip=int(d.get("skip", 0)),
                   exact=bool(d.get("exact", False)),
                   bbox=tuple(bbox) if bbox else None, pick=d.get("pick"),
                   regex=d.get("regex"), what=d.get("what"))

    def describe(self) -> str:
        """Short human-readable form, used as the provenance `anchor`."""
        if self.by == "anchor":
            occ = f"#{self.occurrence}" if self.occurrence else ""
            ex = "=" if self.exact else ""
            return f"{ex}{self.label!s}{occ} -> {self.relation}"
        if self.by == "region":
            return "region " + ",".join(f"{v:.2f}" for v in (self.bbox or ()))
        if self.by == "pattern":
            return f"pattern /{self.regex}/"
        return f"detect {self.what}"


@dataclass(frozen=True)
class FieldRule:
    type: str
    locator: Locator
    fallbacks: tuple[Locator, ...] = ()
    normalize: Mapping[str, object] = field(default_factory=dict)
    lines: int | None = None

    def to_json(self) -> dict:
        d: dict[str, object] = {"type": self.type, "locator": self.locator.to_json()}
        if self.fallbacks:
            d["fallbacks"] = [f.to_json() for f in self.fallbacks]
        if self.normalize:
            d["normalize"] = dict(self.normalize)
        if self.lines:
            d["lines"] = self.lines
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "FieldRule":   # parsed JSON (validate_instructions checks it)
        return cls(type=str(d["type"]), locator=Locator.from_json(d["locator"]),
                   fallbacks=tuple(Locator.from_json(x) for x in d.get("fallbacks", [])),
                   normalize=dict(d.get("normalize", {})), lines=d.get("lines"))


@dataclass(frozen=True)
class Column:
    header: str
    type: str


@dataclass(frozen=True)
class TableRule:
    columns: Mapping[str, Column]
    row_key: str | None = None
    multiline: str | None = None
    stop: tuple[str, ...] = ()
    min_header_matches: int | None = None

    def to_json(self) -> dict:
        d: dict[str, object] = {"columns": {k: {"header": c.header, "type": c.type} for k, c in self.columns.items()}}
        if self.row_key:
            d["row_key"] = self.row_key
        if self.multiline:
            d["multiline"] = self.multiline
        if self.stop:
            d["stop"] = list(self.stop)
        if self.min_header_matches:
            d["min_header_matches"] = self.min_header_matches
        return d

    @classmethod
    def from_json(cls, d: Mapping[str, Any]) -> "TableRule":   # parsed JSON (validate_instructions checks it)
        cols = {k: Column(str(v["header"]), str(v["type"])) for k, v in d["columns"].items()}
        return cls(columns=cols, row_key=d.get("row_key"), multiline=d.get("multiline"),
                   stop=tuple(d.get("stop", ())), min_header_matches=d.get("min_header_matches"))


@dataclass(frozen=True)
class Instructions:
    locale: Locale
    fields: Mapping[str, FieldRule]
    tables: Mapping[str, TableRule] = field(default_factory=dict)
    produced_by: str = ""
    notes: tuple[str, ...] = ()

    def to_json(self) -> dict:
        d: dict[str, object] = {"docassay_instructions": 1, "locale": self.locale.to_json(),
                                "fields": {k: v.to_json() for k, v in self.fields.items()}}
        if self.tables:
            d["tables"] = {k: v.to_json() for k, v in self.tables.items()}
        if self.produced_by:
            d["produced_by"] = self.produced_by
        if self.notes:
            d["notes"] = list(self.notes)
        return d

    @classmethod
    def from_json(cls, d: object) -> "Instructions":
        errors = validate_instructions(d)
        if errors:
            raise InstructionError("instructions do not match their schema: " + "; ".join(errors[:5]),
                                   errors=errors)
        assert isinstance(d, Mapping)
        loc = d["locale"]
        return cls(locale=Locale(loc["decimal"], loc["date_order"], loc.get("currency"), loc.get("language")),
                   fields={k: FieldRule.from_json(v) for k, v in d["fields"].items()},
                   tables={k: TableRule.from_json(v) for k, v in d.get("tables", {}).items()},
                   produced_by=str(d.get("produced_by", "")), notes=tuple(d.get("notes", ())))

    def with_field(self, name: str, rule: FieldRule) -> "Instructions":
        return replace(self, fields={**self.fields, name: rule})

    def with_table(self, name: str, rule: TableRule) -> "Instructions":
        return replace(self, tables={**self.tables, name: rule})


def validate_instructions(d: object) -> list[str]:
    """Every schema error in an instructions document, each prefixed with its JSON path."""
    errs = sorted(_validator().iter_errors(d), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in errs]
