"""docassay: SQL business rules run against an extracted record (PostgreSQL / Aurora DSQL).

    load_rules(path) -> list[Rule]                         a .sql file or a folder of them
    run_rules(conn, schema, record, rules, *, timeout_ms) -> list[RuleResult]
    check_rules(conn, schema, rules)                       every rule planned over the schema, before a batch
    relation_schema(schema) -> RelationSchema              how the record is seen: `doc` + arrays
"""
from docassay.rules.errors import RuleError, RulesError, SchemaMappingError
from docassay.rules.loader import Rule, Severity, check_statement, load_rules, parse_rules
from docassay.rules.relations import Coercion, Column, Relation, RelationSchema, relation_schema
from docassay.rules.runner import RuleResult, Violation, check_rules, run_rules

__all__ = [
    "Rule", "Severity", "load_rules", "parse_rules", "check_statement",
    "run_rules", "check_rules", "RuleResult", "Violation",
    "relation_schema", "RelationSchema", "Relation", "Column", "Coercion",
    "RulesError", "RuleError", "SchemaMappingError",
]
