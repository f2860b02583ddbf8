package dev.kolo.runtime;

/** A {@code host[:port]} cluster address from {@code KOLO_MEMBERS}. */
public record MemberAddress(String host, int port) {

    public static MemberAddress parse(String s) {
        String v = s.trim();
        int colon = v.lastIndexOf(':');
        if (colon > 0 && v.indexOf(':') == colon) {
            String portText = v.substring(colon + 1);
            try {
                int port = Integer.parseInt(portText);
                if (port < 1 || port > 65535) {
                    throw new NumberFormatException();
                }
                return new MemberAddress(v.substring(0, colon), port);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("KOLO_MEMBERS entry '" + s + "' has an invalid port '" + portText
                        + "'; write host or host:port with a port of 1-65535");
            }
        }
        if (v.isEmpty()) {
            throw new IllegalArgumentException("KOLO_MEMBERS has an empty entry; write host[:port],host[:port],...");
        }
        return new MemberAddress(v, KoloConfig.DEFAULT_CLUSTER_PORT);
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
