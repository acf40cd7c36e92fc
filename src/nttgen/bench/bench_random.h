/*
 * Valid random inputs of the nttgen benchmark programs (harness.c, count.c): a fixed xorshift
 * sequence, so every run times or counts the same inputs.
 */
#ifndef NTTGEN_BENCH_RANDOM_H
#define NTTGEN_BENCH_RANDOM_H

static uint64_t rng_state = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Uniform in [0, q): valid input for every kernel's contract; with BENCH_CENTRED (NTRU Prime
 * rings) uniform in [-(q-1)/2, (q-1)/2] instead. */
static void fill(bench_elem_t *p, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        int64_t x = (int64_t)(next_random() % (uint64_t)BENCH_Q);
#ifdef BENCH_CENTRED
        x -= (BENCH_Q - 1) / 2;
#endif
        p[i] = (bench_elem_t)x;
    }
}

/* Uniform in {-1, 0, 1}: the small operand of polymul_small. */
static void fill_small(bench_elem_t *p, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        p[i] = (bench_elem_t)((int64_t)(next_random() % 3u) - 1);
    }
}

#endif
