"""LLM access: one structured call at a time, validated, retried, within a call budget.

Any OpenAI-compatible endpoint works through `langchain_openai.ChatOpenAI`. Tests inject a
scripted fake chat model. Replies are read from tool calls when present, else from JSON in the
text (see `parse_json_reply`). Whatever comes back is validated by a pydantic schema here and
checked again by the stage that uses it (verbatim quotes, known REQ-IDs).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from engine.config import Settings
from engine.errors import ConfigError, LLMOutputError
from engine.skills import load_skill

T = TypeVar("T", bound=BaseModel)


def make_chat_model(settings: Settings) -> Any:
    """A LangChain chat model for the configured endpoint."""
    if not settings.llm_base_url and not settings.llm_api_key:
        raise ConfigError("the llm backend needs EVIDENCE_LLM_BASE_URL (and EVIDENCE_LLM_API_KEY if the "
                          "endpoint wants one); or use --backend rules")
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=settings.llm_model, base_url=settings.llm_base_url, api_key=settings.llm_api_key or "none",
                      temperature=settings.llm_temperature, timeout=settings.llm_timeout_s, max_retries=0)


def parse_json_reply(text: str) -> Any:
    """Lenient JSON extraction: fenced blocks, leading prose, trailing commas. Raises ValueError."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("empty reply")
    fenced = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    candidate = fenced.group(1) if fenced else text
    starts = [i for i in (candidate.find("{"), candidate.find("[")) if i >= 0]
    if not starts:
        raise ValueError("no JSON object in the reply")
    start = min(starts)
    closer = "}" if candidate[start] == "{" else "]"
    end = candidate.rfind(closer)
    if end <= start:
        raise ValueError("unterminated JSON in the reply")
    body = re.sub(r",\s*([}\]])", r"\1", candidate[start : end + 1])
    return json.loads(body)


class CallRecord(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skill: str
    skill_sha256: str
    ok: bool
    attempts: int
    seconds: float
    input_chars: int
    output_chars: int
    error: str | None = None


class LLMClient:
    """Budgeted structured calls. `calls` counts every request sent, retries included."""

    def __init__(self, chat_model: Any, *, budget: int, max_retries: int = 2) -> None:
        self.chat_model = chat_model
        self.budget = budget
        self.max_retries = max_retries
        self.calls = 0
        self.parse_failures = 0
        self.records: list[CallRecord] = []
        self.skill_hashes: dict[str, str] = {}

    @property
    def remaining(self) -> int:
        return self.budget - self.calls

    def _reply_payload(self, message: Any) -> Any:
        tool_calls = getattr(message, "tool_calls", None) or []
        if tool_calls:
            return tool_calls[0].get("args", {})
        return parse_json_reply(getattr(message, "content", "") or "")

    def structured(self, skill_name: str, schema: type[T], **variables: Any) -> T:
        """Render the skill, ask the model, validate the reply against `schema`.

        Raises LLMOutputError(retryable=False) when the budget is spent or every attempt failed;
        the caller then falls back to its rules step and records that it did.
        """
        from langchain_core.messages import HumanMessage, SystemMessage

        skill = load_skill(skill_name)
        self.skill_hashes[skill.name] = skill.sha256
        prompt = skill.render(**variables)
        schema_text = json.dumps(schema.model_json_schema())
        messages: list[Any] = [SystemMessage(prompt),
                               HumanMessage(f"Reply with one JSON object matching this schema:\n{schema_text}")]
        started, attempts, last_error, out_chars = time.perf_counter(), 0, "", 0
        model = self.chat_model
        if hasattr(model, "bind_tools"):
            try:
                model = model.bind_tools([schema])
            except (NotImplementedError, TypeError, ValueError):
                model = self.chat_model
        while attempts <= self.max_retries:
            if self.calls >= self.budget:
                last_error = last_error or "LLM call budget spent"
                break
            self.calls += 1
            attempts += 1
            try:
                reply = model.invoke(messages)
                out_chars += len(str(getattr(reply, "content", "")))
                result = schema.model_validate(self._reply_payload(reply))
            except (ValueError, ValidationError, TypeError, KeyError) as exc:
                self.parse_failures += 1
                last_error = f"unusable reply: {str(exc)[:300]}"
                messages = [*messages, HumanMessage(f"Your reply was not usable ({last_error}). Reply again with "
                                                    "only the JSON object.")]
                continue
            except Exception as exc:  # noqa: BLE001 - transport errors of any client library
                last_error = f"{type(exc).__name__}: {str(exc)[:300]}"
                continue
            self._record(skill_name, skill.sha256, True, attempts, started, prompt, out_chars, None)
            return result
        self._record(skill_name, skill.sha256, False, attempts, started, prompt, out_chars, last_error)
        raise LLMOutputError(f"skill '{skill_name}': {last_error}", retryable=False)

    def _record(self, skill: str, sha: str, ok: bool, attempts: int, started: float, prompt: str,
                out_chars: int, error: str | None) -> None:
        self.records.append(CallRecord(skill=skill, skill_sha256=sha, ok=ok, attempts=attempts,
                                       seconds=round(time.perf_counter() - started, 4), input_chars=len(prompt),
                                       output_chars=out_chars, error=error))
