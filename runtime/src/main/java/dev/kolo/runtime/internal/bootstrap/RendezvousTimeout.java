package dev.kolo.runtime.internal.bootstrap;

import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.MemberAddress;
import dev.kolo.runtime.Settings;
import dev.kolo.runtime.internal.cluster.ClusterNode;
import dev.kolo.runtime.internal.control.ControlMessage.HelloReply;
import java.util.ArrayList;
import java.util.List;

/**
 * The message of a rendezvous that timed out: who arrived, who was never reached, and the causes that cannot
 * be seen from here (another secret, other TLS certificates), each with what to do about it.
 */
final class RendezvousTimeout {
    private RendezvousTimeout() {
    }

    /** @param reply the coordinator's last answer to this worker's hello, or null if none came */
    static String message(KoloConfig config, ClusterNode cluster, HelloReply reply) {
        StringBuilder m = new StringBuilder("rendezvous of job '").append(config.get(Settings.JOB)).append("' timed out after ")
                .append(config.get(Settings.RENDEZVOUS_TIMEOUT).toSeconds()).append(" s: ");
        if (reply != null) {
            int missing = Math.max(0, config.get(Settings.NP) - reply.arrived().size());
            m.append(reply.arrived().size()).append(" of ").append(config.get(Settings.NP)).append(" workers arrived (")
                    .append(String.join(", ", reply.arrived())).append("); start the missing ").append(missing)
                    .append(missing == 1 ? " worker" : " workers");
        } else {
            m.append("no coordinator answered; cluster members seen: ").append(cluster.memberAddresses())
                    .append("; start the other workers of the job");
        }
        List<String> unseen = unseenMembers(config, cluster);
        if (!unseen.isEmpty()) {
            m.append("; members never reached: ").append(String.join(", ", unseen))
                    .append(" (check KOLO_MEMBERS and that workers run there)");
        }
        m.append(", or lower KOLO_NP (--np), or raise KOLO_RENDEZVOUS_TIMEOUT");
        // Workers with different secrets form different clusters: say so, it is the one cause not visible here.
        m.append(config.isSet(Settings.JOB_SECRET) ? "; workers with another KOLO_JOB_SECRET (or none) form a separate cluster "
                + "and are never counted: set the same KOLO_JOB_SECRET on every worker"
                : "; this worker has no KOLO_JOB_SECRET and never meets workers that have one");
        if (config.tls()) {
            // Hazelcast (no TLS) lets them meet; only the TLS event bus keeps them apart: name the cause here too.
            m.append("; with TLS, workers whose certificates do not chain to each other's KOLO_TLS_CA, or that run "
                    + "without TLS, never exchange control messages (the log shows the failed TLS handshakes): give "
                    + "every worker KOLO_TLS_CERT/KOLO_TLS_KEY signed by the one job CA in KOLO_TLS_CA");
        }
        long rejected = cluster.rejectedControlMessages();
        if (rejected > 0) {
            m.append("; ").append(rejected).append(" control messages to this worker failed authentication (see "
                    + "the log)");
        }
        return m.toString();
    }

    private static List<String> unseenMembers(KoloConfig config, ClusterNode cluster) {
        List<String> unseen = new ArrayList<>();
        if (config.get(Settings.DISCOVERY) == Discovery.MEMBERS) {
            List<String> seen = cluster.memberAddresses();
            for (String m : config.get(Settings.MEMBERS)) {
                MemberAddress a = MemberAddress.parse(m);
                boolean found = seen.stream().anyMatch(s -> s.endsWith(":" + a.port())
                        && (s.startsWith(a.host() + ":") || sameHost(a.host(), s.substring(0, s.lastIndexOf(':')))));
                if (!found) {
                    unseen.add(a.toString());
                }
            }
        }
        return unseen;
    }

    private static boolean sameHost(String a, String b) {
        try {
            return java.net.InetAddress.getByName(a).equals(java.net.InetAddress.getByName(b));
        } catch (java.net.UnknownHostException e) {
            return false;
        }
    }
}
