"""The networks being trained now, and the one check that refuses what would disturb them.

A training holds its networks from its start to its return (`training_of`). While it
does, a second training of any of them is refused, from another thread or from the
same one (a training callback starting another training of its network), and so is
writing their weights through the public writers of :class:`fastnet.MLP`
(`refuse_writes`): the trainer holds the weights in its own buffers and would continue
from, ignore or overwrite what was written, and its result would record an undisturbed
set-up. fastnet's own trainers write a network's weights directly, inside the block.
Predicting (reading) stays allowed.
"""
from __future__ import annotations

import threading

from fastnet.exceptions import TrainingInProgressError

__all__ = ["training_of", "refuse_writes"]

# The trainings under way: their training_of -> (thread identity, ids of its networks).
_IN_TRAINING = {}
_IN_TRAINING_GUARD = threading.Lock()


def _holder(ids):
    """The thread identity of a training holding one of ``ids`` and the ids it holds
    (call under the guard), or None."""
    for owner, held in _IN_TRAINING.values():
        if not ids.isdisjoint(held):
            return owner, held
    return None


def _by(owner):
    return "this thread (a training callback?)" if owner == threading.get_ident() \
        else "another thread"


class training_of:                                       # noqa: N801 (used as a function)
    """``with training_of(nets, name):`` holds ``nets`` (a list of MLP, the argument
    ``name``) as being trained until the block ends, and refuses a network that a
    training already holds (TrainingInProgressError), whichever thread holds it: one
    training does not nest another of the same network (fastnet's trainers never do;
    a training callback that starts one is refused). A check per call, in C-level set
    operations for the thousands of networks of a timing study (a class, not a
    generator: a few microseconds per call)."""

    __slots__ = ("nets", "name")

    def __init__(self, nets, name):
        self.nets, self.name = nets, name

    def __enter__(self):
        me, ids = threading.get_ident(), frozenset(map(id, self.nets))
        with _IN_TRAINING_GUARD:
            holder = _holder(ids)
            if holder is not None:
                owner, held = holder
                i = next(i for i, net in enumerate(self.nets) if id(net) in held)
                which = f"`{self.name}[{i}]`" if self.name == "nets" else f"`{self.name}`"
                raise TrainingInProgressError(
                    f"{which} is being trained by {_by(owner)}; one network takes one "
                    "trainer at a time. Train a copy (net.copy()) or wait for that "
                    "training to return.")
            _IN_TRAINING[self] = (me, ids)

    def __exit__(self, *exc):
        with _IN_TRAINING_GUARD:
            del _IN_TRAINING[self]


def refuse_writes(net, method):
    """Raise TrainingInProgressError if ``net`` is being trained (by any thread, the
    training's own callbacks included): ``method`` (e.g. ``"set_weights"``) would
    write its weights under the trainer."""
    if not _IN_TRAINING:                               # (the common case: no lock taken)
        return
    with _IN_TRAINING_GUARD:
        holder = _holder(frozenset((id(net),)))
    if holder is not None:
        raise TrainingInProgressError(
            f"net.{method}() would write the weights of a network being trained by "
            f"{_by(holder[0])}; the training would continue from, ignore or overwrite them "
            "and its result would not say so. Write them after training returns, or into "
            "a copy (net.copy()); a callback stops training by returning True.")
