package dev.taskassign.bridge;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A tiny JSON writer and reader (JDK only): the bridge must not bring a JSON library onto an application's or a
 * broker's classpath. Values are {@code null}, {@link Boolean}, {@link Long}, {@link Double}, {@link String},
 * {@link List} and {@link Map} (insertion-ordered).
 */
public final class Json {
    private Json() {
    }

    /** The most nested arrays/objects the reader accepts: an answer deeper than this is not one of ours. */
    static final int MAX_DEPTH = 64;

    public static String write(final Object value) {
        final StringBuilder out = new StringBuilder(1024);
        write(out, value);
        return out.toString();
    }

    @SuppressWarnings("unchecked")
    public static void write(final StringBuilder out, final Object value) {
        if (value == null) {
            out.append("null");
        } else if (value instanceof String) {
            string(out, (String) value);
        } else if (value instanceof Boolean || value instanceof Integer || value instanceof Long) {
            out.append(value);
        } else if (value instanceof Number) {
            final double d = ((Number) value).doubleValue();
            out.append(Double.isFinite(d) ? Double.toString(d) : "null");
        } else if (value instanceof Map) {
            out.append('{');
            boolean first = true;
            for (final Map.Entry<Object, Object> e : ((Map<Object, Object>) value).entrySet()) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                string(out, String.valueOf(e.getKey()));
                out.append(':');
                write(out, e.getValue());
            }
            out.append('}');
        } else if (value instanceof Collection) {
            out.append('[');
            boolean first = true;
            for (final Object item : (Collection<Object>) value) {
                if (!first) {
                    out.append(',');
                }
                first = false;
                write(out, item);
            }
            out.append(']');
        } else {
            string(out, value.toString());
        }
    }

    private static void string(final StringBuilder out, final String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            final char c = s.charAt(i);
            switch (c) {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    /** Parse one JSON document; throws {@link IllegalArgumentException} on anything malformed. */
    public static Object read(final String text) {
        final Reader r = new Reader(text);
        r.skip();
        final Object value = r.value(0);
        r.skip();
        if (r.pos != text.length()) {
            throw r.error("trailing characters");
        }
        return value;
    }

    private static final class Reader {
        private final String s;
        private int pos;

        Reader(final String s) {
            this.s = s;
        }

        IllegalArgumentException error(final String what) {
            return new IllegalArgumentException("malformed JSON at character " + pos + ": " + what);
        }

        void skip() {
            while (pos < s.length() && Character.isWhitespace(s.charAt(pos))) {
                pos++;
            }
        }

        char peek() {
            if (pos >= s.length()) {
                throw error("unexpected end");
            }
            return s.charAt(pos);
        }

        void expect(final char c) {
            if (peek() != c) {
                throw error("expected '" + c + "'");
            }
            pos++;
        }

        Object value(final int depth) {
            if (depth > MAX_DEPTH) {
                throw error("nested too deeply");
            }
            final char c = peek();
            if (c == '{') {
                pos++;
                final Map<String, Object> map = new LinkedHashMap<>();
                skip();
                if (peek() == '}') {
                    pos++;
                    return map;
                }
                while (true) {
                    skip();
                    final String key = string();
                    skip();
                    expect(':');
                    skip();
                    map.put(key, value(depth + 1));
                    skip();
                    if (peek() == ',') {
                        pos++;
                        continue;
                    }
                    expect('}');
                    return map;
                }
            }
            if (c == '[') {
                pos++;
                final List<Object> list = new ArrayList<>();
                skip();
                if (peek() == ']') {
                    pos++;
                    return list;
                }
                while (true) {
                    skip();
                    list.add(value(depth + 1));
                    skip();
                    if (peek() == ',') {
                        pos++;
                        continue;
                    }
                    expect(']');
                    return list;
                }
            }
            if (c == '"') {
                return string();
            }
            if (s.startsWith("true", pos)) {
                pos += 4;
                return Boolean.TRUE;
            }
            if (s.startsWith("false", pos)) {
                pos += 5;
                return Boolean.FALSE;
            }
            if (s.startsWith("null", pos)) {
                pos += 4;
                return null;
            }
            return number();
        }

        String string() {
            expect('"');
            final StringBuilder out = new StringBuilder();
            while (true) {
                final char c = peek();
                pos++;
                if (c == '"') {
                    return out.toString();
                }
                if (c == '\\') {
                    final char e = peek();
                    pos++;
                    switch (e) {
                        case '"': out.append('"'); break;
                        case '\\': out.append('\\'); break;
                        case '/': out.append('/'); break;
                        case 'b': out.append('\b'); break;
                        case 'f': out.append('\f'); break;
                        case 'n': out.append('\n'); break;
                        case 'r': out.append('\r'); break;
                        case 't': out.append('\t'); break;
                        case 'u':
                            if (pos + 4 > s.length()) {
                                throw error("short \\u escape");
                            }
                            try {
                                out.append((char) Integer.parseInt(s.substring(pos, pos + 4), 16));
                            } catch (final NumberFormatException ex) {
                                throw error("bad \\u escape");
                            }
                            pos += 4;
                            break;
                        default:
                            throw error("bad escape");
                    }
                } else if (c < 0x20) {
                    throw error("control character in a string");
                } else {
                    out.append(c);
                }
            }
        }

        Object number() {
            final int start = pos;
            boolean integral = true;
            while (pos < s.length()) {
                final char c = s.charAt(pos);
                if (c >= '0' && c <= '9' || c == '-' || c == '+') {
                    pos++;
                } else if (c == '.' || c == 'e' || c == 'E') {
                    integral = false;
                    pos++;
                } else {
                    break;
                }
            }
            if (start == pos) {
                throw error("unexpected character");
            }
            final String text = s.substring(start, pos);
            try {
                return integral ? (Object) Long.parseLong(text) : (Object) Double.parseDouble(text);
            } catch (final NumberFormatException ex) {
                throw error("bad number " + text);
            }
        }
    }
}
