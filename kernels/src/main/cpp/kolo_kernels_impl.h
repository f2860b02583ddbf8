/*
 * Implementation of kolo_kernels.h, header-only because JavaCPP compiles the
 * headers named in @Platform(include=...) into its single JNI translation unit.
 *
 * Runtime dispatch: the kernel bodies (kolo_kernels_body.inc) are compiled
 * once per instruction-set level, each copy inside "#pragma GCC target", and
 * the best level the CPU and OS support is chosen on first use. The library
 * itself is built for the baseline target (no -march=native), so one binary
 * runs on any x86-64 and uses AVX2 / AVX-512 where present. A pragma region,
 * rather than target_clones, lets one region use F16C intrinsics while the
 * baseline copy keeps a scalar conversion, and lets tests pin a level.
 */
#ifndef KOLO_KERNELS_IMPL_H
#define KOLO_KERNELS_IMPL_H

#include "kolo_kernels.h"

#include <stdint.h>
#include <string.h>
#include <limits>
#if defined(__x86_64__) && defined(__GNUC__)
#define KOLO_X86 1
#include <immintrin.h>
#else
#define KOLO_X86 0
#endif

namespace kolo {

// aligned(1): element pointers may sit at any byte offset (the vectoriser then
// emits unaligned loads); may_alias: callers hand us untyped memory.
typedef float uf32 __attribute__((aligned(1), may_alias));
typedef double uf64 __attribute__((aligned(1), may_alias));
typedef uint16_t u16 __attribute__((aligned(1), may_alias));
typedef int32_t ui32 __attribute__((aligned(1), may_alias));
typedef int64_t ui64 __attribute__((aligned(1), may_alias));

static inline uint32_t bits_of(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float float_of(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

template <typename F> struct Bits;
template <> struct Bits<float> {
    typedef uint32_t type;
    static inline uint32_t of(float f) { return bits_of(f); }
    static inline float from(uint32_t u) { return float_of(u); }
};
template <> struct Bits<double> {
    typedef uint64_t type;
    static inline uint64_t of(double f) { uint64_t u; memcpy(&u, &f, 8); return u; }
    static inline double from(uint64_t u) { double f; memcpy(&f, &u, 8); return f; }
};

// Scalar half conversions; bit-identical to F16C (checked exhaustively) and to
// dev.kolo.kernels.HalfFloats. NaN stays NaN (quietened, payload top bits kept).
static inline float f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t e = (h >> 10) & 0x1Fu, m = h & 0x3FFu;
    if (e == 0x1F) return float_of(sign | 0x7F800000u | (m << 13) | (m ? 0x400000u : 0u));
    if (e != 0) return float_of(sign | ((e + 112u) << 23) | (m << 13));
    return float_of(sign | bits_of((float)m * 5.9604644775390625e-8f));  // m * 2^-24, exact
}

static inline uint16_t f32_to_f16(float f) {
    uint32_t x = bits_of(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t a = x & 0x7FFFFFFFu;
    if (a >= 0x7F800000u) return (uint16_t)(sign | 0x7C00u | (a > 0x7F800000u ? 0x200u | ((a >> 13) & 0x3FFu) : 0u));
    if (a >= 0x477FF000u) return (uint16_t)(sign | 0x7C00u);   // rounds past 65504: infinity
    if (a >= 0x38800000u) {                                      // normal half
        uint32_t r = a - 0x38000000u;                            // rebias exponent 127 -> 15
        r += 0xFFFu + ((r >> 13) & 1u);                          // round to nearest even
        return (uint16_t)(sign | (r >> 13));
    }
    if (a <= 0x33000000u) return (uint16_t)sign;                 // <= 2^-25: ties to even zero
    uint32_t e = a >> 23, m = (a & 0x7FFFFFu) | 0x800000u;
    uint32_t s = 126u - e;                                       // 14..23: units of 2^-24
    uint32_t q = m >> s, rem = m & ((1u << s) - 1u), halfway = 1u << (s - 1u);
    if (rem > halfway || (rem == halfway && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

static inline float bf16_to_f32(uint16_t h) { return float_of((uint32_t)h << 16); }

static inline uint16_t f32_to_bf16(float f) {
    uint32_t x = bits_of(f);
    uint32_t nan = (x & 0x7FFFFFFFu) > 0x7F800000u;
    uint32_t rounded = (x + 0x7FFFu + ((x >> 16) & 1u)) >> 16;
    return (uint16_t)(nan ? (x >> 16) | 0x40u : rounded);
}

// Scaled integers: computed in double, truncated toward zero, saturated to the
// type's range, NaN -> 0 (what Java's (int)/(long) casts do).
template <typename S> static inline S sat_trunc(double r) {
    const double lo = (double)std::numeric_limits<S>::min();
    const double hi = (double)std::numeric_limits<S>::max();  // 2^63 for int64: r >= it saturates
    if (sizeof(S) <= 4) {  // the range fits a double exactly: branch-free clamp, which vectorises
        double c = r < lo ? lo : r;
        c = c > hi ? hi : c;
        return (S)(int32_t)(c != c ? 0.0 : c);
    }
    if (r != r) return 0;
    if (r <= lo) return std::numeric_limits<S>::min();
    if (r >= hi) return std::numeric_limits<S>::max();
    return (S)r;
}

namespace scalar {
#define KOLO_REGION_F16C 0
#include "kolo_kernels_body.inc"
#undef KOLO_REGION_F16C
}

#if KOLO_X86
#pragma GCC push_options
#pragma GCC target("avx2,fma,f16c")
namespace avx2 {
#define KOLO_REGION_F16C 1
#include "kolo_kernels_body.inc"
#undef KOLO_REGION_F16C
}
#pragma GCC pop_options

#pragma GCC push_options
#pragma GCC target("avx512f,avx512bw,avx512dq,avx512vl,avx2,fma,f16c")
namespace avx512 {
#define KOLO_REGION_F16C 1
#include "kolo_kernels_body.inc"
#undef KOLO_REGION_F16C
}
#pragma GCC pop_options
#endif

struct Impl {
    int level;
    int (*reduce)(int, int, void*, const void*, int64_t, int, double);
    int (*scale)(int, void*, int64_t, double);
    int (*convert)(int, void*, int, const void*, int64_t);
};

static const Impl IMPLS[] = {
    {KOLO_ISA_SCALAR, scalar::reduce, scalar::scale, scalar::convert},
#if KOLO_X86
    {KOLO_ISA_AVX2, avx2::reduce, avx2::scale, avx2::convert},
    {KOLO_ISA_AVX512, avx512::reduce, avx512::scale, avx512::convert},
#endif
};

static int supported_level() {
#if KOLO_X86
    __builtin_cpu_init();  // we may run before libgcc's constructor
    // __builtin_cpu_supports also checks that the OS saves the wider registers.
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") && __builtin_cpu_supports("f16c");
    int avx512 = avx2 && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
            && __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
    return avx512 ? KOLO_ISA_AVX512 : avx2 ? KOLO_ISA_AVX2 : KOLO_ISA_SCALAR;
#else
    return KOLO_ISA_SCALAR;
#endif
}

static const Impl* volatile g_impl = 0;  // a racy first use picks the same value twice: harmless

static const Impl* impl() {
    const Impl* p = g_impl;
    if (!p) g_impl = p = &IMPLS[supported_level()];
    return p;
}

static int check(const void* dst, const void* src, int64_t count) {
    if (count < 0) return KOLO_ERR_COUNT;
    if (count > 0 && (!dst || !src)) return KOLO_ERR_NULL;
    return KOLO_OK;
}

static int size_of(int dtype) {
    switch (dtype) {
    case KOLO_FLOAT32: case KOLO_INT32: return 4;
    case KOLO_FLOAT64: case KOLO_INT64: return 8;
    case KOLO_FLOAT16: case KOLO_BFLOAT16: return 2;
    case KOLO_INT8: case KOLO_UINT8: return 1;
    default: return 0;
    }
}

}  // namespace kolo

extern "C" {

int kolo_reduce(int dtype, int op, void* dst, const void* src, int64_t count) {
    int rc = kolo::check(dst, src, count);
    return rc ? rc : kolo::impl()->reduce(dtype, op, dst, src, count, 0, 1.0);
}

int kolo_reduce_scale(int dtype, int op, void* dst, const void* src, int64_t count, double factor) {
    int rc = kolo::check(dst, src, count);
    return rc ? rc : kolo::impl()->reduce(dtype, op, dst, src, count, 1, factor);
}

int kolo_scale(int dtype, void* buf, int64_t count, double factor) {
    int rc = kolo::check(buf, buf, count);
    return rc ? rc : kolo::impl()->scale(dtype, buf, count, factor);
}

int kolo_convert(int dst_dtype, void* dst, int src_dtype, const void* src, int64_t count) {
    if (!kolo::size_of(dst_dtype) || !kolo::size_of(src_dtype)) return KOLO_ERR_DTYPE;
    int rc = kolo::check(dst, src, count);
    if (rc) return rc;
    if (dst_dtype == src_dtype) {
        if (count) memmove(dst, src, (size_t)count * kolo::size_of(dst_dtype));
        return KOLO_OK;
    }
    return kolo::impl()->convert(dst_dtype, dst, src_dtype, src, count);
}

int kolo_copy(void* dst, const void* src, int64_t count) {
    int rc = kolo::check(dst, src, count);
    if (!rc && count) memmove(dst, src, (size_t)count);
    return rc;
}

int kolo_copy_for_peer(void* dst, const void* src, int64_t count) {
    int rc = kolo::check(dst, src, count);
    if (rc || !count) return rc;
#if KOLO_X86
    // SSE2 streaming stores are in every x86-64 and fill the write-combining buffers as fast as wider ones.
    char* d = (char*)dst;
    const char* s = (const char*)src;
    size_t n = (size_t)count;
    size_t head = (size_t)(-(uintptr_t)d & 63);  // whole lines only: a partial line would be read for ownership
    if (head > n) head = n;
    memcpy(d, s, head);
    d += head;
    s += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, s += 64) {
        __m128i a = _mm_loadu_si128((const __m128i*)s);
        __m128i b = _mm_loadu_si128((const __m128i*)(s + 16));
        __m128i c = _mm_loadu_si128((const __m128i*)(s + 32));
        __m128i e = _mm_loadu_si128((const __m128i*)(s + 48));
        _mm_stream_si128((__m128i*)d, a);
        _mm_stream_si128((__m128i*)(d + 16), b);
        _mm_stream_si128((__m128i*)(d + 32), c);
        _mm_stream_si128((__m128i*)(d + 48), e);
    }
    memcpy(d, s, n);
    _mm_sfence();
#else
    memcpy(dst, src, (size_t)count);
#endif
    return 0;
}

int kolo_isa(void) { return kolo::impl()->level; }

int kolo_set_max_isa(int max_level) {
    int level = kolo::supported_level();
    if (max_level < level) level = max_level < 0 ? 0 : max_level;
    kolo::g_impl = &kolo::IMPLS[level];
    return level;
}

int kolo_abi_version(void) { return 2; }

}  // extern "C"

#endif
