/**
 * The machinery behind {@code Checkpointer}: the asynchronous saver and its staging buffer, retention and
 * metrics. May use the API's value and store types, {@code internal.format} and {@code internal.store};
 * not {@code Checkpointer} itself, which drives it.
 */
package dev.kolo.checkpoint.internal;
