"""The dataset object shared by Proben1 files and generated tasks."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Mapping, NamedTuple

import numpy as np

from fastnet.datasets._format import Proben1Header
from fastnet.datasets._registry import PARTITIONINGS, Architecture, Proben1Problem

__all__ = ["Split", "Dataset"]


class Split(NamedTuple):
    """One set of examples: inputs and targets. Unpacks as ``X, Y = split``.

    Attributes
    ----------
    X : numpy.ndarray
        Inputs, C-contiguous float64 of shape ``(n_examples, n_in)``.
    Y : numpy.ndarray
        Targets, C-contiguous float64 of shape ``(n_examples, n_out)``.
    """

    X: np.ndarray
    Y: np.ndarray

    @property
    def n_examples(self) -> int:
        """Number of examples (rows)."""
        return self.X.shape[0]


def _empty_mapping() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, eq=False)
class Dataset:
    """A benchmark task split into training, validation and test sets.

    Returned by `load_proben1` and by the ``make_*`` task generators. Equality is
    identity (the arrays make value equality ambiguous).

    Attributes
    ----------
    name : str
        Proben1 name in its preferred form (``"cancer1"`` for partitioning a,
        ``"glass1d"`` otherwise) or a generated task's name (``"xor"``,
        ``"encoder-10-5-10"``, ``"teacher-K5"``, ``"mackey-glass"``).
    kind : {"classification", "approximation"}
        From the problem registry, never from a file header.
    n_in, n_out : int
        Numbers of inputs and outputs.
    train : Split
        Training set ``(X, Y)``.
    val : Split or None
        Validation set, or ``None`` if the task has none (XOR, encoder, and
        generated tasks with ``n_val=0``).
    test : Split or None
        Test set, or ``None`` if the task has none.
    architecture : Architecture or None
        For Proben1, the pivot architecture of this permutation (Table 7;
        ``None`` for mushroom, which has none). For generated tasks, the network the
        task is defined with (XOR 2-2-1, n-m-n encoder, the 5-5-1 teacher, Lawrence's
        6-5-1 Mackey-Glass MLP), without shortcut connections.
    problem : Proben1Problem or None
        Registry facts of the Proben1 problem (set sizes, pivots of all three
        permutations); ``None`` for generated tasks.
    permutation : int or None
        Proben1 permutation 1, 2 or 3; ``None`` for generated tasks.
    partitioning : str or None
        Proben1 partitioning ``"a"``..``"f"``; ``None`` for generated tasks.
    path : pathlib.Path or None
        The file the data came from; ``None`` for generated tasks.
    header : Proben1Header or None
        The file's header; ``None`` for generated tasks.
    sha256 : str or None
        SHA-256 of the file (hex); ``None`` for generated tasks.
    matches_published : bool or None
        Whether the file is byte for byte the one of the published Proben1
        archive (its SHA-256 is known); ``None`` for generated tasks and files
        fastnet has no checksum for.
    params : Mapping
        Generation parameters of a generated task (seed, sizes, and for the
        teacher task the teacher's weights); empty for Proben1.
    """

    name: str
    kind: str
    n_in: int
    n_out: int
    train: Split = field(repr=False)
    val: Split | None = field(repr=False)
    test: Split | None = field(repr=False)
    architecture: Architecture | None = field(default=None, repr=False)
    problem: Proben1Problem | None = field(default=None, repr=False)
    permutation: int | None = None
    partitioning: str | None = None
    path: Path | None = field(default=None, repr=False)
    header: Proben1Header | None = field(default=None, repr=False)
    params: Mapping[str, Any] = field(default_factory=_empty_mapping, repr=False)
    sha256: str | None = field(default=None, repr=False)
    matches_published: bool | None = field(default=None, repr=False)

    @property
    def n_train(self) -> int:
        """Number of training examples."""
        return self.train.n_examples

    @property
    def n_val(self) -> int:
        """Number of validation examples (0 if there is no validation set)."""
        return 0 if self.val is None else self.val.n_examples

    @property
    def n_test(self) -> int:
        """Number of test examples (0 if there is no test set)."""
        return 0 if self.test is None else self.test.n_examples

    def training_set(self, with_validation: bool = False) -> Split:
        """The examples to train on.

        Parameters
        ----------
        with_validation : bool, default=False
            ``False``: the training set. ``True``: training and validation set
            together, for runs without a validation set (Proben1: "the training
            set consists of the first X+Y examples"). The two sets are concatenated
            in the order they occupy in the file, so for partitioning a this is
            exactly the first X+Y rows; for b (train, test, valid) it is the
            training rows followed by the validation rows. Without a validation set
            it is the training set.

        Returns
        -------
        Split
            ``(X, Y)``, C-contiguous float64. A new array when the sets are joined,
            otherwise the training arrays themselves.
        """
        if not with_validation or self.val is None:
            return self.train
        order = PARTITIONINGS[self.partitioning or "a"]
        parts = [self.train, self.val]
        if order.index("val") < order.index("train"):
            parts.reverse()
        return Split(np.concatenate([p.X for p in parts]), np.concatenate([p.Y for p in parts]))

    def __repr__(self) -> str:
        return (f"Dataset(name={self.name!r}, kind={self.kind!r}, n_in={self.n_in}, "
                f"n_out={self.n_out}, n_train={self.n_train}, n_val={self.n_val}, "
                f"n_test={self.n_test})")
