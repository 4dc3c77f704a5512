"""The web view in a real browser: Debian's chromium driven by selenium through chromium-driver.

An analyst logs in, asks a question and watches the research nodes arrive, opens the audit, clicks a
REQ-ID and sees the quote highlighted (and scrolled to) in the document; a reviewer then signs off
and sees the sign-off. Every page visited is checked for keyboard reach (each control gets focus by
Tab) and labels (each form field has one). Screenshots go to the test's temporary folder, and to
EVIDENCE_SCREENSHOTS (e.g. docs/img) when set.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import PASSWORDS, WebEnv

pytestmark = pytest.mark.slow

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
if not (CHROMIUM and DRIVER):
    pytest.skip("needs Debian's chromium and chromium-driver (make sysdeps installs them)", allow_module_level=True)

QUESTION = "When must a personal data breach be notified?"
WAIT_S = 120  # a bound, not a timing assertion: the research run shares 2 loaded cores


@pytest.fixture(scope="module")
def server(web_env: WebEnv) -> Iterator[str]:
    import uvicorn

    from engine.web.app import create_app

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(web_env.settings, backend=web_env.backend), host="127.0.0.1", port=port,
                            log_level="warning", lifespan="on")
    srv = uvicorn.Server(config)
    thread = threading.Thread(target=srv.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not srv.started:
        assert time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        srv.should_exit = True
        thread.join(timeout=10)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # selenium manager: never fetch a driver
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--window-size=1280,900", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, condition: Any, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(condition, message=what)


def _login(driver: Any, base: str, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(base + "/login")
    _check_page(driver)
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(PASSWORDS[name])
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    _wait(driver, lambda d: d.current_url.endswith("/audits"), f"{name} logged in")


def _logout(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    driver.find_element(By.CSS_SELECTOR, "form.logout button").click()
    _wait(driver, lambda d: "/login" in d.current_url, "logged out")


UNLABELLED = """
return [...document.querySelectorAll('input:not([type=hidden]), select, textarea')].filter(el => {
  const byFor = el.id && document.querySelector('label[for="' + CSS.escape(el.id) + '"]');
  return !(byFor || el.closest('label') || el.getAttribute('aria-label') || el.getAttribute('aria-labelledby'));
}).map(el => el.outerHTML);
"""
MARK_CONTROLS = """
const controls = [...document.querySelectorAll(
  'a[href], button, input:not([type=hidden]), select, textarea, summary, [tabindex]:not([tabindex="-1"])')]
  .filter(el => !el.disabled && el.checkVisibility());  // folded <details> content: after it is opened
controls.forEach((el, i) => { el.dataset.kb = String(i); });
// A radio group is one tab stop (arrow keys move inside it): expect its checked radio only.
return controls.filter(el => !(el.type === 'radio' && !el.checked)).map(el => el.dataset.kb);
"""


def _check_page(driver: Any) -> None:
    """Every form field labelled; every control reached by pressing Tab from the top of the page, then again
    with the folded sections (rejected candidates) opened."""
    assert driver.execute_script(UNLABELLED) == [], driver.current_url
    _tab_through(driver)
    if driver.execute_script("const f = [...document.querySelectorAll('details:not([open])')];"
                             "f.forEach(d => { d.open = true; }); return f.length;"):
        _tab_through(driver)


def _tab_through(driver: Any) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.keys import Keys

    expected = set(driver.execute_script(MARK_CONTROLS))
    driver.execute_script("document.activeElement && document.activeElement.blur(); window.scrollTo(0, 0);")
    reached: set[str] = set()
    for _ in range(2 * len(expected) + 5):
        ActionChains(driver).send_keys(Keys.TAB).perform()
        kb = driver.execute_script("return document.activeElement && document.activeElement.dataset.kb || null")
        if kb is not None:
            reached.add(kb)
        if expected <= reached:
            break
    missing = expected - reached
    assert not missing, (driver.current_url, driver.execute_script(
        "return arguments[0].map(k => document.querySelector('[data-kb=\"' + k + '\"]').outerHTML)", sorted(missing)))


def _shots(tmp_path: Path) -> list[Path]:
    folders = [tmp_path]
    if os.environ.get("EVIDENCE_SCREENSHOTS"):
        folders.append(Path(os.environ["EVIDENCE_SCREENSHOTS"]))
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True)
    return folders


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
