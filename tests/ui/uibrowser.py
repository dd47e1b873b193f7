"""Debian's Chromium under Playwright, for the dashboard's browser test and its screenshots.

Never ``playwright install`` (it downloads browsers): the system's /usr/bin/chromium is launched
headless, offline, without sandbox (CI runs as root).
"""
from __future__ import annotations

import contextlib
import os
import shutil

CHROMIUM = os.environ.get("QHYBRID_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def available() -> str | None:
    """Why the browser cannot run here, or None when it can."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; never `playwright install`)"
    if not os.path.exists(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


@contextlib.contextmanager
def page(width: int = 1280, height: int = 900):
    """A fresh page of a headless Chromium; closed at the end."""
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS, headless=True)
        try:
            context = browser.new_context(viewport={"width": width, "height": height})
            yield context.new_page()
        finally:
            browser.close()
