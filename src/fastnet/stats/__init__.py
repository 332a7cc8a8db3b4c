"""Statistics for describing and comparing training runs.

After Prechelt 1994, Lawrence et al. 1997, Larsen & Hansen 1995, Hamey 1992,
Lacoste et al. 2012, Demšar 2006 and Benavoli et al. 2017.

Descriptive statistics (Lawrence et al. 1997)
    describe, segment_points
Two samples of test errors (Prechelt 1994, Proben1)
    compare_errors, cochran_cox_ttest
Classifiers and algorithms over datasets (Lacoste et al. 2012)
    prob_better, prob_better_predictions, poisson_binomial_test, sign_test,
    wilcoxon_test, pairwise_table
Many tests at once (Holm 1979; Demšar 2006)
    holm, smallest_pvalue, datasets_needed
Resampled hold-out cross-validation (Larsen & Hansen 1995)
    resampled_holdout, compare_resampled, holdout_paired_ttest
Training-time benchmarks (Hamey 1992)
    hamey_analysis
Algorithms across problems (Dolan & Moré 2002, Dodge et al. 2019, Demšar 2006, Benavoli et al. 2017)
    performance_profiles, expected_best, friedman_nemenyi, nemenyi_q,
    bayesian_signed_rank

Every function returns a frozen dataclass (SciPy-style result object); none of them
imports the compiled kernels. Pictures of these results are in :mod:`fastnet.plots`.
"""

from ._across import ExpectedBest, PerformanceProfiles, expected_best, performance_profiles
from ._bayesian_signed_rank import BayesianSignedRank, bayesian_signed_rank
from ._describe import Description, describe, segment_points
from ._hamey import AsymptoticModel, HameyResult, hamey_analysis
from ._lacoste_datasets import (
    PoissonBinomialResult,
    SignTestResult,
    WilcoxonResult,
    poisson_binomial_test,
    sign_test,
    wilcoxon_test,
)
from ._lacoste_pairwise import PairwiseTable, pairwise_table
from ._lacoste_single import prob_better, prob_better_predictions
from ._multiple import datasets_needed, holm, smallest_pvalue
from ._rank_tests import FriedmanNemenyi, friedman_nemenyi, nemenyi_q
from ._cochran_cox import CochranCoxResult, cochran_cox_ttest
from ._proben1_ttest import CleanedSample, ErrorComparison, WelchResult, compare_errors
from ._resampling import (
    GeneralizationSummary,
    PairedTTestResult,
    ResampledComparison,
    ResampledHoldoutResult,
    compare_resampled,
    holdout_paired_ttest,
    resampled_holdout,
)

__all__ = [
    # Lawrence et al.
    "describe",
    "segment_points",
    "Description",
    # Proben1
    "compare_errors",
    "cochran_cox_ttest",
    "ErrorComparison",
    "CleanedSample",
    "CochranCoxResult",
    "WelchResult",
    # Lacoste et al.
    "prob_better",
    "prob_better_predictions",
    "poisson_binomial_test",
    "sign_test",
    "wilcoxon_test",
    "pairwise_table",
    "PoissonBinomialResult",
    "SignTestResult",
    "WilcoxonResult",
    "PairwiseTable",
    # many tests
    "holm",
    "smallest_pvalue",
    "datasets_needed",
    # Larsen & Hansen
    "resampled_holdout",
    "compare_resampled",
    "holdout_paired_ttest",
    "ResampledHoldoutResult",
    "ResampledComparison",
    "GeneralizationSummary",
    "PairedTTestResult",
    # Hamey
    "hamey_analysis",
    "HameyResult",
    "AsymptoticModel",
    # across problems
    "performance_profiles",
    "expected_best",
    "friedman_nemenyi",
    "nemenyi_q",
    "bayesian_signed_rank",
    "PerformanceProfiles",
    "ExpectedBest",
    "FriedmanNemenyi",
    "BayesianSignedRank",
]
