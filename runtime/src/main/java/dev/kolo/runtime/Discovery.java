package dev.kolo.runtime;

/** How workers of one job find each other. */
public enum Discovery {
    /** Workers on this machine find each other over loopback (TCP-IP join on 127.0.0.1, no multicast). */
    LOCAL,
    /** An explicit list of {@code host[:port]} cluster addresses ({@code KOLO_MEMBERS}). */
    MEMBERS,
    /** Hazelcast DNS discovery against a Kubernetes headless Service ({@code KOLO_SERVICE_DNS}). */
    KUBERNETES
}
