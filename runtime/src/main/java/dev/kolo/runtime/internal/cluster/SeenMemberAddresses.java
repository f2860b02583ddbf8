package dev.kolo.runtime.internal.cluster;

import com.hazelcast.cluster.Member;
import com.hazelcast.config.TcpIpConfig;
import com.hazelcast.core.HazelcastInstance;
import dev.kolo.runtime.Discovery;
import dev.kolo.runtime.KoloConfig;
import dev.kolo.runtime.Settings;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * Under {@code local} discovery, narrows the addresses Hazelcast probes to the members this worker has seen.
 *
 * <p>A worker that was cut off (frozen past the heartbeat timeout, then continued) is left as a cluster of its
 * own; Hazelcast's split-brain search merges it back into the job's cluster, but it probes every address of
 * the join list in turn and waits 5 s on each that does not answer: with the 20 loopback ports of {@code local}
 * discovery, a minute or more, past most elastic timeouts. The workers it has seen are where the job's cluster
 * lives, so once the cluster has formed the list becomes those addresses (Hazelcast's TCP-IP joiner re-reads it
 * on every search). New workers still join through their own full list.
 *
 * <p>Hazelcast's list is not made for changes while it runs: a search that reads it while a member is added
 * here can fail that round (Hazelcast logs it and searches again 5 s later). Changes come only when a member
 * joins, which is rare; at worst the merge is one round later.
 */
final class SeenMemberAddresses {
    private final TcpIpConfig tcp;
    private final Set<String> seen = new LinkedHashSet<>();

    private SeenMemberAddresses(TcpIpConfig tcp) {
        this.tcp = tcp;
    }

    /** @return a tracker for a {@code local} worker's instance, or null for other discoveries */
    static SeenMemberAddresses of(KoloConfig config, HazelcastInstance hz) {
        if (config.get(Settings.DISCOVERY) != Discovery.LOCAL) {
            return null;
        }
        SeenMemberAddresses s = new SeenMemberAddresses(hz.getConfig().getNetworkConfig().getJoin().getTcpIpConfig());
        s.update(hz.getCluster().getMembers());
        return s;
    }

    /** Adds the members' addresses (never removes: a lost worker's address may be the way back). */
    synchronized void update(Set<Member> members) {
        boolean added = false;
        for (Member m : members) {
            added |= seen.add(m.getAddress().getHost() + ":" + m.getAddress().getPort());
        }
        if (added && seen.size() > 1) {
            tcp.setMembers(new ArrayList<>(seen));
        }
    }
}
