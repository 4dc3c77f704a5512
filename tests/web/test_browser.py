"""The web view in a real browser: Debian's chromium driven by selenium through chromium-driver.

An analyst logs in, asks a question and watches the research nodes arrive, opens the audit, clicks a
REQ-ID and sees the quote highlighted (and scrolled to) in the document; a reviewer then signs off
and sees the sign-off. Every page visited is checked for keyboard reach (each control gets focus by
Tab) and labels (each form field has one). Screenshots go to the test's temporary folder, and to
EVIDENCE_SCREENSHOTS (e.g. docs/img) when set.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.browsing import _check_page, _login, _logout, _shots, _wait, chrome, need_chromium, serving
from tests.web.conftest import WebEnv

pytestmark = pytest.mark.slow
need_chromium()

QUESTION = "When must a personal data breach be notified?"


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chrome() as driver:
        yield driver


@pytest.fixture(scope="module")
def server(web_env: WebEnv) -> Iterator[str]:
    from engine.web.app import create_app

    with serving(create_app(web_env.settings, backend=web_env.backend)) as base:
        yield base


def test_ask_open_click_highlight_sign_off(browser: Any, server: str, web_env: WebEnv, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    folders = _shots(tmp_path)
    _login(browser, server, "alice")
    _check_page(browser)

    # Ask, and watch the research nodes arrive over server-sent events.
    browser.get(server + "/ask")
    _check_page(browser)
    browser.find_element(By.ID, "question").send_keys(QUESTION)
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    _wait(browser, lambda d: "/ask/job-" in d.current_url or "/audits/AUD-" in d.current_url, "progress page")
    seen: list[str] = []

    def progressed(d: Any) -> bool:
        if "/ask/job-" in d.current_url:
            steps = d.execute_script("const l = document.getElementById('progress-steps');"
                                     "return l ? [...l.children].map(li => li.textContent) : [];")
            seen[:] = steps if len(steps) >= len(seen) else seen
        return "/audits/AUD-" in d.current_url

    _wait(browser, progressed, "the audit page after the answer")
    assert "guard" in seen or len(seen) >= 2, f"no progress seen: {seen}"
    audit_id = browser.find_element(By.ID, "audit-id").get_attribute("textContent")  # .text: as styled (uppercase)
    assert audit_id.startswith("AUD-")
    _check_page(browser)
    assert browser.find_elements(By.ID, "four-eyes") and not browser.find_elements(By.CSS_SELECTOR, ".signoff-form")

    # Click the first REQ-ID: the document opens with the quote highlighted and in view.
    link = browser.find_element(By.CSS_SELECTOR, "a.req")
    rid = link.text
    link.click()
    _wait(browser, lambda d: "/documents/doc_" in d.current_url, "the document view")
    mark = browser.find_element(By.ID, "quote")
    row = web_env.backend.audit_row(audit_id)
    quote = next(r["exact_quote"] for r in row["record"]["requirements"] if r["requirement_id"] == rid)
    assert mark.is_displayed() and " ".join(mark.text.split()) == " ".join(quote.split())
    _wait(browser, lambda d: d.execute_script("return document.activeElement.id") == "quote",
          "the page script focusing the quote")
    in_view = browser.execute_script("const r = arguments[0].getBoundingClientRect();"
                                     "return r.top >= -2 && r.top < window.innerHeight;", mark)
    assert in_view, ("the highlighted quote is not scrolled into view", browser.execute_script(
        "const r = arguments[0].getBoundingClientRect(); return [r.top, r.bottom, window.innerHeight, window.scrollY,"
        "document.documentElement.scrollHeight]", mark))
    for folder in folders:
        browser.save_screenshot(str(folder / "web-document-highlight.png"))
    _check_page(browser)

    # Another user, a reviewer, signs the audit off and sees the sign-off.
    _logout(browser)
    _login(browser, server, "bob")
    browser.get(f"{server}/audits/{audit_id}")
    _check_page(browser)
    browser.find_element(By.ID, "s-comment").send_keys("Checked the 72-hour duty against the Act.")
    browser.find_element(By.CSS_SELECTOR, ".signoff-form button[type=submit]").click()
    _wait(browser, lambda d: d.find_elements(By.ID, "message"), "the sign-off message")
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.signoff-row")
    assert len(rows) == 1 and "bob" in rows[0].text and "approve" in rows[0].text and "whole audit" in rows[0].text
    assert "Checked the 72-hour duty against the Act." in rows[0].text
    browser.execute_script("document.getElementById('signoffs').scrollIntoView({block: 'start'})")
    for folder in folders:
        browser.save_screenshot(str(folder / "web-audit-signoff.png"))
    assert web_env.backend.verify_trail().ok
