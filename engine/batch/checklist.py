"""Audit definitions: `audits/*.yaml` checklists of questions, validated with clear errors.

A definition names its scope (documents, source types, exact versions), the backend and any
setting overrides, and its questions (each with an id, the text, an optional control id and
optional expectations: the documents/sections the auditor expects to see cited, reported as
met or missed and never used to steer the answer). Errors name the file, the line and the field.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Annotated, Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError, field_validator, model_validator

from engine.config import SOURCE_TYPES, Settings
from engine.errors import ConfigError

# Settings an audit definition may override (retrieval and research knobs, never paths or secrets).
OVERRIDABLE = frozenset({"research_k", "research_threshold", "research_max_completed", "research_max_iterations",
                         "dense_weight", "fusion", "candidates", "crossref_depth", "crossref_char_budget",
                         "memory_enabled", "memory_threshold", "guard_enabled", "llm_model", "llm_temperature"})
FAIL_ON = ("any", "no-evidence", "expect", "never")


class DefinitionError(ConfigError):
    """An audit definition is invalid; the message names file, line and field."""


class Expectation(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    document: str = Field(description="Document title, file name, source path or id expected among the citations")
    section: str | None = Field(default=None, description="Section number (a citation in a subsection also counts)")


class Question(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str = Field(pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$", description="Stable id within the checklist")
    text: str = Field(min_length=5, description="The question as the engine is asked it")
    control_id: str | None = Field(default=None, description="e.g. an OSCAL catalog statement id")
    expect: list[Expectation] = Field(default_factory=list)


class Scope(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    documents: list[str] = Field(default_factory=list, description="Titles, file names, paths or ids (current)")
    source_types: list[str] = Field(default_factory=list)
    versions: list[str] = Field(default_factory=list, description="Exact document ids (pinned versions)")

    @field_validator("source_types")
    @classmethod
    def _known_types(cls, value: list[str]) -> list[str]:
        unknown = sorted(set(value) - set(SOURCE_TYPES))
        if unknown:
            raise ValueError(f"unknown source type(s) {unknown}; expected some of {list(SOURCE_TYPES)}")
        return value

    @property
    def restricted(self) -> bool:
        return bool(self.documents or self.source_types or self.versions)


class AuditDefinition(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    description: str = ""
    scope: Scope = Field(default_factory=Scope)
    backend: Literal["rules", "llm"] = "rules"
    parameters: dict[str, Any] = Field(default_factory=dict, description="Setting overrides (see OVERRIDABLE)")
    fail_on: Literal["any", "no-evidence", "expect", "never"] = Field(
        default="any", description="Which outcomes make `audit run` exit non-zero")
    questions: list[Question] = Field(min_length=1)

    @field_validator("parameters")
    @classmethod
    def _overridable(cls, value: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(value) - OVERRIDABLE)
        if unknown:
            raise ValueError(f"cannot override {unknown}; allowed: {sorted(OVERRIDABLE)}")
        out: dict[str, Any] = {}
        for key, raw in value.items():
            field = Settings.model_fields[key]
            try:
                out[key] = TypeAdapter(Annotated[field.annotation, field]).validate_python(raw)  # type: ignore[arg-type]
            except ValidationError as exc:
                raise ValueError(f"{key}: {exc.errors()[0]['msg']}") from exc
        return out

    @model_validator(mode="after")
    def _unique_ids(self) -> AuditDefinition:
        seen: set[str] = set()
        for q in self.questions:
            if q.id in seen:
                raise ValueError(f"question id '{q.id}' is used twice")
            seen.add(q.id)
        return self


def _node_at(node: yaml.Node, loc: tuple[Any, ...]) -> yaml.Node:
    """The deepest YAML node along a pydantic error location."""
    for part in loc:
        if isinstance(node, yaml.MappingNode):
            child = next((v for k, v in node.value if k.value == part), None)
            key = next((k for k, _ in node.value if k.value == part), None)
            if child is None:
                return node
            node = child if part != loc[-1] or key is None else key
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            return node
    return node


def _describe(path: str, root: yaml.Node | None, exc: ValidationError) -> str:
    lines = []
    for e in exc.errors():
        loc = tuple(e["loc"])
        field = ".".join(str(p) if not isinstance(p, int) else f"[{p}]" for p in loc).replace(".[", "[") or "(top)"
        line = _node_at(root, loc).start_mark.line + 1 if root is not None else 1
        lines.append(f"{path}:{line}: {field}: {e['msg']}")
    return "invalid audit definition\n" + "\n".join(lines)


def load_definition(path: Path) -> tuple[AuditDefinition, str]:
    """Parse and validate a definition file. Returns it and the SHA-256 of its bytes."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise DefinitionError(f"{path}: cannot read the audit definition: {exc.strerror or exc}") from exc
    text = raw.decode("utf-8", errors="replace")
    try:
        root = yaml.compose(text)
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = re.sub(r"\s+", " ", str(getattr(exc, "problem", exc)))
        raise DefinitionError(f"{where}: not valid YAML: {problem}") from exc
    if not isinstance(data, dict):
        raise DefinitionError(f"{path}:1: an audit definition is a mapping with name, questions, ...; "
                              f"found {type(data).__name__}")
    try:
        definition = AuditDefinition.model_validate(data)
    except ValidationError as exc:
        raise DefinitionError(_describe(str(path), root, exc)) from exc
    return definition, hashlib.sha256(raw).hexdigest()
