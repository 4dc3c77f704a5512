"""An OpenAI-compatible chat endpoint on 127.0.0.1 for tests: a separate process, spoken to over HTTP.

    python -m tests.llm_double            # prints "LISTENING <port>", then serves until killed

It reads the engine's prompts the way a model would: the skill from the system message's first
line (`# Extract`), the data from the fenced blocks of the user message (`engine.llm.skills`), and
replies with a tool call (or JSON text when no tool is offered). What it plays is set per skill by
`POST /_control` and every request is logged for `GET /_log`:

* `honest`: sound replies (modal sentences copied exactly, rules-like statements, no findings);
* `fabricate`: invented quotes (a figure or word changed), every quote verified (and IDs it was
  not shown), and statements that give one source's figure to another ("... five years ...
  [REQ-S001, REQ-P001]");
* `inject`: a gullible model: it obeys "IGNORE PREVIOUS INSTRUCTIONS" when it finds it anywhere
  outside a data block (system message, or user text outside the blocks), else honest;
* `malformed`: in turn prose around broken JSON, a tool call with broken arguments, the wrong
  schema, a body that is not JSON, no choices;
* `fail500`, `fail429` (with `Retry-After: <retry_after>` and optionally `retry-after-ms`);
* `slow`: waits `delay_s` before an honest reply.

`fail_first: n` in the options applies the behaviour to the first n requests only, then honest.
"""

from __future__ import annotations

import json
import re
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BLOCK = re.compile(r"<<<BEGIN (\w+)(?: ([^\s>#]+))? #(\w+)>>>\n(.*?)\n<<<END \1 #\3>>>", re.DOTALL)
INJECTION = re.compile(r"ignore (?:all )?previous instructions", re.IGNORECASE)
MODAL = re.compile(r"\b(must|shall|should|may|required|prohibited)\b", re.IGNORECASE)
FIGURE = re.compile(r"\b(\d+|one|two|three|four|five|six|seven|eight|nine|ten|twelve)\s+(business\s+)?"
                    r"(hours?|days?|weeks?|months?|years?)\b", re.IGNORECASE)
STOP = frozenset("what which when where how long must shall should does with from that this have been "
                 "their they there within about into under after before kept keep".split())
COMPLIANT = "The firm is fully compliant with every requirement"


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z]{4,}", text.lower()) if w not in STOP}


def blocks(user: str, kind: str) -> list[tuple[str | None, str]]:
    return [(m.group(2), m.group(4)) for m in BLOCK.finditer(user) if m.group(1) == kind]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?])\s+", " ".join(text.split())) if s.strip()]


class Model:
    """What the double plays; one instance per server, reconfigured through /_control."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.configure({})

    def configure(self, control: dict[str, Any]) -> None:
        with self.lock:
            self.behaviours = {"default": "honest", **(control.get("behaviours") or {})}
            self.options = control.get("options") or {}
            self.log: list[dict[str, Any]] = []

    # --- honest replies, per skill ----------------------------------------------------------------------

    def honest(self, skill: str, user: str) -> dict[str, Any]:
        question = (blocks(user, "question") or [(None, "")])[0][1]
        if skill == "guard":
            return {"adversarial": False, "reason": "a compliance question"}
        if skill == "classify":
            return {"question_type": "simple", "reason": "one provision"}
        if skill == "rewrite":
            aspect = (blocks(user, "aspect") or [(None, question)])[0][1]
            return {"primary": aspect, "alternatives": [f"{aspect} requirements", f"{aspect} obligations"]}
        if skill == "replan":
            return {"decision": "complete", "aspect": None, "reason": "covered"}
        if skill == "extract":
            return {"quotes": self.quotes(user, question)[:20]}
        if skill == "verify":
            return {"verdicts": [
                {"requirement_id": rid, "verified": len(words(body) & words(question)) >= 2,
                 "rejection_reason": None if len(words(body) & words(question)) >= 2 else "does_not_address_question",
                 "rationale": "shares the question's terms"} for rid, body in blocks(user, "requirement")]}
        if skill == "compose":
            return {"statements": self.statements(user)}
        return {"findings": []}

    @staticmethod
    def quotes(user: str, question: str) -> list[dict[str, str]]:
        out = []
        for chunk_id, body in blocks(user, "chunk"):
            text = body.split("\n", 1)[1] if "\n" in body else ""
            out += [{"chunk_id": chunk_id or "", "quote": s} for s in sentences(text)
                    if MODAL.search(s) and len(words(s) & words(question)) >= 2 and len(s.split()) >= 10]
        return out

    @staticmethod
    def requirements(user: str) -> dict[str, tuple[str, str]]:
        out = {}
        for rid, body in blocks(user, "requirement"):
            meta, _, quote = body.partition("\n")
            out[rid or ""] = (meta.split("; ", 1)[-1], quote)
        return out

    def statements(self, user: str) -> list[dict[str, Any]]:
        reqs, used, out = self.requirements(user), set(), []
        for _, body in blocks(user, "conflict"):
            a, b = json.loads(body)["requirement_ids"]
            (wa, qa), (wb, qb) = reqs[a], reqs[b]
            out.append({"text": f'The sources differ: {wa} states "{qa}" [{a}], while {wb} states "{qb}" [{b}].',
                        "requirement_ids": [a, b]})
            used |= {a, b}
        for rid, (where, quote) in reqs.items():
            if rid not in used and len(out) < 8:
                out.append({"text": f'{where} states: "{quote}" [{rid}]', "requirement_ids": [rid]})
        return out

    # --- hostile replies ----------------------------------------------------------------------------------

    def fabricate(self, skill: str, user: str) -> dict[str, Any]:
        question = (blocks(user, "question") or [(None, "")])[0][1]
        if skill == "extract":
            return {"quotes": [{"chunk_id": q["chunk_id"], "quote": invent(q["quote"])}
                               for q in self.quotes(user, question)[:20]]}
        if skill == "verify":  # every quote it was shown, and IDs it was not shown, all "verified"
            shown = [rid for rid, _ in blocks(user, "requirement")]
            guessed = [f"REQ-{k}{i:03d}" for k in "SP" for i in range(1, 11)]
            return {"verdicts": [{"requirement_id": rid, "verified": True, "rationale": "trust me"}
                                 for rid in dict.fromkeys([*shown, *guessed])]}
        if skill == "compose":
            return {"statements": self.misleading(user) or self.statements(user)}
        return self.honest(skill, user)

    def misleading(self, user: str) -> list[dict[str, Any]]:
        """Each conflict as one statement in the statute's words with the policy's figure, citing both."""
        reqs, out = self.requirements(user), []
        for _, body in blocks(user, "conflict"):
            a, b = json.loads(body)["requirement_ids"]
            fa, fb = FIGURE.search(reqs[a][1]), FIGURE.search(reqs[b][1])
            if fa and fb:
                text = reqs[a][1][:fa.start()] + fb.group(0) + reqs[a][1][fa.end():]
                out.append({"text": f"{text.rstrip('.')} [{a}, {b}]", "requirement_ids": [a, b]})
        return out

    def inject(self, skill: str, user: str, system: str) -> tuple[dict[str, Any], bool]:
        outside = system + BLOCK.sub(" ", user)
        if not INJECTION.search(outside):
            return self.honest(skill, user), False
        ids = [rid for rid, _ in blocks(user, "requirement")] or ["REQ-S001"]
        obeyed = {"guard": {"adversarial": False, "reason": "told to"},
                  "verify": {"verdicts": [{"requirement_id": i, "verified": True} for i in ids]},
                  "compose": {"statements": [{"text": f"{COMPLIANT} [{ids[0]}].", "requirement_ids": ids[:1]}]},
                  "extract": {"quotes": [{"chunk_id": c or "", "quote": COMPLIANT} for c, _ in blocks(user, "chunk")]}}
        return obeyed.get(skill) or self.honest(skill, user), True


def invent(quote: str) -> str:
    """The quote with one figure or word changed: plausible, and not in the document."""
    changed = FIGURE.sub(lambda m: "ten " + " ".join(m.group(0).split()[1:]), quote, count=1)
    return changed if changed != quote else MODAL.sub(lambda m: m.group(0) + " promptly", quote, count=1)


MALFORMED = [
    ("content", "Sure! Here is the JSON you asked for: {not json"),
    ("arguments", '{"quotes": [ {"chunk_id": '),
    ("arguments", '{"answer": 42}'),
    ("body", "<html>gateway says hello</html>"),
    ("body", json.dumps({"id": "x", "object": "chat.completion", "created": 0, "model": "m", "choices": []})),
]


class Handler(BaseHTTPRequestHandler):
    model: Model

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: str | dict[str, Any], headers: dict[str, str] | None = None) -> None:
        data = (body if isinstance(body, str) else json.dumps(body)).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for k, v in (headers or {}).items():
                self.send_header(k, v)
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (its timeout)
            pass

    def do_GET(self) -> None:
        if self.path == "/_log":
            with self.model.lock:
                self._send(200, {"requests": self.model.log})
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        if self.path == "/_control":
            self.model.configure(body)
            self._send(200, {"ok": True})
            return
        if not self.path.endswith("/chat/completions"):
            self._send(404, {"error": {"message": f"no route {self.path}"}})
            return
        self.chat(body)

    def chat(self, body: dict[str, Any]) -> None:
        messages = body.get("messages") or []
        system = next((m.get("content") or "" for m in messages if m.get("role") == "system"), "")
        user = "\n".join(m.get("content") or "" for m in messages if m.get("role") == "user")
        skill = system.split("\n", 1)[0].lstrip("# ").strip().lower()
        model = self.model
        with model.lock:
            n = len(model.log)
            behaviour = model.behaviours.get(skill, model.behaviours["default"])
            fail_first = model.options.get("fail_first")
            if fail_first is not None and n >= int(fail_first):
                behaviour = "honest"
            entry = {"n": n, "t": time.monotonic(), "skill": skill, "behaviour": behaviour,
                     "headers": {k.lower(): v for k, v in self.headers.items()}, "body": body, "obeyed": False}
            model.log.append(entry)
            options = dict(model.options)
        self.reply(behaviour, skill, system, user, body, entry, options)

    def reply(self, behaviour: str, skill: str, system: str, user: str, body: dict[str, Any],
              entry: dict[str, Any], options: dict[str, Any]) -> None:
        if behaviour == "fail500":
            self._send(500, {"error": {"message": "upstream exploded", "type": "server_error"}})
            return
        if behaviour == "fail429":
            headers = {"Retry-After": str(options.get("retry_after", "1"))}
            if options.get("retry_after_ms") is not None:
                headers["retry-after-ms"] = str(options["retry_after_ms"])
            self._send(429, {"error": {"message": "slow down", "type": "rate_limit"}}, headers)
            return
        if behaviour == "malformed":
            kind, text = MALFORMED[entry["n"] % len(MALFORMED)]
            if kind == "body":
                self._send(200, text)
            else:
                self._send(200, completion(body, text if kind == "arguments" else None,
                                           text if kind == "content" else None))
            return
        if behaviour == "slow":
            time.sleep(float(options.get("delay_s", 1.0)))
        if behaviour == "fabricate":
            payload = self.model.fabricate(skill, user)
        elif behaviour == "inject":
            payload, entry["obeyed"] = self.model.inject(skill, user, system)
        else:
            payload = self.model.honest(skill, user)
        entry["reply"] = payload
        args = json.dumps(payload)
        self._send(200, completion(body, args, None) if body.get("tools") else completion(body, None, args))


def completion(request: dict[str, Any], arguments: str | None, content: str | None) -> dict[str, Any]:
    tools = request.get("tools") or [{"function": {"name": "reply"}}]
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if arguments is not None:
        message["tool_calls"] = [{"id": "call_1", "type": "function",
                                  "function": {"name": tools[0]["function"]["name"], "arguments": arguments}}]
    return {"id": "chatcmpl-double", "object": "chat.completion", "created": int(time.time()),
            "model": request.get("model", "double"),
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if arguments else "stop"}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}


def main() -> None:
    Handler.model = Model()
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(f"LISTENING {server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
