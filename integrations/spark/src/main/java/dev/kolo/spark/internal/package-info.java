/**
 * Internal: the barrier task each rank runs, the {@code spark.kolo.*} settings and the slot check. Not an API.
 */
package dev.kolo.spark.internal;
