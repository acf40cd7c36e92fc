/*
 * nttgen benchmark harness: times generated kernels in batches with the CPU's time-stamp counter.
 *
 * Method (see MACHINE.md of the project): rdtsc advances in coarse steps here, so each sample
 * times a batch of back-to-back calls; after a warm-up, the median of the samples divided by
 * the batch size is the ticks per call.
 *
 * Rounds: on this virtual machine a throughput-bound kernel sometimes runs about 1.4x slower
 * for seconds at a time (another tenant sharing the physical core; a latency-bound probe does
 * not slow down, so it is not the clock). The samples are therefore taken in rounds spread
 * over the whole run, every (ISA, op) once per round, and the median of the quietest round
 * (the lowest round median) is reported with that round's quartiles. The median over all
 * rounds is printed too, so a disturbed run is visible. The driver also runs this program
 * pinned to one CPU and without address-space randomisation (a random stack placement made the
 * same binary 1.3-1.5x slower in some runs), and the samples themselves rotate through 64 stack
 * placements 64 bytes apart (see STACK_STEP), so the median is that of a typical placement,
 * not of the one the run happened to get. In-place kernels (ntt, intt) need a fresh valid
 * input for every call: each batch runs in runs of INPLACE_RUN calls, each on its own copy of a
 * pristine input made before the run's clock starts (all in L1), and the runs' ticks are summed.
 * (Timing a copy with every call and subtracting the copy timed alone undercounted short
 * kernels: the out-of-order core overlaps the next copy with the kernel, by an amount that
 * depended on code layout.) Kernels are reached through a table of function pointers so that
 * every ISA of a ring is timed in one run, under the same conditions.
 *
 * Output: one JSON object per line on stdout.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_types.h"
#include "bench_kernels.h"
#include "bench_random.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
static inline uint64_t ticks(void) {
    _mm_lfence();
    uint64_t t = __rdtsc();
    _mm_lfence();
    return t;
}
#define TICKS_UNIT "tsc"
#else
#include <time.h>
static inline uint64_t ticks(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
#define TICKS_UNIT "ns"
#endif

#define BARRIER(p) __asm__ volatile("" : : "r"(p) : "memory")


enum op {
    OP_NTT,
    OP_INTT,
    OP_BASEMUL,
    OP_BASEMUL_ACC,
    OP_BASEMUL_ACC_CACHED,
    OP_POLYMUL,
    OP_POLYMUL_SMALL
};
#define OP_LAST OP_POLYMUL_SMALL

/* Calls of an in-place kernel per timed run, each on its own fresh input (16 KiB or less in
 * all for the presets, so the inputs stay in L1 with the kernel's tables). */
#define INPLACE_RUN 16

static bench_elem_t pristine[BENCH_N] __attribute__((aligned(64)));
static bench_elem_t work[INPLACE_RUN][BENCH_N] __attribute__((aligned(64)));
static bench_elem_t in_a[BENCH_KMAX * BENCH_N] __attribute__((aligned(64)));
static bench_elem_t in_b[BENCH_KMAX * BENCH_N] __attribute__((aligned(64)));
static bench_elem_t in_s[BENCH_N] __attribute__((aligned(64)));
static bench_elem_t in_c[BENCH_KMAX * BENCH_CACHE_N] __attribute__((aligned(64)));
static bench_elem_t out_r[BENCH_N] __attribute__((aligned(64)));

/* What reading the clock twice costs (the median of many empty timed runs), taken off every
 * timed run of an in-place kernel: a run is short, so this is a few percent of it. */
static uint64_t clock_cost;

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static void measure_clock_cost(void) {
    enum { N = 1001 };
    static uint64_t v[N];
    for (int i = 0; i < N; ++i) {
        uint64_t t0 = ticks();
        v[i] = ticks() - t0;
    }
    qsort(v, N, sizeof v[0], cmp_u64);
    clock_cost = v[N / 2];
}

/* Ticks of `batch` calls of an in-place kernel, in runs of INPLACE_RUN on fresh copies. */
static uint64_t run_in_place(const bench_kernels_t *k, enum op op, int batch) {
    uint64_t total = 0;
    for (int done = 0; done < batch; done += INPLACE_RUN) {
        int calls = batch - done < INPLACE_RUN ? batch - done : INPLACE_RUN;
        for (int i = 0; i < calls; ++i) {
            memcpy(work[i], pristine, sizeof pristine);
        }
        BARRIER(work);
        uint64_t t0 = ticks();
        for (int i = 0; i < calls; ++i) {
            if (op == OP_NTT) {
                k->ntt(work[i]);
            } else {
                k->intt(work[i]);
            }
        }
        BARRIER(work);
        uint64_t spent = ticks() - t0;
        total += spent > clock_cost ? spent - clock_cost : 0;
    }
    return total;
}

static void run_batch(const bench_kernels_t *k, enum op op, size_t kk, int batch) {
    for (int i = 0; i < batch; ++i) {
        switch (op) {
        case OP_NTT:
        case OP_INTT:
            break; /* timed by run_in_place */
        case OP_BASEMUL:
            k->basemul(out_r, in_a, in_b);
            BARRIER(out_r);
            break;
        case OP_BASEMUL_ACC:
            k->basemul_acc(out_r, in_a, in_b, kk);
            BARRIER(out_r);
            break;
        case OP_BASEMUL_ACC_CACHED:
            k->basemul_acc_cached(out_r, in_a, in_b, in_c, kk);
            BARRIER(out_r);
            break;
        case OP_POLYMUL:
            k->polymul(out_r, in_a, in_b);
            BARRIER(out_r);
            break;
        case OP_POLYMUL_SMALL:
            k->polymul_small(out_r, in_a, in_s);
            BARRIER(out_r);
            break;
        }
    }
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}


/* Stack placements the samples rotate through: the kernels' frames (their spilled registers)
 * move by STACK_STEP bytes from one placement to the next, over 4 KiB in all. A store and a
 * later load whose addresses agree in their low 12 bits look dependent to the core until the
 * store's address is resolved (4K aliasing), so where a kernel's spill slots sit relative to
 * its constant tables can slow it by a fifth at some placements and not at others; a caller's
 * stack lands anywhere. With the placements rotated, the median is that of a typical one. */
#define STACK_STEP 64
#define STACK_PLACES (4096 / STACK_STEP)
static unsigned sample_counter;

/* Ticks of one sample (a batch of calls), its frame below `pad`. */
static __attribute__((noinline)) uint64_t sample_below(const bench_kernels_t *k, enum op op,
                                                       size_t kk, int batch, volatile char *pad) {
    pad[0] = 0; /* the pad is used, so it stays */
    if (op == OP_NTT || op == OP_INTT) {
        return run_in_place(k, op, batch);
    }
    uint64_t t0 = ticks();
    run_batch(k, op, kk, batch);
    return ticks() - t0;
}

/* Ticks of one sample at the next stack placement (a permutation of the placements: any run of
 * samples spreads over them). */
static uint64_t sample(const bench_kernels_t *k, enum op op, size_t kk, int batch) {
    unsigned place = (sample_counter++ * 37u) % STACK_PLACES;
    volatile char pad[1 + STACK_STEP * place];
    return sample_below(k, op, kk, batch, pad);
}

/* Median and quartiles of per-call ticks over `samples` batches. */
static void measure(const bench_kernels_t *k, enum op op, size_t kk, int samples, int batch,
                    int warmup, double *q1, double *med, double *q3) {
    double *v = malloc(sizeof(double) * (size_t)samples);
    if (v == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    for (int s = 0; s < warmup; ++s) {
        (void)sample(k, op, kk, batch);
    }
    for (int s = 0; s < samples; ++s) {
        v[s] = (double)sample(k, op, kk, batch) / batch;
    }
    qsort(v, (size_t)samples, sizeof(double), cmp_double);
    *q1 = v[samples / 4];
    *med = v[samples / 2];
    *q3 = v[(3 * samples) / 4];
    free(v);
}

/* Whether the kernels define `op`: the slots another ring family's kernels fill are NULL. */
static int has_op(const bench_kernels_t *k, enum op op) {
    switch (op) {
        case OP_NTT:
            return k->ntt != NULL;
        case OP_INTT:
            return k->intt != NULL;
        case OP_BASEMUL:
            return k->basemul != NULL;
        case OP_BASEMUL_ACC:
            return k->basemul_acc != NULL;
        case OP_BASEMUL_ACC_CACHED:
            return k->basemul_acc_cached != NULL && k->basemul_cache != NULL;
        case OP_POLYMUL:
            return k->polymul != NULL;
        case OP_POLYMUL_SMALL:
            return k->polymul_small != NULL;
        default:
            return 1;
    }
}

static const char *const OP_NAMES[] = {"ntt",     "intt",        "basemul",
                                        "basemul_acc", "basemul_acc_cached", "polymul",
                                        "polymul_small"};

/* Whether the op sums k products (timed for each k asked for). */
static int takes_k(int op) { return op == OP_BASEMUL_ACC || op == OP_BASEMUL_ACC_CACHED; }

#define MAX_KS 8
#define MAX_ISAS 8
#define MAX_ROUNDS 16

typedef struct {
    double q1, med, q3;
} stat_t;

/* Per (ISA, op, k) and round: quartiles of ticks per call. */
static stat_t stats[MAX_ISAS][OP_LAST + 1][MAX_KS][MAX_ROUNDS];

static stat_t run_one(const bench_kernels_t *k, enum op op, size_t kk, int samples, int batch,
                      int warmup) {
    stat_t st;
    if (op == OP_BASEMUL_ACC_CACHED) { /* the caches of in_b, in this ISA's layout, untimed */
        for (size_t i = 0; i < kk; ++i) {
            k->basemul_cache(in_c + i * BENCH_CACHE_N, in_b + i * BENCH_N);
        }
    }
    measure(k, op, kk, samples, batch, warmup, &st.q1, &st.med, &st.q3);
    return st;
}

/* The quietest round (lowest median) and the median of the round medians. */
static stat_t quietest(const stat_t *r, int rounds, double *all) {
    double v[MAX_ROUNDS];
    int best = 0;
    for (int i = 0; i < rounds; ++i) {
        v[i] = r[i].med;
        if (r[i].med < r[best].med) {
            best = i;
        }
    }
    qsort(v, (size_t)rounds, sizeof(double), cmp_double);
    *all = rounds % 2 ? v[rounds / 2] : 0.5 * (v[rounds / 2 - 1] + v[rounds / 2]);
    return r[best];
}

int main(int argc, char **argv) {
    int samples = argc > 1 ? atoi(argv[1]) : 1000;
    int batch = argc > 2 ? atoi(argv[2]) : 100;
    int warmup = argc > 3 ? atoi(argv[3]) : 100;
    const char *ops = argc > 4 ? argv[4] : "ntt,intt,basemul,basemul_acc,polymul";
    const char *kvals = argc > 5 ? argv[5] : "3,5";
    int rounds = argc > 6 ? atoi(argv[6]) : 5;
    if (samples < 1 || batch < 1 || warmup < 0 || rounds < 1 || rounds > MAX_ROUNDS ||
        samples < rounds) {
        fprintf(stderr, "usage: bench [samples>=rounds] [batch>=1] [warmup>=0] [ops] [k,...] "
                        "[rounds 1..%d]\n", MAX_ROUNDS);
        return 2;
    }
    int wanted[OP_LAST + 1] = {0};
    for (const char *p = ops; *p != '\0';) {
        size_t len = strcspn(p, ",");
        for (int op = OP_NTT; op <= OP_LAST; ++op) {
            if (strlen(OP_NAMES[op]) == len && strncmp(p, OP_NAMES[op], len) == 0) {
                wanted[op] = 1;
            }
        }
        p += len + (p[len] == ',');
    }
    size_t ks[MAX_KS];
    int nks = 0;
    for (const char *p = kvals; *p != '\0' && nks < MAX_KS;) {
        ks[nks] = (size_t)atoi(p);
        if (ks[nks] < 1 || ks[nks] > BENCH_KMAX) {
            fprintf(stderr, "k must be in [1, %d]\n", BENCH_KMAX);
            return 2;
        }
        ++nks;
        p += strcspn(p, ",");
        p += (*p == ',');
    }
    size_t nisas = sizeof BENCH_KERNELS / sizeof BENCH_KERNELS[0];
    if (nisas > MAX_ISAS) {
        fprintf(stderr, "too many ISAs\n");
        return 2;
    }
    for (size_t i = 0; i < nisas; ++i) {
        for (int op = OP_NTT; op <= OP_LAST; ++op) {
            if (wanted[op] && !has_op(&BENCH_KERNELS[i], (enum op)op)) {
                fprintf(stderr, "%s kernels have no %s\n", BENCH_KERNELS[i].isa, OP_NAMES[op]);
                return 2;
            }
        }
    }
    fill(pristine, BENCH_N);
    fill(in_a, (size_t)BENCH_KMAX * BENCH_N);
    fill(in_b, (size_t)BENCH_KMAX * BENCH_N);
    fill_small(in_s, BENCH_N);
    measure_clock_cost();
    int per_round = samples / rounds;
    for (int round = 0; round < rounds; ++round) {
        for (size_t i = 0; i < nisas; ++i) {
            const bench_kernels_t *k = &BENCH_KERNELS[i];
            for (int op = OP_NTT; op <= OP_LAST; ++op) {
                for (int j = 0; wanted[op] && j < (takes_k(op) ? nks : 1); ++j) {
                    stats[i][op][j][round] = run_one(k, (enum op)op, ks[j], per_round, batch, warmup);
                }
            }
        }
    }
    for (size_t i = 0; i < nisas; ++i) {
        for (int op = OP_NTT; op <= OP_LAST; ++op) {
            for (int j = 0; wanted[op] && j < (takes_k(op) ? nks : 1); ++j) {
                double all;
                stat_t st = quietest(stats[i][op][j], rounds, &all);
                printf("{\"isa\": \"%s\", \"op\": \"%s\", \"k\": %d, \"median\": %.2f, "
                       "\"q1\": %.2f, \"q3\": %.2f, \"all_rounds\": %.2f, "
                       "\"rounds\": %d, \"unit\": \"%s\"}\n",
                       BENCH_KERNELS[i].isa, OP_NAMES[op], takes_k(op) ? (int)ks[j] : 0, st.med,
                       st.q1, st.q3, all, rounds, TICKS_UNIT);
            }
        }
    }
    return 0;
}
