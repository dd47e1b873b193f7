"""The dashboard in a real browser (Debian's Chromium driven by Playwright): the jobs table, a
running job followed to COMPLETED, its chart read, text from the job shown as text."""
from __future__ import annotations

import uibrowser as browser
import pytest

from qhybrid.submit import Job

WHY_NOT = browser.available()
pytestmark = pytest.mark.skipif(WHY_NOT is not None, reason=str(WHY_NOT))


def test_jobs_table_then_a_running_job_to_completed_and_its_chart(board, live_script):
    errors = []
    with browser.page() as page:
        page.on("pageerror", lambda err: errors.append(str(err)))
        page.goto(board.url)
        page.locator("#range").filter(has_text="no jobs").wait_for(timeout=15000)
        Job.create("local:qhybrid/qhybrid.cpu", str(live_script), job_name="watched",
                   hyperparameters={"steps": 30, "pause": 0.1})
        row = page.locator('tr[data-job="watched"]')  # the live table shows the new job
        row.locator("[data-state=RUNNING]").wait_for(timeout=20000)
        assert row.locator("td").nth(3).text_content() == "qhybrid.cpu"
        row.locator("a.job-link").click()
        page.wait_for_url("**/job?**")
        page.locator("#state [data-state=RUNNING]").wait_for(timeout=5000)
        page.locator("#state [data-state=COMPLETED]").wait_for(timeout=30000)
        chart = page.locator('svg[data-metric="energy"]')
        chart.wait_for(timeout=5000)
        assert chart.get_attribute("data-points") == "30"
        assert page.locator('svg[data-metric="energy"] polyline').get_attribute("data-count") == "30"
        assert page.locator('svg[data-metric="energy"] line.optimum').get_attribute("data-optimum") == "-10"
        assert page.locator('svg[data-metric="iteration_seconds"] polyline').get_attribute("data-count") == "29"
        assert '<img src=x onerror="document.title=1">' in page.locator("#log").text_content()
        assert page.locator("#log img").count() == 0 and page.title() == "qhybrid watched"
        assert "done <b>bold</b>" in page.locator("#result").text_content()
        assert page.locator("#cancel").is_hidden()
    assert errors == []
