/*
 * CPU affinity, which the JDK cannot set: the CPUs a thread may run on, and
 * binding one thread (by its kernel id) to a list of CPUs. Co-located ranks
 * bind each of their threads to the rank's share of the host's CPUs, so that
 * the scheduler cannot stack two ranks' polling threads on one core.
 */
#ifndef KOLO_AFFINITY_H
#define KOLO_AFFINITY_H

#include <stdint.h>
#if defined(__linux__)
#include <errno.h>
#include <sched.h>
#endif

/* The CPUs the calling thread may run on, ascending, at most capacity of them written to out.
   Returns how many there are (may exceed capacity), or -1 where affinity is not supported. */
static inline int kolo_allowed_cpus(int* out, int capacity) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return -1;
    }
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (CPU_ISSET(c, &set)) {
            if (n < capacity) {
                out[n] = c;
            }
            n++;
        }
    }
    return n;
#else
    (void)out;
    (void)capacity;
    return -1;
#endif
}

/* Binds thread tid (0: the calling thread) to cpus[0, count). Returns 0, or the error number
   (ESRCH: the thread has ended; EINVAL: none of the CPUs is usable; -1: not supported). */
static inline int kolo_bind_thread(int tid, const int* cpus, int count) {
#if defined(__linux__)
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int i = 0; i < count; i++) {
        if (cpus[i] >= 0 && cpus[i] < CPU_SETSIZE) {
            CPU_SET(cpus[i], &set);
        }
    }
    return sched_setaffinity(tid, sizeof(set), &set) == 0 ? 0 : errno;
#else
    (void)tid;
    (void)cpus;
    (void)count;
    return -1;
#endif
}

#endif
