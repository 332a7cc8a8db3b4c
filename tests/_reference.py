"""Plain-NumPy oracle: forward pass, gradient and RPROP/backprop, written for clarity.

It works on the per-layer-pair dicts of ``MLP.get_params()`` (W[(i, j)] of shape
(n_i, n_j), b[j]) and so does not share the kernels' flat layout; gradients are
mapped to the flat order only through ``MLP.set_params``.
"""
import numpy as np

ACTIVATIONS = {
    "linear": (lambda x: x, lambda x: np.ones_like(x)),
    "proben1": (lambda x: x / (1.0 + np.abs(x)), lambda x: 1.0 / (1.0 + np.abs(x)) ** 2),
    "logistic": (lambda x: 1.0 / (1.0 + np.exp(-x)),
                 lambda x: np.exp(-x) / (1.0 + np.exp(-x)) ** 2),
    "tanh": (np.tanh, lambda x: 1.0 - np.tanh(x) ** 2),
    "relu": (lambda x: np.maximum(x, 0.0), lambda x: (x > 0).astype(float)),
    # (outputs only; its Jacobian couples the units, so no elementwise derivative)
    "softmax": (lambda x: np.exp(x - x.max(axis=1, keepdims=True))
                / np.exp(x - x.max(axis=1, keepdims=True)).sum(axis=1, keepdims=True), None),
}


def _act(net, j):
    name = net.output_activation if j == net.n_layers else net.hidden_activation
    return ACTIVATIONS[name]


def forward(net, W, b, X):
    """Activations and net inputs of every layer (dicts keyed by layer number)."""
    acts, nets = {0: np.asarray(X, dtype=float)}, {}
    for j in range(1, net.n_layers + 1):
        z = np.tile(b[j], (acts[0].shape[0], 1))
        for i in range(j):
            if (i, j) in W:
                z = z + acts[i] @ W[(i, j)]
        nets[j] = z
        acts[j] = _act(net, j)[0](z)
    return acts, nets


def predict(net, X):
    W, b = net.get_params()
    return forward(net, W, b, X)[0][net.n_layers]


def sse(net, X, T):
    return float(np.sum((predict(net, X) - T) ** 2))


def backward(net, W, acts, nets, delta_out):
    """Deltas of every layer (dict) from the output layer's deltas ``delta_out``."""
    L = net.n_layers
    delta = {L: delta_out}
    for j in range(L - 1, 0, -1):
        back = np.zeros_like(acts[j])
        for k in range(j + 1, L + 1):
            if (j, k) in W:
                back += delta[k] @ W[(j, k)].T
        delta[j] = back * _act(net, j)[1](nets[j])
    return delta


def gradient(net, X, T):
    """(flat gradient of sum (y - t)^2, SSE) at the network's weights."""
    W, b = net.get_params()
    acts, nets = forward(net, W, b, X)
    L = net.n_layers
    delta = backward(net, W, acts, nets, 2.0 * (acts[L] - T) * _act(net, L)[1](nets[L]))
    gW = {(i, j): acts[i].T @ delta[j] for (i, j) in W}
    gb = {j: delta[j].sum(axis=0) for j in b}
    flat = net.copy().set_params(gW, gb).weights.copy()
    return flat, float(np.sum((acts[L] - T) ** 2))


def jacobian(net, X):
    """d o_pk / dw of shape (N * n_out, C), rows example-major then output: one
    backward pass per output k, output deltas e_k * f'(net), per-example outer products."""
    W, b = net.get_params()
    acts, nets = forward(net, W, b, X)
    L, N = net.n_layers, acts[0].shape[0]
    # Flat position of every parameter: the weights of a copy set to 0, 1, ..., C-1.
    W_pos, b_pos = net.copy().set_weights(np.arange(net.n_connections)).get_params()
    J = np.zeros((N, net.n_out, net.n_connections))
    for k in range(net.n_out):
        out = np.zeros_like(acts[L])
        out[:, k] = _act(net, L)[1](nets[L])[:, k]
        delta = backward(net, W, acts, nets, out)
        for (i, j), pos in W_pos.items():
            J[:, k, pos.astype(int)] = acts[i][:, :, None] * delta[j][:, None, :]
        for j, pos in b_pos.items():
            J[:, k, pos.astype(int)] = delta[j]
    return J.reshape(N * net.n_out, net.n_connections)


class Rprop:
    """RPROP state and update of SPEC §3.1, one weight vector, vectorised with masks."""

    def __init__(self, variant, step0, eta_plus=1.2, eta_minus=0.5, step_min=0.0, step_max=50.0):
        self.variant = variant
        self.step = np.array(step0, dtype=float)
        self.g_prev = np.zeros_like(self.step)
        self.dw_prev = np.zeros_like(self.step)
        self.eta_plus, self.eta_minus = eta_plus, eta_minus
        self.step_min, self.step_max = step_min, step_max
        self.last_error = np.inf

    def update(self, w, g, error):
        g = g.copy()
        prod = self.g_prev * g
        up, down, zero = prod > 0, prod < 0, prod == 0
        self.step[up] = np.minimum(self.step[up] * self.eta_plus, self.step_max)
        self.step[down] = np.maximum(self.step[down] * self.eta_minus, self.step_min)
        move = up | zero
        new_dw = self.dw_prev.copy()
        new_g_prev = g.copy()
        if self.variant == "rprop+":
            w[down] -= self.dw_prev[down]
            new_dw[down] = -self.dw_prev[down]
            new_g_prev[down] = 0.0
        elif self.variant == "rprop-":
            move = move | down
        elif self.variant == "irprop-":
            new_dw[down] = 0.0
            new_g_prev[down] = 0.0
        elif self.variant == "irprop+":
            if error > self.last_error:
                w[down] -= self.dw_prev[down]
            new_dw[down] = 0.0
            new_g_prev[down] = 0.0
        else:
            raise ValueError(self.variant)
        dw = -np.sign(g) * self.step
        w[move] += dw[move]
        new_dw[move] = dw[move]
        self.dw_prev = new_dw
        self.g_prev = new_g_prev
        self.last_error = error
        return w


def train_rprop(net, X, T, variant, epochs, step0, **params):
    """Train a copy of net; return (per-epoch SSE before each update, final weights)."""
    net = net.copy()
    opt = Rprop(variant, step0, **params)
    errors = []
    for _ in range(epochs):
        g, e = gradient(net, X, T)
        errors.append(e)
        w = net.weights.copy()
        net.set_weights(opt.update(w, g, e))
    return np.array(errors), net.weights.copy()


def train_backprop(net, X, T, epochs, lr, momentum, *, online=False, orders=None, decay=False):
    net = net.copy()
    dw_prev = np.zeros(net.n_connections)
    errors = []
    for t in range(epochs):
        rate = lr * (1 - t / epochs) if decay else lr
        if not online:
            g, e = gradient(net, X, T)
            dw = -rate * g + momentum * dw_prev
            net.set_weights(net.weights + dw)
            dw_prev = dw
            errors.append(e)
        else:
            total = 0.0
            for p in orders[t]:
                g, e = gradient(net, X[p:p + 1], T[p:p + 1])
                total += e
                dw = -rate * g + momentum * dw_prev
                net.set_weights(net.weights + dw)
                dw_prev = dw
            errors.append(total)
    return np.array(errors), net.weights.copy()


def _error_at_numpy(net, w, X, T):
    return sse(net.copy().set_weights(w), X, T)


def _gradient_at_numpy(net, w, X, T):
    return gradient(net.copy().set_weights(w), X, T)


def _dot(a, b):
    """a . b term by term in index order, each product rounded alone: the order
    fastnet's SCG sums in (its lanes kernel and its class alike), on every CPU (``a @ b``
    goes to BLAS, whose summation order depends on the CPU)."""
    total = 0.0
    for x, y in zip(a.tolist(), b.tolist()):
        total += x * y
    return total


def train_scg(net, X, T, epochs, sigma=1e-4, lambda1=1e-6, kernels=False):
    """Scaled conjugate gradient (Moller 1993), written out step by step.

    Returns (per-epoch E at each iteration's start, final weights, log) where log
    counts the gradients, the error evaluations, the failed reductions (Delta < 0)
    and the iterations whose curvature was not positive (delta <= 0). ``kernels``:
    E and g from fastnet.value_and_grad instead of this module's NumPy passes (the
    probe's difference quotient amplifies their rounding differences by 1/sigma_k)."""
    w = net.weights.copy()
    C = w.size
    if kernels:
        from fastnet import value_and_grad

        def _gradient_at(net, w, X, T):
            E, g = value_and_grad(net.copy().set_weights(w), X, T)
            return g, E

        def _error_at(net, w, X, T):
            return net.copy().set_weights(w).sum_squared_error(X, T)
    else:
        _gradient_at, _error_at = _gradient_at_numpy, _error_at_numpy
    g, E = _gradient_at(net, w, X, T)
    log = {"gradients": 1, "probes": 0, "errors": 0, "failed": 0, "not_positive": 0,
           "lambda_after_failure": []}
    r = -g
    p = r.copy()
    lam, lam_bar, success, k = lambda1, 0.0, True, 1
    s, delta = np.zeros(C), 0.0
    errors = []
    for _ in range(epochs):
        errors.append(E)
        if not np.any(r):
            break
        p2 = _dot(p, p)
        if success:
            sigma_k = sigma / np.sqrt(p2)
            g_probe, _ = _gradient_at(net, w + sigma_k * p, X, T)
            log["gradients"] += 1
            log["probes"] += 1
            s = (g_probe - g) / sigma_k
            delta = _dot(p, s)
        s = s + (lam - lam_bar) * p
        delta = delta + (lam - lam_bar) * p2
        if delta <= 0:
            log["not_positive"] += 1
            s = s + (lam - 2 * delta / p2) * p
            lam_bar = 2 * (lam - delta / p2)
            delta = -delta + lam * p2
            lam = lam_bar
        mu = _dot(p, r)
        alpha = mu / delta
        E_new = _error_at(net, w + alpha * p, X, T)
        log["errors"] += 1
        Delta = 2 * delta * (E - E_new) / mu ** 2
        p_old2, delta_old = p2, delta
        if Delta >= 0:
            w = w + alpha * p
            g, E = _gradient_at(net, w, X, T)
            log["gradients"] += 1
            r_new = -g
            lam_bar, success = 0.0, True
            if k % C == 0:
                p = r_new.copy()
            else:
                p = r_new + ((_dot(r_new, r_new) - _dot(r_new, r)) / mu) * p
            r = r_new
            if Delta >= 0.75:
                lam = lam / 4
        else:
            lam_bar, success = lam, False
            log["failed"] += 1
        if Delta < 0.25:
            with np.errstate(over="ignore"):     # (lambda overflows at a minimum)
                lam = lam + delta_old * (1 - Delta) / p_old2
        if not success:
            log["lambda_after_failure"].append((lam_bar, lam))
        k += 1
        if not np.any(r) or not np.isfinite(lam):
            break
    return np.array(errors), w, log


def train_lm(net, X, T, epochs, mu=1e-3, mu_dec=0.1, mu_inc=10.0, mu_max=1e10,
             damping="identity", kernels=False):
    """Levenberg-Marquardt with trainlm's mu schedule, solving the damped normal
    equations with numpy.linalg.solve; outputs, errors and the Jacobian from this
    module's NumPy passes, or (``kernels``) from fastnet's predict,
    sum_squared_error and jacobian. Returns (errors, weights, stop, trial steps)."""
    if kernels:
        from fastnet import jacobian as jac

        def out(at):
            return at.predict(X)

        def error(w):
            return net.copy().set_weights(w).sum_squared_error(X, T)
    else:
        jac = jacobian

        def out(at):
            return predict(at, X)

        def error(w):
            return _error_at_numpy(net, w, X, T)
    w = net.weights.copy()
    errors, trials, stop = [], 0, None
    for _ in range(epochs):
        at = net.copy().set_weights(w)
        e = (out(at) - T).ravel()
        E = float(e @ e)
        errors.append(E)
        J = jac(at, X)
        A = J.T @ J
        D = np.eye(w.size) if damping == "identity" else np.diag(np.diag(A))
        while True:
            try:        # (a matrix that is not positive definite: a failed step)
                L = np.linalg.cholesky(A + mu * D)
            except np.linalg.LinAlgError:
                L = None
            if L is not None:
                dw = np.linalg.solve(L.T, np.linalg.solve(L, -J.T @ e))
                trials += 1
                if error(w + dw) < E:
                    w = w + dw
                    mu *= mu_dec
                    break
            mu *= mu_inc
            if mu > mu_max:
                stop = "mu_max"
                break
        if stop:
            break
    return np.array(errors), w, stop, trials


# ----------------------------------------------------------------- Quickprop, Adam

def quickprop_update(w, g, s_prev, d_prev, eps, mu, decay, threshold, momentum, branches=None):
    """One Quickprop step of every weight (Fahlman 1988), weight by weight as
    written; returns (w, step, d). ``branches`` (a dict) counts the cases taken."""
    shrink = mu / (1.0 + mu)
    w, step, d = w.copy(), np.zeros_like(w), -(g + decay * w)
    for i in range(w.size):
        s, di, dp = s_prev[i], d[i], d_prev[i]
        if s > threshold or s < -threshold:
            up = s > threshold
            linear = eps * di if (di > 0.0 if up else di < 0.0) else 0.0
            grow = di > shrink * dp if up else di < shrink * dp
            secant = s * di / (dp - di) if dp - di != 0.0 else 0.0
            step[i] = linear + (mu * s if grow else secant)
            case = ("up" if up else "down") + ("-grow" if grow else
                                               "-secant" if dp - di != 0.0 else "-equal")
        else:
            step[i] = eps * di + momentum * s
            case = "within"
        if branches is not None:
            branches[case] = branches.get(case, 0) + 1
        w[i] += step[i]
    return w, step, d


def train_quickprop(net, X, T, epochs, eps, mu=1.75, decay=1e-4, threshold=0.0, momentum=0.0,
                    branches=None, grad=gradient):
    """Train a copy of net; return (per-epoch SSE before each update, final weights).
    ``grad(net, X, T)`` -> (flat gradient, SSE): this module's by default."""
    net = net.copy()
    s_prev, d_prev = np.zeros(net.n_connections), np.zeros(net.n_connections)
    errors = []
    for _ in range(epochs):
        g, e = grad(net, X, T)
        errors.append(e)
        w, s_prev, d_prev = quickprop_update(net.weights, g, s_prev, d_prev, eps, mu, decay,
                                             threshold, momentum, branches)
        net.set_weights(w)
    return np.array(errors), net.weights.copy()


def adam_update(w, g, m, v, t, lr, beta1, beta2, eps):
    """Update t (1-based) of every weight (Kingma & Ba 2015); returns (w, m, v)."""
    m = beta1 * m + (1.0 - beta1) * g
    v = beta2 * v + (1.0 - beta2) * (g * g)
    m_hat, v_hat = m / (1.0 - beta1 ** t), v / (1.0 - beta2 ** t)
    return w - lr * m_hat / (np.sqrt(v_hat) + eps), m, v


def train_adam(net, X, T, epochs, lr=1e-3, beta1=0.9, beta2=0.999, eps=1e-8, *,
               batch_size=None, orders=None, loss="sse", weight_decay=0.0):
    """Train a copy of net, full batch or in mini-batches of ``batch_size`` taken
    in ``orders[epoch]``; return (per-epoch SSE, final weights). With ``loss`` or
    ``weight_decay``: the objective (see `objective`), a mini-batch of b of the N
    rows carrying b / N of the decay."""
    net = net.copy()
    m, v, t = np.zeros(net.n_connections), np.zeros(net.n_connections), 0
    errors = []
    for epoch in range(epochs):
        rows = [np.arange(len(X))] if batch_size is None else [
            orders[epoch][p:p + batch_size] for p in range(0, len(X), batch_size)]
        total = 0.0
        for r in rows:
            if loss == "sse" and not weight_decay and net.output_activation != "softmax":
                g, e = gradient(net, X[r], T[r])
            else:
                g, e = objective_gradient(net, X[r], T[r], loss, weight_decay * len(r) / len(X))
            total += e
            t += 1
            w, m, v = adam_update(net.weights, g, m, v, t, lr, beta1, beta2, eps)
            net.set_weights(w)
        errors.append(total)
    return np.array(errors), net.weights.copy()


# ---------------------------------------------------------------------------
# Objectives beyond squared error (tests/test_losses.py): relu and softmax
# units, cross-entropy, L2 weight decay. Plain NumPy, as above.

def _softmax(z):
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


ACTIVATIONS["relu"] = (lambda x: np.maximum(x, 0.0), lambda x: (x > 0).astype(float))
ACTIVATIONS["softmax"] = (_softmax, None)       # not elementwise: see output_delta


def _xlogy(t, p):
    """t * log(p) with 0 * log(0) = 0."""
    return np.where(t == 0, 0.0, t * np.log(np.where(t == 0, 1.0, p)))


def objective(net, X, T, loss="sse", weight_decay=0.0):
    """The minimised objective at the network's weights: the SSE or the
    cross-entropy (softmax: -sum t log o; logistic: binary, per output), plus
    weight_decay * sum(w**2) over every weight and bias."""
    Out = predict(net, X)
    if loss == "sse":
        E = np.sum((Out - T) ** 2)
    elif net.output_activation == "softmax":
        E = -np.sum(_xlogy(T, Out))
    else:
        E = -np.sum(_xlogy(T, Out) + _xlogy(1.0 - T, 1.0 - Out))
    return float(E + weight_decay * np.sum(net.weights ** 2))


def objective_gradient(net, X, T, loss="sse", weight_decay=0.0):
    """(flat gradient of `objective`, its value) by back-propagation."""
    W, b = net.get_params()
    acts, nets = forward(net, W, b, X)
    L = net.n_layers
    Out = acts[L]
    if loss == "sse":
        dE = 2.0 * (Out - T)
        if net.output_activation == "softmax":      # d o_i / d z_k = o_i (delta_ik - o_k)
            delta = Out * (dE - np.sum(dE * Out, axis=1, keepdims=True))
        else:
            delta = dE * _act(net, L)[1](nets[L])
    elif net.output_activation == "softmax":      # -sum t log o: o_k sum(t) - t_k
        delta = Out * T.sum(axis=1, keepdims=True) - T
    else:                                         # binary cross-entropy of logistic units
        delta = Out - T
    deltas = backward(net, W, acts, nets, delta)
    gW = {(i, j): acts[i].T @ deltas[j] for (i, j) in W}
    gb = {j: deltas[j].sum(axis=0) for j in b}
    flat = net.copy().set_params(gW, gb).weights.copy()
    flat += 2.0 * weight_decay * net.weights
    return flat, objective(net, X, T, loss, weight_decay)


def train_rprop_objective(net, X, T, variant, epochs, step0, loss="sse", weight_decay=0.0,
                          **params):
    """train_rprop on the objective: (per-epoch objective before each update, final weights)."""
    net = net.copy()
    opt = Rprop(variant, step0, **params)
    errors = []
    for _ in range(epochs):
        g, e = objective_gradient(net, X, T, loss, weight_decay)
        errors.append(e)
        net.set_weights(opt.update(net.weights.copy(), g, e))
    return np.array(errors), net.weights.copy()


def train_backprop_objective(net, X, T, epochs, lr, momentum, loss="sse", weight_decay=0.0, *,
                             orders=None):
    """train_backprop on the objective; online (``orders`` given), each pattern's
    step follows its loss plus weight_decay / N * sum w**2."""
    net = net.copy()
    dw_prev = np.zeros(net.n_connections)
    errors = []
    N = X.shape[0]
    for t in range(epochs):
        batches = [slice(None)] if orders is None else [slice(p, p + 1) for p in orders[t]]
        decay = weight_decay if orders is None else weight_decay / N
        total = 0.0
        for rows in batches:
            g, e = objective_gradient(net, X[rows], T[rows], loss, decay)
            total += e
            dw = -lr * g + momentum * dw_prev
            net.set_weights(net.weights + dw)
            dw_prev = dw
        errors.append(total)
    return np.array(errors), net.weights.copy()
