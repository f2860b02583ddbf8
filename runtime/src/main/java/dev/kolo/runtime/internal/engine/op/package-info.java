/**
 * The op as every stage holds it: {@code PendingOp} (a submitted op and the future its caller gets, one object
 * that the stages' queues and lists link through its own fields, so that a cached op allocates nothing else),
 * {@code NameSlot} (the registration of a name while its op is in flight) and {@code Deadlines} (bounded waits).
 * It sees the stages above only through {@code OpDriver} (what a waiting thread asks of the engine) and
 * {@code OpGeneration} (the generation it was submitted to), so that it names none of them.
 */
package dev.kolo.runtime.internal.engine.op;
