/*
 * What a hand-off through shared memory costs each side: 1 MiB copied by a process on CPU 0 into a shared buffer,
 * then by a process on CPU 1 out of it, 50 times a round, plainly (memcpy) and with SSE2 streaming stores (as
 * Kolo's rings do for large pieces under KOLO_SHM_STREAM); each side's copy timed apart; 40 rounds half a second
 * apart, a line each. Run it beside placement.c to see which side pays when the machine's CPUs sit apart.
 *
 *   gcc -O2 -o split split.c && ./split
 */
#define _GNU_SOURCE
#include <emmintrin.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BYTES (1 << 20)

struct control { _Alignas(64) atomic_long cmd; _Alignas(64) atomic_long ack; _Alignas(64) double readNanos; };

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    sched_setaffinity(0, sizeof set, &set);
}

static void streamed(char *d, const char *s, size_t n) {
    for (size_t i = 0; i < n; i += 16) {
        _mm_stream_si128((__m128i *)(d + i), _mm_loadu_si128((const __m128i *)(s + i)));
    }
    _mm_sfence();
}

int main(void) {
    struct control *c = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    char *ring = mmap(0, BYTES, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    memset(ring, 1, BYTES);
    pid_t reader = fork();
    if (reader == 0) {
        pin(1);
        char *dst = aligned_alloc(4096, BYTES);
        memset(dst, 0, BYTES);
        for (long last = 0;;) {
            long cmd;
            while ((cmd = atomic_load(&c->cmd)) == last) {
            }
            if (cmd < 0) {
                _exit(0);
            }
            last = cmd;
            double t0 = now();
            memcpy(dst, ring, BYTES);
            c->readNanos += now() - t0;
            atomic_store(&c->ack, cmd);
        }
    }
    pin(0);
    char *src = aligned_alloc(4096, BYTES);
    memset(src, 2, BYTES);
    long seq = 0;
    const int n = 50;
    for (int round = 0; round < 40; round++) {
        double write[2] = {0, 0}, read[2] = {0, 0};
        for (int way = 0; way < 2; way++) {
            c->readNanos = 0;
            for (int k = 0; k < n; k++) {
                double t0 = now();
                if (way) {
                    streamed(ring, src, BYTES);
                } else {
                    memcpy(ring, src, BYTES);
                }
                write[way] += now() - t0;
                atomic_store(&c->cmd, ++seq);
                while (atomic_load(&c->ack) != seq) {
                }
            }
            read[way] = c->readNanos;
        }
        printf("plain: write %6.1f read %6.1f us | streamed: write %6.1f read %6.1f us\n", write[0] / n / 1000,
               read[0] / n / 1000, write[1] / n / 1000, read[1] / n / 1000);
        fflush(stdout);
        usleep(500000);
    }
    atomic_store(&c->cmd, -1);
    waitpid(reader, 0, 0);
    return 0;
}
