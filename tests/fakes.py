"""A scripted chat model for LLM-backend tests (LangChain's fakes lack tool calls and errors)."""

from __future__ import annotations

from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langchain_core.outputs import ChatGeneration, ChatResult


class ScriptedChatModel(GenericFakeChatModel):
    """Replies in order from `messages`: an AIMessage, a string, or an exception to raise.

    `bind_tools` returns the model itself, so structured calls read the scripted tool calls.
    When the script runs out, every further call fails like an unreachable endpoint (ConnectionError):
    the engine must fall back to rules.
    """

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatModel:
        return self

    def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
        try:
            item = next(self.messages)
        except StopIteration as exc:
            raise ConnectionError("script exhausted: no more scripted replies") from exc
        if isinstance(item, BaseException):
            raise item
        message = AIMessage(content=item) if isinstance(item, str) else item
        return ChatResult(generations=[ChatGeneration(message=message)])


def tool_reply(args: dict[str, Any], name: str = "reply") -> AIMessage:
    """An assistant message carrying one tool call with these arguments."""
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": "call-1"}])


def scripted(*items: Any) -> ScriptedChatModel:
    return ScriptedChatModel(messages=iter(items))
