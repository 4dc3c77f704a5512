"""The web view through FastAPI's TestClient: roles x routes, CSRF, four-eyes, sign-off in the trail, escaping.

One module database (tests/web/conftest.py) and one real research run: rita (reviewer) asks through
POST /ask and follows its server-sent events; every other test reads that audit.
"""

from __future__ import annotations

import json
import logging
import re
from typing import Any

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from engine.batch import store as batch_store
from engine.cli.main import app as cli_app
from engine.relevance.pairs import read_pairs
from engine.web.app import create_app
from tests.web.conftest import PASSWORDS, ROLES, WebEnv

QUESTION = "When must a personal data breach be notified?"
runner = CliRunner()


def _csrf(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]*)"', html)
    assert match, "no CSRF field on the page"
    return match.group(1)


class Client:
    """A TestClient logged in as one user (or anonymous), knowing its session's CSRF token."""

    def __init__(self, app: Any, name: str | None, base_url: str = "http://testserver") -> None:
        self.http = TestClient(app, base_url=base_url, follow_redirects=False)
        self.name, self.csrf = name, ""
        if name is not None:
            page = self.http.get("/login")
            r = self.http.post("/login", data={"csrf_token": _csrf(page.text), "name": name,
                                               "password": PASSWORDS[name], "next": "/audits"})
            assert r.status_code == 303, r.text
            self.csrf = _csrf(self.http.get("/audits").text)

    def get(self, path: str, **kw: Any) -> Any:
        return self.http.get(path, **kw)

    def post(self, path: str, data: dict[str, str] | None = None, *, csrf: bool = True, **kw: Any) -> Any:
        return self.http.post(path, data={**({"csrf_token": self.csrf} if csrf else {}), **(data or {})}, **kw)


@pytest.fixture(scope="module")
def app(web_env: WebEnv) -> Any:
    return create_app(web_env.settings, backend=web_env.backend)


@pytest.fixture(scope="module")
def clients(app: Any) -> dict[str | None, Client]:
    return {name: Client(app, name) for name in [None, *ROLES]}


@pytest.fixture(scope="module")
def asked(clients: dict[str | None, Client]) -> dict[str, Any]:
    """rita asks from the browser's form and follows the progress stream to the recorded audit."""
    rita = clients["rita"]
    r = rita.post("/ask", {"question": QUESTION})
    assert r.status_code == 303 and r.headers["location"].startswith("/ask/job-")
    job_url = r.headers["location"]
    events = []
    with rita.http.stream("GET", job_url + "/events") as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in stream.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                events.append((kind, json.loads(line[6:])))
    assert events[-1][0] == "done", events[-1]
    return {"audit_id": events[-1][1]["audit_id"], "events": events, "job_url": job_url}


@pytest.fixture(scope="module")
def batches(web_env: WebEnv, asked: dict[str, Any]) -> dict[str, str]:
    """A batch half answered (by the asked audit) and one finished (its one item points at a note: an item
    needs an audit of its own)."""
    from engine.trail import store as audit_trail
    from engine.trail.record import build_amendment

    definition = {"checklist": {"name": "sample checklist", "fail_on": "any", "questions": [
        {"id": "q1", "text": QUESTION, "control_id": "IR-6"}, {"id": "q2", "text": "Second question?"}]}}
    with web_env.backend.connection() as conn:
        note = build_amendment(audit_trail.get(conn, asked["audit_id"])["record"], kind="note",
                               reason="batch fixture", text="", actor="rita")
        done_by = {"B-20261123-half": asked["audit_id"], "B-20261123-done": audit_trail.append(conn, note).audit_id}
        for batch_id, audit_id in done_by.items():
            items = [("q1", f"run-{batch_id}-1")] + ([("q2", f"run-{batch_id}-2")] if "half" in batch_id else [])
            batch_store.create(conn, batch_id=batch_id, name="sample checklist", path="audits/sample.yaml",
                               sha256="0" * 64, definition=definition, actor="rita", settings_hash="x", items=items)
            batch_store.mark_done(conn, batch_id, "q1", audit_id, "worker-test")
    return {"half": "B-20261123-half", "done": "B-20261123-done"}


def test_ask_streams_each_research_node_then_the_audit(asked: dict[str, Any], clients) -> None:
    nodes = [data["name"] for kind, data in asked["events"] if kind == "node"]
    steps = [data["step"] for kind, data in asked["events"] if kind == "node"]
    assert nodes[0] == "Queued" and "Screening the question" in nodes and "Recording the audit" in nodes, nodes
    assert "guard" in steps and len(nodes) == len(set(nodes)) and len(nodes) <= 12, nodes  # one line per stage
    assert asked["events"][-1][1]["url"] == f"/audits/{asked['audit_id']}"
    page = clients["rita"].get(asked["job_url"])
    assert page.status_code == 200 and asked["audit_id"] in page.text


def test_ask_page_is_refused_to_another_analyst(asked: dict[str, Any], clients) -> None:
    assert clients["alice"].get(asked["job_url"]).status_code == 403


ROUTES = [  # (method, path, the lowest role allowed, form data that passes authorisation but not validation)
    ("GET", "/audits", "viewer", None),
    ("GET", "/audits/{aid}", "viewer", None),
    ("GET", "/audits/{aid}/report.json", "viewer", None),
    ("GET", "/documents/{doc}", "viewer", None),
    ("GET", "/batches/{half}", "viewer", None),
    ("GET", "/batches/{done}/events", "viewer", None),
    ("GET", "/ask", "analyst", None),
    ("POST", "/ask", "analyst", {"question": "   "}),
    ("GET", "/ask/job-000000000000", "analyst", None),
    ("POST", "/audits/{aid}/signoff", "reviewer", {"decision": "maybe"}),
    ("GET", "/users", "admin", None),
    ("POST", "/users", "admin", {"name": "x", "role": "boss", "password": "long-enough-pw"}),
    ("GET", "/api/audits", "viewer", None),
    ("GET", "/api/audits/{aid}", "viewer", None),
    ("GET", "/api/search?q=breach+notification", "viewer", None),
]
RANK = ["viewer", "analyst", "reviewer", "admin"]


@pytest.mark.parametrize("who", [None, "vera", "alice", "rita", "adam"], ids=lambda w: w or "anonymous")
@pytest.mark.parametrize("method,path,role,data", ROUTES, ids=[f"{m} {p}" for m, p, _, _ in ROUTES])
def test_role_matrix(clients, asked, batches, web_env: WebEnv, who, method, path, role, data) -> None:
    url = path.format(aid=asked["audit_id"], doc=web_env.hostile_doc, **batches)
    client = clients[who]
    r = client.get(url) if method == "GET" else client.post(url, data)
    if who is None:
        assert r.status_code == 401, r.text
    elif RANK.index(ROLES[who]) < RANK.index(role):
        assert r.status_code == 403, r.text
    else:
        assert r.status_code not in (401, 403), (r.status_code, r.text[:300])
        assert r.status_code < 500, r.text


def test_bearer_token_reads_the_api_only(web_env: WebEnv, app, asked) -> None:
    http = TestClient(app, follow_redirects=False)
    good = {"Authorization": f"Bearer {web_env.tokens['vera']}"}
    listed = http.get("/api/audits", headers=good)
    assert listed.status_code == 200 and asked["audit_id"] in [a["audit_id"] for a in listed.json()]
    one = http.get(f"/api/audits/{asked['audit_id']}", headers=good).json()
    assert one["record"]["question"] == QUESTION and one["hash"]
    assert http.get("/api/audits", headers={"Authorization": "Bearer not-a-token"}).status_code == 401
    assert http.get("/audits", headers=good).status_code == 401  # pages need a session
    assert http.get("/api/search", params={"q": " "}, headers=good).status_code == 400


@pytest.mark.parametrize("csrf", [None, "wrong-token"], ids=["missing", "wrong"])
def test_post_without_the_right_csrf_token_is_refused(clients, asked, csrf) -> None:
    bob = clients["bob"]
    data = {"decision": "approve", **({"csrf_token": csrf} if csrf else {})}
    r = bob.post(f"/audits/{asked['audit_id']}/signoff", data, csrf=False)
    assert r.status_code == 403 and "CSRF" in r.text
    assert bob.post("/logout", {"csrf_token": csrf} if csrf else {}, csrf=False).status_code == 403
    assert bob.get("/audits").status_code == 200  # still logged in


def test_login_needs_its_form_token(app) -> None:
    http = TestClient(app, follow_redirects=False)
    r = http.post("/login", data={"name": "vera", "password": PASSWORDS["vera"], "csrf_token": "x"})
    assert r.status_code == 403


def test_logout_with_the_header_token_ends_the_session(app) -> None:
    vera = Client(app, "vera")
    r = vera.http.post("/logout", headers={"X-CSRF-Token": vera.csrf})
    assert r.status_code == 303
    assert vera.get("/audits").status_code == 401


def test_four_eyes_the_asker_may_not_sign_off(clients, asked, caplog) -> None:
    page = clients["rita"].get(f"/audits/{asked['audit_id']}")
    assert 'id="four-eyes"' in page.text and "Record decision" not in page.text
    with caplog.at_level(logging.WARNING, logger="engine.web.security"):
        r = clients["rita"].post(f"/audits/{asked['audit_id']}/signoff", {"decision": "approve"})
    assert r.status_code == 403 and "four-eyes" in r.text
    assert any("denied 403" in m and "rita" in m and "four-eyes" in m for m in caplog.messages)


@pytest.mark.parametrize("data,expected", [
    ({"decision": "reject", "comment": "  "}, "needs a comment"),
    ({"decision": "approve", "requirement_id": "REQ-X999"}, "no requirement &#39;REQ-X999&#39;"),
], ids=["reject-without-comment", "unknown-req"])
def test_signoff_refuses_bad_input(clients, asked, data, expected) -> None:
    r = clients["bob"].post(f"/audits/{asked['audit_id']}/signoff", data)
    assert r.status_code == 400 and expected in r.text


def _cli(settings, *args: str):
    return runner.invoke(cli_app, list(args), env={"DATABASE_URL": settings.database_url,
                                                   "EVIDENCE_HOME": str(settings.home)})


def test_signoff_is_a_trail_record_shown_everywhere(clients, asked, web_env: WebEnv, tmp_path) -> None:
    aid, bob = asked["audit_id"], clients["bob"]
    row = web_env.backend.audit_row(aid)
    cited = [r["requirement_id"] for r in row["record"]["requirements"] if r["cited"] and r["verified"]]
    assert len(cited) >= 2, cited
    steps = [{"decision": "approve", "requirement_id": cited[0], "comment": "Matches <b>Art. 33</b>"},
             {"decision": "reject", "requirement_id": cited[1], "comment": "Internal deadline, not the notification"}]
    for data in steps:
        r = bob.post(f"/audits/{aid}/signoff", data)
        assert r.status_code == 303 and r.headers["location"] == f"/audits/{aid}#signoffs"
    page = bob.get(f"/audits/{aid}").text
    assert 'id="message">Recorded reject requirement' in page  # the one-time message, kept server-side
    assert 'id="message"' not in bob.get(f"/audits/{aid}").text
    assert page.count('class="signoff-row"') == 2
    assert "Matches &lt;b&gt;Art. 33&lt;/b&gt;" in page and "<b>Art. 33</b>" not in page
    assert row["hash"][:16] in page and 'id="verified"><span class="verdict-ok">OK' in page

    shown = _cli(web_env.settings, "trail", "show", aid, "--brief")
    assert shown.exit_code == 0 and "signoff AUD-" in shown.stdout and "by bob" in shown.stdout
    assert f"reject requirement {cited[1]} (reviewer)" in shown.stdout
    verified = _cli(web_env.settings, "trail", "verify")
    assert verified.exit_code == 0 and "OK: the trail verifies" in verified.stdout

    api = bob.get(f"/api/audits/{aid}").json()
    signoffs = [a for a in api["amendments"] if a["kind"] == "signoff"]
    assert [s["record"]["signoff"]["approved_hash"] for s in signoffs] == [row["hash"], row["hash"]]
    assert signoffs[0]["record"]["signoff"]["quote_sha256"]

    html = bob.get(f"/audits/{aid}/report.html")
    assert html.status_code == 200 and "Internal deadline, not the notification" in html.text
    assert row["hash"] in html.text.split("Sign-offs", 1)[1]

    out = tmp_path / "feedback.jsonl"
    exported = _cli(web_env.settings, "relevance", "export-feedback", "--out", str(out))
    assert exported.exit_code == 0, exported.output
    pairs = read_pairs(out)
    assert sorted(p.label for p in pairs) == [0, 1] and all(p.question == QUESTION for p in pairs)

    listed = bob.get("/audits", params={"signoff": "changes_requested"}).text
    assert aid in listed
    assert aid not in bob.get("/audits", params={"signoff": "unreviewed"}).text


def test_a_double_submit_records_one_decision(app, asked, web_env: WebEnv) -> None:
    import threading

    aid = asked["audit_id"]
    tabs = [Client(app, "adam"), Client(app, "adam")]  # two tabs (sessions) of one reviewer, submitting at once
    before = len(web_env.backend.reviews([aid])[aid].decisions)
    statuses: list[int] = []
    threads = [threading.Thread(target=lambda c=c: statuses.append(
        c.post(f"/audits/{aid}/signoff", {"decision": "approve", "comment": "same click"}).status_code))
        for c in tabs]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(statuses) == [303, 409], statuses
    decisions = web_env.backend.reviews([aid])[aid].decisions
    assert len(decisions) == before + 1 and decisions[-1].actor == "adam"
    again = tabs[0].post(f"/audits/{aid}/signoff", {"decision": "approve"})
    assert again.status_code == 409 and "already recorded" in again.text and 'id="form-error"' in again.text


def test_document_view_highlights_the_recorded_quote(clients, asked, web_env: WebEnv) -> None:
    row = web_env.backend.audit_row(asked["audit_id"])
    req = next(r for r in row["record"]["requirements"] if r["cited"])
    page = clients["vera"].get(f"/audits/{asked['audit_id']}").text
    link = f'/documents/{req["document_id"]}?audit={asked["audit_id"]}&amp;req={req["requirement_id"]}#quote'
    assert link in page
    doc = clients["vera"].get(link.replace("&amp;", "&").split("#")[0])
    marked = re.search(r'<mark id="quote"[^>]*>(.*?)</mark>', doc.text, re.S)
    assert marked and " ".join(marked.group(1).split()) == " ".join(req["exact_quote"].split())
    assert "SHA-256" in doc.text and req["section_path"].split(" > ")[-1] in doc.text


def test_document_html_is_shown_as_text(clients, web_env: WebEnv) -> None:
    page = clients["vera"].get(f"/documents/{web_env.hostile_doc}")
    assert page.status_code == 200
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page.text
    assert "<script>alert" not in page.text
    assert "script-src 'self'" in page.headers["content-security-policy"]


def test_unknown_document_and_version(clients, web_env: WebEnv) -> None:
    assert clients["vera"].get("/documents/doc_nope").status_code == 404
    r = clients["vera"].get(f"/documents/{web_env.hostile_doc}", params={"version": 9})
    assert r.status_code == 404 and "no version 9" in r.text


def test_audit_list_filters_and_full_ids(clients, asked) -> None:
    vera = clients["vera"]
    assert asked["audit_id"] in vera.get("/audits", params={"q": "breach"}).text
    assert asked["audit_id"] not in vera.get("/audits", params={"q": "no such words"}).text
    assert asked["audit_id"] not in vera.get("/audits", params={"status": "REJECTED"}).text
    assert asked["audit_id"] in vera.get("/audits", params={"stale": "no"}).text
    short = vera.get(f"/audits/{asked['audit_id'][:-3]}")
    assert short.status_code == 303 and short.headers["location"] == f"/audits/{asked['audit_id']}"


def test_batch_progress_page_and_events(clients, batches, asked) -> None:
    page = clients["vera"].get(f"/batches/{batches['half']}")
    assert page.status_code == 200 and "1 of 2 answered" in page.text and asked["audit_id"] in page.text
    assert QUESTION in page.text and "Second question?" in page.text and "IR-6" in page.text  # text, control id
    assert "Checklist gate (fails on any):" in page.text and "pending" in page.text
    listing = clients["vera"].get("/batches")
    assert listing.status_code == 200 and batches["half"] in listing.text and batches["done"] in listing.text
    with clients["vera"].http.stream("GET", f"/batches/{batches['done']}/events") as stream:
        body = "".join(stream.iter_text())
    assert "event: progress" in body and '"done": 1' in body and "event: finished" in body
    assert clients["vera"].get("/batches/B-nope").status_code == 404


def test_login_is_rate_limited_and_denials_logged(web_env: WebEnv, caplog) -> None:
    app = create_app(web_env.settings, backend=web_env.backend, login_attempts=3)
    http = TestClient(app, follow_redirects=False)
    with caplog.at_level(logging.WARNING, logger="engine.web.security"):
        statuses = []
        for password in ["wrong-1", "wrong-2", "wrong-3", PASSWORDS["vera"]]:
            token = _csrf(http.get("/login").text)
            r = http.post("/login", data={"csrf_token": token, "name": "vera", "password": password})
            statuses.append(r.status_code)
        assert http.get("/audits").status_code == 401
    assert statuses == [401, 401, 401, 429] and int(r.headers["retry-after"]) > 0
    messages = caplog.messages
    assert sum("denied 401 POST /login user=vera" in m for m in messages) == 3
    assert any("denied 429" in m for m in messages) and any("denied 401 GET /audits" in m for m in messages)


def test_cookies_and_redirects(app) -> None:
    http = TestClient(app, follow_redirects=False)
    token = _csrf(http.get("/login").text)
    r = http.post("/login", data={"csrf_token": token, "name": "vera", "password": PASSWORDS["vera"],
                                  "next": "//evil.example/x"})
    assert r.status_code == 303 and r.headers["location"] == "/audits"
    cookie = r.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Secure" not in cookie
    tls = TestClient(app, base_url="https://testserver", follow_redirects=False)
    token = _csrf(tls.get("/login").text)
    r = tls.post("/login", data={"csrf_token": token, "name": "vera", "password": PASSWORDS["vera"]})
    assert r.headers["set-cookie"].startswith("__Host-evidence_session=") and "Secure" in r.headers["set-cookie"]
    assert tls.get("/audits").status_code == 200


def test_admin_adds_a_user_who_can_log_in(clients, app) -> None:
    r = clients["adam"].post("/users", {"name": "nina", "role": "viewer", "password": "nina-password-1"})
    assert r.status_code == 303
    assert "nina" in clients["adam"].get("/users").text
    PASSWORDS["nina"] = "nina-password-1"
    try:
        assert Client(app, "nina").get("/audits").status_code == 200
    finally:
        del PASSWORDS["nina"]
    again = clients["adam"].post("/users", {"name": "nina", "role": "viewer", "password": "nina-password-1"})
    assert again.status_code == 400 and "exists already" in again.text


def test_older_versions_stay_reachable(clients, web_env: WebEnv, embedder) -> None:
    from engine import db as dbmod
    from engine.ingest.pipeline import ingest_paths
    from tests.web.conftest import HOSTILE_DOC

    web_env.hostile_path.write_text(HOSTILE_DOC.replace("four years", "six years"), encoding="utf-8")
    with dbmod.connection(web_env.settings) as conn:
        summary = ingest_paths(conn, embedder, web_env.settings, [web_env.hostile_path])
        assert not summary.failed, summary.failed
        new = conn.execute("SELECT id FROM documents WHERE title = 'Hostile Notice' AND is_current").fetchone()[0]
    assert new != web_env.hostile_doc
    vera = clients["vera"]
    old_page = vera.get(f"/documents/{web_env.hostile_doc}").text
    assert "superseded by" in old_page and "four years" in old_page
    v1 = vera.get(f"/documents/{new}", params={"version": 1})
    assert v1.status_code == 200 and "four years" in v1.text and "six years" not in v1.text
    assert vera.get(f"/documents/{new}").text.count("six years") == 1


@pytest.mark.parametrize("args,stdin,code,message", [
    (["--role", "viewer"], "a-long-enough-password\n", 0, "added user cli-user (viewer)"),
    (["--role", "viewer"], "a-long-enough-password\n", 2, "exists already"),
    (["--role", "boss"], "a-long-enough-password\n", 2, "--role must be one of viewer, analyst, reviewer, admin"),
    (["--role", "viewer"], "short\n", 2, "needs at least 12"),
], ids=["added", "taken", "bad-role", "short-password"])
def test_cli_user_add(web_env: WebEnv, args, stdin, code, message) -> None:
    name = "cli-user" if "short" not in stdin else "cli-user-2"
    env = {"DATABASE_URL": web_env.settings.database_url, "EVIDENCE_HOME": str(web_env.settings.home)}
    result = runner.invoke(cli_app, ["user", "add", name, *args, "--password-stdin"], input=stdin, env=env)
    assert result.exit_code == code and message in result.output, result.output


def test_cli_user_token_is_printed_once_and_works(web_env: WebEnv, app) -> None:
    result = _cli(web_env.settings, "user", "token", "vera")
    assert result.exit_code == 0
    token = result.stdout.strip()
    with web_env.backend.connection() as conn:
        stored = [r[0] for r in conn.execute("SELECT token_sha256 FROM web_tokens WHERE user_name = 'vera'")]
    assert token not in stored and len(stored) == 2  # only hashes are kept
    http = TestClient(app)
    assert http.get("/api/audits", headers={"Authorization": f"Bearer {token}"}).status_code == 200
    missing = _cli(web_env.settings, "user", "token", "nobody")
    assert missing.exit_code == 7 and "no user 'nobody'" in missing.output
