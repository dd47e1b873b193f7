"""Reading a job's results for people: the key final metric, metric tables one row per iteration,
plots (several jobs overlaid), and jobs side by side."""
from __future__ import annotations

TIME_METRICS = ("iteration_seconds", "epoch_seconds")
HIDDEN = ("timestamp", "iteration_number", "layers")  # not panels of their own
SHORT = {"iteration_number": "iter", "iteration_seconds": "iter_s", "epoch_seconds": "epoch_s",
         "train_accuracy": "train_acc", "val_accuracy": "val_acc"}  # table headers (JSON keeps the names)
KEY_HP = ("n_nodes", "n_edges", "n_layers", "iterations", "nwires", "ndata", "epochs", "lr", "batch_size")


def result_of(job, info: dict) -> dict | None:
    """A completed job's result, None otherwise (or when it cannot be read)."""
    if info["state"] != "COMPLETED":
        return None
    try:
        return job.result()
    except Exception:  # a foreign or unreadable result: the listing still shows the job
        return None


def key_metric(job, info: dict) -> str:
    """A short cell for ``jobs list``: the answer of a built-in job, else the last metric value."""
    from qhybrid.cli.output import fmt

    if info.get("damaged"):
        return ""
    result = result_of(job, info)
    if result:
        if "best_cut" in result and "optimum_cut" in result:
            return f"cut {fmt(result['best_cut'])}/{fmt(result['optimum_cut'])}"
        if result.get("val_accuracy") is not None:
            return f"val {result['val_accuracy']:.3f}"
        if "best_value" in result and "optimum" in result:
            return f"energy {fmt(result['best_value'], 4)}/{fmt(result['optimum'], 4)}"
    cols = job.metrics()
    for name, values in cols.items():
        if name in HIDDEN or name in TIME_METRICS:
            continue
        last = [v for v in values if isinstance(v, (int, float))]
        if last:
            return f"{name} {fmt(float(last[-1]), 4)}"
    return ""


def metric_columns(job, *, metric_type: str | None = None, statistic: str = "max", rank: int = 0) -> dict:
    """The job's metrics as columns, one row per iteration when iteration numbers exist, with a
    relative time column ``t_s`` (seconds since the first row)."""
    if metric_type is None:
        probe = job.metrics(metric_type="iteration_number", statistic=statistic, rank=rank)
        metric_type = "iteration_number" if probe.get("iteration_number") else "timestamp"
    cols = job.metrics(metric_type=metric_type, statistic=statistic, rank=rank)
    stamps = cols.pop("timestamp", None)
    if stamps:
        t0 = min(t for t in stamps if t is not None)
        cols = {"t_s": [None if t is None else round(t - t0, 3) for t in stamps], **cols}
    if "iteration_number" in cols:
        cols = {"iteration_number": [None if v is None else int(v) for v in cols.pop("iteration_number")], **cols}
    return cols


def title_of(info: dict) -> str:
    """Device, instance and the key hyperparameters, for a plot's title."""
    hp = info["hyperparameters"] or {}
    keys = ", ".join(f"{k}={hp[k]}" for k in KEY_HP if k in hp)
    return f"{info['device'].split('/')[-1]} on {info['instance_type']}" + (f" — {keys}" if keys else "")


def plot(jobs: list, path: str) -> list[str]:
    """Plot the metrics of ``jobs`` overlaid to ``path`` (PNG, PDF, SVG; see ``figure``); return the panels."""
    import matplotlib.pyplot as plt

    fig = figure(jobs)
    fig.savefig(path, dpi=110)
    panels = [ax.get_ylabel() for ax in fig.axes]
    plt.close(fig)
    return panels


def figure(jobs: list):
    """The metrics of ``jobs`` overlaid, one panel per metric, as a matplotlib figure.

    Iterations on integer ticks; the first (compiling) iteration left out of time panels and
    its time noted; the known optimum drawn on energy panels; the title names device, instance
    and key hyperparameters.

    Raises:
        JobError: when the jobs logged no numeric metric.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    series, optimum, stages, xlabel, notes, infos = _plotted(jobs)
    if not series:
        from qhybrid.errors import JobError

        raise JobError(f"nothing to plot: {', '.join(j.name for j in jobs)} logged no numeric metrics")
    fig, axes = plt.subplots(len(series), 1, figsize=(8, 2.6 * len(series) + 0.8), sharex=True, squeeze=False)
    for ax, (name, lines) in zip(axes[:, 0], series.items()):
        colours = {}
        for label, xs, ys in lines:
            (line,) = ax.plot(xs, ys, marker="." if len(xs) < 60 else None, label=label)
            colours[label] = line.get_color()
        if name == "energy":
            _mark_energy(ax, optimum, stages, colours)
        ax.set_ylabel(name + (" (s)" if name in TIME_METRICS else ""))
        ax.grid(alpha=0.3)
        if len(lines) > 1 or (name == "energy" and optimum):
            ax.legend(fontsize=7, loc="best")
    axes[-1, 0].set_xlabel(xlabel)
    if xlabel == "iteration":
        axes[-1, 0].xaxis.set_major_locator(MaxNLocator(integer=True))
    heads = sorted({title_of(i) for i in infos})
    title = heads[0] if len(heads) == 1 else "\n".join(heads[:3])
    if len(jobs) == 1:
        title = f"{jobs[0].name}\n{title}"
    fig.suptitle(title, fontsize=10)
    notes = notes[:4]
    if notes:
        fig.text(0.01, 0.005, "\n".join(notes), fontsize=7, color="dimgray")
    fig.tight_layout(rect=(0, 0.022 * len(notes), 1, 1))
    return fig


def _plotted(jobs: list) -> tuple[dict, dict, dict, str, list, list]:
    """What :func:`figure` draws: ``(series, optimum, stages, xlabel, notes, infos)``: per panel its
    ``(job, xs, ys)`` lines (a time metric's first, compiling point left out and noted), each job's
    known optimum (energy panels) and depth changes, the x axis's label, the notes, each job's description."""
    series: dict[str, list] = {}  # panel -> [(label, xs, ys)]
    optimum, stages, xlabel, notes, infos = {}, {}, "iteration", [], []
    for job in jobs:
        info = job.describe()
        infos.append(info)
        cols = metric_columns(job)
        if "iteration_number" in cols:
            xs = cols["iteration_number"]
        else:
            xs, xlabel = cols.get("t_s", []), "seconds since the first metric"
        result = result_of(job, info) or {}
        for name, ys in cols.items():
            if name in HIDDEN or name in ("t_s", "iteration_number"):
                continue
            pts = [(x, y) for x, y in zip(xs, ys) if x is not None and isinstance(y, (int, float))]
            if name in TIME_METRICS and len(pts) > 1:
                notes.append(f"{job.name}: first {name.split('_')[0]} left out ({pts[0][1]:.2f} s; "
                             "it compiles the kernels on a first run)")
                pts = pts[1:]
            if pts:
                series.setdefault(name, []).append((job.name, *zip(*pts)))
        if "optimum" in result and "energy" in series:
            optimum[job.name] = result["optimum"]
        depth = cols.get("layers") or []
        stages[job.name] = [(x, int(d)) for x, d, prev in zip(xs[1:], depth[1:], depth[:-1])
                            if d is not None and prev is not None and d != prev]
    return series, optimum, stages, xlabel, notes, infos


def _mark_energy(ax, optimum: dict, stages: dict, colours: dict) -> None:
    """An energy panel's optimum (one dashed line when the jobs share it, else one each) and each
    job's depth changes (dotted, ``p=<depth>``)."""
    same = len(set(optimum.values())) == 1
    for label, value in optimum.items():
        if same and label != next(iter(optimum)):
            continue
        ax.axhline(value, color="black" if same else colours.get(label), linestyle="--", linewidth=1,
                   label=f"optimum {value:g}" + ("" if same else f" ({label})"))
    for label, changes in stages.items():
        for x, d in changes:
            ax.axvline(x, color=colours.get(label, "gray"), linestyle=":", linewidth=1, alpha=0.6)
            ax.annotate(f"p={d}", (x, 1), xycoords=("data", "axes fraction"), fontsize=7,
                        xytext=(2, -10), textcoords="offset points", color=colours.get(label, "gray"))


def _best(values: list, name: str):
    nums = [v for v in values if isinstance(v, (int, float))]
    if not nums:
        return None
    return max(nums) if "acc" in name.lower() else min(nums)


def compare(jobs: list, *, everything: bool = True) -> tuple[list[str], list[list]]:
    """Hyperparameters and final / best metrics of ``jobs`` side by side: ``(headers, rows)``;
    rows are fields, one column per job. ``everything=False`` leaves out the hyperparameters that
    are the same in all jobs (a sweep then shows what it varied)."""
    infos = [j.describe() for j in jobs]
    results = [result_of(j, i) or {} for j, i in zip(jobs, infos)]
    cols = [metric_columns(j) for j in jobs]
    rows: list[list] = [["state", *[i["state"] for i in infos]], ["device", *[i["device"].split("/")[-1] for i in infos]],
                        ["instance", *[i["instance_type"] for i in infos]]]
    hp_keys = sorted({k for i in infos for k in (i["hyperparameters"] or {})})
    for key in hp_keys:
        values = [(i["hyperparameters"] or {}).get(key, "") for i in infos]
        if everything or len(jobs) < 2 or len(set(values)) > 1:
            rows.append([f"hp {key}", *values])
    for key in ("summary", "energy", "approximation_ratio", "best_approximation_ratio", "accuracy", "iterations"):
        if any(key in r for r in results):
            rows.append([key, *[r.get(key) for r in results]])
    names = [n for c in cols for n in c if n not in HIDDEN and n not in ("t_s", "iteration_number")]
    for name in dict.fromkeys(names):
        rows.append([f"final {name}", *[next((v for v in reversed(c.get(name, [])) if v is not None), None) for c in cols]])
        if name not in TIME_METRICS:
            rows.append([f"best {name}", *[_best(c.get(name, []), name) for c in cols]])
    rows.append(["billed s", *[i["billed_seconds"] for i in infos]])
    rows.append(["cost USD", *[i["estimated_cost_usd"] for i in infos]])
    return ["", *[j.name for j in jobs]], rows
