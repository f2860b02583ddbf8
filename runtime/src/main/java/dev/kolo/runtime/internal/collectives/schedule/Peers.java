package dev.kolo.runtime.internal.collectives.schedule;

import dev.kolo.runtime.internal.transport.Link;
import dev.kolo.runtime.internal.transport.Schedule;
import dev.kolo.runtime.internal.transport.Transport;
import dev.kolo.runtime.internal.transport.connect.PeerLinks;
import java.nio.ByteBuffer;

/**
 * The ranks an algorithm runs among and this rank's links to each (Gloo's context as an algorithm sees it): the whole
 * generation, or a part of it, such as the ranks of one host or one rank of each host. Ranks are counted within the
 * group, and the ring is the group's ring ({@link #left} from rank - 1, {@link #right} to rank + 1). Every group of a
 * generation shares the generation's {@link Transport}, which pumps the frames, and its staging buffer: one op runs at
 * a time.
 */
public final class Peers {
    public final Transport transport;
    /** This rank within the group. */
    public final int rank;
    public final int size;
    /** The link this rank sends to group rank j on (null for itself). */
    public final Link[] sendLinks;
    /** The link this rank receives from group rank j on (null for itself). */
    public final Link[] recvLinks;
    /** The link from group rank - 1, or null in a group of one. */
    public final Link left;
    /** The link to group rank + 1, or null in a group of one. */
    public final Link right;

    private Peers(Transport transport, int rank, int size, Link[] sendLinks, Link[] recvLinks, Link left, Link right) {
        this.transport = transport;
        this.rank = rank;
        this.size = size;
        this.sendLinks = sendLinks;
        this.recvLinks = recvLinks;
        this.left = left;
        this.right = right;
    }

    /** @return the whole generation over its connections */
    public static Peers of(PeerLinks links) {
        Transport t = links.transport();
        return new Peers(t, t.rank, t.size, links.sendLinks(), links.recvLinks(), links.left(), links.right());
    }

    /**
     * @param members the generation ranks of the group, in group rank order; this rank is one of them, and it has
     *        links to every other (a generation of 4 or more ranks connects every pair; smaller ones are all ring
     *        neighbours)
     * @return the group, with its own ring
     */
    public Peers subgroup(int[] members) {
        int k = members.length;
        Link[] send = new Link[k];
        Link[] recv = new Link[k];
        int me = -1;
        for (int i = 0; i < k; i++) {
            if (members[i] == rank) {
                me = i;
            } else {
                send[i] = sendLinks[members[i]];
                recv[i] = recvLinks[members[i]];
                if (send[i] == null || recv[i] == null) {
                    throw new IllegalArgumentException("rank " + rank + " has no link to rank " + members[i]);
                }
            }
        }
        if (me < 0) {
            throw new IllegalArgumentException("rank " + rank + " is not one of " + java.util.Arrays.toString(members));
        }
        Link right = k == 1 ? null : send[(me + 1) % k];
        Link left = k == 1 ? null : recv[(me - 1 + k) % k];
        return new Peers(transport, me, k, send, recv, left, right);
    }

    /** Runs {@code s} with group rank {@code partner}: its sends go to it, its receives come from it. */
    public void exchange(Schedule s, int partner, long seq) {
        transport.run(s, sendLinks[partner], recvLinks[partner], seq);
    }

    /** Runs {@code s} around the group's ring: its sends go to the right, its receives come from the left. */
    public void aroundRing(Schedule s, long seq) {
        transport.run(s, right, left, seq);
    }

    /** @return the staging buffer chunks are received into before they are reduced (the transport's) */
    public ByteBuffer staging() {
        return transport.staging;
    }
}
