"""LLM access: one structured call at a time, validated, retried, within a call budget and a deadline.

Any OpenAI-compatible endpoint works through `langchain_openai.ChatOpenAI`. Tests inject a
scripted fake chat model, or point the real client at a local HTTP test double. Replies are read
from tool calls when present, else from JSON in the text (see `parse_json_reply`). Whatever comes
back is validated by a pydantic schema here and checked again by the stage that uses it (verbatim
quotes, known REQ-IDs).

Prompts: the skill's instructions and the reply schema go in the system message; the question,
document text and earlier output go in the user message, each inside a fenced data block that its
text cannot close (`engine.llm.skills`). Failed requests are retried with back-off, Retry-After is
honoured, and a circuit breaker and a per-question deadline stop calling altogether
(`engine.llm.policy`); the caller then runs its rules step and records why.
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Callable
from functools import lru_cache
from typing import Any, TypeVar

from pydantic import BaseModel, ConfigDict, Field, SecretStr, ValidationError

from engine.config import Settings
from engine.errors import ConfigError, LLMOutputError
from engine.llm.policy import CallPolicy, Pacer, classify_failure
from engine.llm.skills import fence_token, fenced, load_skill
from engine.text import normalize_ws

T = TypeVar("T", bound=BaseModel)


def make_chat_model(settings: Settings) -> Any:
    """A LangChain chat model for the configured endpoint (retries are ours: the client's own are off)."""
    if not settings.llm_base_url and not settings.llm_api_key:
        raise ConfigError("the llm backend needs EVIDENCE_LLM_BASE_URL (and EVIDENCE_LLM_API_KEY if the "
                          "endpoint wants one); or use --backend rules")
    from langchain_openai import ChatOpenAI

    return ChatOpenAI(model=settings.llm_model, base_url=settings.llm_base_url,
                      api_key=SecretStr(settings.llm_api_key or "none"),
                      temperature=settings.llm_temperature, timeout=settings.llm_timeout_s, max_retries=0)


@lru_cache(maxsize=1)
def transport_errors() -> tuple[type[BaseException], ...]:
    """What a failed request raises: network and timeouts (`OSError`: ConnectionError, TimeoutError),
    httpx's errors, the OpenAI client's (connection, timeout, HTTP status, rate limit, a reply it could not
    read) and LangChain's model errors. Imported on first use: the rules backend never loads them."""
    import httpx
    import openai
    from langchain_core.exceptions import ModelError

    errors: list[type[BaseException]] = [OSError, httpx.HTTPError, httpx.StreamError, openai.OpenAIError, ModelError]
    try:  # the OpenAI client may run on httpx2, a fork with its own exception classes
        import httpx2

        errors += [httpx2.HTTPError, httpx2.StreamError]
    except ImportError:
        pass
    return tuple(errors)


# A reply that is not what the schema asks for: JSON errors (json.JSONDecodeError), pydantic's
# ValidationError, LangChain's OutputParserException and `parse_json_reply`'s own are all ValueErrors.
PARSE_ERRORS: tuple[type[BaseException], ...] = (ValidationError, json.JSONDecodeError, ValueError)
# The libraries that send the request and read the endpoint's reply. A ValueError, LookupError, TypeError or
# AttributeError raised inside them is a reply they could not read (ChatOpenAI raises those for an
# OpenAI-compatible server's odd JSON: an "error" key, no "choices", null choices; LangChain's core an
# IndexError for an empty choice list; the OpenAI client lets json's error out for a body that is not JSON),
# not a bug of ours. Frames of the standard library and pydantic belong to whoever called them. The one
# blind spot: a wrong argument we pass to `invoke` that these libraries reject is read as a failed
# request too (it is recorded as the call's error, and every call then fails the same way).
_CLIENT_LIBRARIES = frozenset({"openai", "langchain_openai", "langchain_core", "httpx", "httpcore", "httpx2",
                               "httpcore2", "h11"})
_NEUTRAL = frozenset({*sys.stdlib_module_names, "pydantic", "pydantic_core"})
_UNREADABLE = (ValueError, LookupError, TypeError, AttributeError)


def _raised_in(exc: BaseException) -> str:
    """The top-level package whose code raised `exc`: the innermost frame not of a neutral library."""
    frames = []
    tb = exc.__traceback__
    while tb is not None:
        frames.append(str(tb.tb_frame.f_globals.get("__name__", "")).split(".")[0])
        tb = tb.tb_next
    return next((name for name in reversed(frames) if name not in _NEUTRAL), "")


def endpoint_failure(exc: BaseException) -> bool:
    """Whether `exc`, raised while asking the model, is the endpoint's failure (a transport error, or a
    reply the client libraries could not read) rather than a programming error, which must propagate."""
    if isinstance(exc, transport_errors()):
        return True
    return isinstance(exc, _UNREADABLE) and _raised_in(exc) in _CLIENT_LIBRARIES


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


def reply_chars(message: Any) -> int:
    """Characters the model sent back: its text and its tool-call arguments (as sent, when available)."""
    content = getattr(message, "content", "") or ""
    total = len(content if isinstance(content, str) else json.dumps(content))
    raw = (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or []
    if raw:
        return total + sum(len(str((c.get("function") or {}).get("arguments") or "")) for c in raw)
    calls = [*(getattr(message, "tool_calls", None) or []), *(getattr(message, "invalid_tool_calls", None) or [])]
    return total + sum(len(c["args"] if isinstance(c.get("args"), str) else json.dumps(c.get("args") or {}))
                       for c in calls)


def reply_payload(message: Any) -> Any:
    """The reply's data: the first tool call's arguments, else JSON in its text. Raises ValueError."""
    tool_calls = getattr(message, "tool_calls", None) or []
    if tool_calls:
        return tool_calls[0].get("args", {})
    invalid = getattr(message, "invalid_tool_calls", None) or []
    if invalid and isinstance(invalid[0].get("args"), str):  # arguments that are not strict JSON
        return parse_json_reply(invalid[0]["args"])
    return parse_json_reply(getattr(message, "content", "") or "")


class CallRecord(BaseModel):
    """One structured call (one skill), with all its requests."""

    model_config = ConfigDict(extra="forbid")

    skill: str
    skill_sha256: str
    ok: bool
    attempts: int = Field(description="Requests sent for this call (retries included)")
    seconds: float
    input_chars: int = Field(description="Characters of every message sent, over all requests")
    output_chars: int = Field(description="Characters received: text and tool-call arguments")
    waited_s: float = Field(default=0.0, description="Back-off and Retry-After waits")
    error: str | None = None


class _Call:
    """Running totals of one structured call."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.attempts = self.input_chars = self.output_chars = 0
        self.waited = 0.0
        self.error = ""


class LLMClient:
    """Budgeted structured calls. `calls` counts every request sent, retries included.

    `on_event(kind, message)` (optional) hears progress: kind `waiting` before each request (which
    skill waits, and how much of the deadline is left), `retry` before a back-off wait, `unavailable`
    when the circuit opens or the deadline is spent.
    """

    def __init__(self, chat_model: Any, *, budget: int, max_retries: int = 2, policy: CallPolicy | None = None,
                 sleep: Callable[[float], None] = time.sleep, pacer: Pacer | None = None,
                 on_event: Callable[[str, str], None] | None = None) -> None:
        self.chat_model = chat_model
        self.budget = budget
        self.max_retries = max_retries
        self.pacer = pacer or Pacer(policy or CallPolicy())
        self.sleep = sleep
        self.on_event = on_event
        self.calls = 0
        self.parse_failures = 0
        self.request_failures = 0
        self.records: list[CallRecord] = []
        self.skill_hashes: dict[str, str] = {}
        self._announced = False

    @property
    def remaining(self) -> int:
        return self.budget - self.calls

    def _emit(self, kind: str, message: str) -> None:
        if self.on_event is not None:
            self.on_event(kind, message)

    def _bound(self, schema: type[BaseModel]) -> Any:
        model = self.chat_model
        if hasattr(model, "bind_tools"):
            try:
                return model.bind_tools([schema])
            except (NotImplementedError, TypeError, ValueError):
                return self.chat_model
        return model

    def _blocked(self, skill: str) -> str | None:
        if self.calls >= self.budget:
            return "LLM call budget spent"
        why = self.pacer.blocked(skill)
        if why and not self._announced:
            self._announced = True
            self._emit("unavailable", f"{self.pacer.opened_at_skill or skill}: {why}")
        return why

    def structured(self, skill_name: str, schema: type[T], **variables: Any) -> T:
        """Render the skill, ask the model, validate the reply against `schema`.

        Raises LLMOutputError(retryable=False) when the budget or the deadline is spent, the circuit is
        open, or every attempt failed; the caller then falls back to its rules step and records why.
        """
        from langchain_core.messages import HumanMessage, SystemMessage

        skill = load_skill(skill_name)
        self.skill_hashes[skill.name] = skill.sha256
        reply_format = ("Reply with one JSON object matching this JSON schema (as a call of the tool of that name "
                        f"when tools are offered):\n{json.dumps(schema.model_json_schema())}")
        system, user = skill.messages(reply_format, **variables)
        token = fence_token(variables, skill.sha256)
        messages: list[Any] = [SystemMessage(system), HumanMessage(user)]
        model, call = self._bound(schema), _Call()
        while call.attempts <= self.max_retries:
            blocked = self._blocked(skill_name)
            if blocked:
                call.error = f"{call.error}; then {blocked}" if call.error else blocked
                break
            outcome = self._request(model, messages, skill_name, schema, call)
            if isinstance(outcome, BaseModel):
                self._record(skill_name, skill.sha256, True, call)
                return outcome
            if outcome == "stop":
                break
            if outcome == "re-ask":  # the problem quotes the reply: data, fenced with this request's token
                problem = call.error if token not in call.error else "it did not match the schema"
                messages = [*messages, HumanMessage("Your reply was not usable; the problem:\n"
                                                    f"{fenced(problem, token, 'problem')}\n"
                                                    "Reply again with only the JSON object.")]
        self._record(skill_name, skill.sha256, False, call)
        raise LLMOutputError(f"skill '{skill_name}': {call.error}", retryable=False)

    def _request(self, model: Any, messages: list[Any], skill: str, schema: type[T], call: _Call) -> T | str:
        """Send one request. Returns the validated reply, or `re-ask`, `retry` or `stop` (call.error says why)."""
        self.calls += 1
        call.attempts += 1
        call.input_chars += sum(len(str(m.content)) for m in messages)
        timeout = self.pacer.timeout()
        left, limit = self.pacer.remaining(), self.pacer.policy.deadline_s
        self._emit("waiting", f"{skill}: waiting for the LLM (request {call.attempts}, timeout {timeout:.0f} s, "
                              f"{left:.0f} s left of the {limit:g} s deadline)")
        started = self.pacer.clock()
        try:
            reply = model.invoke(messages, timeout=timeout)
        except Exception as exc:
            if not endpoint_failure(exc):
                raise  # our own bug: never a fallback
            self.pacer.charge(self.pacer.clock() - started)
            failure = classify_failure(exc)
            self.request_failures += 1
            call.error = failure.reason
            self.pacer.failed(failure.reason, skill, fatal=failure.fatal)
            if not failure.retryable or call.attempts > self.max_retries:
                return "stop"
            wait, why = self.pacer.backoff(call.attempts, failure)
            if wait is None:
                call.error = f"{failure.reason}; not retried: {why}"
                return "stop"
            if self.pacer.open_reason is None:
                self._emit("retry", f"{skill}: {failure.reason}; retrying in {wait:.1f} s ({why})")
                self.sleep(wait)
                call.waited += wait
                self.pacer.waited_s += wait
                self.pacer.charge(wait)
            return "retry"
        self.pacer.charge(self.pacer.clock() - started)
        call.output_chars += reply_chars(reply)
        try:
            result = schema.model_validate(reply_payload(reply))
        except PARSE_ERRORS as exc:
            self.parse_failures += 1
            call.error = "unusable reply: " + normalize_ws(str(exc))[:300]
            self.pacer.failed(call.error[:120], skill)
            return "re-ask"
        self.pacer.succeeded()
        return result

    def _record(self, skill: str, sha: str, ok: bool, call: _Call) -> None:
        self.records.append(CallRecord(skill=skill, skill_sha256=sha, ok=ok, attempts=call.attempts,
                                       seconds=round(time.perf_counter() - call.started, 4),
                                       input_chars=call.input_chars, output_chars=call.output_chars,
                                       waited_s=round(call.waited, 3), error=call.error or None))

    def usage(self) -> dict[str, Any]:
        """What this question cost and how the endpoint behaved (for the audit record and the CLI)."""
        used = [r.skill for r in self.records if r.ok]
        return {"requests": self.calls, "calls": sum(1 for r in self.records if r.attempts),
                "skipped": sum(1 for r in self.records if not r.attempts), "answered": len(used),
                "input_chars": sum(r.input_chars for r in self.records),
                "output_chars": sum(r.output_chars for r in self.records),
                "parse_failures": self.parse_failures, "request_failures": self.request_failures,
                "waited_s": round(self.pacer.waited_s, 3),
                "unavailable": self.pacer.open_reason, "unavailable_from": self.pacer.opened_at_skill,
                "by_skill": [{"skill": r.skill, "ok": r.ok, "requests": r.attempts, "input_chars": r.input_chars,
                              "output_chars": r.output_chars, "error": r.error} for r in self.records]}


def availability_line(usage: dict[str, Any] | None, fallbacks: list[str]) -> str | None:
    """One line saying how far the LLM answered (None: rules backend, or every step used the LLM).

    `usage` is `LLMClient.usage()` as recorded; `fallbacks` the run's fallbacks (research and evidence).
    """
    if usage is None:
        return None
    if usage.get("unavailable"):
        if not usage.get("answered"):
            return f"LLM unavailable: answered by rules ({usage['unavailable']})"
        return (f"LLM unavailable from the {usage.get('unavailable_from') or '?'} step on: the rest answered by "
                f"rules ({usage['unavailable']})")
    steps = list(dict.fromkeys(f.split(":", 1)[0] for f in fallbacks))
    return f"LLM fallbacks to rules: {', '.join(steps)}" if steps else None


def usage_line(usage: dict[str, Any] | None) -> str | None:
    """Calls and characters of one question, e.g. `LLM: 7 call(s), 7 request(s) (0 failed,
    0 unusable), 0 step(s) skipped, 29,538 chars in, 3,104 chars out, 0 s waiting`.

    Skipped: calls never sent (the LLM unavailable: circuit open or deadline spent; or the budget spent).
    """
    if usage is None:
        return None
    return (f"LLM: {usage.get('calls', 0)} call(s), {usage.get('requests', 0)} request(s) "
            f"({usage.get('request_failures', 0)} failed, {usage.get('parse_failures', 0)} unusable), "
            f"{usage.get('skipped', 0)} step(s) skipped, {usage.get('input_chars', 0):,} chars in, "
            f"{usage.get('output_chars', 0):,} chars out, {usage.get('waited_s', 0.0):g} s waiting")
