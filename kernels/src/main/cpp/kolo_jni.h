/*
 * The one binding-specific helper: the address JavaCPP extracted from a
 * direct NIO buffer (GetDirectBufferAddress), returned as a number. A Panama
 * caller gets the same from MemorySegment.ofBuffer(buffer).address().
 */
#ifndef KOLO_JNI_H
#define KOLO_JNI_H

#include <stdint.h>

static inline int64_t kolo_buffer_address(const void* p) {
    return (int64_t)(intptr_t)p;
}

#endif
