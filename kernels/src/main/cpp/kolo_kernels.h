/*
 * Kolo reduction kernels: the C ABI.
 *
 * Every entry point takes only integer codes, raw pointers, int64_t counts
 * and doubles, and returns an int status, so the same symbols can be bound by
 * JNI (JavaCPP, today) or by a java.lang.foreign downcall (tomorrow) with no
 * glue code. See kernels/README.md for the FunctionDescriptor of each one.
 *
 * Data is in native byte order. Pointers need no particular alignment.
 * dst and src may be the same pointer; partially overlapping ranges are
 * undefined. Nothing here allocates, blocks or keeps a pointer after return.
 */
#ifndef KOLO_KERNELS_H
#define KOLO_KERNELS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Element type codes: the same numbers as dev.kolo.kernels.ElementType#code(). */
enum {
    KOLO_FLOAT32 = 0,
    KOLO_FLOAT64 = 1,
    KOLO_FLOAT16 = 2,
    KOLO_BFLOAT16 = 3,
    KOLO_INT8 = 4,
    KOLO_UINT8 = 5,
    KOLO_INT32 = 6,
    KOLO_INT64 = 7
};

/* Reduction codes: the same numbers as dev.kolo.kernels.ReductionOp#code(). */
enum {
    KOLO_OP_SUM = 0,
    KOLO_OP_MIN = 1,
    KOLO_OP_MAX = 2,
    KOLO_OP_PRODUCT = 3
};

/* Return codes. */
enum {
    KOLO_OK = 0,
    KOLO_ERR_DTYPE = -1,       /* unknown element type code */
    KOLO_ERR_OP = -2,          /* unknown reduction code */
    KOLO_ERR_COUNT = -3,       /* negative element count */
    KOLO_ERR_NULL = -4,        /* null pointer with a non-zero count */
    KOLO_ERR_CONVERSION = -5   /* conversion between these two types not offered */
};

/* Instruction-set levels the dispatcher can pick. */
enum {
    KOLO_ISA_SCALAR = 0,  /* baseline of the target (SSE2 on x86-64), compiler-vectorised */
    KOLO_ISA_AVX2 = 1,    /* AVX2 + FMA + F16C */
    KOLO_ISA_AVX512 = 2   /* AVX-512 F/BW/DQ/VL + the AVX2 level */
};

/* dst[i] = op(dst[i], src[i]) for i in [0, count). */
int kolo_reduce(int dtype, int op, void* dst, const void* src, int64_t count);

/* dst[i] = op(dst[i], src[i]) * factor, rounded once for half types. */
int kolo_reduce_scale(int dtype, int op, void* dst, const void* src, int64_t count, double factor);

/* buf[i] = buf[i] * factor. */
int kolo_scale(int dtype, void* buf, int64_t count, double factor);

/* dst[i] = (dst_dtype) src[i]; FLOAT32 <-> FLOAT16/BFLOAT16 (round to nearest even) or same type. */
int kolo_convert(int dst_dtype, void* dst, int src_dtype, const void* src, int64_t count);

/* memmove of count bytes; the benchmark's copy baseline. */
int kolo_copy(void* dst, const void* src, int64_t count);

/*
 * Copies count bytes (the ranges must not overlap) for another core to read next: on x86-64 with
 * non-temporal stores, which go to memory past this core's caches, then an sfence, so that a store
 * that publishes the bytes afterwards cannot pass them. The reader then fetches the bytes from
 * memory, at the same speed wherever the two cores sit; from this core's cache they cross at the
 * speed of the path between the cores, which on a virtual machine changes from run to run.
 */
int kolo_copy_for_peer(void* dst, const void* src, int64_t count);

/* Level the dispatcher uses now. */
int kolo_isa(void);

/* Caps the level at max_level (tests, or to rule out a suspect path); returns the level now in use. */
int kolo_set_max_isa(int max_level);

/* The library's build (NativeKernels.ABI_VERSION): bumped on any change of these sources. */
int kolo_abi_version(void);

#ifdef __cplusplus
}
#endif

#endif
