package dev.kolo.checkpoint.internal.format;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small, strict JSON (RFC 8259) reader and writer for manifests and user metadata.
 *
 * <p>Values map to Java as: object → {@link LinkedHashMap} (member order kept, duplicate names
 * rejected), array → {@link List}, string → {@link String}, number → {@link Num} (the exact lexeme,
 * so numbers round-trip unchanged), {@code true}/{@code false} → {@link Boolean}, {@code null} →
 * {@link #NULL}. Anything outside the grammar (trailing commas, comments, single quotes, leading
 * zeros, control characters in strings, lone surrogates, trailing content) is an error that names the
 * byte position.
 */
public final class Json {
    /** The JSON {@code null} value (a Java null cannot live in a map value slot unambiguously). */
    static final Object NULL = new Object() {
        @Override
        public String toString() {
            return "null";
        }
    };

    private static final int MAX_DEPTH = 256;

    /** A JSON number, kept as its exact text. */
    public record Num(String lexeme) {
        public long longValue() {
            try {
                return Long.parseLong(lexeme);
            } catch (NumberFormatException e) {
                throw new JsonException("expected an integer that fits 64 bits, found " + lexeme);
            }
        }

        public double doubleValue() {
            return Double.parseDouble(lexeme);
        }

        @Override
        public String toString() {
            return lexeme;
        }
    }

    /** A syntax or type error; the message says what and where. */
    public static final class JsonException extends RuntimeException {
        private static final long serialVersionUID = 1L;

        JsonException(String message) {
            super(message);
        }
    }

    private final String text;
    private int pos;

    private Json(String text) {
        this.text = text;
    }

    /** Parses one JSON value that must make up the whole text (surrounding whitespace allowed). */
    public static Object parse(String text) {
        Json p = new Json(text);
        p.skipWhitespace();
        Object value = p.readValue(0);
        p.skipWhitespace();
        if (p.pos != text.length()) {
            throw p.error("unexpected content after the JSON value");
        }
        return value;
    }

    private Object readValue(int depth) {
        if (depth > MAX_DEPTH) {
            throw error("nesting deeper than " + MAX_DEPTH);
        }
        if (pos >= text.length()) {
            throw error("unexpected end of input");
        }
        char c = text.charAt(pos);
        switch (c) {
            case '{':
                return readObject(depth);
            case '[':
                return readArray(depth);
            case '"':
                return readString();
            case 't':
                expectWord("true");
                return Boolean.TRUE;
            case 'f':
                expectWord("false");
                return Boolean.FALSE;
            case 'n':
                expectWord("null");
                return NULL;
            default:
                if (c == '-' || (c >= '0' && c <= '9')) {
                    return readNumber();
                }
                throw error("unexpected character '" + printable(c) + "'");
        }
    }

    private Map<String, Object> readObject(int depth) {
        pos++; // '{'
        Map<String, Object> map = new LinkedHashMap<>();
        skipWhitespace();
        if (peek() == '}') {
            pos++;
            return map;
        }
        while (true) {
            skipWhitespace();
            if (peek() != '"') {
                throw error("expected a member name in double quotes");
            }
            int keyPos = pos;
            String key = readString();
            skipWhitespace();
            expect(':');
            skipWhitespace();
            Object value = readValue(depth + 1);
            if (map.put(key, value) != null) {
                pos = keyPos;
                throw error("duplicate member name \"" + key + "\"");
            }
            skipWhitespace();
            char c = peek();
            pos++;
            if (c == '}') {
                return map;
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or '}' in object");
            }
        }
    }

    private List<Object> readArray(int depth) {
        pos++; // '['
        List<Object> list = new ArrayList<>();
        skipWhitespace();
        if (peek() == ']') {
            pos++;
            return list;
        }
        while (true) {
            skipWhitespace();
            list.add(readValue(depth + 1));
            skipWhitespace();
            char c = peek();
            pos++;
            if (c == ']') {
                return list;
            }
            if (c != ',') {
                pos--;
                throw error("expected ',' or ']' in array");
            }
        }
    }

    private String readString() {
        pos++; // opening quote
        StringBuilder sb = new StringBuilder();
        while (true) {
            if (pos >= text.length()) {
                throw error("unterminated string");
            }
            char c = text.charAt(pos++);
            if (c == '"') {
                return sb.toString();
            }
            if (c < 0x20) {
                pos--;
                throw error("unescaped control character in string");
            }
            if (Character.isSurrogate(c)) {
                if (Character.isHighSurrogate(c) && pos < text.length() && Character.isLowSurrogate(text.charAt(pos))) {
                    sb.append(c).append(text.charAt(pos++));
                    continue;
                }
                pos--;
                throw error("lone surrogate in string");
            }
            if (c != '\\') {
                sb.append(c);
                continue;
            }
            if (pos >= text.length()) {
                throw error("unterminated escape");
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"': sb.append('"'); break;
                case '\\': sb.append('\\'); break;
                case '/': sb.append('/'); break;
                case 'b': sb.append('\b'); break;
                case 'f': sb.append('\f'); break;
                case 'n': sb.append('\n'); break;
                case 'r': sb.append('\r'); break;
                case 't': sb.append('\t'); break;
                case 'u': {
                    char u = readHex4();
                    if (Character.isHighSurrogate(u)) {
                        if (pos + 1 < text.length() && text.charAt(pos) == '\\' && text.charAt(pos + 1) == 'u') {
                            pos += 2;
                            char low = readHex4();
                            if (!Character.isLowSurrogate(low)) {
                                throw error("high surrogate escape not followed by a low surrogate escape");
                            }
                            sb.append(u).append(low);
                        } else {
                            throw error("lone surrogate escape in string");
                        }
                    } else if (Character.isLowSurrogate(u)) {
                        throw error("lone surrogate escape in string");
                    } else {
                        sb.append(u);
                    }
                    break;
                }
                default:
                    pos--;
                    throw error("invalid escape '\\" + printable(e) + "'");
            }
        }
    }

    private char readHex4() {
        if (pos + 4 > text.length()) {
            throw error("truncated \\u escape");
        }
        int v = 0;
        for (int i = 0; i < 4; i++) {
            int d = Character.digit(text.charAt(pos + i), 16);
            if (d < 0) {
                throw error("invalid hex digit in \\u escape");
            }
            v = (v << 4) | d;
        }
        pos += 4;
        return (char) v;
    }

    private Num readNumber() {
        int start = pos;
        if (peek() == '-') {
            pos++;
        }
        if (peek() == '0') {
            pos++;
            if (isDigit(peek())) {
                throw error("leading zero in number");
            }
        } else if (isDigit(peek())) {
            while (isDigit(peek())) {
                pos++;
            }
        } else {
            throw error("expected a digit");
        }
        if (peek() == '.') {
            pos++;
            if (!isDigit(peek())) {
                throw error("expected a digit after the decimal point");
            }
            while (isDigit(peek())) {
                pos++;
            }
        }
        if (peek() == 'e' || peek() == 'E') {
            pos++;
            if (peek() == '+' || peek() == '-') {
                pos++;
            }
            if (!isDigit(peek())) {
                throw error("expected a digit in the exponent");
            }
            while (isDigit(peek())) {
                pos++;
            }
        }
        return new Num(text.substring(start, pos));
    }

    private static boolean isDigit(char c) {
        return c >= '0' && c <= '9';
    }

    private void expectWord(String word) {
        if (!text.startsWith(word, pos)) {
            throw error("invalid literal (expected " + word + ")");
        }
        pos += word.length();
    }

    private void expect(char c) {
        if (peek() != c) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    /** @return the current character, or 0 at the end (0 is never valid JSON outside strings) */
    private char peek() {
        return pos < text.length() ? text.charAt(pos) : 0;
    }

    private void skipWhitespace() {
        while (pos < text.length()) {
            char c = text.charAt(pos);
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
                return;
            }
            pos++;
        }
    }

    private JsonException error(String what) {
        if (pos >= text.length()) {
            return new JsonException(what + " at end of input (character " + text.length() + ")");
        }
        return new JsonException(what + " at character " + pos);
    }

    private static String printable(char c) {
        return c < 0x20 || c > 0x7e ? String.format("\\u%04x", (int) c) : String.valueOf(c);
    }

    // ---------------------------------------------------------------- writing

    /** @return the value as compact JSON (no whitespace) */
    public static String write(Object value) {
        StringBuilder sb = new StringBuilder();
        writeTo(sb, value);
        return sb.toString();
    }

    /** Appends {@code value} as compact JSON. */
    static void writeTo(StringBuilder sb, Object value) {
        if (value == null || value == NULL) {
            sb.append("null");
        } else if (value instanceof String s) {
            quote(sb, s);
        } else if (value instanceof Num n) {
            sb.append(n.lexeme());
        } else if (value instanceof Boolean b) {
            sb.append(b.booleanValue());
        } else if (value instanceof Long || value instanceof Integer) {
            sb.append(value);
        } else if (value instanceof Double d) {
            if (d.isNaN() || d.isInfinite()) {
                throw new JsonException("JSON has no representation for " + d);
            }
            sb.append(d);
        } else if (value instanceof Map<?, ?> m) {
            sb.append('{');
            boolean first = true;
            for (Map.Entry<?, ?> e : m.entrySet()) {
                if (!first) {
                    sb.append(',');
                }
                first = false;
                quote(sb, (String) e.getKey());
                sb.append(':');
                writeTo(sb, e.getValue());
            }
            sb.append('}');
        } else if (value instanceof List<?> l) {
            sb.append('[');
            for (int i = 0; i < l.size(); i++) {
                if (i > 0) {
                    sb.append(',');
                }
                writeTo(sb, l.get(i));
            }
            sb.append(']');
        } else {
            throw new JsonException("cannot write " + value.getClass().getName() + " as JSON");
        }
    }

    /** Appends {@code s} as a JSON string literal (non-ASCII kept as is; the file is UTF-8). */
    static void quote(StringBuilder sb, String s) {
        sb.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"': sb.append("\\\""); break;
                case '\\': sb.append("\\\\"); break;
                case '\n': sb.append("\\n"); break;
                case '\r': sb.append("\\r"); break;
                case '\t': sb.append("\\t"); break;
                case '\b': sb.append("\\b"); break;
                case '\f': sb.append("\\f"); break;
                default:
                    if (c < 0x20 || Character.isSurrogate(c) && !validSurrogateAt(s, i)) {
                        sb.append(String.format("\\u%04x", (int) c));
                    } else {
                        sb.append(c);
                    }
            }
        }
        sb.append('"');
    }

    private static boolean validSurrogateAt(String s, int i) {
        char c = s.charAt(i);
        if (Character.isHighSurrogate(c)) {
            return i + 1 < s.length() && Character.isLowSurrogate(s.charAt(i + 1));
        }
        return i > 0 && Character.isHighSurrogate(s.charAt(i - 1));
    }

    // ---------------------------------------------------------------- typed access for decoders

    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(Object v, String what) {
        if (v instanceof Map) {
            return (Map<String, Object>) v;
        }
        throw new JsonException(what + " must be a JSON object");
    }

    @SuppressWarnings("unchecked")
    public static List<Object> array(Object v, String what) {
        if (v instanceof List) {
            return (List<Object>) v;
        }
        throw new JsonException(what + " must be a JSON array");
    }

    public static Object member(Map<String, Object> obj, String name, String where) {
        Object v = obj.get(name);
        if (v == null) {
            throw new JsonException(where + " has no \"" + name + "\" field");
        }
        return v;
    }

    public static String string(Map<String, Object> obj, String name, String where) {
        Object v = member(obj, name, where);
        if (v instanceof String s) {
            return s;
        }
        throw new JsonException(where + " field \"" + name + "\" must be a string");
    }

    public static long integer(Map<String, Object> obj, String name, String where) {
        Object v = member(obj, name, where);
        if (v instanceof Num n) {
            try {
                return Long.parseLong(n.lexeme());
            } catch (NumberFormatException e) {
                throw new JsonException(where + " field \"" + name + "\" must be a 64-bit integer, found " + n);
            }
        }
        throw new JsonException(where + " field \"" + name + "\" must be a number");
    }
}
