"""The LLM client's retries with a scripted model and a fake clock (no network, no waiting): a 429 is retried
after its Retry-After, a failing endpoint is given up after `max_retries` (or at the call budget, or at once
for an error no retry cures), and each give-up says why. The breaker and the deadline: tests/llm/test_llm_client.py."""

from __future__ import annotations

import httpx
import pytest

from agents.guard import GuardReply
from engine.errors import LLMOutputError
from engine.llm.client import LLMClient
from engine.llm.policy import CallPolicy, Pacer
from tests.fakes import scripted, tool_reply

OK = tool_reply({"adversarial": False})


def _http_error(status: int, headers: dict[str, str] | None = None) -> Exception:
    import openai

    response = httpx.Response(status, headers=headers or {}, request=httpx.Request("POST", "http://x/v1"))
    return openai.APIStatusError("boom", response=response, body=None)


class _Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def _client(*replies: object, budget: int = 20, max_retries: int = 2, **policy: float) -> tuple[LLMClient, list[float]]:
    """A client over scripted replies; `sleep` advances the fake clock and is recorded; no jitter (draw 1.0)."""
    clock, slept = _Clock(), []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock.now += seconds

    policy = {"breaker_failures": 10, "backoff_base_s": 0.5, **policy}
    pacer = Pacer(CallPolicy(**policy), clock=clock, draw=lambda: 1.0)
    return LLMClient(scripted(*replies), budget=budget, max_retries=max_retries, pacer=pacer, sleep=sleep), slept


def test_a_429_is_retried_after_its_retry_after() -> None:
    client, slept = _client(_http_error(429, {"retry-after": "2"}), OK)
    assert client.structured("guard", GuardReply, question="q").adversarial is False
    assert slept == [2.0]  # Retry-After (2 s) rather than the 0.5 s back-off
    (record,) = client.records
    assert (record.ok, record.attempts, record.waited_s) == (True, 2, 2.0)
    assert record.error == "HTTP 429 (APIStatusError: boom)"  # the failed first request stays on record
    assert client.usage()["request_failures"] == 1 and client.pacer.open_reason is None


def test_a_failing_endpoint_is_given_up_after_max_retries() -> None:
    client, slept = _client(*[_http_error(503)] * 3, OK, max_retries=2)
    with pytest.raises(LLMOutputError, match="skill 'guard': HTTP 503") as raised:
        client.structured("guard", GuardReply, question="q")
    assert raised.value.retryable is False  # the caller falls back to rules now
    assert client.calls == 3 and slept == [0.5, 1.0]  # first request + 2 retries, exponential back-off
    assert client.pacer.open_reason is None  # below the breaker: the next step asks again
    assert client.structured("classify", GuardReply, question="q").adversarial is False and client.calls == 4


@pytest.mark.parametrize(("failure", "budget", "calls", "why"), [
    (_http_error(400), 20, 1, "HTTP 400"),
    (_http_error(429, {"retry-after": "60"}), 20, 1, "not retried: Retry-After 60 s is over the 30 s limit"),
    (_http_error(500), 2, 2, "then LLM call budget spent"),
], ids=["bad-request-not-retried", "retry-after-over-the-limit", "call-budget"])
def test_a_give_up_says_why(failure: Exception, budget: int, calls: int, why: str) -> None:
    client, slept = _client(*[failure] * 5, budget=budget, max_retries=4, retry_after_max_s=30)
    with pytest.raises(LLMOutputError, match=why):
        client.structured("guard", GuardReply, question="q")
    assert client.calls == calls
    if calls == 1:
        assert slept == []  # nothing waited for a request that will not be sent again
    if budget == calls:  # the budget is spent: the next step does not send anything
        with pytest.raises(LLMOutputError, match="LLM call budget spent"):
            client.structured("classify", GuardReply, question="q")
        assert client.calls == calls and client.records[-1].attempts == 0
