"""What a job's supervisor records of its output (jobs/joboutput.py): every metric in order, visible
while the job runs, every log line in order, whatever bytes the script prints."""
from __future__ import annotations

from jobkit import CPU, wait_for

from qhybrid import Job
from qhybrid.jobs import contract, metrics


def test_every_metric_of_a_fast_printing_job_is_recorded_in_order(write_script):
    n = 20_000
    script = write_script("many.py", f"""
        from qhybrid.jobs import log_metric
        for i in range({n}):
            log_metric("loss", 1.0 / (i + 1), iteration_number=i)
            if i % 5000 == 0:
                print("progress", i)
    """)
    job = Job.create(CPU, script).wait(timeout=120)
    assert job.state() == "COMPLETED"
    rows = metrics.read_rows(job.folder / contract.METRICS_FILE)
    assert [row["iteration_number"] for row in rows] == [float(i) for i in range(n)]
    assert [row["loss"] for row in rows] == [1.0 / (i + 1) for i in range(n)]
    assert all(set(row) == {"timestamp", "loss", "iteration_number"} for row in rows)
    printed = [line for line in job.logs().splitlines() if line.startswith(("Metrics - ", "progress"))]
    assert [line.split(";")[1:] if line.startswith("Metrics") else line for line in printed] == [
        part for i in range(n) for part in
        ([[f" loss={1.0 / (i + 1)}", f" iteration_number={i}", ""]] + ([f"progress {i}"] if i % 5000 == 0 else []))
    ]


def test_metrics_are_visible_while_the_job_runs(write_script):
    script = write_script("slow.py", """
        import time
        from qhybrid.jobs import log_metric
        for i in range(3):
            log_metric("loss", float(i), iteration_number=i)
        print("no newline yet", end="", flush=True)
        time.sleep(600)
    """)
    job = Job.create(CPU, script)
    seen = wait_for(lambda: job.metrics(metric_type="iteration_number").get("loss"), timeout=30)
    assert seen == [0.0, 1.0, 2.0] and job.state() == "RUNNING"
    assert job.cancel() == "CANCELLED"
    assert "no newline yet" in job.logs()  # the partial line read before the cancel is kept


def test_a_last_line_without_a_newline_and_undecodable_bytes_are_recorded(write_script):
    script = write_script("bytes.py", r"""
        import sys
        out = sys.stdout.buffer
        out.write(b"caf\xe9 \xff\xfe Metrics - timestamp=1; \xce\xbboss=2.5; iteration_number=0;\n")
        out.write(b"Metrics - timestamp=2; \xce\xbboss=1.5; iteration_number=1;")
        out.flush()
    """)
    job = Job.create(CPU, script).wait(timeout=60)
    assert job.state() == "COMPLETED"
    assert job.metrics(metric_type="iteration_number")["λoss"] == [2.5, 1.5]
    log = job.logs()
    assert "caf\ufffd \ufffd\ufffd Metrics - timestamp=1;" in log
    assert "Metrics - timestamp=2; λoss=1.5; iteration_number=1;\n" in log
