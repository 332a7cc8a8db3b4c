/* The constants of the kernels' data: layer-table columns, activation codes,
 * training objectives (the rules' codes are their table's, _rules.h). Written
 * once, here: _types.pxd declares them
 * from this header (cdef extern) for the Cython kernels, and the lanes'
 * headers (_lanes.h and the files it heads) include it. Python maps names to
 * the codes in fastnet.network.ACTIVATIONS and fastnet.rprop.VARIANTS.
 */
#ifndef FASTNET_CONSTANTS_H
#define FASTNET_CONSTANTS_H

/* Columns of the layer table, an intp array of shape (n_layers, FN_L_NCOLS):
 * layer j reads the contiguous column range [src_lo, src_hi) of an activation
 * row, and owns W_j (size x (src_hi - src_lo), row-major) at w_off of the flat
 * weight vector, its biases at b_off. */
enum {
    FN_L_START = 0,    /* column of the layer's first unit in an activation row */
    FN_L_SIZE = 1,     /* number of units */
    FN_L_SRC_LO = 2,   /* first source column */
    FN_L_SRC_HI = 3,   /* one past the last source column */
    FN_L_W_OFF = 4,    /* offset of W_j in the flat weight vector */
    FN_L_B_OFF = 5,    /* offset of the biases */
    FN_L_ACT = 6,      /* activation code (below) */
    FN_L_NCOLS = 7
};

/* Activation codes. */
enum {
    FN_ACT_LINEAR = 0,     /* y = x */
    FN_ACT_PROBEN1 = 1,    /* y = x / (1 + |x|) (Prechelt 1994's "sigmoid") */
    FN_ACT_LOGISTIC = 2,   /* y = 1 / (1 + exp(-x)) */
    FN_ACT_TANH = 3,       /* y = tanh(x) */
    FN_ACT_RELU = 4,       /* y = max(x, 0); f'(x) = 1 for x > 0, else 0 (f'(0) = 0) */
    FN_ACT_SOFTMAX = 5     /* output layer only: y_k = exp(x_k) / sum_i exp(x_i); the
                            * derivative slot holds log y_k (the Jacobian is not diagonal) */
};
/* Number of activation codes: valid codes are 0 .. FN_N_ACTIVATIONS - 1. */
enum { FN_N_ACTIVATIONS = 6 };

/* Training objectives (fastnet.training._checks.LOSSES maps names to these). */
enum {
    FN_LOSS_SSE = 0,           /* sum (y - t)^2, no factor 1/2 (Prechelt 1994) */
    FN_LOSS_CROSS_ENTROPY = 1  /* softmax: -sum t log y; logistic: binary, per output */
};

#endif /* FASTNET_CONSTANTS_H */
