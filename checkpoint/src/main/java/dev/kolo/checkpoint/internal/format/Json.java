package dev.kolo.checkpoint.internal.format;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.core.io.JsonStringEncoder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A strict JSON (RFC 8259) reader and writer for manifests and user metadata, on Jackson's streaming parser.
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

    private static final JsonFactory FACTORY = JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(StreamReadConstraints.builder().maxNestingDepth(MAX_DEPTH).build())
            .build();

    private Json() {
    }

    /** Parses one JSON value that must make up the whole text (surrounding whitespace allowed). */
    public static Object parse(String text) {
        try (JsonParser p = FACTORY.createParser(text)) {
            if (p.nextToken() == null) {
                throw new JsonException("no JSON value: unexpected end of input");
            }
            Object value = readValue(p);
            if (p.nextToken() != null) {
                throw new JsonException("unexpected content after the JSON value at " + position(p));
            }
            return value;
        } catch (JsonProcessingException e) {
            // Jackson's message names the character or the end of input; the position is ours to add.
            throw new JsonException(e.getOriginalMessage().split("\n", 2)[0] + " at "
                    + (e.getLocation() == null ? "end of input" : "character " + e.getLocation().getCharOffset()));
        } catch (IOException e) {
            throw new UncheckedIOException(e); // a String source has no I/O to fail
        }
    }

    private static Object readValue(JsonParser p) throws IOException {
        JsonToken t = p.currentToken();
        switch (t) {
            case START_OBJECT: {
                Map<String, Object> map = new LinkedHashMap<>();
                while (p.nextToken() == JsonToken.FIELD_NAME) {
                    String name = checked(p, p.currentName());
                    p.nextToken();
                    map.put(name, readValue(p));
                }
                return map;
            }
            case START_ARRAY: {
                List<Object> list = new ArrayList<>();
                while (p.nextToken() != JsonToken.END_ARRAY) {
                    list.add(readValue(p));
                }
                return list;
            }
            case VALUE_STRING:
                return checked(p, p.getText());
            case VALUE_NUMBER_INT:
            case VALUE_NUMBER_FLOAT:
                return new Num(p.getText()); // the exact lexeme, so numbers round-trip unchanged
            case VALUE_TRUE:
                return Boolean.TRUE;
            case VALUE_FALSE:
                return Boolean.FALSE;
            case VALUE_NULL:
                return NULL;
            default:
                throw new JsonException("unexpected token " + t + " at " + position(p));
        }
    }

    /** Jackson decodes a lone surrogate escape ({@code "\ud800"}) into a string no UTF-8 file can hold. */
    private static String checked(JsonParser p, String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.isSurrogate(s.charAt(i)) && !validSurrogateAt(s, i)) {
                throw new JsonException("unpaired surrogate character in a string at " + position(p));
            }
        }
        return s;
    }

    private static String position(JsonParser p) {
        return "character " + p.currentLocation().getCharOffset();
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

    /**
     * Appends {@code s} as a JSON string literal, escaped by Jackson (non-ASCII kept as is; the file is UTF-8); a
     * lone surrogate, which no UTF-8 file can hold, is written as its escape.
     */
    static void quote(StringBuilder sb, String s) {
        sb.append('"');
        int from = 0;
        for (int i = 0; i < s.length(); i++) {
            if (Character.isSurrogate(s.charAt(i)) && !validSurrogateAt(s, i)) {
                JsonStringEncoder.getInstance().quoteAsString(s.subSequence(from, i), sb);
                sb.append(String.format("\\u%04x", (int) s.charAt(i)));
                from = i + 1;
            }
        }
        JsonStringEncoder.getInstance().quoteAsString(s.subSequence(from, s.length()), sb);
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
