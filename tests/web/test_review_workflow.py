"""The review workflow in a real browser (Debian's chromium, selenium), as reviewers use it.

alice (analyst) has an audit answered from a vendor standard; bob (reviewer) finds it in his queue and
approves it; approving twice is refused; adam (admin) approves: approved by two. rita (reviewer) rejects
one REQ-ID, first forgetting the comment (the form asks for it), then with one: changes requested,
the same in the list, its filter, the API and `trail show`. The standard changes: the audit is stale,
no approval is offered, and alice answers it again from the page. The asker may never sign. Every page
is then looked at 390 px wide and at 1366x768: no sideways scrolling, badges on one line and legible,
at least 8 audits in view. Screenshots go to the test's folder (and EVIDENCE_SCREENSHOTS when set).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from engine import db as dbmod
from engine.cli.main import app as cli_app
from engine.ingest.pipeline import ingest_paths
from engine.web.app import create_app
from tests.web.browsing import _login, _logout, _shots, _wait, chrome, need_chromium, replaced, serving
from tests.web.conftest import PASSWORDS, WebEnv

pytestmark = pytest.mark.slow
need_chromium()

STANDARD = """# Vendor Key Escrow Standard

## 1. Purpose

This standard sets how vendors hand over signing keys to the escrow agent.

## 3. Escrow

The vendor must deposit the master signing keys with the escrow agent within ten business days of each key rotation.
"""
QUESTION = "When must the vendor deposit the master signing keys with the escrow agent?"


@pytest.fixture(scope="module")
def standard(web_env: WebEnv, embedder: Any, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("escrow") / "vendor-key-escrow-standard.md"
    path.write_text(STANDARD, encoding="utf-8")
    with dbmod.connection(web_env.settings) as conn:
        assert not ingest_paths(conn, embedder, web_env.settings, [path], source_type="policy").failed
    return path


@pytest.fixture(scope="module")
def audit_id(web_env: WebEnv, standard: Path) -> str:
    asked = web_env.backend.ask(QUESTION, actor="alice")
    record = web_env.backend.audit_row(asked["audit_id"])["record"]
    cited = [r for r in record["requirements"] if r["cited"] and r["verified"]]
    assert any("escrow agent" in r["exact_quote"] for r in cited), [r["exact_quote"] for r in cited]
    return asked["audit_id"]


@pytest.fixture(scope="module")
def server(web_env: WebEnv) -> Iterator[str]:
    with serving(create_app(web_env.settings, backend=web_env.backend)) as base:
        yield base


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chrome() as driver:
        yield driver


def _by_id(driver: Any, element_id: str) -> str:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id).text


def _decide(driver: Any, decision: str, comment: str = "", requirement: str = "") -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    driver.find_element(By.ID, f"d-{decision}").click()
    if requirement:
        Select(driver.find_element(By.ID, "s-scope")).select_by_value(requirement)
    box = driver.find_element(By.ID, "s-comment")
    box.clear()
    box.send_keys(comment)
    page = driver.find_element(By.TAG_NAME, "html")
    driver.find_element(By.CSS_SELECTOR, "#signoff-form button[type=submit]").click()
    _wait(driver, replaced(page), "the next page")
    _wait(driver, lambda d: d.find_elements(By.ID, "message") or d.find_elements(By.ID, "form-error"),
          "the decision's answer")


def _state(driver: Any, base: str, audit: str) -> tuple[str, str]:
    driver.get(f"{base}/audits/{audit}")
    return _by_id(driver, "review-state"), _by_id(driver, "review-summary")


def _cli(settings: Any, *args: str) -> Any:
    return CliRunner().invoke(cli_app, list(args), env={"DATABASE_URL": settings.database_url,
                                                        "EVIDENCE_HOME": str(settings.home)})


POST_SIGNOFF = """
const done = arguments[arguments.length - 1];
const token = document.querySelector('form.logout input[name=csrf_token]').value;
fetch('/audits/' + arguments[0] + '/signoff', {method: 'POST',
      body: new URLSearchParams({csrf_token: token, decision: 'approve', comment: ''})}).then(r => done(r.status));
"""


def test_two_approvals_a_rejection_a_stale_document_and_a_rerun(browser: Any, server: str, web_env: WebEnv,
                                                                  audit_id: str, standard: Path, embedder: Any,
                                                                  tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    folders = _shots(tmp_path)
    record = web_env.backend.audit_row(audit_id)["record"]
    rid = next(r["requirement_id"] for r in record["requirements"]
               if r["cited"] and r["verified"] and "escrow agent" in r["exact_quote"])

    # The asker sees the four-eyes note, no form; a forged POST is refused too.
    _login(browser, server, "alice")
    assert _state(browser, server, audit_id)[0] == "unreviewed"
    assert browser.find_elements(By.ID, "four-eyes") and not browser.find_elements(By.ID, "signoff-form")
    assert browser.execute_async_script(POST_SIGNOFF, audit_id) == 403
    _logout(browser)

    # bob finds it in his queue and approves; a second approval of his is refused, on the page.
    _login(browser, server, "bob")
    browser.get(server + "/reviews")
    assert audit_id in browser.find_element(By.TAG_NAME, "main").text
    browser.find_element(By.LINK_TEXT, audit_id).click()
    _decide(browser, "approve", "Ten business days matches the standard.")
    assert "Recorded approve the whole audit" in _by_id(browser, "message")
    assert (_by_id(browser, "review-state"), _by_id(browser, "review-summary")) == \
        ("in review", "approvals by bob (1 of 2); 1 more approval(s) needed")
    _decide(browser, "approve", "again")
    assert "already recorded 'approve' for this audit" in _by_id(browser, "form-error")
    assert len(browser.find_elements(By.CSS_SELECTOR, "tr.signoff-row")) == 1
    browser.get(server + "/reviews")
    assert audit_id not in browser.find_element(By.TAG_NAME, "main").text  # bob has done his part
    _logout(browser)

    # adam approves: approved by two, everywhere.
    _login(browser, server, "adam")
    browser.get(f"{server}/audits/{audit_id}")
    _decide(browser, "approve")
    assert (_by_id(browser, "review-state"), _by_id(browser, "review-summary")) == \
        ("approved", "approved by bob and adam (2 of 2)")
    browser.get(server + "/audits?signoff=approved")
    assert audit_id in browser.find_element(By.TAG_NAME, "main").text
    _logout(browser)

    # rita rejects one REQ-ID: the form asks for the missing comment, then the rejection overrides both approvals.
    _login(browser, server, "rita")
    browser.get(f"{server}/audits/{audit_id}")
    _decide(browser, "reject", "", requirement=rid)
    assert "needs a comment" in _by_id(browser, "form-error")
    assert browser.find_element(By.ID, "d-reject").is_selected()  # the form comes back as filled in
    _decide(browser, "reject", "Rotation is not the trigger in section 3.", requirement=rid)
    state, summary = _by_id(browser, "review-state"), _by_id(browser, "review-summary")
    assert state == "changes requested"
    assert summary == f"{rid} rejected by rita: Rotation is not the trigger in section 3."
    rows = browser.find_elements(By.CSS_SELECTOR, "tr.signoff-row")
    assert len(rows) == 3 and "signed record hash" in rows[-1].text
    for folder in folders:
        browser.save_screenshot(str(folder / "web-review-changes-requested.png"))
    browser.get(server + "/audits?signoff=changes_requested")
    assert audit_id in browser.find_element(By.TAG_NAME, "main").text
    browser.get(server + f"/api/audits?q={audit_id}")
    listed = json.loads(browser.find_element(By.TAG_NAME, "body").text)
    got = [(a["audit_id"], a["signoff"], a["review"]["summary"]) for a in listed]
    assert got == [(audit_id, "changes_requested", summary)]
    shown = _cli(web_env.settings, "trail", "show", audit_id, "--brief")
    printed = " ".join(shown.stdout.split())
    assert shown.exit_code == 0 and f"review: changes requested: {rid} rejected by rita" in printed
    browser.get(server + "/audits")
    _logout(browser)

    # The standard changes: the quote is gone, the review lapses, nobody may approve the old answer.
    standard.write_text(STANDARD.replace("ten business days", "five business days"), encoding="utf-8")
    with dbmod.connection(web_env.settings) as conn:
        assert not ingest_paths(conn, embedder, web_env.settings, [standard], source_type="policy").failed
    _login(browser, server, "bob")
    state, summary = _state(browser, server, audit_id)
    assert state == "stale" and "stale since" in summary
    assert not browser.find_elements(By.ID, "d-approve") and browser.find_elements(By.ID, "d-reject")
    assert browser.find_elements(By.ID, "rerun")  # whoever may ask may answer it again
    _logout(browser)

    # alice answers it again from the page: a new audit, unreviewed, that supersedes the old one.
    _login(browser, server, "alice")
    browser.get(f"{server}/audits/{audit_id}")
    browser.find_element(By.ID, "rerun").click()
    _wait(browser, lambda d: "/audits/AUD-" in d.current_url and audit_id not in d.current_url
          and d.find_elements(By.ID, "review-state"), "the new audit's page, loaded")
    new_id = _by_id(browser, "audit-id")
    assert new_id != audit_id and _by_id(browser, "review-state") == "unreviewed"
    assert web_env.backend.audit_row(new_id)["record"]["supersedes"] == audit_id
    assert web_env.backend.verify_trail().ok


CONTRAST = """
function lum(c) {
  const [r, g, b] = c.match(/\\d+(\\.\\d+)?/g).slice(0, 3).map(Number).map(v => {
    v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}
function bg(el) {
  for (; el; el = el.parentElement) {
    const c = getComputedStyle(el).backgroundColor;
    if (c && !c.startsWith('rgba(0, 0, 0, 0)') && c !== 'transparent') return c;
  }
  return 'rgb(255, 255, 255)';
}
return [...document.querySelectorAll('.tag')].map(t => {
  const a = lum(getComputedStyle(t).color), b = lum(bg(t));
  return [t.textContent, (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05), t.getClientRects().length];
});
"""
OVERFLOW = "return [document.documentElement.scrollWidth, window.innerWidth];"


def _viewport(driver: Any, width: int, height: int, mobile: bool) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                           {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


def test_pages_at_phone_and_laptop_sizes(browser: Any, server: str, web_env: WebEnv, audit_id: str,
                                         tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By

    folders = _shots(tmp_path)
    _login(browser, server, "adam")
    doc = web_env.backend.audit_row(audit_id)["record"]["requirements"][0]["document_id"]
    pages = {"audits": "/audits", "audit": f"/audits/{audit_id}", "reviews": "/reviews", "batches": "/batches",
             "documents": "/documents", "document": f"/documents/{doc}", "users": "/users"}
    try:
        for width, height, mobile in ((390, 844, True), (1366, 768, False)):
            _viewport(browser, width, height, mobile)
            for name, path in pages.items():
                browser.get(server + path)
                scroll, inner = browser.execute_script(OVERFLOW)
                assert scroll <= inner + 1, (width, path, scroll, inner)  # no sideways scrolling
                for text, ratio, lines in browser.execute_script(CONTRAST):
                    assert ratio >= 4.5 and lines == 1, (width, path, text, ratio, lines)
                for folder in folders:
                    browser.save_screenshot(str(folder / f"web-{name}-{width}.png"))
        # At 1366x768 the list shows at least 8 audits without scrolling (row height, from the table's top).
        browser.get(server + "/audits")
        top, row = browser.execute_script(
            "const r = document.querySelector('table.audits tbody tr').getBoundingClientRect();"
            "return [document.querySelector('table.audits tbody').getBoundingClientRect().top, r.height];")
        assert (768 - top) / row >= 8, (top, row)
        shown = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "table.audits a.mono")]
        assert audit_id in shown  # ids in their real case, as copied
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_a_deep_link_to_a_quote_survives_the_login(browser: Any, server: str, web_env: WebEnv,
                                                  audit_id: str) -> None:
    from selenium.webdriver.common.by import By

    req = web_env.backend.audit_row(audit_id)["record"]["requirements"][0]
    target = f"/documents/{req['document_id']}?audit={audit_id}&req={req['requirement_id']}"
    browser.get(server + "/login")
    browser.delete_all_cookies()
    browser.get(server + target + "#quote")
    browser.find_element(By.ID, "login-link").click()
    _wait(browser, lambda d: "/login" in d.current_url, "the login page")
    browser.find_element(By.ID, "name").send_keys("vera")
    browser.find_element(By.ID, "password").send_keys(PASSWORDS["vera"])
    browser.find_element(By.CSS_SELECTOR, "main form button[type=submit]").click()
    _wait(browser, lambda d: "/documents/" in d.current_url, "the document after logging in")
    assert browser.current_url == server + target + "#quote"
    assert browser.find_element(By.ID, "quote").is_displayed()
