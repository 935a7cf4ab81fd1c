package org.eslm.client.contract;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.apache.http.HttpHost;
import org.elasticsearch.client.RestClient;
import org.eslm.client.AcquireOptions;
import org.eslm.client.FieldOp;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.eslm.client.LockClientBuilder;
import org.eslm.client.LockMode;
import org.eslm.client.errors.LockConflictException;
import org.eslm.client.errors.LockException;
import org.eslm.client.errors.LockLostException;
import org.eslm.client.errors.LockNotHeldException;
import org.eslm.client.errors.LockWaitTimeoutException;
import org.eslm.client.errors.PartitionUnavailableException;
import org.eslm.client.errors.StaleTokenException;

/**
 * The contract driver of the Java client (tests/contract/PROTOCOL.md): JSON lines of commands on
 * standard input, one JSON line per command on standard output, each command performed through the
 * client's public API ({@link LockClient} over a legacy {@link RestClient} holding every URL) and
 * each error mapped to a kind. It holds no lock logic of its own.
 *
 * <pre>
 * mvn -f clients/pom.xml -pl java test-compile dependency:build-classpath -Dmdep.outputFile=cp.txt
 * ESLM_URLS=http://127.0.0.1:9200 java -cp clients/java/target/classes:clients/java/target/test-classes:$(cat cp.txt) \
 *     org.eslm.client.contract.ContractDriver
 * </pre>
 *
 * <p>Commands run one after another in the order sent; one sent with {@code "async": true} runs on
 * a thread of its own and is answered when it completes, possibly after later ones. Logs go to
 * standard error.
 */
public final class ContractDriver {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** An unknown command, a missing or bad argument: kind {@code invalid_argument}. */
    static final class ProtocolError extends RuntimeException {
        ProtocolError(String message) {
            super(message);
        }
    }

    private record Opened(LockClient locks, RestClient rest, boolean[] closed) {}

    /** A held lock: the client's handle, the name of its client, what it asked for, its loss. */
    private record Handle(HeldLock held, String client, AcquireOptions options, CompletableFuture<Void> lost) {}

    private final Map<String, Opened> clients = new ConcurrentHashMap<>();
    private final Map<String, Handle> handles = new ConcurrentHashMap<>();
    private final PrintStream out;

    private ContractDriver(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) {
        try {
            serve();
        } catch (Throwable e) {
            // The REST client's I/O threads would keep a JVM whose main thread died alive: a
            // driver that cannot go on ends, so the harness reports it rather than waiting.
            log("failed: " + e);
            e.printStackTrace();
            Runtime.getRuntime().halt(1);
        }
    }

    private static void serve() throws Exception {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        ContractDriver driver = new ContractDriver(out);
        ExecutorService pool = Executors.newCachedThreadPool(runnable -> {
            Thread thread = new Thread(runnable, "contract-async");
            thread.setDaemon(true);
            return thread;
        });
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) {
                continue;
            }
            JsonNode request;
            try {
                request = JSON.readTree(line);
                if (request == null || !request.isObject()) {
                    throw new IllegalArgumentException("not an object");
                }
            } catch (Exception e) {
                ObjectNode answer = JSON.createObjectNode().putNull("id").put("ok", false);
                answer.putObject("error").put("kind", "invalid_argument").put("message", "not a JSON object: " + e);
                driver.write(answer);
                continue;
            }
            if (request.path("async").asBoolean(false)) {
                JsonNode async = request;
                pool.execute(() -> driver.write(driver.perform(async)));
                continue;
            }
            driver.write(driver.perform(request));
            if ("exit".equals(request.path("cmd").asText())) {
                out.flush();
                Runtime.getRuntime().halt(0); // threads still waiting on the server must not hold the exit
            }
        }
        driver.closeAll();
        out.flush();
        Runtime.getRuntime().halt(0);
    }

    private synchronized void write(ObjectNode answer) {
        try {
            out.println(JSON.writeValueAsString(answer));
            out.flush();
        } catch (Exception e) {
            log("cannot write an answer: " + e);
        }
    }

    private static void log(String message) {
        System.err.println("driver: " + message);
    }

    // --- commands --------------------------------------------------------------------------------

    private ObjectNode perform(JsonNode request) {
        JsonNode id = request.get("id");
        String command = request.path("cmd").asText("");
        Handle before = request.path("handle").isTextual()
                ? handles.get(request.path("handle").asText())
                : null;
        boolean lostBefore = before != null && before.held().isLost();
        Opened named = request.path("client").isTextual()
                ? clients.get(request.path("client").asText())
                : null;
        boolean clientClosed = named != null && named.closed()[0];
        ObjectNode answer = JSON.createObjectNode();
        answer.set("id", id);
        try {
            ObjectNode result = run(command, request);
            answer.put("ok", true);
            answer.setAll(result);
        } catch (Throwable e) {
            log(command + " #" + id + " failed: " + e);
            answer.put("ok", false);
            answer.putObject("error")
                    .put("kind", kindOf(e, command, lostBefore, clientClosed))
                    .put("message", String.valueOf(e));
        }
        return answer;
    }

    private ObjectNode run(String command, JsonNode args) throws Exception {
        return switch (command) {
            case "open" -> open(args);
            case "lock" -> lock(args);
            case "lock_again" -> lockAgain(args);
            case "unlock" -> {
                handle(args).held().close();
                yield JSON.createObjectNode();
            }
            case "renew" -> renew(args);
            case "lost" ->
                JSON.createObjectNode().put("lost", handle(args).held().isLost());
            case "await_lost" -> awaitLost(args);
            case "fenced_write" -> fencedWrite(args);
            case "fenced_update" -> fencedUpdate(args);
            case "close" -> {
                close(opened(name(args, "client")));
                yield JSON.createObjectNode();
            }
            case "exit" -> {
                closeAll();
                yield JSON.createObjectNode();
            }
            default -> throw new ProtocolError("unknown command [" + command + "]");
        };
    }

    private ObjectNode open(JsonNode args) {
        String name = name(args, "client");
        List<String> urls = new ArrayList<>();
        if (args.hasNonNull("urls")) {
            if (!args.get("urls").isArray() || args.get("urls").isEmpty()) {
                throw new ProtocolError("[urls] must be a list of URLs");
            }
            args.get("urls").forEach(u -> urls.add(u.asText()));
        } else {
            for (String url : System.getenv().getOrDefault("ESLM_URLS", "").split(",")) {
                if (!url.isBlank()) {
                    urls.add(url.trim());
                }
            }
        }
        if (urls.isEmpty()) {
            throw new ProtocolError("[urls] is required when ESLM_URLS is not set");
        }
        Long retryFor = millis(args, "retry_for_ms");
        RestClient rest = RestClient.builder(urls.stream().map(HttpHost::create).toArray(HttpHost[]::new))
                .build();
        LockClientBuilder builder = LockClientBuilder.forRestClient(rest);
        if (retryFor != null) {
            builder.retryBudget(Duration.ofMillis(retryFor));
        }
        Opened previous = clients.put(name, new Opened(builder.build(), rest, new boolean[1]));
        if (previous != null) {
            close(previous);
        }
        return JSON.createObjectNode();
    }

    private ObjectNode lock(JsonNode args) {
        String client = name(args, "client");
        Opened opened = opened(client);
        String name = name(args, "handle");
        if (!args.path("key").isTextual()) {
            throw new ProtocolError("[key] is required: a key");
        }
        String key = args.get("key").asText();
        Long lease = millis(args, "lease_ms");
        Long timeout = millis(args, "timeout_ms");
        boolean once = bool(args, "try", false);
        boolean keepalive = bool(args, "keepalive", true);
        AcquireOptions options = AcquireOptions.defaults().withWatchdog(keepalive);
        if (args.hasNonNull("mode")) {
            options = switch (args.get("mode").asText()) {
                case "exclusive" -> options.withMode(LockMode.EXCLUSIVE);
                case "shared" -> options.shared();
                default -> throw new ProtocolError("[mode] must be exclusive or shared");
            };
        }
        if (lease != null) {
            options = options.withLease(Duration.ofMillis(lease));
        }
        if (once) {
            if (timeout != null) {
                throw new ProtocolError("[timeout_ms] cannot be given with [try]");
            }
            options = options.tryOnce(); // busy: LockConflictException (tryAcquire would answer empty)
        } else if (timeout != null) {
            options = options.withWait(Duration.ofMillis(timeout));
        }
        HeldLock held = opened.locks().acquire(key, options);
        CompletableFuture<Void> lost = new CompletableFuture<>();
        held.onLost(cause -> lost.complete(null));
        handles.put(name, new Handle(held, client, options, lost));
        return JSON.createObjectNode().put("token", held.fencingToken());
    }

    private ObjectNode lockAgain(JsonNode args) {
        Handle handle = handle(args);
        HeldLock held = handle.held();
        // The owner that holds the lock acquires it again through this client (README "Owners"):
        // the client names the held acquisition, the server answers with the same grant, and the
        // nested handle, closed at once as a nested block's end, releases nothing.
        try (HeldLock again = opened(handle.client())
                .locks()
                .withOwner(held.owner())
                .acquire(held.key(), handle.options().withMode(held.mode()).tryOnce())) {
            return JSON.createObjectNode().put("token", again.fencingToken());
        }
    }

    private ObjectNode renew(JsonNode args) {
        Handle handle = handle(args);
        Long lease = millis(args, "lease_ms");
        Duration asked = lease != null
                ? Duration.ofMillis(lease)
                : handle.options().lease() != null
                        ? handle.options().lease()
                        : Duration.ofMillis(handle.held().leaseMs());
        handle.held().renew(asked);
        return JSON.createObjectNode();
    }

    private ObjectNode awaitLost(JsonNode args) throws Exception {
        Handle handle = handle(args);
        Long within = millis(args, "within_ms");
        if (within == null) {
            throw new ProtocolError("[within_ms] is required: milliseconds");
        }
        long started = System.nanoTime();
        try {
            handle.lost().get(within, TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return JSON.createObjectNode().put("lost", false);
        }
        return JSON.createObjectNode()
                .put("lost", true)
                .put("after_ms", TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    private ObjectNode fencedWrite(JsonNode args) {
        Handle handle = handle(args);
        String index = name(args, "index");
        JsonNode docId = args.get("doc_id");
        if (docId == null
                || !(docId.isTextual() || docId.isIntegralNumber())
                || docId.asText().isEmpty()) {
            throw new ProtocolError("[doc_id] is required: a document id");
        }
        if (!args.path("doc").isObject()) {
            throw new ProtocolError("[doc] is required: an object");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> doc = JSON.convertValue(args.get("doc"), LinkedHashMap.class);
        handle.held().index(index, docId.asText(), doc);
        return JSON.createObjectNode();
    }

    private ObjectNode fencedUpdate(JsonNode args) {
        Handle handle = handle(args);
        String index = name(args, "index");
        JsonNode docId = args.get("doc_id");
        if (docId == null
                || !(docId.isTextual() || docId.isIntegralNumber())
                || docId.asText().isEmpty()) {
            throw new ProtocolError("[doc_id] is required: a document id");
        }
        if (!args.path("ops").isArray()) {
            throw new ProtocolError("[ops] is required: a list of field operations");
        }
        List<FieldOp> ops = new ArrayList<>();
        for (JsonNode op : args.get("ops")) {
            ops.add(fieldOp(op));
        }
        Map<String, Object> doc = handle.held().update(index, docId.asText(), ops);
        ObjectNode answer = JSON.createObjectNode();
        answer.set("doc", JSON.valueToTree(doc));
        return answer;
    }

    /** A field operation of the protocol (the API's {@code {op, field, value}}), made by {@link FieldOp}. */
    private static FieldOp fieldOp(JsonNode op) {
        String field = op.path("field").isTextual() ? op.get("field").asText() : null;
        Object value = op.has("value") ? JSON.convertValue(op.get("value"), Object.class) : null;
        return switch (op.path("op").asText("")) {
            case "inc" -> {
                if (!(value instanceof Number by)) {
                    throw new IllegalArgumentException("[value] of [inc] must be a number, got [" + value + "]");
                }
                yield FieldOp.inc(field, by);
            }
            case "append" -> FieldOp.append(field, value);
            case "set" -> FieldOp.set(field, value);
            case "remove" -> FieldOp.remove(field);
            default ->
                throw new ProtocolError("[ops] entries must be {op: inc|append|set|remove, field, value}, got " + op);
        };
    }

    private void close(Opened opened) {
        try {
            opened.locks().close();
        } finally {
            opened.closed()[0] = true;
            try {
                opened.rest().close();
            } catch (Exception e) {
                log("closing a REST client: " + e);
            }
        }
    }

    private void closeAll() {
        for (Opened opened : clients.values()) {
            try {
                close(opened);
            } catch (RuntimeException e) {
                log("closing a client: " + e);
            }
        }
    }

    // --- arguments -------------------------------------------------------------------------------

    private Opened opened(String name) {
        Opened found = clients.get(name);
        if (found == null) {
            throw new ProtocolError("no client [" + name + "] was opened");
        }
        return found;
    }

    private Handle handle(JsonNode args) {
        String name = name(args, "handle");
        Handle found = handles.get(name);
        if (found == null) {
            throw new ProtocolError("no handle [" + name + "]");
        }
        return found;
    }

    private static String name(JsonNode args, String field) {
        JsonNode value = args.get(field);
        if (value == null || !value.isTextual() || value.asText().isEmpty()) {
            throw new ProtocolError("[" + field + "] is required: a name");
        }
        return value.asText();
    }

    private static Long millis(JsonNode args, String field) {
        JsonNode value = args.get(field);
        if (value == null || value.isNull()) {
            return null;
        }
        if (!value.isIntegralNumber() || value.asLong() < 0) {
            throw new ProtocolError("[" + field + "] must be milliseconds");
        }
        return value.asLong();
    }

    private static boolean bool(JsonNode args, String field, boolean otherwise) {
        JsonNode value = args.get(field);
        if (value == null || value.isNull()) {
            return otherwise;
        }
        if (!value.isBoolean()) {
            throw new ProtocolError("[" + field + "] must be true or false");
        }
        return value.asBoolean();
    }

    // --- errors ----------------------------------------------------------------------------------

    /** The protocol's kind for an error of {@code command} (PROTOCOL.md's table). */
    static String kindOf(Throwable error, String command, boolean lostBefore, boolean clientClosed) {
        if (error instanceof ProtocolError) {
            return "invalid_argument";
        }
        if (clientClosed && closedRefusal(error)) {
            return "closed";
        }
        if (error instanceof LockConflictException) {
            return "conflict";
        }
        if (error instanceof LockWaitTimeoutException) {
            return "wait_timeout";
        }
        if (error instanceof LockNotHeldException) {
            return "not_held";
        }
        if (error instanceof StaleTokenException) {
            return "stale_token";
        }
        if (error instanceof LockLostException) {
            // A release that itself found the grant gone (404) is the server's not_held; a lock the
            // client already knew lost is its lost-lock error.
            boolean foundGone = error.getCause() instanceof LockNotHeldException;
            return ("unlock".equals(command) || "renew".equals(command)) && !lostBefore && foundGone
                    ? "not_held"
                    : "lost";
        }
        if (error instanceof PartitionUnavailableException) {
            return "unavailable";
        }
        if (error instanceof IllegalArgumentException || (error instanceof LockException e && e.status() == 400)) {
            return "invalid_argument";
        }
        return "other";
    }

    /**
     * Whether {@code error} is how the client refuses work once closed: its executors and the REST
     * client it was given are shut, so a call is rejected ({@code RejectedExecutionException}) or
     * finds the REST client stopped ({@code IllegalStateException}), directly or as the cause.
     */
    private static boolean closedRefusal(Throwable error) {
        for (Throwable e = error; e != null; e = e.getCause()) {
            if (e instanceof RejectedExecutionException || e instanceof IllegalStateException) {
                return true;
            }
        }
        return false;
    }
}
