"""The web view attacked as an outsider would, against a real uvicorn server (as `evidence serve` runs it):
parallel password guesses, a spoofed X-Forwarded-For, a hundred open event streams, a NUL byte, a foreign
Host header, a forged status message, CSV formula injection, and what a viewer may not see."""

from __future__ import annotations

import io
import re
import socket
import threading
import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import unquote

import httpx
import pytest
from fastapi.testclient import TestClient
from openpyxl import load_workbook

from engine.report import export
from engine.web.app import create_app
from tests.web.browsing import serving
from tests.web.conftest import PASSWORDS, WebEnv

pytestmark = pytest.mark.slow


def _token(html: str) -> str:
    match = re.search(r'name="csrf_token" value="([^"]*)"', html)
    assert match, "no CSRF field on the page"
    return match.group(1)


def _login(http: httpx.Client, name: str, password: str, **headers: str) -> httpx.Response:
    token = _token(http.get("/login").text)
    return http.post("/login", data={"csrf_token": token, "name": name, "password": password}, headers=headers)


@pytest.fixture(scope="module")
def base(web_env: WebEnv) -> Iterator[str]:
    app = create_app(web_env.settings, backend=web_env.backend, allowed_hosts=["127.0.0.1", "localhost"],
                     streams_per_user=100, streams_total=150)
    with serving(app) as url:
        yield url


def test_parallel_wrong_passwords_are_counted_before_the_hash(base: str) -> None:
    statuses: list[int] = []

    def guess(i: int) -> None:
        with httpx.Client(base_url=base, timeout=60) as http:
            statuses.append(_login(http, "vera", f"wrong-guess-{i}").status_code)

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert statuses.count(401) <= 5 and statuses.count(429) >= 25, sorted(statuses)
    # Another user behind the same address still logs in with the right password.
    with httpx.Client(base_url=base, timeout=60) as http:
        assert _login(http, "bob", PASSWORDS["bob"]).status_code == 303


def test_a_spoofed_forwarded_for_is_not_believed(base: str) -> None:
    statuses = []
    with httpx.Client(base_url=base, timeout=60) as http:
        for i in range(7):
            statuses.append(_login(http, "alice", "wrong-again", **{"X-Forwarded-For": f"10.0.0.{i}"}).status_code)
    assert statuses[:5] == [401] * 5 and statuses[5:] == [429, 429], statuses


def _stream(base: str, cookie: str, path: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=30)
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nCookie: {cookie}\r\nAccept: text/event-stream\r\n\r\n"
                 .encode())
    head = b""
    while b"\r\n\r\n" not in head:
        head += sock.recv(4096)
    assert head.startswith(b"HTTP/1.1 200"), head[:200]
    return sock


def test_a_hundred_open_event_streams_leave_the_pages_answering(base: str, web_env: WebEnv) -> None:
    from engine.batch import store as batch_store

    with web_env.backend.connection() as conn:
        batch_store.create(conn, batch_id="B-streams", name="open batch", path="audits/x.yaml", sha256="0" * 64,
                           definition={"checklist": {"name": "open batch", "questions": [
                               {"id": "q1", "text": "A question never answered?"}]}},
                           actor="rita", settings_hash="x", items=[("q1", "run-streams-1")])
    with httpx.Client(base_url=base, timeout=60) as http:
        assert _login(http, "rita", PASSWORDS["rita"]).status_code == 303
        cookie = "; ".join(f"{k}={v}" for k, v in http.cookies.items())
        socks = [_stream(base, cookie, "/batches/B-streams/events") for _ in range(100)]
        try:
            started = time.monotonic()
            for path in ("/documents", "/audits", "/batches"):
                assert http.get(path, timeout=5).status_code == 200  # a bound for a hung server, not a timing
            took = time.monotonic() - started
            assert took < 5, took
            over = http.get("/batches/B-streams/events", timeout=5)  # the 101st of one user
            assert over.status_code == 429 and "too many live-progress streams" in over.text, over.status_code
        finally:
            for s in socks:
                s.close()
        deadline = time.monotonic() + 30  # closed streams are counted off as the server notices
        while _opens(http, "/batches/B-streams/events") == 429:
            assert time.monotonic() < deadline, "closed streams were not given back"
            time.sleep(0.5)


def _opens(http: httpx.Client, path: str) -> int:
    with http.stream("GET", path, timeout=5, headers={"Accept": "text/event-stream"}) as r:
        return r.status_code


def test_default_caps_per_user(web_env: WebEnv) -> None:
    app = create_app(web_env.settings, backend=web_env.backend)
    assert (app.state.streams.per_user, app.state.streams.total) == (6, 200)


@pytest.mark.parametrize("path", ["/documents/doc%00x", "/audits?q=%00", "/audits/AUD-%00", "/audits?q=%ff%fe"])
def test_a_nul_byte_or_bad_text_in_the_address_is_a_400(base: str, path: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:
        _login(http, "vera", PASSWORDS["vera"])
        r = http.get(path)
    assert r.status_code == 400 and "Traceback" not in r.text, (path, r.status_code, r.text[:200])


def test_a_nul_byte_in_a_form_field_is_a_400(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:
        r = _login(http, "ve\x00ra", "whatever")
    assert r.status_code == 400 and "Traceback" not in r.text


def test_a_foreign_host_header_is_refused(base: str) -> None:
    with httpx.Client(base_url=base, timeout=60) as http:
        assert http.get("/login", headers={"Host": "evil.example"}).status_code == 400
        assert http.get("/login", headers={"Host": "localhost"}).status_code == 200


def test_messages_come_from_the_server_not_the_link(web_env: WebEnv) -> None:
    http = TestClient(create_app(web_env.settings, backend=web_env.backend), follow_redirects=False)
    _login(http, "vera", PASSWORDS["vera"])  # type: ignore[arg-type]
    page = http.get("/audits", params={"message": "Your account is suspended: call +1 555 0100"})
    assert page.status_code == 200 and "suspended" not in page.text


def test_a_deep_link_survives_the_login(web_env: WebEnv) -> None:
    http = TestClient(create_app(web_env.settings, backend=web_env.backend), follow_redirects=False)
    page = http.get("/documents/doc_x", params={"audit": "AUD-1", "req": "REQ-S001"})
    assert page.status_code == 401
    link = re.search(r'id="login-link" href="([^"]+)"', page.text).group(1)  # type: ignore[union-attr]
    assert link.startswith("/login?next=") and unquote(link[12:]) == "/documents/doc_x?audit=AUD-1&req=REQ-S001"
    form = http.get(link).text
    assert 'name="next" value="/documents/doc_x?audit=AUD-1&amp;req=REQ-S001"' in form
    token = _token(form)
    r = http.post("/login", data={"csrf_token": token, "name": "vera", "password": PASSWORDS["vera"],
                                  "next": "/documents/doc_x?audit=AUD-1&req=REQ-S001#quote"})
    assert r.status_code == 303 and r.headers["location"] == "/documents/doc_x?audit=AUD-1&req=REQ-S001#quote"


def test_viewers_see_no_server_paths_and_the_login_page_no_commands(web_env: WebEnv) -> None:
    app = create_app(web_env.settings, backend=web_env.backend)
    anonymous = TestClient(app)
    login = anonymous.get("/login").text
    assert "evidence user" not in login and "--role" not in login
    pages = {}
    for name in ("vera", "adam"):
        http = TestClient(app, follow_redirects=False)
        _login(http, name, PASSWORDS[name])  # type: ignore[arg-type]
        pages[name] = http.get(f"/documents/{web_env.hostile_doc}").text
        assert http.get("/documents").status_code == 200
    folder = str(web_env.hostile_path.parent)  # type: ignore[union-attr]
    assert folder not in pages["vera"] and "hostile-vendor-policy.md" in pages["vera"]
    assert folder in pages["adam"]


def test_csv_and_xlsx_exports_neutralise_formulas(tmp_path: Any) -> None:
    rows = [{c: "" for c in export.COLUMNS} | {"audit_id": "AUD-1", "question": '=HYPERLINK("http://x.example","y")',
                                               "exact_quote": "+1 shall apply", "citation": "@SUM(A1)",
                                               "section_path": "-2", "document_title": "\tTab", "verdict": "verified"}]
    text = export.to_csv(rows)
    assert "'=HYPERLINK" in text and "'+1 shall apply" in text and "'@SUM(A1)" in text and ",'-2," in text
    assert "'\tTab" in text and ",verified," in text  # ordinary text stays as it is
    book = load_workbook(io.BytesIO(export.write_xlsx(rows, tmp_path / "x.xlsx").read_bytes()))
    sheet = book["requirements"]
    header = [c.value for c in sheet[1]]
    cell = sheet.cell(row=2, column=header.index("question") + 1)
    assert cell.value == rows[0]["question"] and cell.data_type == "s" and cell.quotePrefix
    assert not sheet.cell(row=2, column=header.index("verdict") + 1).quotePrefix
