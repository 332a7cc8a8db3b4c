"""Reports and comparisons from experiment result files (Prechelt 1994, sections 5-6; the statistics of fastnet.stats).

`summarize` turns a result file into Proben1's table columns per problem and
network (training, validation and test squared error percentage with mean and
(n-1) standard deviation, test classification error, GL at the end, total and
relevant epochs), plus the correlation of validation and test error, the 'best'
run chosen by *validation* error, and the median, quartiles, minimum and maximum
of the test error. A `Report` prints as text in Proben1's layout and exports to
Markdown, CSV, LaTeX, a pandas DataFrame and a self-contained HTML page with
pictures of every row's runs (`Report.to_html`; also `Comparison.to_html`; the
pictures are drawn by `fastnet.plots`).

`compare` puts several result files (or networks) side by side: Proben1's
log-error t-tests per problem (`fastnet.stats.compare_errors`), the sign and
Wilcoxon tests over problems, and, when the files hold per-example predictions,
Lacoste's Poisson binomial test (`fastnet.stats.pairwise_table`).

`timing_summary` collects the cost of the runs: traversals, CPU seconds and
traversals per CPU second, with the machine description.
"""
from fastnet.report._compare import Comparison
from fastnet.report._compare_build import compare
from fastnet.report._render import MEASURES
from fastnet.report._summary import (
    EXCLUDE_RULES, Report, ReportRow, TimingRow, TimingSummary, summarize, timing_summary,
)

__all__ = [
    "Comparison",
    "EXCLUDE_RULES",
    "MEASURES",
    "Report",
    "ReportRow",
    "TimingRow",
    "TimingSummary",
    "compare",
    "summarize",
    "timing_summary",
]
