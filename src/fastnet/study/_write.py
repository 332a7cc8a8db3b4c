"""A study's outputs: one self-contained HTML page, every trial as CSV and JSON, and a
Markdown summary (also what ``fastnet study`` prints)."""
from __future__ import annotations

import math
import re
from pathlib import Path

import numpy as np

from fastnet.study._data import _json_text, _trials_csv

__all__ = ["write_study", "summary_markdown", "summary_rows", "OUTPUTS"]

#: The files `write_study` writes into a study's folder.
OUTPUTS = ("summary.md", "trials.csv", "study.json", "study.html")

_HEADS = ("algorithm", "successes", "rate at T", "T_E", "peak e", "E >= e/2 over",
          "Fahlman average", "lambda", "corrected mean", "corrected median", "mean (raw)",
          "median (raw)")

#: Why a value is missing, as its table cell says it (and `_MISSING_NOTE` explains).
NO_SUCCESS = "no successes"
NO_MODEL = {"too_few_successes": "few successes", "degenerate_fit": "degenerate fit",
            "fit_failed": "fit failed", "not_requested": "not fitted"}
NO_MEAN = "none: k ≤ 1"
TOO_FEW = "n < 3"
CONSTANT = "all equal"
UNKNOWN_COST = "cost unknown"

_MISSING_NOTE = (
    "A value that does not exist says why (in two words at most, explained here): 'no "
    "successes' (no trial succeeded before T); 'few successes' (too few after every "
    "candidate T0 to fit Hamey's asymptotic model), 'degenerate fit' (its fit predicts "
    "nothing beyond T), 'fit failed': no lambda, corrected mean or median; "
    f"'{NO_MEAN}' (the fitted tail is so heavy, Hamey's exponent k at most 1, that the "
    "model's mean successful time does not exist); "
    f"'{TOO_FEW}' (Lawrence's description needs at least three values); "
    f"'{CONSTANT}' (no spread: no normality test); "
    f"'{UNKNOWN_COST}' (a diverged trial trained alone leaves no traversal count).")


def _f(v, digits=4, why="-"):
    """A number with `digits` significant digits and no exponent; `why` in place of a
    value that is None, NaN or infinite (say why it is missing)."""
    if v is None:
        return why
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    v = float(v)
    if not math.isfinite(v):
        return why
    if v == 0:
        return "0"
    return np.format_float_positional(v, precision=digits, unique=False, fractional=False,
                                      trim="-")


#: Below this a p-value is written as a bound (a double underflows to 0 below ~5e-324).
P_FLOOR = 1e-300


def _p(v, why="-"):
    """A p-value: two significant digits, an exponent for the tiny ones, "< 1e-300" for
    one that underflowed."""
    if v is None or not math.isfinite(v):
        return why
    return f"< {P_FLOOR:.0e}" if 0 <= v < P_FLOOR else f"{float(v):.2g}"


def _duration(seconds, why="-"):
    """A time in s, ms or µs with three significant digits ("294 µs", "5.45 ms"); `why`
    in place of a value that is None, NaN or infinite."""
    if seconds is None or not np.isfinite(seconds):
        return why
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
    """One row of strings per algorithm (the columns of ``_HEADS``); a value that does
    not exist says why (``NO_SUCCESS``, ``NO_MODEL``, ``NO_MEAN``), never inf or nan."""
    rows = []
    for a in result.algorithms:
        h = a.hamey
        none = NO_SUCCESS if not h.n_successes else "-"
        lo, hi = h.efficiency_range
        span = (NO_SUCCESS if not h.n_successes
                else f"{_range(lo, hi, _f)}{'+' if h.range_censored else ''}")
        model = (NO_SUCCESS if not h.n_successes
                 else NO_MODEL.get(h.status, "no model"))
        lam = _f(h.asymptotic_success_rate, 3, model)
        if h.capped and math.isfinite(h.asymptotic_success_rate):
            lam += " (capped)"
        mean_why = NO_MEAN if math.isinf(h.corrected_mean) and h.model is not None else model
        name = a.spec + (" *" if a.best_in_grid else "")
        rows.append([name, f"{h.n_successes}/{h.n_trials}", _f(h.success_rate, 3),
                     _f(h.optimal_limit, why=none), _f(h.peak_efficiency, why=none), span,
                     _f(h.fahlman_average, why=none), lam,
                     _f(h.corrected_mean, why=mean_why), _f(h.corrected_median, why=model),
                     _f(h.mean_time, why=none), _f(h.median_time, why=none)])
    return rows


_COST_HEADS = ("algorithm", "traversals per epoch", "other flops per epoch",
               "CPU time per epoch", "CPU time per trial (mean of all)")


def _cost_rows(result):
    """What an epoch of each algorithm costs: connection traversals (mean, with the range
    where it varies), floating-point operations outside them, CPU time."""
    rows = []
    for a in result.algorithms:
        per = a.traversals / np.where(a.epochs > 0, a.epochs, np.nan)
        per = per[np.isfinite(per)]
        mean = a.cost_per_epoch("traversals")
        trav = _f(mean, 4, UNKNOWN_COST)
        if per.size and per.min() != per.max():
            trav += f" ({_range(per.min(), per.max(), lambda v: _f(v, 3))})"
        rows.append([a.spec, trav, _f(a.cost_per_epoch("flops"), 4, UNKNOWN_COST),
                     _duration(a.cost_per_epoch("CPU time"), UNKNOWN_COST),
                     _duration(float(np.mean(a.cpu_time)))])
    return rows


_COST_NOTE = ("Traversals per epoch: training connection traversals (Prechelt 1994: forward, "
              "backward and weight update; the success checks left out, which cost the same "
              "per epoch for every algorithm) over the epochs trained, the mean over all "
              "trials, with the range of the trials' own where they differ. Other flops: "
              "floating-point operations outside the traversals (Levenberg-Marquardt's "
              "normal equations). CPU time: the batch's, shared by the epochs each trial "
              "trained; it measures this implementation on this machine and its load "
              "(per-weight rules, and SCG, train many trials side by side in vector lanes, "
              "the others one trial at a time), where traversals count the algorithm's work.")


def _unit_label(unit):
    return {"epochs": "epochs", "traversals": "traversals", "CPU time": "CPU time"}[unit]


def _unit_fmt(unit):
    """Formatter of a time to success in `unit`."""
    if unit == "CPU time":
        return _duration
    return lambda v, why="-": _f(v, 4, why)


def _cost_description(a, unit):
    """Lawrence's description of an algorithm's successful trials' times in `unit`."""
    from fastnet.stats import describe

    x = a.costs(unit)[a.success]
    return describe(x, lilliefors=False) if x.size >= 3 and np.isfinite(x).all() else None


#: Values that differ by at most this fraction of the largest of them are equal to
#: rounding (the last bits of a double, far below any clock's or count's resolution): their
#: spread (sd, MAD) is shown as 0, never as a residue of the arithmetic such as "3.40e-12 ns".
EQUAL_TO_ROUNDING = 1e-12


def _equal_to_rounding(d):
    """Whether the values a Description describes are equal to rounding."""
    return d.max - d.min <= EQUAL_TO_ROUNDING * max(abs(d.min), abs(d.max))


def _description_rows(result):
    """Lawrence's description of each algorithm's successful epochs (and times to
    success in the verdicts' unit, where that is not epochs) and CPU times, with what
    its n counts; a description that does not exist says why."""
    unit = result.cost_unit
    rows = []
    for a in result.algorithms:
        k, s = a.hamey.n_trials, a.hamey.n_successes
        kinds = [("epochs to success", a.epochs_description, _f)]
        if unit != "epochs":
            kinds.append((f"{_unit_label(unit)} to success", _cost_description(a, unit),
                          _unit_fmt(unit)))
        kinds.append(("CPU time per trial", a.cpu_description, _duration))
        for what, d, fmt in kinds:
            success = not what.startswith("CPU time per")
            n = f"{_n(s, 'success')} of {k} trials" if success else f"all {k} trials"
            if d is None:
                why = TOO_FEW if not success or s < 3 else UNKNOWN_COST
                rows.append([a.spec, what, n] + [why] * 8)
                continue
            equal = _equal_to_rounding(d)
            sd, mad = (0.0, 0.0) if equal else (d.std, d.mad)
            rows.append([a.spec, what, n, fmt(d.mean), fmt(sd), fmt(d.median),
                         _range(d.q1, d.q3, fmt), _range(d.min, d.max, fmt),
                         fmt(d.trimmed_mean), fmt(mad),
                         CONSTANT if equal or d.std == 0 else _p(d.ks_pvalue)])
    return rows


_DESC_HEADS = ("algorithm", "of", "n", "mean", "sd", "median", "quartiles", "range",
               "5% trimmed mean", "MAD", "KS p (normal)")
_LR_HEADS = ("algorithm A", "algorithm B", "verdict", "median ratio A/B [95 % CI]", "log-rank z",
             "p", "p (Holm)")


_FEWER = {"epochs": "in fewer epochs", "traversals": "in fewer traversals",
          "CPU time": "in less CPU time"}


def _verdict(t, alpha):
    """The verdict of one pair, naming its unit ("scg succeeds in fewer traversals");
    where the success curves cross, who leads on each side first, then what the log-rank
    test and the medians each say."""
    if not np.isfinite(t.pvalue):
        return "not tested"
    p = _p(t.pvalue_holm)
    holm = f"Holm p {p if p[0] == '<' else '= ' + p}"
    if t.better is None:
        logrank = f"no significant difference in {t.unit} at {alpha:g} (Holm)"
    else:
        logrank = f"{t.better} succeeds {_FEWER[t.unit]} ({holm})"
    if not np.isfinite(t.curves_cross):
        return logrank
    after = t.b if t.ahead_before == t.a else t.a
    median = (t.a if t.median_ratio < 1 else t.b) if np.isfinite(t.median_ratio) else None
    cross = _f(t.curves_cross, 3) if t.unit != "CPU time" else _duration(t.curves_cross)
    text = (f"no single winner: the success curves cross near {cross} {_unit_label(t.unit)}; "
            f"{t.ahead_before} has more successes before, {after} after. Log-rank (early "
            "times weigh most): "
            + (f"{t.better} ({holm})" if t.better is not None else "no significant difference"))
    if median is not None and t.median_ratio != 1:
        text += f"; median time to success: {median}" + (" (a bound)" if t.median_bound else "")
    return text


def _why_untested(t, result):
    """Why a pair has no test: neither succeeded, or a cost is unknown."""
    spec = {a.spec: a for a in result.algorithms}
    if not (spec[t.a].success.any() or spec[t.b].success.any()):
        return NO_SUCCESS
    return UNKNOWN_COST


def _ratio(t, why="-"):
    if not np.isfinite(t.median_ratio):
        return why
    lo, hi = t.median_ratio_interval
    ci = f" [{lo:.3g}, {hi:.3g}]" if np.isfinite(lo) and np.isfinite(hi) else ""
    return f"{t.median_ratio:.3g}{ci}" + (" (bound)" if t.median_bound else "")


def _logrank_rows(result):
    rows = []
    for t in result.logrank:
        why = _why_untested(t, result)
        verdict = (_verdict(t, result.alpha) if np.isfinite(t.pvalue)
                   else ("no successes to compare" if why == NO_SUCCESS
                         else "a cost is unknown: not tested"))
        rows.append([t.a, t.b, verdict, _ratio(t, why), _f(t.statistic, 3, why),
                     _p(t.pvalue, why), _p(t.pvalue_holm, why)])
    return rows


def _lr_note(result):
    unit = _unit_label(result.cost_unit)
    return (f"Log-rank tests (scipy.stats.logrank) of the times to success in {unit}, "
            f"failures censored at the cost of T epochs; p two-sided; p (Holm): adjusted "
            "over all pairs by Holm's (1979) procedure, which the verdict uses. Median ratio "
            f"A/B: the median {unit} to success of A over B's, over all trials with failures "
            "counted at the cost of T epochs (below 1: A faster), with its 95 % percentile "
            "bootstrap interval; (bound): at most half of an algorithm's trials succeeded, so "
            "its median is T or averages with it. The two answer different questions: the "
            "log-rank test, which algorithm's trials succeed sooner among those still running "
            "(each time weighted by the trials still running: early times weigh most); the "
            "median ratio, how long the typical trial takes. They agree where one algorithm's "
            "success curve stays above the other's; where the curves cross (one leads by more "
            "than three standard errors before a time, the other after), the verdict says so "
            "and who leads on each side. " + _verdict_unit(result))


def _verdict_lines(result):
    """Each pair's verdict in a sentence ("A vs B: ..."), for the head of the page."""
    return [f"{row[0]} vs {row[1]}: {row[2]}" for row in _logrank_rows(result)]


def _verdict_unit(result):
    """The sentence saying which unit the verdicts count in, and why."""
    return f"The verdicts count {_unit_label(result.cost_unit)}: {result.cost_reason}"


def _setup_pairs(result):
    s = result.study
    return [("task", result.task_name), ("network", "-".join(map(str, result.layer_sizes))
                                         + f" ({s.hidden_activation} hidden, "
                                         f"{s.output_activation} outputs, "
                                         + ("shortcuts" if s.shortcut else "no shortcuts") + ")"),
            ("trials per algorithm", s.trials), ("epoch limit T", s.limit),
            ("success", s.success), ("initial weights", f"uniform in +-{s.init_scale:g}, the "
                                     f"same K for every algorithm (seed {s.seed})"),
            ("algorithms", ", ".join(s.algorithms)),
            ("arithmetic", s.dtype if s.dtype == "float64" else
             f"{s.dtype} (passes and weights; error sums accumulated in float64)")] + [
                (f"rules file {r['file']}", _rules_text(r)) for r in result.rules]


def _rules_text(record):
    """What a rules file gave, as the set-up tables show it: its rules and its SHA-256."""
    return f"{', '.join(record['algorithms'])} (SHA-256 {record['sha256']})"


def _md_table(heads, rows):
    esc = lambda c: str(c).replace("|", "\\|")  # noqa: E731
    out = ["| " + " | ".join(map(esc, heads)) + " |", "|" + "---|" * len(heads)]
    out += ["| " + " | ".join(map(esc, r)) + " |" for r in rows]
    return "\n".join(out)


_NOTES = ("Hamey (1992): a trial is successful at the first epoch after which the criterion "
          "holds, a failure if not before T. T_E: the epoch limit of highest efficiency e "
          "(successes per 1000 epochs when trials restart at T_E); Fahlman average 1000/e; "
          "lambda, corrected mean and median: the asymptotic model's. "
          "* marks the highest peak efficiency of a parameter grid. Hamey's measures "
          "count epochs: compare them across algorithms only where epochs cost the same "
          "(see the cost of an epoch).")


def summary_markdown(result):
    """The study's summary as Markdown text (what ``fastnet study`` prints).

    Parameters
    ----------
    result : StudyResult

    Returns
    -------
    str
        The set-up, Hamey's measures per algorithm, the cost of an epoch, Lawrence's
        description of the times to success and CPU times, and the log-rank tests in
        the study's cost unit, as Markdown tables. No cell shows inf or nan: a value
        that does not exist says why.
    """
    lines = [f"# fastnet study: {result.task_name}", ""]
    if result.logrank:
        lines += ["## Verdicts", ""] + [f"- {line}" for line in _verdict_lines(result)] + [""]
    lines += [_md_table(("set-up", ""), [[k, str(v)] for k, v in _setup_pairs(result)]), "",
             "## Hamey's measures", "", _md_table(_HEADS, summary_rows(result)), "",
             _NOTES, "", "## Cost of an epoch", "", _md_table(_COST_HEADS, _cost_rows(result)),
             "", _COST_NOTE, "", _verdict_unit(result), "",
             f"## {_description_title(result)} (Lawrence et al. 1997)", "",
             _md_table(_DESC_HEADS, _description_rows(result)), ""]
    if result.logrank:
        lines += [f"## Which is faster in {_unit_label(result.cost_unit)}: log-rank tests", "",
                  _md_table(_LR_HEADS, _logrank_rows(result)), "", _lr_note(result), ""]
    lines += [_MISSING_NOTE, ""]
    return "\n".join(lines)


def _description_title(result):
    if result.cost_unit in ("epochs", "CPU time"):
        return "Epochs and CPU time"
    return f"Epochs, {_unit_label(result.cost_unit)} and CPU time"


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


#: The study page's own rules: its wide tables wrap inside their cells (a number stays
#: whole: see `_glued`) rather than scroll sideways on a 1000 px screen.
_CSS = """
#hamey-table td, #lawrence-table td, #cost-table td { white-space: normal; }
#hamey-table tbody th, #lawrence-table tbody th, #cost-table tbody th {
  overflow-wrap: normal; min-width: 5.5em; }
"""

_GLUE = re.compile(r"(?<=[\d<≤:]) (?=[\dµmns<≤k]|to\b)|(?<=\b[nk]) (?=[<≤])")


def _glued(rows):
    """Rows whose numbers keep their units ("171 µs"), comparisons ("n < 3", "k ≤ 1")
    and ranges' ends on one line: those spaces become no-break spaces; a range wraps
    only after its "to"."""
    return [[c if not isinstance(c, str) else _GLUE.sub("\u00a0", c) for c in row]
            for row in rows]


#: Fewest successes an extended box-whiskers plot draws (eight segments need four values).
MIN_DRAWN = 4


def _times_to_success(result, unit):
    """{algorithm: its successful trials' times in `unit`} for the algorithms with at
    least `MIN_DRAWN` successes (of known cost), and [(algorithm, why not drawn)]."""
    drawn, left = {}, []
    for a in result.algorithms:
        x = a.costs(unit)[a.success]
        if a.hamey.n_successes < MIN_DRAWN:
            left.append((a.spec, f"{_n(a.hamey.n_successes, 'success')}"))
        elif not np.isfinite(x).all():
            left.append((a.spec, UNKNOWN_COST))
        else:
            drawn[a.spec] = x
    return drawn, left


def _n(k, word):
    return f"{k} {word}{'' if k == 1 else ('es' if word.endswith('s') else 's')}"


def _distributions(result, plots):
    """Lawrence et al. (1997)'s extended box-whiskers of each algorithm's times to
    success: in epochs and, where epochs cost differently, in the verdicts' unit (PNG
    bytes, or None with nothing to draw), and a sentence on what is not drawn."""
    units = ["epochs"] + ([result.cost_unit] if result.cost_unit != "epochs" else [])
    samples = [_times_to_success(result, u) for u in units]
    drawn, left = samples[0]
    if not drawn:
        return None, left, ""
    n = len(drawn)
    width = min(max(1.4 + 0.9 * n, 4.4), 9.0 if len(units) == 1 else 6.0)
    height = 3.6
    axes = plots.panels(len(units), width=width, height=height)
    # names too long for a box's room (three lines of what fits) are numbered instead,
    # and the caption says which is which
    chars = (width - 1.2) / n * 72 / (0.62 * 10)
    numbered = max(len(name) for name in drawn) > 3 * chars
    for ax, unit, (data, _) in zip(axes, units, samples):
        if not data:
            ax.set_axis_off()
            continue
        names = list(drawn)
        labels = [str(names.index(k) + 1) if numbered else k for k in data]
        plots.extended_box_whiskers(list(data.values()), labels=labels, mean_sd=False,
                                    key=False, ax=ax,
                                    ylabel=f"{_unit_label(unit)} to success"
                                    + (" [s]" if unit == "CPU time" else ""))
        if all(float(np.min(x)) > 0 for x in data.values()):
            ax.set_yscale("log")
        ax.set_title(f"{_unit_label(unit)} to success", fontsize="medium")
    axes[0].figure.subplots_adjust(top=1 - 0.4 / height)  # room for the panel titles
    key = ("" if not numbered else " Boxes: " + "; ".join(
        f"{k} {name}" for k, name in enumerate(drawn, 1)) + ".")
    return plots.to_png(axes, dpi=100), left, key


def study_html(result, *, pictures=True):
    """The study's self-contained HTML page."""
    from fastnet._version import __version__
    from fastnet.report._html import _e, _figure, _kv_table, _page, _plots, _simple_table

    s = result.study
    title = f"fastnet study: {result.task_name}"
    body = [f"<h1>{title}</h1>",
            f'<p class="sub">{len(s.algorithms)} algorithms x {s.trials} trials, epoch limit '
            f"{s.limit}, success {s.success}.</p>"]
    if result.logrank:
        body += ['<h2 id="verdicts">Verdicts</h2>', "<ul>"]
        body += [f"<li>{_e(line)}</li>" for line in _verdict_lines(result)]
        body += ["</ul>", f'<p class="cap">In {_e(_unit_label(result.cost_unit))}; the tests '
                 'and what each number answers: <a href="#logrank">below</a>.</p>']
    body += ['<h2 id="hamey">Hamey\'s measures</h2>',
             _simple_table("hamey-table", _HEADS, _glued(summary_rows(result)), _NOTES)]
    if pictures:
        plots = _plots()
        png = _graphs(result, plots)
        body.append(_figure(png, "training and efficiency graphs of every algorithm",
                            "Left: Hamey's training graph (fraction of trials successful by "
                            "t); right: efficiency E(t), the dot at T_E. Log epoch axes."))
    body += ['<h2 id="cost">Cost of an epoch</h2>',
             _simple_table("cost-table", _COST_HEADS, _glued(_cost_rows(result)), _COST_NOTE),
             f'<p class="cap">{_e(_verdict_unit(result))}</p>']
    if result.logrank:
        body += [f'<h2 id="logrank">Which is faster in {_unit_label(result.cost_unit)}: '
                 "log-rank tests</h2>",
                 _simple_table("logrank-table", _LR_HEADS, _logrank_rows(result),
                               _lr_note(result), numeric_from=3)]
    body.append(f'<h2 id="lawrence">{_e(_description_title(result))} '
                "(Lawrence et al. 1997)</h2>")
    if pictures:
        png, left, key = _distributions(result, plots)
        not_drawn = ("" if not left else " Not drawn (an extended box-whiskers plot needs "
                     f"{MIN_DRAWN} successes): "
                     + "; ".join(f"{name} ({why})" for name, why in left) + ".")
        unit = _unit_label(result.cost_unit)
        if png is None:
            body.append(f'<p class="cap">No distribution to draw.{_e(not_drawn)}</p>')
        else:
            body.append(_figure(
                png, "distributions of the times to success (extended box-whiskers)",
                "Extended box-whiskers (Lawrence et al. 1997) of each algorithm's successful "
                "trials' times to success"
                + ("" if result.cost_unit == "epochs"
                   else f": left in epochs (each algorithm's own), right in {unit}, the "
                   "verdicts' unit (comparable across algorithms)")
                + ". Eight segments of one eighth of the successes each: whiskers to the "
                "minimum and maximum, boxes between the octiles (the two outer ones "
                "narrower), orange bar at the median; log axis. Failures are not drawn: "
                "the successes column of Hamey's table counts them." + key + not_drawn))
    body += [_simple_table("lawrence-table", _DESC_HEADS, _glued(_description_rows(result)),
                           numeric_from=2),
             f'<p class="cap">{_e(_MISSING_NOTE)}</p>',
             '<h2 id="setup">Set-up</h2>', _kv_table("setup-table", _setup_pairs(result))]
    return _page(title, "\n".join(body), __version__, css=_CSS)


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
             "study.json": _json_text(result),
             "study.html": study_html(result, pictures=pictures)}
    for name, text in files.items():
        atomic_write(out / name, [text.encode("utf-8")])
