"""Facts about the 15 Proben1 problems: sizes, kinds and pivot architectures."""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

__all__ = [
    "Architecture",
    "Proben1Problem",
    "PROBEN1_PROBLEMS",
    "PARTITIONINGS",
]

#: Order of the sets in the file for each partitioning suffix (Proben1 section 2.3.2).
#: Set sizes follow the roles: the training set always has ``training_examples`` rows,
#: and so on, wherever it sits in the file.
PARTITIONINGS: Mapping[str, tuple[str, str, str]] = MappingProxyType({
    "a": ("train", "val", "test"),
    "b": ("train", "test", "val"),
    "c": ("val", "train", "test"),
    "d": ("val", "test", "train"),
    "e": ("test", "val", "train"),
    "f": ("test", "train", "val"),
})


def _count_connections(n_in: int, hidden: tuple[int, ...], n_out: int, shortcut: bool = True) -> int:
    """Count the connections of a fully connected feed-forward net, biases included.

    A private twin of `fastnet.count_connections` (which takes layer sizes), kept
    here so that the datasets package needs no compiled code.

    Parameters
    ----------
    n_in : int
        Number of inputs.
    hidden : tuple of int
        Hidden layer sizes, first hidden layer first; ``()`` for a linear network.
    n_out : int
        Number of outputs.
    shortcut : bool, default=True
        ``True``: every layer feeds every later layer (Proben1's "all feed-forward
        connections including shortcut connections"). ``False``: adjacent layers only.

    Returns
    -------
    int
        The number of connections C, one bias per hidden and output node included.

    Examples
    --------
    >>> _count_connections(9, (4, 2), 2)        # cancer1 pivot "4+2 l", Proben1 Table 7
    100
    >>> _count_connections(2, (2,), 1, shortcut=False)   # 2-2-1 XOR net
    9
    """
    sizes = [n_in, *hidden, n_out]
    biases = sum(sizes[1:])
    if shortcut:
        pairs = sum(sizes[i] * sizes[j] for i in range(len(sizes)) for j in range(i + 1, len(sizes)))
    else:
        pairs = sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    return pairs + biases


@dataclass(frozen=True)
class Architecture:
    """A feed-forward architecture, as listed in Proben1's Table 7.

    Attributes
    ----------
    n_in : int
        Number of inputs.
    hidden : tuple of int
        Hidden layer sizes, e.g. ``(16, 8)``; ``(32,)`` is Proben1's "32+0".
    n_out : int
        Number of outputs.
    output : {"l", "s"}
        Output activation: ``"l"`` linear, ``"s"`` sigmoid.
    shortcut : bool
        Whether every layer feeds every later layer (all Proben1 pivots do).
    connections : int
        Number of connections C, biases included. For Proben1 pivots this is the
        value published in Table 7.

    See Also
    --------
    fastnet.count_connections : computes C from the layer sizes.
    """

    n_in: int
    hidden: tuple[int, ...]
    n_out: int
    output: str
    shortcut: bool
    connections: int

    @property
    def layer_sizes(self) -> tuple[int, ...]:
        """Units per layer, inputs first, biases excluded, e.g. ``(9, 4, 2, 2)``."""
        return (self.n_in, *self.hidden, self.n_out)

    @property
    def spec(self) -> str:
        """Proben1 notation of the hidden layers and output kind, e.g. ``"16+8 l"``.

        One hidden layer of 32 is written ``"32+0 l"`` and no hidden layer
        ``"0+0 l"``, as in Proben1. The notation does not say whether shortcut
        connections are present (see `shortcut`).
        """
        hidden = list(self.hidden) + [0] * max(0, 2 - len(self.hidden))
        return "+".join(str(h) for h in hidden) + " " + self.output


@dataclass(frozen=True)
class Proben1Problem:
    """Facts about one Proben1 problem (three permutations share them).

    Attributes
    ----------
    name : str
        Problem name, e.g. ``"cancer"``.
    kind : {"classification", "approximation"}
        ``"approximation"`` for building, flare, hearta and heartac (no
        classification error is defined); ``"classification"`` otherwise.
    n_in, n_out : int
        Numbers of inputs and outputs.
    n_examples : int
        Examples in each file.
    n_train, n_val, n_test : int
        Set sizes of the partitionings (header values: 50 %, 25 %, 25 %).
    pivots : tuple of Architecture or None
        Pivot architectures of permutations 1, 2 and 3 (Proben1 Table 7, all with
        shortcut connections). ``None`` for mushroom: Table 7 lists its 42 networks
        for the other 14 problems only.
    directory : str
        Subdirectory of the Proben1 distribution that holds the files
        (``"heart"`` for heart, hearta, heartac and heartc).
    description : str
        One line on what the problem is.
    """

    name: str
    kind: str
    n_in: int
    n_out: int
    n_examples: int
    n_train: int
    n_val: int
    n_test: int
    pivots: tuple[Architecture, Architecture, Architecture] | None
    directory: str
    description: str

    def pivot(self, permutation: int) -> Architecture | None:
        """Pivot architecture of `permutation` (1, 2 or 3); ``None`` for mushroom.

        Raises
        ------
        ValueError
            If `permutation` is not 1, 2 or 3.
        """
        if permutation not in (1, 2, 3) or isinstance(permutation, bool):
            raise ValueError(f"`permutation` must be 1, 2 or 3, got {permutation!r}.")
        return None if self.pivots is None else self.pivots[permutation - 1]

    @property
    def file_names(self) -> tuple[str, str, str]:
        """Names of the three data files, e.g. ``("cancer1.dt", "cancer2.dt", "cancer3.dt")``."""
        return tuple(f"{self.name}{k}.dt" for k in (1, 2, 3))


def _pivot(n_in, n_out, spec, connections):
    sizes, output = spec.split()
    hidden = tuple(int(h) for h in sizes.split("+") if int(h) > 0)
    return Architecture(n_in=n_in, hidden=hidden, n_out=n_out, output=output,
                        shortcut=True, connections=connections)


# name: kind, n_in, n_out, (n_train, n_val, n_test), directory, pivots 1|2|3, description
_TABLE = {
    "building": ("approximation", 14, 3, (2104, 1052, 1052), "building",
                 (("16+0 l", 333), ("16+8 l", 605), ("16+8 s", 605)),
                 "energy consumption of a building (electricity, hot and cold water) per hour"),
    "cancer": ("classification", 9, 2, (350, 175, 174), "cancer",
               (("4+2 l", 100), ("8+4 l", 196), ("16+8 l", 436)),
               "breast cancer diagnosis (Wisconsin), benign or malignant"),
    "card": ("classification", 51, 2, (345, 173, 172), "card",
             (("32+0 l", 1832), ("24+0 l", 1400), ("16+8 l", 1528)),
             "credit card application approval"),
    "diabetes": ("classification", 8, 2, (384, 192, 192), "diabetes",
                 (("32+0 l", 370), ("16+8 l", 410), ("32+0 l", 370)),
                 "diabetes diagnosis of Pima Indians"),
    "flare": ("approximation", 24, 3, (533, 267, 266), "flare",
              (("32+0 s", 971), ("32+0 s", 971), ("24+0 s", 747)),
              "number of solar flares of three sizes in 24 hours"),
    "gene": ("classification", 120, 3, (1588, 794, 793), "gene",
             (("4+2 l", 1115), ("4+2 s", 1115), ("4+2 s", 1115)),
             "splice junction type (intron/exon boundaries) in DNA sequences"),
    "glass": ("classification", 9, 6, (107, 54, 53), "glass",
              (("16+8 l", 572), ("16+8 l", 572), ("16+8 l", 572)),
              "type of glass from its chemical analysis (6 classes)"),
    "heart": ("classification", 35, 2, (460, 230, 230), "heart",
              (("32+0 l", 1288), ("32+0 l", 1288), ("32+0 l", 1288)),
              "heart disease diagnosis, four hospitals"),
    "hearta": ("approximation", 35, 1, (460, 230, 230), "heart",
               (("32+0 l", 1220), ("16+0 l", 628), ("32+0 l", 1220)),
               "heart disease, analog output, four hospitals"),
    "heartac": ("approximation", 35, 1, (152, 76, 75), "heart",
                (("2+0 l", 110), ("8+4 l", 512), ("16+8 s", 1052)),
                "heart disease, analog output, Cleveland data only"),
    "heartc": ("classification", 35, 2, (152, 76, 75), "heart",
               (("16+8 l", 1112), ("8+8 l", 744), ("32+0 l", 1288)),
               "heart disease diagnosis, Cleveland data only"),
    "horse": ("classification", 58, 3, (182, 91, 91), "horse",
              (("16+8 l", 1793), ("16+8 l", 1793), ("32+0 l", 2161)),
              "fate of a horse with colic: survives, dies or is euthanized"),
    "mushroom": ("classification", 125, 2, (4062, 2031, 2031), "mushroom",
                 None,  # Table 7 lists no pivots for mushroom
                 "edible or poisonous mushroom"),
    "soybean": ("classification", 82, 19, (342, 171, 170), "soybean",
                (("16+8 l", 4153), ("32+0 l", 4841), ("16+0 l", 3209)),
                "soybean disease (19 classes)"),
    "thyroid": ("classification", 21, 3, (3600, 1800, 1800), "thyroid",
                (("16+8 l", 794), ("8+4 l", 398), ("16+8 l", 794)),
                "thyroid function: normal, hyper- or hypofunction"),
}

#: Registry of the 15 Proben1 problems, ``name -> Proben1Problem``, in Proben1's
#: alphabetical order. Read-only.
PROBEN1_PROBLEMS: Mapping[str, Proben1Problem] = MappingProxyType({
    name: Proben1Problem(
        name=name, kind=kind, n_in=n_in, n_out=n_out, n_examples=sum(sizes),
        n_train=sizes[0], n_val=sizes[1], n_test=sizes[2],
        pivots=None if pivots is None else tuple(_pivot(n_in, n_out, s, c) for s, c in pivots),
        directory=directory, description=description,
    )
    for name, (kind, n_in, n_out, sizes, directory, pivots, description) in _TABLE.items()
})
