/**
 * Where checkpoints live: the local directory (with its {@code latest} pointer and fsync helpers) and the
 * in-memory cluster replica, both implementing the API's {@code CheckpointStore}. May use
 * {@code internal.format}; not the save machinery in {@code internal}.
 */
package dev.kolo.checkpoint.internal.store;
