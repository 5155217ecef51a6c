import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Properties;

/**
 * The reference for taskassign's properties reader: loads files exactly as Kafka's tools do
 * (Utils.loadProps: java.util.Properties.load(InputStream), so ISO-8859-1).
 *
 * Reads one file path per line on stdin and answers each with one JSON line on stdout:
 * {"entries": [[key, value], ...]} (sorted by key) or {"error": "ExceptionClass: message"}.
 * Every character outside printable ASCII is written as a \\uXXXX escape of its UTF-16 code unit,
 * so that the answer is ASCII and a lone surrogate survives the trip.
 */
public final class PropertiesOracle {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, "US-ASCII");
        BufferedReader paths = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String path;
        while ((path = paths.readLine()) != null) {
            out.println(answer(path));
            out.flush();
        }
    }

    private static String answer(String path) {
        Properties props = new Properties();
        try (InputStream stream = Files.newInputStream(Paths.get(path))) {
            props.load(stream);
        } catch (Exception e) {
            return "{\"error\": " + quote(e.getClass().getName() + ": " + e.getMessage()) + "}";
        }
        List<String> keys = new ArrayList<>(props.stringPropertyNames());
        Collections.sort(keys);
        StringBuilder json = new StringBuilder("{\"entries\": [");
        for (int i = 0; i < keys.size(); i++) {
            if (i > 0) json.append(", ");
            json.append('[').append(quote(keys.get(i))).append(", ")
                .append(quote(props.getProperty(keys.get(i)))).append(']');
        }
        return json.append("]}").toString();
    }

    private static String quote(String text) {
        StringBuilder quoted = new StringBuilder("\"");
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\') {
                quoted.append(c);
            } else {
                quoted.append(String.format("\\u%04x", (int) c));
            }
        }
        return quoted.append('"').toString();
    }
}
