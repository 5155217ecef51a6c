package dev.taskassign.bridge;

import java.net.ConnectException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One bounded POST to the taskassign service: the whole exchange (connect, send, answer) gets at most
 * {@code timeoutMs}; anything else than a 200 with a JSON object is a {@link BridgeException} whose message is the
 * one-line reason the assignor logs when it falls back. JDK only (java.net.http, Java 11+).
 */
public final class BridgeClient {
    public static final String URL_CONFIG = "taskassign.url";
    public static final String TOKEN_CONFIG = "taskassign.token";
    public static final String TOKEN_FILE_CONFIG = "taskassign.token.file";
    public static final String TIMEOUT_CONFIG = "taskassign.timeout.ms";
    /** Largest answer read (bytes): the service's answers for 10^5 tasks are a few MB. */
    public static final int MAX_ANSWER_BYTES = 64 << 20;

    private final URI uri;
    private final String token;
    private final long timeoutMs;
    private final HttpClient client;

    public BridgeClient(final String url, final String token, final long timeoutMs) {
        this.uri = URI.create(url);
        this.token = token;
        this.timeoutMs = timeoutMs;
        this.client = HttpClient.newBuilder()
            .connectTimeout(Duration.ofMillis(Math.max(1, timeoutMs)))
            .version(HttpClient.Version.HTTP_1_1)
            .build();
    }

    /** A client from the {@code taskassign.*} configs; {@code path} is appended to {@code taskassign.url}. */
    public static BridgeClient fromConfigs(final Map<String, ?> configs, final String path, final long defaultTimeoutMs) {
        final Object url = configs.get(URL_CONFIG);
        if (url == null || url.toString().isEmpty()) {
            throw new BridgeException(URL_CONFIG + " is not set");
        }
        String token = configs.get(TOKEN_CONFIG) == null ? null : configs.get(TOKEN_CONFIG).toString();
        final Object tokenFile = configs.get(TOKEN_FILE_CONFIG);
        if ((token == null || token.isEmpty()) && tokenFile != null && !tokenFile.toString().isEmpty()) {
            try {
                token = new String(Files.readAllBytes(Paths.get(tokenFile.toString())), StandardCharsets.UTF_8).trim();
            } catch (final Exception e) {
                throw new BridgeException("cannot read " + TOKEN_FILE_CONFIG + " (" + e.getClass().getSimpleName() + ")");
            }
        }
        long timeout = defaultTimeoutMs;
        final Object t = configs.get(TIMEOUT_CONFIG);
        if (t != null) {
            try {
                timeout = Long.parseLong(t.toString().trim());
            } catch (final NumberFormatException e) {
                throw new BridgeException(TIMEOUT_CONFIG + " is not a number: " + t);
            }
        }
        String base = url.toString();
        while (base.endsWith("/")) {
            base = base.substring(0, base.length() - 1);
        }
        return new BridgeClient(base + path, token, timeout);
    }

    public long timeoutMs() {
        return timeoutMs;
    }

    public URI uri() {
        return uri;
    }

    /** POST {@code body}; the decoded JSON object answered, or a BridgeException saying why not. */
    @SuppressWarnings("unchecked")
    public Map<String, Object> post(final String body) {
        final HttpRequest.Builder request = HttpRequest.newBuilder(uri)
            .timeout(Duration.ofMillis(Math.max(1, timeoutMs)))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body, StandardCharsets.UTF_8));
        if (token != null && !token.isEmpty()) {
            request.header("Authorization", "Bearer " + token);
        }
        final CompletableFuture<HttpResponse<String>> future =
            client.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        final HttpResponse<String> response;
        try {
            response = future.get(timeoutMs, TimeUnit.MILLISECONDS);
        } catch (final TimeoutException e) {
            future.cancel(true);
            throw new BridgeException("no answer from " + uri + " within " + timeoutMs + " ms (taskassign.timeout.ms)");
        } catch (final InterruptedException e) {
            future.cancel(true);
            Thread.currentThread().interrupt();
            throw new BridgeException("interrupted while waiting for " + uri);
        } catch (final ExecutionException e) {
            final Throwable cause = e.getCause() == null ? e : e.getCause();
            if (cause instanceof ConnectException) {
                throw new BridgeException("cannot connect to " + uri + " (is `taskassign serve` running?)");
            }
            if (cause instanceof java.net.http.HttpTimeoutException) {
                throw new BridgeException("no answer from " + uri + " within " + timeoutMs + " ms (taskassign.timeout.ms)");
            }
            throw new BridgeException("request to " + uri + " failed: " + cause.getClass().getSimpleName()
                + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        }
        final String text = response.body() == null ? "" : response.body();
        if (text.length() > MAX_ANSWER_BYTES) {
            throw new BridgeException("answer of " + text.length() + " characters is larger than the bridge reads");
        }
        if (response.statusCode() != 200) {
            String message = text;
            try {
                final Object doc = Json.read(text);
                if (doc instanceof Map && ((Map<String, Object>) doc).get("error") != null) {
                    message = String.valueOf(((Map<String, Object>) doc).get("error"));
                }
            } catch (final RuntimeException ignored) {
                // the raw body, shortened below
            }
            if (message.length() > 300) {
                message = message.substring(0, 300) + "...";
            }
            throw new BridgeException("service answered HTTP " + response.statusCode() + ": " + message.replace('\n', ' '));
        }
        final Object doc;
        try {
            doc = Json.read(text);
        } catch (final IllegalArgumentException e) {
            throw new BridgeException("service's answer is not JSON: " + e.getMessage());
        }
        if (!(doc instanceof Map)) {
            throw new BridgeException("service's answer is not a JSON object");
        }
        return (Map<String, Object>) doc;
    }
}
