/*
 * nttgen instruction counter driver: calls one generated kernel once between two markers, for
 * machines that run under QEMU and so have no cycle counter worth reading.
 *
 * QEMU runs this program one guest instruction per translation block and logs every block it
 * executes (-singlestep -d exec,nochain); the driver in Python counts the log lines between the
 * return from count_begin and the call of count_end. The same count for the op "none" (the
 * markers alone) is subtracted, so what remains is the call with its argument set-up. The
 * kernels are constant-time, so one call on valid random input gives the count of every input.
 *
 * Usage: count ISA_INDEX OP K [SEED]
 *   (OP: none, ntt, intt, basemul, basemul_acc, basemul_acc_cached, polymul, polymul_small,
 *   ntt_vec, intt_vec; basemul_acc_cached is given the caches of its b, computed before the
 *   markers)
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_types.h"
#include "bench_kernels.h"
#include "bench_random.h"

__attribute__((noinline)) void count_begin(void) { __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void count_end(void) { __asm__ volatile("" ::: "memory"); }


static bench_elem_t in_a[BENCH_KMAX * BENCH_N];
static bench_elem_t in_b[BENCH_KMAX * BENCH_N];
static bench_elem_t in_c[BENCH_KMAX * BENCH_CACHE_N];
static bench_elem_t out_r[BENCH_N];

int main(int argc, char **argv) {
    if (argc != 4 && argc != 5) {
        fprintf(stderr, "usage: %s ISA_INDEX OP K [SEED]\n", argv[0]);
        return 2;
    }
    if (argc == 5) { /* another input: the count of a constant-time kernel must not change */
        rng_state ^= (uint64_t)strtoull(argv[4], NULL, 10) * 0x2545f4914f6cdd1du;
    }
    size_t nk = sizeof BENCH_KERNELS / sizeof BENCH_KERNELS[0];
    size_t which = (size_t)strtoul(argv[1], NULL, 10);
    size_t k = (size_t)strtoul(argv[3], NULL, 10);
    if (which >= nk || k < 1 || k > BENCH_KMAX) {
        fprintf(stderr, "bad ISA index or k\n");
        return 2;
    }
    const bench_kernels_t *kern = &BENCH_KERNELS[which];
    const char *op = argv[2];
    fill(in_a, sizeof in_a / sizeof in_a[0]);
    fill(in_b, sizeof in_b / sizeof in_b[0]);
    if (strcmp(op, "none") == 0) {
        count_begin();
        count_end();
    } else if (strcmp(op, "ntt") == 0) {
        count_begin();
        kern->ntt(in_a);
        count_end();
    } else if (strcmp(op, "intt") == 0) {
        count_begin();
        kern->intt(in_a);
        count_end();
    } else if (strcmp(op, "ntt_vec") == 0) {
        count_begin();
        kern->ntt_vec(in_a, k);
        count_end();
    } else if (strcmp(op, "intt_vec") == 0) {
        count_begin();
        kern->intt_vec(in_a, k);
        count_end();
    } else if (strcmp(op, "basemul") == 0) {
        count_begin();
        kern->basemul(out_r, in_a, in_b);
        count_end();
    } else if (strcmp(op, "basemul_acc") == 0) {
        count_begin();
        kern->basemul_acc(out_r, in_a, in_b, k);
        count_end();
    } else if (strcmp(op, "basemul_acc_cached") == 0) {
        for (size_t i = 0; i < k; ++i) {
            kern->basemul_cache(in_c + i * BENCH_CACHE_N, in_b + i * BENCH_N);
        }
        count_begin();
        kern->basemul_acc_cached(out_r, in_a, in_b, in_c, k);
        count_end();
    } else if (strcmp(op, "polymul") == 0) {
        count_begin();
        kern->polymul(out_r, in_a, in_b);
        count_end();
    } else if (strcmp(op, "polymul_small") == 0) {
        for (size_t i = 0; i < BENCH_N; i++) { /* the small operand: coefficients in {-1, 0, 1} */
            in_b[i] = (bench_elem_t)((int)(in_b[i] % 3) - 1);
        }
        count_begin();
        kern->polymul_small(out_r, in_a, in_b);
        count_end();
    } else {
        fprintf(stderr, "unknown op %s\n", op);
        return 2;
    }
    printf("%s %d\n", kern->isa, (int)out_r[0]); /* keeps the results live */
    return 0;
}
