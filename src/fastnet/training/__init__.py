"""Everything that trains: the strip loop over K trials, the algorithms, the
backends and the results.

* :mod:`~fastnet.training.loop` -- the one strip loop (Proben1's policy, for K
  trials; K = 1 is :func:`train_rprop`);
* :mod:`~fastnet.training.algorithms` -- the rules as typed objects
  (:class:`RPROP`, :class:`Backprop`);
* :mod:`~fastnet.training.serial`, :mod:`~fastnet.training.lanes`,
  :mod:`~fastnet.training.backends` -- where trials train: one network's
  workspace, vector lanes, and the hand-off between them;
* :mod:`~fastnet.training.results` -- :class:`TrainResult`, :class:`TrainResults`.
"""
from fastnet.training.algorithms import RPROP, Algorithm, Backprop
from fastnet.training.backprop import train_backprop
from fastnet.training.many import train_rprop_many
from fastnet.training.results import SetColumns, SetErrors, TrainResult, TrainResults, Traversals
from fastnet.training.rprop import train_rprop

__all__ = ["train_rprop", "train_backprop", "train_rprop_many", "TrainResult", "TrainResults",
           "Traversals", "SetErrors", "SetColumns", "Algorithm", "RPROP", "Backprop"]
