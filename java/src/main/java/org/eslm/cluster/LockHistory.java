package org.eslm.cluster;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.admin.indices.template.put.TransportPutComposableIndexTemplateAction;
import org.elasticsearch.action.bulk.BulkItemResponse;
import org.elasticsearch.action.bulk.BulkRequest;
import org.elasticsearch.action.bulk.BulkResponse;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.metadata.ComposableIndexTemplate;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.XContentType;
import org.eslm.service.LockHistoryBatch;
import org.eslm.service.LockService;
import org.eslm.settings.LockSettings;

/**
 * Writes the lock history (docs/API.md "Lock history") of this node's partitions to the data
 * stream {@value #DATA_STREAM}, when {@code locks.audit.enabled} is on.
 *
 * <p>The core records (docs/LOCK_CORE.md "Lock history"); this class only carries: every
 * {@code locks.audit.flush_interval} it takes what the core buffered, already written as the body
 * of a {@code _bulk} of {@code create} actions, and sends it — on the generic pool, never on a
 * transport or HTTP thread, never waiting. At most one write is in flight per node: while one is,
 * or while the data stream's template is not installed, records stay in the core's bounded
 * buffers, whose overflow is dropped and counted ({@code audit_dropped}); documents a write
 * loses are counted too ({@code audit_failed}). A batch of {@value #MAX_DOCUMENTS} documents is
 * followed by the next at once, so a busy node is not held to one batch per interval.
 *
 * <p>The writes run as Elasticsearch's own, under the {@value #ORIGIN} action origin, not as the
 * user whose request caused the event.
 */
public final class LockHistory implements Closeable {
    /** The data stream, and the name of its index template. */
    public static final String DATA_STREAM = "locks-history";
    /**
     * The action origin the writes carry. With security on, Elasticsearch runs a request of the
     * {@code stack} origin as its internal {@code _xpack} user; the {@code _system} user of a
     * plain system context may write documents but may neither install an index template nor
     * create a data stream (tests/integration/test_security.py shows the history written with
     * security on). Without security the origin changes nothing.
     */
    static final String ORIGIN = "stack";
    /** Most documents per {@code _bulk}. */
    static final int MAX_DOCUMENTS = 10_000;

    private static final Logger logger = LogManager.getLogger(LockHistory.class);
    private static final long WARN_EVERY_NANOS = TimeUnit.MINUTES.toNanos(1);

    private final LockService locks;
    private final Client client;
    private final ThreadPool threadPool;
    /** A write (template or bulk) is in flight. */
    private final AtomicBoolean busy = new AtomicBoolean();

    private final AtomicBoolean closed = new AtomicBoolean();
    /** The retention of the template this node installed; {@code null} until it has. */
    private volatile TimeValue installed;

    private final AtomicLong lastWarning = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

    public LockHistory(LockService locks, Client client, ThreadPool threadPool) {
        this.locks = locks;
        this.client = client;
        this.threadPool = threadPool;
    }

    /** Starts the periodic flush. */
    public void start() {
        scheduleNext();
    }

    @Override
    public void close() {
        closed.set(true);
    }

    private void scheduleNext() {
        if (closed.get() == false) {
            threadPool.schedule(this::tick, locks.settings().audit().flushInterval(), threadPool.generic());
        }
    }

    private void tick() {
        try {
            flush();
        } catch (RuntimeException e) {
            warn("could not write the lock history", e);
        } finally {
            scheduleNext();
        }
    }

    /** One step: installs the template when needed, else writes one batch; nothing while a write is in flight. */
    void flush() {
        LockSettings.Audit audit = locks.settings().audit();
        if (closed.get() || audit.enabled() == false || busy.compareAndSet(false, true) == false) {
            return;
        }
        boolean sent = false;
        try {
            if (audit.retention().equals(installed) == false) {
                installTemplate(audit.retention());
                sent = true;
                return;
            }
            LockHistoryBatch batch = locks.reports().drainHistory(MAX_DOCUMENTS);
            if (batch.documents() > 0) {
                write(batch);
                sent = true;
            }
        } finally {
            if (sent == false) {
                busy.set(false);
            }
        }
    }

    private void installTemplate(TimeValue retention) {
        TransportPutComposableIndexTemplateAction.Request request =
                new TransportPutComposableIndexTemplateAction.Request(DATA_STREAM).indexTemplate(template(retention));
        asSystem(() -> client.execute(
                TransportPutComposableIndexTemplateAction.TYPE,
                request,
                ActionListener.wrap(
                        r -> {
                            installed = retention;
                            logger.info("installed index template [{}] (retention [{}])", DATA_STREAM, retention);
                            done(true);
                        },
                        e -> {
                            warn("could not install index template [" + DATA_STREAM + "]", e);
                            done(false);
                        })));
    }

    private void write(LockHistoryBatch batch) {
        BulkRequest request = new BulkRequest();
        try {
            request.add(new BytesArray(batch.bulk()), DATA_STREAM, XContentType.JSON);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        int documents = batch.documents();
        asSystem(() -> client.bulk(
                request,
                ActionListener.wrap(
                        response -> {
                            long failed = failures(response);
                            locks.reports().countHistory(documents - failed, failed);
                            done(documents == MAX_DOCUMENTS);
                        },
                        e -> {
                            locks.reports().countHistory(0, documents);
                            warn("could not write [" + documents + "] lock history documents", e);
                            done(false);
                        })));
    }

    private long failures(BulkResponse response) {
        long failed = 0;
        for (BulkItemResponse item : response.getItems()) {
            if (item.isFailed()) {
                if (failed == 0) {
                    warn("lock history documents refused: " + item.getFailureMessage(), null);
                }
                failed++;
            }
        }
        return failed;
    }

    /** A write ended; with {@code more}, the next step runs at once rather than at the next interval. */
    private void done(boolean more) {
        busy.set(false);
        if (more && closed.get() == false) {
            threadPool.generic().execute(this::flush);
        }
    }

    @SuppressWarnings("try") // the stored context restores the caller's thread context on close
    private void asSystem(Runnable send) {
        ThreadContext threadContext = threadPool.getThreadContext();
        try (ThreadContext.StoredContext ignored = threadContext.stashWithOrigin(ORIGIN)) {
            send.run();
        }
    }

    /** Logs at most one warning a minute: a refusing cluster must not flood the node's log. */
    private void warn(String message, Exception e) {
        long last = lastWarning.get();
        long now = System.nanoTime();
        if (now - last >= WARN_EVERY_NANOS && lastWarning.compareAndSet(last, now)) {
            logger.warn(message, e);
        }
    }

    /**
     * The data stream's index template: the fields of docs/API.md "Lock history" mapped for search
     * and charts, unknown fields kept but not indexed, and the lifecycle's retention.
     */
    static ComposableIndexTemplate template(TimeValue retention) {
        String json = """
                {
                  "index_patterns": ["%s"],
                  "data_stream": {},
                  "priority": 500,
                  "_meta": {"managed_by": "lock-manager", "description": "lock history (docs/API.md)"},
                  "template": {
                    "settings": {"index.number_of_shards": 1, "index.auto_expand_replicas": "0-1"},
                    "mappings": {
                      "dynamic": false,
                      "properties": {
                        "@timestamp": {"type": "date"},
                        "event": {"type": "keyword"},
                        "key": {"type": "keyword"},
                        "scope": {"type": "keyword"},
                        "owner": {"type": "keyword"},
                        "mode": {"type": "keyword"},
                        "token": {"type": "long"},
                        "waited_ms": {"type": "long"},
                        "held_ms": {"type": "long"},
                        "reason": {"type": "keyword"},
                        "partition": {"type": "integer"},
                        "node": {"type": "keyword"}
                      }
                    },
                    "lifecycle": {"data_retention": "%s"}
                  }
                }
                """.formatted(DATA_STREAM, retention.getStringRep());
        try (XContentParser parser =
                XContentType.JSON.xContent().createParser(XContentParserConfiguration.EMPTY, json)) {
            return ComposableIndexTemplate.parse(parser);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
