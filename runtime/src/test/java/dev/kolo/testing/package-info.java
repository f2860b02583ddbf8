/**
 * Test support shared by every module's tests (published as the runtime's {@code tests} jar, test scope only):
 * fuzz limits, child JVMs and their output lines.
 */
package dev.kolo.testing;
