"""Screenshots of the dashboard's pages for docs/ (run by hand; not a test).

    QHYBRID_HOME=~/.qhybrid python tests/ui/screenshots.py docs JOB [JOB2]

writes docs/ui-jobs.png (the jobs table), docs/ui-job.png (JOB's page) and docs/ui-compare.png
(JOB and JOB2 overlaid), with Debian's Chromium (see uibrowser.py).
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from urllib.parse import quote

import uibrowser

from qhybrid.ui.server import Dashboard


def main(out: str, job: str, other: str | None = None) -> None:
    folder = Path(out)
    board = Dashboard(port=0).start()
    base = board.url.split("/?")[0]
    token = quote(board.token)
    try:
        with uibrowser.page(width=1280, height=800) as page:
            page.goto(board.url)
            page.locator("#jobs tbody tr").first.wait_for()
            time.sleep(0.5)
            page.screenshot(path=str(folder / "ui-jobs.png"))
            page.goto(f"{base}/job?name={quote(job)}&token={token}")
            page.locator("svg[data-metric]").first.wait_for()
            time.sleep(0.5)
            page.screenshot(path=str(folder / "ui-job.png"), full_page=True)
            if other:
                page.goto(f"{base}/compare?jobs={quote(job)},{quote(other)}&token={token}")
                page.locator("svg[data-metric]").first.wait_for()
                time.sleep(0.5)
                page.screenshot(path=str(folder / "ui-compare.png"), full_page=True)
    finally:
        board.stop()


if __name__ == "__main__":
    main(*sys.argv[1:4])
