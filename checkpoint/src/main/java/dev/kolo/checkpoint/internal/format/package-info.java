/**
 * The bytes of a checkpoint and their checks: the manifest and its JSON codec, the data file's header,
 * CRC32C (computed in parallel) and the verification of a stored checkpoint, whatever the store. Depends
 * only on the API's id, exception and {@code StoredCheckpoint} types and {@code dev.kolo.runtime}: never on
 * a store or the save machinery, so every store reads and verifies alike.
 */
package dev.kolo.checkpoint.internal.format;
