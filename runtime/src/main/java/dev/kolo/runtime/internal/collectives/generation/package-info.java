/**
 * A generation's data plane over its links: {@link dev.kolo.runtime.internal.collectives.generation.GenerationDataPlane}
 * numbers the engine's ops, checks each call's arguments ({@code RegionChecks}) and runs it with the algorithm its
 * {@link dev.kolo.runtime.internal.collectives.generation.AlgorithmTable} (built once per generation) picks by kind
 * and size.
 */
package dev.kolo.runtime.internal.collectives.generation;
