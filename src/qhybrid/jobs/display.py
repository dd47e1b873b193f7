"""A job as HTML for notebooks (``Job._repr_html_``): state, device, instance, bill, the answer."""
from __future__ import annotations

from html import escape

COLOURS = {"COMPLETED": "#1a7f37", "FAILED": "#cf222e", "CANCELLED": "#9a6700", "RUNNING": "#0969da",
           "QUEUED": "#57606a"}


def job_html(job) -> str:
    """A small table of the job's facts, the state coloured, the result's summary when it has one."""
    info = job.describe()
    rows = [("device", info["device"]), ("instance", f"{info['instance_count']} x {info['instance_type']}"),
            ("created", info["created"]), ("billed", f"{info['billed_seconds']} s" if info["billed_seconds"] else ""),
            ("cost", f"${info['estimated_cost_usd']:.6f}" if info["estimated_cost_usd"] is not None else "unknown")]
    if info["state"] == "COMPLETED":
        try:
            summary = job.result().get("summary")
        except Exception:  # an unreadable result must not break the notebook's display
            summary = None
        if summary:
            rows.append(("answer", summary))
    if info["failure_reason"]:
        rows.append(("failure", info["failure_reason"]))
    colour = COLOURS.get(info["state"], "#57606a")
    body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>{escape(str(v))}</td></tr>"
                   for k, v in rows)
    return (f"<div><b>{escape(job.name)}</b> <span style='color:{colour};font-weight:bold'>{escape(info['state'])}"
            f"</span><table>{body}</table></div>")
