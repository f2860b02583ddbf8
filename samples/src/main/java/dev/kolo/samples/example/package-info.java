/**
 * A program of its own, written the way a user writes one: only Kolo's public API, settings from the
 * environment that {@code worker.jar launch} gives every worker. Depends on the runtime's API alone.
 */
package dev.kolo.samples.example;
