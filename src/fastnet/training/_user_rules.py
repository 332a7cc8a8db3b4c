"""A user's rule on one network: its epochs in the single-network workspace, one call of
its ``step`` (or of its ``step_many`` for k = 1) per epoch, and what it returns, checked."""
import numpy as np

__all__ = ["UserState", "user_epochs", "stepped"]


class UserState:
    """One trial of a user rule: its own state, made at the first epoch."""

    __slots__ = ("user", "started")

    def __init__(self):
        self.user, self.started = None, False


def stepped(returned, algorithm, shape, method="step"):
    """(new weights, new state) of what ``algorithm.step`` (or ``method``) returned, checked."""
    name = f"{type(algorithm).__name__}.{method}"
    if not (isinstance(returned, tuple) and len(returned) == 2):
        raise TypeError(f"{name} must return (new_weights, new_state), "
                        f"got {type(returned).__name__}.")
    new = np.asarray(returned[0])
    if new.dtype.kind == "c":                  # (NumPy's cast would drop the imaginary parts)
        raise TypeError(f"{name} must return real weights, got dtype {new.dtype}.")
    if new.shape != shape:
        raise ValueError(f"{name} must return weights of shape {shape}, got shape "
                         f"{new.shape}.")
    return new, returned[1]


def user_epochs(rule, ws, state, sse_out, many=False):
    """``len(sse_out)`` epochs of one trial of a user's ``rule`` in the workspace ``ws``
    (`Algorithm.epochs`): E and its gradient at each epoch's starting weights from the
    kernels, then one call of ``rule.step`` (``many``: of ``rule.step_many`` with the one
    trial as a row, k = 1). Returns the kernel status (k > 0: E not finite in epoch k)."""
    w, g = ws.w, ws.g
    if not state.started:
        state.user = rule.init_state_many(w[None].copy()) if many else rule.init_state(w.copy())
        state.started = True
    shape = (1,) + w.shape if many else w.shape
    for j in range(sse_out.shape[0]):
        sse_out[j] = error = ws.gradient()
        if not np.isfinite(error):
            return j + 1
        if many:
            new, state.user = stepped(rule.step_many(w[None].copy(), g[None].copy(),
                                                     np.array([float(error)]), state.user),
                                      rule, shape, "step_many")
            w[:] = new[0]
        else:
            w[:], state.user = stepped(rule.step(w.copy(), g.copy(), float(error), state.user),
                                       rule, shape)
    return 0
