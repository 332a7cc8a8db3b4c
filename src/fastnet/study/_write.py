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
          "median (raw)", "CPU time per trial (mean of all)")


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


def _duration(seconds):
    """A time in s, ms or µs with three significant digits ("294 µs", "5.45 ms")."""
    if seconds is None or not np.isfinite(seconds):
        return _f(seconds)
    v = float(seconds)
    if v == 0:
        return "0 s"
    if abs(v) >= 999.5:
        return f"{v:.0f} s"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6), ("ns", 1e-9)):
        if abs(v) >= scale * 0.9995 or unit == "ns":
            text = f"{v / scale:#.3g}".rstrip(".")
            return f"{text} {unit}"
    return _f(v)


def _range(lo, hi, fmt):
    return f"{fmt(lo)} to {fmt(hi)}"


def summary_rows(result):
    """One row of strings per algorithm (the columns of ``_HEADS``)."""
    rows = []
    for a in result.algorithms:
        h = a.hamey
        lo, hi = h.efficiency_range
        span = ("-" if not h.n_successes
                else f"{_range(lo, hi, _f)}{'+' if h.range_censored else ''}")
        lam = _f(h.asymptotic_success_rate, 3) + (" (capped)" if h.capped else "")
        name = a.spec + (" *" if a.best_in_grid else "")
        rows.append([name, f"{h.n_successes}/{h.n_trials}", _f(h.success_rate, 3),
                     _f(h.optimal_limit), _f(h.peak_efficiency), span, _f(h.fahlman_average),
                     lam, _f(h.corrected_mean), _f(h.corrected_median), _f(h.mean_time),
                     _f(h.median_time), _duration(float(np.mean(a.cpu_time)))])
    return rows


def _description_rows(result):
    """Lawrence's description of each algorithm's successful epochs and CPU times, with
    what its n counts."""
    rows = []
    for a in result.algorithms:
        k = a.hamey.n_trials
        for what, d, fmt in (("epochs to success", a.epochs_description, _f),
                             ("CPU time per trial", a.cpu_description, _duration)):
            if d is None:
                rows.append([a.spec, what] + ["-"] * 9)
                continue
            n = (f"{d.n} successes of {k} trials" if what.startswith("epochs")
                 else f"all {d.n} trials")
            rows.append([a.spec, what, n, fmt(d.mean), fmt(d.std), fmt(d.median),
                         _range(d.q1, d.q3, fmt), _range(d.min, d.max, fmt),
                         fmt(d.trimmed_mean), fmt(d.mad), _f(d.ks_pvalue, 3)])
    return rows


_DESC_HEADS = ("algorithm", "of", "n", "mean", "sd", "median", "quartiles", "range",
               "5% trimmed mean", "MAD", "KS p (normal)")
_LR_HEADS = ("algorithm A", "algorithm B", "median ratio A/B [95 % CI]", "log-rank z", "p",
             "p (Holm)", "verdict")


def _verdict(t, alpha):
    if not np.isfinite(t.pvalue):
        return "no successes to compare"
    if t.better is None:
        return f"no significant difference at {alpha:g} (Holm)"
    return f"{t.better} trains faster (Holm p = {_f(t.pvalue_holm, 2)})"


def _ratio(t):
    if not np.isfinite(t.median_ratio):
        return "-"
    lo, hi = t.median_ratio_interval
    ci = f" [{lo:.3g}, {hi:.3g}]" if np.isfinite(lo) and np.isfinite(hi) else ""
    return f"{t.median_ratio:.3g}{ci}" + (" (bound)" if t.median_bound else "")


def _logrank_rows(result):
    return [[t.a, t.b, _ratio(t), _f(t.statistic, 3), _f(t.pvalue, 2), _f(t.pvalue_holm, 2),
             _verdict(t, result.alpha)] for t in result.logrank]


_LR_NOTE = ("Log-rank tests (scipy.stats.logrank) of the epochs to success, failures censored "
            "at T; p two-sided; p (Holm): adjusted over all pairs by Holm's (1979) procedure, "
            "which the verdict uses. Median ratio A/B: the median epochs to success of A over "
            "B's, over all trials with failures counted at T (below 1: A faster), with its 95 % "
            "percentile bootstrap interval; (bound): at "
            "most half of an algorithm's trials succeeded, so its median is T or averages "
            "with it.")


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
          "lambda, corrected mean and median: the asymptotic model's. "
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
                  _md_table(_LR_HEADS, _logrank_rows(result)), "", _LR_NOTE, ""]
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
                         "pvalue": num(t.pvalue), "pvalue_holm": num(t.pvalue_holm),
                         "median_ratio": num(t.median_ratio), "median_bound": t.median_bound,
                         "median_ratio_interval": [num(x) for x in t.median_ratio_interval],
                         "better": t.better} for t in result.logrank]}


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
    ax1.set_title("training graph: successes by t", fontsize="medium")
    ax2.set_title("efficiency E(t), dot at T_E", fontsize="medium")
    ax1.figure.subplots_adjust(top=1 - 0.4 / 3.6)  # room for the panel titles
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
                               _LR_NOTE,
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
