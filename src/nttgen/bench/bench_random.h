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

/* Uniform in [0, q): valid input for every kernel's contract. */
static void fill(bench_elem_t *p, size_t len) {
    for (size_t i = 0; i < len; ++i) {
        p[i] = (bench_elem_t)(next_random() % (uint64_t)BENCH_Q);
    }
}

#endif
