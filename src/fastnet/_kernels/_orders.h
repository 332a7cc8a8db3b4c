/* Presentation orders drawn in C, the numbers NumPy draws: online training
 * presents the patterns of each epoch in a fresh order, drawn from the trial's
 * own numpy.random.Generator as ``rng.permutation(n)`` (Backprop.kernel_args).
 * The lanes' online kernel (_trials_level.h) draws each lane's order for each
 * epoch itself, from the lane's generator, so that no Python call runs per
 * trial and epoch; the numbers are those of ``permutation``, draw for draw.
 *
 * NumPy's C interface to a generator is its bit generator's ``bitgen_t``
 * (numpy/random/bitgen.h; ``BitGenerator.capsule``, a PyCapsule named
 * "BitGenerator", holds a pointer to it): the state and four function
 * pointers. fn_bitgen declares the same layout (NumPy documents it for C
 * extensions: "Extending numpy.random"). ``Generator.permutation(n)`` is
 * ``arange(n)`` shuffled by Fisher and Yates, positions i = n - 1 down to 1
 * each swapped with j = random_interval(i), uniform in [0, i] by rejection
 * (numpy/random/_generator.pyx, _shuffle_raw; numpy/random/src/distributions/
 * distributions.c, random_interval): fn_permutation repeats it. The tests
 * compare the two for several generators and sizes, and fastnet draws in C
 * only after the same comparison at run time (fastnet.training._lanes), so a
 * NumPy that drew otherwise would only take online training out of the lanes.
 */
#ifndef FASTNET_ORDERS_H
#define FASTNET_ORDERS_H

#include <stddef.h>
#include <stdint.h>

/* NumPy's bitgen_t (the same members in the same order). */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} fn_bitgen;

/* A uniform integer in [0, max]: the smallest all-ones mask >= max, then draws
 * (32 bits while max fits in them, else 64) masked until one is <= max. */
static inline uint64_t
fn_random_interval(fn_bitgen *b, uint64_t max)
{
    if (max == 0) return 0;
    uint64_t mask = max, value;
    mask |= mask >> 1;
    mask |= mask >> 2;
    mask |= mask >> 4;
    mask |= mask >> 8;
    mask |= mask >> 16;
    mask |= mask >> 32;
    if (max <= 0xffffffffUL) {
        while ((value = (b->next_uint32(b->state) & mask)) > max) {}
    } else {
        while ((value = (b->next_uint64(b->state) & mask)) > max) {}
    }
    return value;
}

/* out[0 .. n) = rng.permutation(n) of the generator whose bit generator is b. */
static inline void
fn_permutation(fn_bitgen *b, ptrdiff_t n, int64_t *out)
{
    for (ptrdiff_t i = 0; i < n; i++) out[i] = i;
    for (ptrdiff_t i = n - 1; i >= 1; i--) {
        const ptrdiff_t j = (ptrdiff_t)fn_random_interval(b, (uint64_t)i);
        const int64_t t = out[i];
        out[i] = out[j];
        out[j] = t;
    }
}

#endif /* FASTNET_ORDERS_H */
