import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import javax.security.auth.login.AppConfigurationEntry;

import org.apache.kafka.common.config.types.Password;
import org.apache.kafka.common.security.JaasContext;

/**
 * The reference for taskassign's JAAS parser: Kafka's own client-side parsing of sasl.jaas.config
 * (JaasContext.loadClientContext, which runs JaasConfig and checks for exactly one login module).
 *
 * Reads one file path per line on stdin (the file holds the property's value, UTF-8) and answers each
 * with one JSON line: {"module": ..., "flag": "REQUIRED", "options": [[key, value], ...]} (options sorted
 * by key) or {"error": "ExceptionClass: message"}. Characters outside printable ASCII are written as
 * \\uXXXX escapes of their UTF-16 code units.
 */
public final class JaasOracle {
    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, false, "US-ASCII");
        BufferedReader paths = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String path;
        while ((path = paths.readLine()) != null) {
            out.println(answer(new String(Files.readAllBytes(Paths.get(path)), StandardCharsets.UTF_8)));
            out.flush();
        }
    }

    private static String answer(String jaasConfig) {
        List<AppConfigurationEntry> entries;
        try {
            entries = JaasContext.loadClientContext(Map.of("sasl.jaas.config", new Password(jaasConfig)))
                .configurationEntries();
        } catch (Exception e) {
            return "{\"error\": " + quote(e.getClass().getName() + ": " + e.getMessage()) + "}";
        }
        AppConfigurationEntry entry = entries.get(0);
        String flag = entry.getControlFlag().toString().replace("LoginModuleControlFlag: ", "")
            .toUpperCase(Locale.ROOT);
        List<String> keys = new ArrayList<>();
        for (Object key : entry.getOptions().keySet()) keys.add(String.valueOf(key));
        Collections.sort(keys);
        StringBuilder json = new StringBuilder("{\"module\": ").append(quote(entry.getLoginModuleName()))
            .append(", \"flag\": ").append(quote(flag)).append(", \"options\": [");
        for (int i = 0; i < keys.size(); i++) {
            Object value = entry.getOptions().get("null".equals(keys.get(i)) && !entry.getOptions().containsKey("null")
                ? null : keys.get(i));
            if (i > 0) json.append(", ");
            json.append('[').append(quote(keys.get(i))).append(", ").append(quote(String.valueOf(value))).append(']');
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
