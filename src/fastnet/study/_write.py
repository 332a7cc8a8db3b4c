"""A study's outputs: one self-contained HTML page, every trial as CSV and JSON, and a
Markdown summary (also what ``fastnet study`` prints)."""
from __future__ import annotations

import csv
import io
import json
import math
from pathlib import Path

import numpy as np

__all__ = ["write_study", "summary_markdown", "summary_rows", "OUTPUTS"]

#: The files `write_study` writes into a study's folder.
OUTPUTS = ("summary.md", "trials.csv", "study.json", "study.html")

_HEADS = ("algorithm", "successes", "rate at T", "T_E", "peak e", "E >= e/2 over",
          "Fahlman average", "lambda", "corrected mean", "corrected median", "mean (raw)",
          "median (raw)", "CPU s/trial")


def _f(v, digits=4):
    if v is None:
        return "-"
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if math.isnan(v):
        return "-"
    if math.isinf(v):
        return "inf"
    return f"{v:.{digits}g}"


def summary_rows(result):
    """One row of strings per algorithm (the columns of ``_HEADS``)."""
    rows = []
    for a in result.algorithms:
        h = a.hamey
        lo, hi = h.efficiency_range
        span = "-" if not h.n_successes else f"{_f(lo)}-{_f(hi)}{'+' if h.range_censored else ''}"
        lam = _f(h.asymptotic_success_rate, 3) + (" (capped)" if h.capped else "")
        name = a.spec + (" *" if a.best_in_grid else "")
        rows.append([name, f"{h.n_successes}/{h.n_trials}", _f(h.success_rate, 3),
                     _f(h.optimal_limit), _f(h.peak_efficiency), span, _f(h.fahlman_average),
                     lam, _f(h.corrected_mean), _f(h.corrected_median), _f(h.mean_time),
                     _f(h.median_time), _f(float(np.mean(a.cpu_time)), 3)])
    return rows


def _description_rows(result):
    """Lawrence's description of each algorithm's successful epochs and CPU times."""
    rows = []
    for a in result.algorithms:
        for what, d in (("epochs to success", a.epochs_description),
                        ("CPU s per trial", a.cpu_description)):
            if d is None:
                rows.append([a.spec, what] + ["-"] * 9)
                continue
            rows.append([a.spec, what, str(d.n), _f(d.mean), _f(d.std), _f(d.median),
                         f"{_f(d.q1)}-{_f(d.q3)}", f"{_f(d.min)}-{_f(d.max)}",
                         _f(d.trimmed_mean), _f(d.mad), _f(d.ks_pvalue, 3)])
    return rows


_DESC_HEADS = ("algorithm", "of", "n", "mean", "sd", "median", "quartiles", "range",
               "5% trimmed mean", "MAD", "KS p (normal)")
_LR_HEADS = ("algorithm A", "algorithm B", "log-rank z", "p (two-sided)", "verdict")


def _verdict(t, alpha):
    if not np.isfinite(t.pvalue):
        return "no successes to compare"
    if t.better is None:
        return f"no significant difference at {alpha:g}"
    return f"{t.better} trains faster (one-sided p = {_f(t.pvalue / 2, 3)})"


def _logrank_rows(result):
    return [[t.a, t.b, _f(t.statistic, 3), _f(t.pvalue, 3), _verdict(t, result.alpha)]
            for t in result.logrank]


def _setup_pairs(result):
    s = result.study
    return [("task", result.task_name), ("network", "-".join(map(str, result.layer_sizes))
                                         + f" ({s.hidden_activation} hidden, "
                                         f"{s.output_activation} outputs, "
                                         + ("shortcuts" if s.shortcut else "no shortcuts") + ")"),
            ("trials per algorithm", s.trials), ("epoch limit T", s.limit),
            ("success", s.success), ("initial weights", f"uniform in +-{s.init_scale:g}, the "
                                     f"same K for every algorithm (seed {s.seed})"),
            ("algorithms", ", ".join(s.algorithms))]


def _md_table(heads, rows):
    esc = lambda c: str(c).replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(map(esc, heads)) + " |", "|" + "---|" * len(heads)]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(out)


_NOTES = ("Hamey (1992): a trial is successful at the first epoch after which the criterion "
          "holds, a failure if not before T. T_E: the epoch limit of highest efficiency e "
          "(successes per 1000 epochs when trials restart at T_E); Fahlman average 1000/e; "
          "lambda, corrected mean and median: the asymptotic model's. Log-rank test "
          "(scipy.stats.logrank) of the success times, failures censored at T. "
          "* marks the highest peak efficiency of a parameter grid.")


def summary_markdown(result):
    """The study's summary as Markdown text (what ``fastnet study`` prints).

    Parameters
    ----------
    result : StudyResult

    Returns
    -------
    str
        The set-up, Hamey's measures per algorithm, Lawrence's description of the
        epochs and CPU times, and the log-rank tests, as Markdown tables.
    """
    lines = [f"# fastnet study: {result.task_name}", "",
             _md_table(("set-up", ""), [[k, str(v)] for k, v in _setup_pairs(result)]), "",
             "## Hamey's measures", "", _md_table(_HEADS, summary_rows(result)), "",
             "## Epochs and CPU time (Lawrence et al. 1997)", "",
             _md_table(_DESC_HEADS, _description_rows(result)), ""]
    if result.logrank:
        lines += ["## Which is faster: log-rank tests", "",
                  _md_table(_LR_HEADS, _logrank_rows(result)), ""]
    lines += [_NOTES, ""]
    return "\n".join(lines)


def _trials_csv(result):
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["algorithm", "trial", "epochs", "success", "time_to_success", "cpu_time",
                "diverged"])
    for a in result.algorithms:
        for i in range(a.epochs.size):
            ok = bool(a.success[i])
            w.writerow([a.spec, i, int(a.epochs[i]), int(ok), int(a.epochs[i]) if ok else "",
                        repr(float(a.cpu_time[i])), int(a.diverged[i])])
    return buf.getvalue()


def _json(result):
    def num(v):
        v = float(v)
        return v if math.isfinite(v) else None

    algos = []
    for a in result.algorithms:
        h = a.hamey
        algos.append({
            "algorithm": a.spec, "best_in_grid": a.best_in_grid,
            "hamey": {"n_trials": h.n_trials, "n_successes": h.n_successes,
                      "success_rate": num(h.success_rate), "optimal_limit": num(h.optimal_limit),
                      "peak_efficiency": num(h.peak_efficiency),
                      "efficiency_range": [num(x) for x in h.efficiency_range],
                      "range_censored": bool(h.range_censored),
                      "fahlman_average": num(h.fahlman_average), "model_status": h.status,
                      "asymptotic_success_rate": num(h.asymptotic_success_rate),
                      "corrected_mean": num(h.corrected_mean),
                      "corrected_median": num(h.corrected_median),
                      "mean_time": num(h.mean_time), "median_time": num(h.median_time)},
            "epochs_description": None if a.epochs_description is None else {
                k: num(v) for k, v in a.epochs_description.as_dict().items()},
            "cpu_description": None if a.cpu_description is None else {
                k: num(v) for k, v in a.cpu_description.as_dict().items()},
            "trials": {"epochs": a.epochs.tolist(), "success": a.success.astype(int).tolist(),
                       "cpu_time": a.cpu_time.tolist(), "diverged": a.diverged.astype(int).tolist()}})
    return {"study": result.study.identity(result.data_sha256), "task": result.task_name,
            "layer_sizes": list(result.layer_sizes), "algorithms": algos,
            "logrank": [{"a": t.a, "b": t.b, "statistic": num(t.statistic),
                         "pvalue": num(t.pvalue), "better": t.better} for t in result.logrank]}


def _graphs(result, plots):
    """Training and efficiency graphs of all algorithms on shared axes (PNG bytes).

    The key has a panel of its own on the right: with a grid's many cells, a key inside
    the graphs would hide the curves. Colours repeat after ten algorithms, with another
    line style."""
    ax1, ax2, key = plots.panels(3, width=4.4, height=3.6)
    for k, a in enumerate(result.algorithms):
        h, color, ls = a.hamey, f"C{k % 10}", ("-", "--", ":")[k // 10 % 3]
        ax1.step(h.grid, h.training_graph, where="post", color=color, ls=ls, label=a.spec,
                 gid="training_graph")
        ax2.plot(h.grid, h.efficiency, color=color, ls=ls, label=a.spec, gid="efficiency")
        if h.n_successes:
            ax2.plot([h.optimal_limit], [h.peak_efficiency], "o", color=color, ms=4,
                     gid="optimal_limit")
    ax1.set_xlabel("epoch limit t")
    ax1.set_ylabel("fraction of trials successful")
    ax1.set_ylim(0, 1.05)
    ax2.set_xlabel("epoch limit t")
    ax2.set_ylabel("efficiency (successes per 1000 epochs)")
    for ax in (ax1, ax2):
        ax.set_xscale("log")
    key.axis("off")
    key.legend(*ax1.get_legend_handles_labels(), loc="center left", bbox_to_anchor=(-0.12, 0.5),
               fontsize="small", frameon=False)
    return plots.to_png((ax1, ax2, key), dpi=100)


def study_html(result, *, pictures=True):
    """The study's self-contained HTML page."""
    from fastnet._version import __version__
    from fastnet.report._html import _figure, _kv_table, _page, _plots, _simple_table

    s = result.study
    title = f"fastnet study: {result.task_name}"
    body = [f"<h1>{title}</h1>",
            f'<p class="sub">{len(s.algorithms)} algorithms x {s.trials} trials, epoch limit '
            f"{s.limit}, success {s.success}.</p>",
            '<h2 id="hamey">Hamey\'s measures</h2>',
            _simple_table("hamey-table", _HEADS, summary_rows(result), _NOTES)]
    if pictures:
        png = _graphs(result, _plots())
        body.append(_figure(png, "training and efficiency graphs of every algorithm",
                            "Left: Hamey's training graph (fraction of trials successful by "
                            "t); right: efficiency E(t), the dot at T_E. Log epoch axes."))
    if result.logrank:
        body += ['<h2 id="logrank">Which is faster: log-rank tests</h2>',
                 _simple_table("logrank-table", _LR_HEADS, _logrank_rows(result),
                               "Success times, failures censored at T (scipy.stats.logrank).",
                               numeric_from=2)]
    body += ['<h2 id="lawrence">Epochs and CPU time (Lawrence et al. 1997)</h2>',
             _simple_table("lawrence-table", _DESC_HEADS, _description_rows(result),
                           numeric_from=2),
             '<h2 id="setup">Set-up</h2>', _kv_table("setup-table", _setup_pairs(result))]
    return _page(title, "\n".join(body), __version__)


def write_study(result, out, *, pictures=True):
    """Write a study's outputs into a directory, each file replaced atomically.

    Parameters
    ----------
    result : StudyResult
    out : str or os.PathLike
        An existing directory; it receives ``study.html`` (one self-contained page:
        the tables and the graphs of all algorithms on shared axes), ``trials.csv``
        (every trial), ``study.json`` (the set-up, every measure and every trial) and
        ``summary.md`` (`summary_markdown`).
    pictures : bool, default True
        Draw the graphs into the page (needs matplotlib).

    Raises
    ------
    ImportError
        If ``pictures`` and matplotlib is not installed.
    OSError
        If ``out`` is not a writable directory.
    """
    from fastnet._files import atomic_write

    out = Path(out)
    files = {"summary.md": summary_markdown(result), "trials.csv": _trials_csv(result),
             "study.json": json.dumps(_json(result), indent=1) + "\n",
             "study.html": study_html(result, pictures=pictures)}
    for name, text in files.items():
        atomic_write(out / name, [text.encode("utf-8")])
