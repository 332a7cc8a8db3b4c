"""Everything that trains: the strip loop over K trials, the algorithms, the
backends and the results.

* ``_loop`` -- the one strip loop (Proben1's policy, for K trials; K = 1 is
  :func:`train_rprop`);
* ``_algorithms`` -- the rules as typed objects (:class:`RPROP`, :class:`Backprop`);
* ``_serial``, ``_lanes``, ``_backends`` -- where trials train: one network's
  workspace, vector lanes, and the hand-off between them;
* ``_results`` -- :class:`TrainResult`, :class:`TrainResults` (columns over trials);
* ``_trainer`` -- :class:`Trainer`: one network's training continued call by call;
* ``_train``, ``_train_many``, ``_rprop``, ``_backprop``, ``_many`` -- the entry points; :func:`draw_trials` says
  how :func:`train_rprop_many` draws K trials from one seed;
* ``_many_trials`` -- many trials of one topology, any algorithm (under :func:`train_many`,
  and under :func:`train_rprop_many`, RPROP's arguments over it).
"""
from fastnet.training._algorithms import RPROP, Algorithm, Backprop
from fastnet.training._backprop import train_backprop
from fastnet.training._checks import MAX_TARGET
from fastnet.training._many import draw_trials, train_rprop_many
from fastnet.training._results import SetColumns, SetErrors, TrainResult, TrainResults, Traversals
from fastnet.training._rprop import train_rprop
from fastnet.training._train import train
from fastnet.training._trainer import Trainer, TrainerRun
from fastnet.training._train_many import train_many

__all__ = ["train", "train_many", "train_rprop", "train_backprop", "train_rprop_many", "TrainResult", "TrainResults",
           "Traversals", "SetErrors", "SetColumns", "Algorithm", "RPROP", "Backprop",
           "draw_trials", "MAX_TARGET", "Trainer", "TrainerRun"]
