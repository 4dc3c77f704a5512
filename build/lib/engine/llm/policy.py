"""How hard the LLM client tries: timeouts, back-off, Retry-After, a circuit breaker and a deadline.

* A failed request (transport error, HTTP 429/5xx, timeout) is retried after an exponential back-off
  with full jitter (`backoff_base_s * 2**n`, capped at `backoff_max_s`, a uniform draw below it); a
  Retry-After (or retry-after-ms) header sets the least wait. A wait longer than `retry_after_max_s`
  or than the deadline leaves is not made: the step falls back to rules at once.
* An error that no retry can cure is not retried (400, 413, 422); a wrong key, model or URL (401,
  403, 404) opens the circuit at once.
* `breaker_failures` consecutive failed requests (unusable replies included) open the circuit: the
  rest of the run uses rules without calling.
* `deadline_s` bounds the time one question spends on LLM requests and back-off waits (the rules
  work between calls does not count); each request's timeout is cut to what is left. When it is
  spent, every later step uses rules without calling.

`Pacer` holds that state for one client (one question); it is pure apart from the clock and the
random draw, both injectable for tests.
"""

from __future__ import annotations

import logging
import random
import time
from collections.abc import Callable
from email.utils import parsedate_to_datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from engine.config import Settings

logger = logging.getLogger(__name__)
_NOT_RETRYABLE = frozenset({400, 401, 403, 404, 413, 422})  # the same request fails the same way
_FATAL = frozenset({401, 403, 404})  # ... and so will every other: wrong key, model or URL


class CallPolicy(BaseModel):
    """Limits of the LLM client (from `Settings`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    timeout_s: float = Field(default=60.0, gt=0)
    deadline_s: float = Field(default=60.0, gt=0)
    backoff_base_s: float = Field(default=0.5, ge=0)
    backoff_max_s: float = Field(default=8.0, ge=0)
    retry_after_max_s: float = Field(default=30.0, ge=0)
    breaker_failures: int = Field(default=3, ge=1)

    @classmethod
    def from_settings(cls, settings: Settings) -> CallPolicy:
        return cls(timeout_s=settings.llm_timeout_s, deadline_s=settings.llm_deadline_s,
                   backoff_base_s=settings.llm_backoff_base_s, backoff_max_s=settings.llm_backoff_max_s,
                   retry_after_max_s=settings.llm_retry_after_max_s, breaker_failures=settings.llm_breaker_failures)


class Failure(BaseModel):
    """What went wrong with one request."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    reason: str
    retryable: bool
    fatal: bool = False
    status: int | None = None
    retry_after_s: float | None = None


def retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `Retry-After` (seconds or an HTTP date); None when absent or unreadable."""
    if headers is None:
        return None
    try:
        if (ms := headers.get("retry-after-ms")) is not None:
            return max(0.0, float(ms) / 1000)
        value = headers.get("retry-after")
    except (AttributeError, TypeError, ValueError):
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
    except (TypeError, ValueError, IndexError):
        return None


def classify_failure(exc: BaseException) -> Failure:
    """A transport-level exception of any client library as a `Failure`."""
    response = getattr(exc, "response", None)
    status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
    name = type(exc).__name__
    text = f"{name}: {str(exc)[:200]}"
    if isinstance(status, int):
        return Failure(reason=f"HTTP {status} ({text})", status=status, retryable=status not in _NOT_RETRYABLE,
                       fatal=status in _FATAL,
                       retry_after_s=retry_after(getattr(response, "headers", None)))
    if isinstance(exc, TimeoutError) or "Timeout" in name:
        return Failure(reason=f"timed out ({text})", retryable=True)
    return Failure(reason=text, retryable=True)


class Pacer:
    """Deadline, back-off and circuit breaker state of one client (one question)."""

    def __init__(self, policy: CallPolicy, *, clock: Callable[[], float] = time.monotonic,
                 draw: Callable[[], float] = random.random) -> None:
        self.policy = policy
        self.clock = clock
        self.draw = draw
        self.spent = 0.0  # seconds in requests and waits so far
        self.consecutive_failures = 0
        self.open_reason: str | None = None  # set when the circuit opens or the deadline is spent
        self.opened_at_skill: str | None = None
        self.waited_s = 0.0

    def remaining(self) -> float:
        return self.policy.deadline_s - self.spent

    def charge(self, seconds: float) -> None:
        """Count time spent waiting for the LLM (a request, or a back-off)."""
        self.spent += max(0.0, seconds)

    def blocked(self, skill: str) -> str | None:
        """Why no request may be sent now (circuit open, deadline spent), or None."""
        if self.open_reason is None and self.remaining() <= 0:
            self._open(f"the LLM deadline of {self.policy.deadline_s:g} s for this question is spent", skill)
        return None if self.open_reason is None else f"LLM unavailable: {self.open_reason}; rules used without calling"

    def timeout(self) -> float:
        """Timeout of the next request: the configured one, cut to what the deadline leaves."""
        return max(0.05, min(self.policy.timeout_s, self.remaining()))

    def succeeded(self) -> None:
        self.consecutive_failures = 0

    def failed(self, reason: str, skill: str, *, fatal: bool = False) -> None:
        self.consecutive_failures += 1
        logger.debug("%s: request failed (%d in a row): %s", skill, self.consecutive_failures, reason)
        if fatal:
            self._open(f"the endpoint refused the request ({reason})", skill)
        elif self.consecutive_failures >= self.policy.breaker_failures:
            self._open(f"circuit open after {self.consecutive_failures} consecutive failed requests "
                       f"(last: {reason})", skill)

    def backoff(self, retry: int, failure: Failure) -> tuple[float | None, str]:
        """(seconds to wait before retry number `retry` (1-based), or None: do not retry; why)."""
        p = self.policy
        jittered = self.draw() * min(p.backoff_max_s, p.backoff_base_s * 2 ** (retry - 1))
        wait, why = jittered, "back-off"
        if failure.retry_after_s is not None:
            if failure.retry_after_s > p.retry_after_max_s:
                return None, f"Retry-After {failure.retry_after_s:g} s is over the {p.retry_after_max_s:g} s limit"
            wait, why = max(failure.retry_after_s, jittered), f"Retry-After {failure.retry_after_s:g} s"
        if wait >= self.remaining():
            return None, f"a wait of {wait:.2f} s would pass the LLM deadline"
        return wait, why

    def _open(self, reason: str, skill: str) -> None:
        if self.open_reason is None:
            self.open_reason, self.opened_at_skill = reason, skill
            logger.info("LLM unavailable from the %s step on: %s", skill, reason)
