"""Shared by the real-browser and real-server tests of the web view: an app served by uvicorn on a free
loopback port (`serving`), Debian's chromium driven by selenium (`chrome`, skipped where it is missing),
and the page checks every browser test runs (labels, keyboard reach)."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import PASSWORDS

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
WAIT_S = 120  # a bound, not a timing assertion: the research run shares 2 loaded cores


def need_chromium() -> None:
    if not (CHROMIUM and DRIVER):
        pytest.skip("needs Debian's chromium and chromium-driver (make sysdeps installs them)", allow_module_level=True)


@contextmanager
def serving(app: Any, **config: Any) -> Iterator[str]:
    """`app` served by uvicorn in a thread on a free loopback port (as `evidence serve` runs it: no proxy headers
    believed unless `config` says so); its base URL."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on",
                                        **{"proxy_headers": False, **config}))
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


@contextmanager
def chrome(width: int = 1280, height: int = 900) -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    os.environ.setdefault("SE_OFFLINE", "true")  # selenium manager: never fetch a driver
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM  # type: ignore[assignment]
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                f"--window-size={width},{height}", "--no-first-run", "--disable-extensions"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=DRIVER), options=options)
    driver.set_page_load_timeout(WAIT_S)
    try:
        yield driver
    finally:
        driver.quit()


def replaced(element: Any) -> Any:
    """A wait condition: the page `element` belongs to was replaced. Selenium's `staleness_of`, and also true where
    Chromium answers "Node with given id does not belong to the document" for a node of the page being unloaded,
    in place of a stale reference (a flake of the review workflow's test, once in three runs on 2 cores)."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    def predicate(_driver: Any) -> bool:
        try:
            element.is_enabled()
        except StaleElementReferenceException:
            return True
        except WebDriverException as exc:
            if "does not belong to the document" in str(exc):
                return True
            raise
        return False

    return predicate


def _wait(driver: Any, condition: Any, what: str) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT_S, poll_frequency=0.05).until(condition, message=what)


def _login(driver: Any, base: str, name: str) -> None:
    from selenium.webdriver.common.by import By

    driver.get(base + "/login")
    driver.delete_all_cookies()  # whoever was logged in before
    driver.get(base + "/login")
    _check_page(driver)
    driver.find_element(By.ID, "name").send_keys(name)
    driver.find_element(By.ID, "password").send_keys(PASSWORDS[name])
    driver.find_element(By.CSS_SELECTOR, "form button[type=submit]").click()
    _wait(driver, lambda d: d.current_url.endswith("/audits"), f"{name} logged in")


def _logout(driver: Any) -> None:
    from selenium.webdriver.common.by import By

    buttons = driver.find_elements(By.CSS_SELECTOR, "form.logout button")
    assert buttons, (driver.current_url, driver.page_source[:1500])
    buttons[0].click()
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


