"""Skills: markdown prompts in `skills/*.md`, rendered with Jinja2 StrictUndefined.

Each skill has four sections: `## Task`, `## Input`, `## Rules`, `## Output format`. The loader
returns the content hash so every run records exactly which prompt text it used.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import jinja2
from pydantic import BaseModel, ConfigDict

from engine.errors import ConfigError

SKILLS_DIR = Path(__file__).resolve().parent.parent / "skills"
REQUIRED_SECTIONS = ("## Task", "## Input", "## Rules", "## Output format")


class Skill(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    content: str
    sha256: str

    def render(self, **variables: Any) -> str:
        env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
        try:
            return env.from_string(self.content).render(**variables)
        except jinja2.UndefinedError as exc:
            raise ConfigError(f"skill '{self.name}' needs a variable that was not given: {exc}") from exc


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
