"""``Job._repr_html_``: a job in a notebook."""
from __future__ import annotations

from qhybrid.submit import Job


def test_repr_html_shows_state_and_answer(tmp_path):
    script = tmp_path / "j.py"
    script.write_text("from qhybrid.jobs import save_job_result\nsave_job_result({'summary': 'cut 3 of 3 <edges>'})\n")
    job = Job.create("local:qhybrid/qhybrid.cpu", str(script), in_process=True)
    html = job._repr_html_()
    assert job.name in html and "COMPLETED" in html and "#1a7f37" in html
    assert "cut 3 of 3 &lt;edges&gt;" in html  # escaped
    bad = tmp_path / "bad.py"
    bad.write_text("raise SystemExit(3)\n")
    failed = Job.create("local:qhybrid/qhybrid.cpu", str(bad), in_process=True)
    assert "FAILED" in failed._repr_html_() and "failure" in failed._repr_html_()
