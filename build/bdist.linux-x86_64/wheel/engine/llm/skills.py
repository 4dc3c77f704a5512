"""Skills: markdown prompts in `skills/*.md`, rendered with Jinja2 StrictUndefined.

Each skill has four sections: `## Task`, `## Input`, `## Rules`, `## Output format`. The loader
returns the content hash so every run records exactly which prompt text it used.

A skill becomes two messages (`Skill.messages`). The system message is the skill without its
`## Input` section, rendered with no variable but the request's fence token: untrusted text (the
question, document text, earlier model output) cannot reach it, because StrictUndefined refuses
any other name there. The user message is the `## Input` section, where every untrusted value is
wrapped by the `data` filter in a fenced block:

    <<<BEGIN chunk chk_1a2b #5f0c9e1d2a7b>>>
    ...the text, unchanged...
    <<<END chunk #5f0c9e1d2a7b>>>

The token is derived from the request's content and redrawn until it occurs in none of the values,
so no value can close its block (or forge another). The text inside is never escaped: a quote the
model copies from it is still the stored text, character for character.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict

from engine.config import resource_dir
from engine.errors import ConfigError

SKILLS_DIR = resource_dir("skills")
REQUIRED_SECTIONS = ("## Task", "## Input", "## Rules", "## Output format")
_INPUT_SECTION = re.compile(r"^## Input\s*$(.*?)(?=^## |\Z)", re.MULTILINE | re.DOTALL)
_LABEL = re.compile(r"^[\w.:-]{1,80}$")


def fence_token(variables: dict[str, Any], salt: str = "") -> str:
    """A 12-hex-digit token that occurs in none of the values (deterministic for the same request)."""
    dumped = json.dumps(variables, sort_keys=True, default=str, ensure_ascii=False)
    for attempt in range(100):
        token = hashlib.sha256(f"{salt}|{attempt}|{dumped}".encode()).hexdigest()[:12]
        if token not in dumped:
            return token
    raise ConfigError("could not draw a data fence token that the request's text does not contain")


def fenced(value: Any, token: str, kind: str, label: str | None = None) -> str:
    """`value` (text, or anything else as JSON) inside a BEGIN/END block carrying `token`."""
    if not _LABEL.match(kind) or (label is not None and not _LABEL.match(str(label))):
        raise ConfigError(f"a data block's kind and label must be code-made names, found {kind!r} {label!r}")
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)
    head = f"{kind} {label}" if label is not None else kind
    return f"<<<BEGIN {head} #{token}>>>\n{text}\n<<<END {kind} #{token}>>>"


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    content: str
    sha256: str

    def _env(self, token: str) -> jinja2.Environment:
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
        env.filters["data"] = lambda value, kind, label=None: fenced(value, token, kind, label)
        return env

    def render(self, **variables: Any) -> str:
        """The whole skill as one text (for reading; requests use `messages`)."""
        token = fence_token(variables, self.sha256)
        try:
            return self._env(token).from_string(self.content).render(fence=token, **variables)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"skill '{self.name}' needs a variable that was not given: {exc}") from exc

    def messages(self, reply_format: str, **variables: Any) -> tuple[str, str]:
        """(system, user): instructions and `reply_format` in the system message, the fenced input in the user's."""
        token = fence_token(variables, self.sha256)
        match = _INPUT_SECTION.search(self.content)
        if match is None:  # pragma: no cover - load_skill checks the section exists
            raise ConfigError(f"skill '{self.name}' has no '## Input' section")
        instructions = self.content[:match.start()] + self.content[match.end():]
        env = self._env(token)
        try:
            system = env.from_string(instructions).render(fence=token)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"skill '{self.name}': only '## Input' may use request variables ({exc})") from exc
        try:
            user = env.from_string(match.group(1).strip("\n")).render(fence=token, **variables)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"skill '{self.name}' needs a variable that was not given: {exc}") from exc
        return f"{system.rstrip()}\n\n{reply_format}", user


def load_skill(name: str, directory: Path | None = None) -> Skill:
    """Load `skills/<name>.md`, checking it has the four sections."""
    path = (directory or SKILLS_DIR) / f"{name}.md"
    if not path.exists():
        raise ConfigError(f"no skill file {path}")
    content = path.read_text()
    missing = [s for s in REQUIRED_SECTIONS if s not in content]
    if missing:
        raise ConfigError(f"skill {path} lacks sections {missing}")
    return Skill(name=name, content=content, sha256=hashlib.sha256(content.encode()).hexdigest())


def skill_hashes(directory: Path | None = None) -> dict[str, str]:
    """Content hash of every skill, for the audit record."""
    return {p.stem: load_skill(p.stem, directory).sha256 for p in sorted((directory or SKILLS_DIR).glob("*.md"))}
