/**
 * The flight recorder: each rank's ring of its last collective ops ({@link FlightRecorder}, {@code
 * KOLO_FLIGHT_RECORDER}), written as one JSON file per rank ({@code flight-rank-R.json}, {@link FlightDumpFile}) by a
 * background thread ({@link FlightDumper}) when an op waits past the stall warning, when an op fails, when the JVM
 * shuts down under a running worker and on request; and the analyser ({@link FlightAnalysis}) that reads every rank's
 * file of a job and names the culprit: a mismatched op, an op some ranks never submitted, a rank that left no record,
 * or the straggler the others wait for. Uses only the control plane's {@code OpSpec}: the engine records into it, the
 * observability package holds it, and nothing here reaches back into either.
 */
package dev.kolo.runtime.internal.flight;
