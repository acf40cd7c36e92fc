/*
 * nttgen benchmark harness: times generated kernels in batches with the CPU's time-stamp counter.
 *
 * Method (see MACHINE.md of the project): rdtsc advances in coarse steps here, so each sample
 * times a batch of back-to-back calls; after a warm-up, the median of the samples divided by
 * the batch size is the ticks per call.
 *
 * Interleaving: on this virtual machine the core's clock moves between a few speeds, and a
 * throughput-bound kernel sometimes runs about 1.4x slower for seconds at a time (another tenant
 * sharing the physical core), while the time-stamp counter keeps its rate. Kernel sets timed one
 * after another therefore came out up to 15 % apart for the same code. Every sample is taken of
 * all kernel sets back to back instead (set 0, 1, ..., then the next sample), at the same
 * placements, so sample s of every set saw the same conditions: their medians are comparable, and
 * the ratio of two sets' samples s is nearly free of the clock's changes (nttgen bench --compare
 * reports the median of those ratios). The samples are taken in rounds spread over the whole run,
 * every (op, k) once per round, so no op is timed only in one disturbed stretch. The driver also
 * runs this program pinned to one CPU and without address-space randomisation (a random stack
 * placement made the same binary 1.3-1.5x slower in some runs), and every sample moves the stack
 * and the buffers the kernels write to one of 64 placements 64 bytes apart, drawn at random (see
 * STACK_STEP), so the median is that of a typical placement, not of the one the run happened to
 * get. In-place kernels (ntt, intt) need a fresh valid input for every call: each batch runs in
 * runs of INPLACE_RUN calls, each on its own copy of a pristine input made before the run's clock
 * starts (all in L1), and the runs' ticks are summed; the transforms of k polynomials (ntt_vec,
 * intt_vec) likewise, each call on k fresh copies. (Timing a copy with every call and
 * subtracting the copy timed alone undercounted short kernels: the out-of-order core overlaps the
 * next copy with the kernel, by an amount that depended on code layout.) Kernels are reached
 * through a table of function pointers so that every ISA of a ring is timed in one run, under the
 * same conditions; each set's batch follows a few microseconds of untimed calls of the same
 * kernel, so that no set pays for the switch from the one before it (see warm_up).
 *
 * Output: one JSON object per line on stdout, per (kernel set, op, k): the ticks per call of
 * every sample in the order taken (sample s of every set taken together).
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
    OP_POLYMUL_SMALL,
    OP_NTT_VEC,
    OP_INTT_VEC
};
#define OP_LAST OP_INTT_VEC

/* Calls of an in-place kernel per timed run, each on its own fresh input (16 KiB or less in
 * all for the presets, so the inputs stay in L1 with the kernel's tables). */
#define INPLACE_RUN 16

static bench_elem_t pristine[BENCH_N] __attribute__((aligned(64)));
/* The buffers the kernels write, each in a pool 4 KiB longer so that it can move (see
 * STACK_STEP); `work` and `out_r` point into them at the current sample's placement. */
#define SHIFT_ELEMS (4096 / sizeof(bench_elem_t))
static bench_elem_t work_pool[(INPLACE_RUN > BENCH_KMAX ? INPLACE_RUN : BENCH_KMAX) * BENCH_N +
                               SHIFT_ELEMS]  __attribute__((aligned(64)));
static bench_elem_t out_pool[BENCH_N + SHIFT_ELEMS] __attribute__((aligned(64)));
static bench_elem_t *work = work_pool;
static bench_elem_t *out_r = out_pool;
static bench_elem_t in_a[BENCH_KMAX * BENCH_N] __attribute__((aligned(64)));
static bench_elem_t in_b[BENCH_KMAX * BENCH_N] __attribute__((aligned(64)));
static bench_elem_t in_s[BENCH_N] __attribute__((aligned(64)));
#define MAX_ISAS 8
/* The multiplication caches of in_b, one per kernel set (each in its own layout). */
static bench_elem_t in_c[MAX_ISAS][BENCH_KMAX * BENCH_CACHE_N] __attribute__((aligned(64)));

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

/* Whether the op transforms its buffer in place (timed by run_in_place). */
static int in_place(enum op op) {
    return op == OP_NTT || op == OP_INTT || op == OP_NTT_VEC || op == OP_INTT_VEC;
}

/* Ticks of `batch` calls of an in-place kernel (of `kk` polynomials for the _vec ops), in
 * runs of INPLACE_RUN polynomials (at least one call) on fresh copies. */
static uint64_t run_in_place(const bench_kernels_t *k, enum op op, size_t kk, int batch) {
    size_t width = (op == OP_NTT_VEC || op == OP_INTT_VEC) ? kk : 1;
    int per_run = width < INPLACE_RUN ? (int)(INPLACE_RUN / width) : 1;
    uint64_t total = 0;
    for (int done = 0; done < batch; done += per_run) {
        int calls = batch - done < per_run ? batch - done : per_run;
        for (size_t i = 0; i < (size_t)calls * width; ++i) {
            memcpy(work + i * BENCH_N, pristine, sizeof pristine);
        }
        BARRIER(work);
        uint64_t t0 = ticks();
        for (int i = 0; i < calls; ++i) {
            bench_elem_t *a = work + (size_t)i * width * BENCH_N;
            switch (op) {
            case OP_NTT:
                k->ntt(a);
                break;
            case OP_INTT:
                k->intt(a);
                break;
            case OP_NTT_VEC:
                k->ntt_vec(a, kk);
                break;
            default:
                k->intt_vec(a, kk);
                break;
            }
        }
        BARRIER(work);
        uint64_t spent = ticks() - t0;
        total += spent > clock_cost ? spent - clock_cost : 0;
    }
    return total;
}

static void run_batch(const bench_kernels_t *k, const bench_elem_t *cache, enum op op, size_t kk,
                      int batch) {
    for (int i = 0; i < batch; ++i) {
        switch (op) {
        case OP_NTT:
        case OP_INTT:
        case OP_NTT_VEC:
        case OP_INTT_VEC:
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
            k->basemul_acc_cached(out_r, in_a, in_b, cache, kk);
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

/* Placements the samples rotate through: the kernels' frames (their spilled registers) and
 * the buffers they write move by STACK_STEP bytes from one placement to the next, over 4 KiB
 * in all. A store and a later load whose addresses agree in their low 12 bits look dependent
 * to the core until the store's address is resolved (4K aliasing), so where a kernel's spill
 * slots and outputs sit relative to its constant tables can slow it by a fifth at some
 * placements and not at others (and the tables' own offsets change with whatever else is
 * linked beside them); a caller's stack and buffers land anywhere. With the placements
 * rotated, the median is that of a typical one. */
#define STACK_STEP 64
#define STACK_PLACES (4096 / STACK_STEP)

/* Ticks of one sample (a batch of calls), its frame below `pad`. */
static __attribute__((noinline)) uint64_t sample_below(const bench_kernels_t *k,
                                                       const bench_elem_t *cache, enum op op,
                                                       size_t kk, int batch, volatile char *pad) {
    pad[0] = 0; /* the pad is used, so it stays */
    if (in_place(op)) {
        return run_in_place(k, op, kk, batch);
    }
    uint64_t t0 = ticks();
    run_batch(k, cache, op, kk, batch);
    return ticks() - t0;
}

/* Ticks of one sample at stack placement `place` (0 .. STACK_PLACES - 1). */
static uint64_t sample(const bench_kernels_t *k, const bench_elem_t *cache, enum op op, size_t kk,
                       int batch, unsigned place) {
    volatile char pad[1 + STACK_STEP * place];
    return sample_below(k, cache, op, kk, batch, pad);
}

/* The placements are drawn at random for every sample (xorshift64, seeded per process), the
 * stack's and the buffers' independently: over many samples each placement of either, and each
 * distance between them, comes about equally often, whatever the run's sample count and ops
 * (a fixed sequence shared by the ops would give each op only some of the distances). */
static uint64_t placement_state = 0x9e3779b97f4a7c15u;

static unsigned random_placement(void) {
    placement_state ^= placement_state << 13;
    placement_state ^= placement_state >> 7;
    placement_state ^= placement_state << 17;
    return (unsigned)((placement_state >> 32) % STACK_PLACES);
}

/* Moves the written buffers to placement `place`. */
static void place_buffers(unsigned place) {
    size_t shift = place * (STACK_STEP / sizeof(bench_elem_t));
    work = work_pool + shift;
    out_r = out_pool + shift;
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
        case OP_NTT_VEC:
            return k->ntt_vec != NULL;
        case OP_INTT_VEC:
            return k->intt_vec != NULL;
        default:
            return 1;
    }
}

static const char *const OP_NAMES[] = {"ntt",           "intt",    "basemul",
                                        "basemul_acc",   "basemul_acc_cached",
                                        "polymul",       "polymul_small",
                                        "ntt_vec",       "intt_vec"};

/* Whether the op takes a count k (of products or polynomials; timed for each k asked for). */
static int takes_k(int op) {
    return op == OP_BASEMUL_ACC || op == OP_BASEMUL_ACC_CACHED || op == OP_NTT_VEC ||
           op == OP_INTT_VEC;
}

#define MAX_KS 8

/* Untimed calls of a set for at least WARM_TICKS, just before its timed batch. The first
 * AVX-512 calls after other code run slower while the core brings up its 512-bit units (on an
 * Emerald Rapids, after AVX2 code the first three ML-DSA ntt calls took 1.8 times as long, about
 * 1,000 ticks more in all; AVX2 after AVX-512 one call 10 % longer), and with the sets in a
 * fixed order that cost fell on every sample of whichever AVX-512 set came first: 2-12 % of its
 * time. Warmed up, each batch starts in the state it is timed in. */
#define WARM_TICKS 4000

static void warm_up(const bench_kernels_t *k, const bench_elem_t *cache, enum op op, size_t kk,
                    unsigned place) {
    uint64_t t0 = ticks();
    do {
        (void)sample(k, cache, op, kk, 1, place);
    } while (ticks() - t0 < WARM_TICKS);
}

/* Times `nsets` kernel sets on one (op, k) for one round: `warmup` untimed samples, then
 * `count` samples, each of every set back to back at one placement, each batch warmed up
 * (warm_up); sample s of set i goes to out[i][first + s] as ticks per call. */
static void measure_round(const bench_kernels_t *sets, size_t nsets, enum op op, size_t kk,
                          int batch, int warmup, int count, int first, double *const *out) {
    if (op == OP_BASEMUL_ACC_CACHED) { /* each set's caches of in_b, untimed */
        for (size_t i = 0; i < nsets; ++i) {
            for (size_t j = 0; j < kk; ++j) {
                sets[i].basemul_cache(in_c[i] + j * BENCH_CACHE_N, in_b + j * BENCH_N);
            }
        }
    }
    for (int s = -warmup; s < count; ++s) {
        unsigned place = random_placement();
        place_buffers(random_placement());
        for (size_t i = 0; i < nsets; ++i) {
            warm_up(&sets[i], in_c[i], op, kk, place);
            uint64_t t = sample(&sets[i], in_c[i], op, kk, batch, place);
            if (s >= 0) {
                out[i][first + s] = (double)t / batch;
            }
        }
    }
}

int main(int argc, char **argv) {
    int samples = argc > 1 ? atoi(argv[1]) : 1000;
    int batch = argc > 2 ? atoi(argv[2]) : 100;
    int warmup = argc > 3 ? atoi(argv[3]) : 100;
    const char *ops = argc > 4 ? argv[4] : "ntt,intt,basemul,basemul_acc,polymul";
    const char *kvals = argc > 5 ? argv[5] : "3,5";
    int rounds = argc > 6 ? atoi(argv[6]) : 5;
    /* the placements' seed: the driver gives each process its own */
    placement_state ^= argc > 7 ? 0xbf58476d1ce4e5b9u * (uint64_t)strtoull(argv[7], NULL, 10) : 0;
    if (samples < 1 || batch < 1 || warmup < 0 || rounds < 1 ||
        samples < rounds) {
        fprintf(stderr, "usage: bench [samples>=rounds] [batch>=1] [warmup>=0] [ops] [k,...] "
                        "[rounds>=1] [seed]\n");
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
    /* samples[op][j][i]: the samples of kernel set i on (op, k = ks[j]) */
    double *store[OP_LAST + 1][MAX_KS][MAX_ISAS] = {{{NULL}}};
    for (int op = OP_NTT; op <= OP_LAST; ++op) {
        for (int j = 0; wanted[op] && j < (takes_k(op) ? nks : 1); ++j) {
            for (size_t i = 0; i < nisas; ++i) {
                store[op][j][i] = malloc(sizeof(double) * (size_t)samples);
                if (store[op][j][i] == NULL) {
                    fprintf(stderr, "out of memory\n");
                    return 2;
                }
            }
        }
    }
    for (int round = 0; round < rounds; ++round) {
        /* the samples are split between the rounds as evenly as they divide */
        int first = (int)((long)samples * round / rounds);
        int count = (int)((long)samples * (round + 1) / rounds) - first;
        for (int op = OP_NTT; op <= OP_LAST; ++op) {
            for (int j = 0; wanted[op] && j < (takes_k(op) ? nks : 1); ++j) {
                measure_round(BENCH_KERNELS, nisas, (enum op)op, ks[j], batch, warmup, count,
                              first, store[op][j]);
            }
        }
    }
    for (size_t i = 0; i < nisas; ++i) {
        for (int op = OP_NTT; op <= OP_LAST; ++op) {
            for (int j = 0; wanted[op] && j < (takes_k(op) ? nks : 1); ++j) {
                printf("{\"isa\": \"%s\", \"op\": \"%s\", \"k\": %d, \"unit\": \"%s\", "
                       "\"samples\": [",
                       BENCH_KERNELS[i].isa, OP_NAMES[op], takes_k(op) ? (int)ks[j] : 0,
                       TICKS_UNIT);
                for (int s = 0; s < samples; ++s) {
                    printf(s ? ", %.2f" : "%.2f", store[op][j][i][s]);
                }
                printf("]}\n");
                free(store[op][j][i]);
            }
        }
    }
    return 0;
}
