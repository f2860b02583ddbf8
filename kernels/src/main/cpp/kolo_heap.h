/*
 * The C library's heap tuning, for processes whose engine allocates and frees
 * large tensors every step (DJL's PyTorch engine on CPU). glibc serves
 * allocations above a dynamic threshold (128 KiB at start) from fresh mmap'd
 * pages and trims its heap top as soon as 128 KiB are free: every step's
 * activations then pay page faults and zeroing again. Raising both thresholds
 * keeps those blocks in the heap for reuse.
 */
#ifndef KOLO_HEAP_H
#define KOLO_HEAP_H

#include <stdint.h>
#if defined(__GLIBC__)
#include <malloc.h>
#endif

/* 0: set; 1: not glibc (nothing to do); 2: refused by mallopt. */
static inline int kolo_heap_keep_large_blocks(int64_t mmap_threshold, int64_t trim_threshold) {
#if defined(__GLIBC__)
    if (mmap_threshold < 0 || mmap_threshold > INT32_MAX || trim_threshold < 0 || trim_threshold > INT32_MAX) {
        return 2;
    }
    int a = mallopt(M_MMAP_THRESHOLD, (int)mmap_threshold);
    int b = mallopt(M_TRIM_THRESHOLD, (int)trim_threshold);
    return a == 1 && b == 1 ? 0 : 2;
#else
    (void)mmap_threshold;
    (void)trim_threshold;
    return 1;
#endif
}

#endif
