/**
 * The live status page on the metrics port: what each rank reports about itself ({@link RankProgress}), the
 * board that gathers the job's facts on the coordinator's worker ({@link StatusBoard}, owned by
 * {@link StatusVerticle}), and the HTTP side ({@link StatusPage}: the page, {@code /status} and its
 * server-sent events). Read-only: nothing here changes the job, and no secret or environment value is shown.
 */
package dev.kolo.runtime.internal.status;
