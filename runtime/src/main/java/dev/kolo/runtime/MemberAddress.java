package dev.kolo.runtime;

/** A {@code host[:port]} cluster address from {@code KOLO_MEMBERS}. */
public record MemberAddress(String host, int port) {

    /**
     * @param s {@code host} or {@code host:port}; a host is a name or IPv4 address (letters, digits, '.', '-',
     *        '_')
     * @throws IllegalArgumentException naming the entry and what is accepted
     */
    public static MemberAddress parse(String s) {
        String v = s.trim();
        String host = v.lastIndexOf(':') > 0 ? v.substring(0, v.lastIndexOf(':')) : v;
        if (!v.isEmpty() && !host.matches("[A-Za-z0-9][A-Za-z0-9._-]*")) {
            throw new IllegalArgumentException("KOLO_MEMBERS entry '" + s + "' is not a host name or IPv4 address");
        }
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
        return new MemberAddress(v, Settings.CLUSTER_PORT.defaultValue());
    }

    @Override
    public String toString() {
        return host + ":" + port;
    }
}
