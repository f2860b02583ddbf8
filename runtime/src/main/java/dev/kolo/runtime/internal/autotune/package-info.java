/**
 * Autotuning ({@code KOLO_AUTOTUNE}): rank 0's search over the engine's knobs (fusion threshold, the eager size
 * of cached steps, the coordinator's cycle time) during the job's first seconds, scoring each setting by the bytes
 * per second of the real steps. Pure decisions: the engine measures, carries the chosen values to every rank in
 * an agreement round and applies them there.
 */
package dev.kolo.runtime.internal.autotune;
