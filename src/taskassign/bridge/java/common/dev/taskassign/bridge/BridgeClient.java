package dev.taskassign.bridge;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.HttpURLConnection;
import java.net.SocketTimeoutException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One bounded POST to the taskassign service: the whole exchange (connect, send, answer) gets at most
 * {@code timeoutMs}; anything else than a 200 with a JSON object is a {@link BridgeException} whose message is the
 * one-line reason the assignor logs when it falls back. JDK only (HttpURLConnection).
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

    /**
     * The threads the calls run on (daemon: they never keep a JVM alive), so that the caller waits at most the
     * deadline whatever the socket does. HttpURLConnection rather than java.net.http: building an HttpClient
     * takes its default SSL context, ~3 s on a busy machine's cold JVM, more than a whole deadline.
     */
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(r -> {
        final Thread t = new Thread(r, "taskassign-bridge-call");
        t.setDaemon(true);
        return t;
    });

    public BridgeClient(final String url, final String token, final long timeoutMs) {
        this.uri = URI.create(url);
        this.token = token;
        this.timeoutMs = timeoutMs;
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

    /** POST {@code body} with the whole {@code timeoutMs} to wait. */
    public Map<String, Object> post(final String body) {
        return post(body, System.nanoTime());
    }

    /**
     * POST {@code body}; the decoded JSON object answered, or a BridgeException saying why not. The deadline is
     * {@code timeoutMs} after {@code startNanos} (the start of the assignment: serialising counts too).
     */
    @SuppressWarnings("unchecked")
    public Map<String, Object> post(final String body, final long startNanos) {
        final long remainingMs = timeoutMs - (System.nanoTime() - startNanos) / 1_000_000;
        if (remainingMs <= 0) {
            throw new BridgeException("the " + timeoutMs + " ms of taskassign.timeout.ms were spent before the request "
                + "was sent (serialising the application's state)");
        }
        final int connectMs = (int) Math.min(Integer.MAX_VALUE, remainingMs);
        final HttpURLConnection[] open = new HttpURLConnection[1];
        final Future<Answer> future = CALLS.submit(() -> {
            final HttpURLConnection conn = (HttpURLConnection) uri.toURL().openConnection();
            open[0] = conn;
            conn.setConnectTimeout(connectMs);
            conn.setReadTimeout(connectMs);
            conn.setRequestMethod("POST");
            conn.setDoOutput(true);
            conn.setUseCaches(false);
            conn.setRequestProperty("Content-Type", "application/json");
            if (token != null && !token.isEmpty()) {
                conn.setRequestProperty("Authorization", "Bearer " + token);
            }
            final byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            conn.setFixedLengthStreamingMode(bytes.length);
            try (OutputStream out = conn.getOutputStream()) {
                out.write(bytes);
            }
            final int status = conn.getResponseCode();
            final InputStream in = status >= 400 ? conn.getErrorStream() : conn.getInputStream();
            return new Answer(status, in == null ? "" : read(in));
        });
        final Answer response;
        try {
            response = future.get(remainingMs, TimeUnit.MILLISECONDS);
        } catch (final TimeoutException e) {
            future.cancel(true);
            final HttpURLConnection conn = open[0];
            if (conn != null) {
                conn.disconnect();
            }
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
            if (cause instanceof SocketTimeoutException) {
                throw new BridgeException("no answer from " + uri + " within " + timeoutMs + " ms (taskassign.timeout.ms)");
            }
            throw new BridgeException("request to " + uri + " failed: " + cause.getClass().getSimpleName()
                + (cause.getMessage() == null ? "" : ": " + cause.getMessage()));
        }
        final String text = response.body;
        if (text.length() > MAX_ANSWER_BYTES) {
            throw new BridgeException("answer of " + text.length() + " characters is larger than the bridge reads");
        }
        if (response.status != 200) {
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
            throw new BridgeException("service answered HTTP " + response.status + ": " + message.replace('\n', ' '));
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

    private static String read(final InputStream in) throws java.io.IOException {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final byte[] buffer = new byte[65536];
        int n;
        while ((n = in.read(buffer)) > 0) {
            out.write(buffer, 0, n);
            if (out.size() > MAX_ANSWER_BYTES) {
                throw new java.io.IOException("answer larger than " + MAX_ANSWER_BYTES + " bytes");
            }
        }
        return new String(out.toByteArray(), StandardCharsets.UTF_8);
    }

    private static final class Answer {
        final int status;
        final String body;

        Answer(final int status, final String body) {
            this.status = status;
            this.body = body;
        }
    }
}
