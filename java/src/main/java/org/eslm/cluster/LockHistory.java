package org.eslm.cluster;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.Logger;
import org.elasticsearch.ExceptionsHelper;
import org.elasticsearch.action.ActionListener;
import org.elasticsearch.action.admin.cluster.state.ClusterStateRequest;
import org.elasticsearch.action.admin.cluster.state.ClusterStateResponse;
import org.elasticsearch.action.admin.indices.rollover.RolloverAction;
import org.elasticsearch.action.admin.indices.rollover.RolloverRequest;
import org.elasticsearch.action.admin.indices.rollover.RolloverResponse;
import org.elasticsearch.action.admin.indices.template.put.PutComponentTemplateAction;
import org.elasticsearch.action.admin.indices.template.put.TransportPutComposableIndexTemplateAction;
import org.elasticsearch.action.bulk.BulkItemResponse;
import org.elasticsearch.action.bulk.BulkRequest;
import org.elasticsearch.action.bulk.BulkResponse;
import org.elasticsearch.client.internal.Client;
import org.elasticsearch.cluster.ClusterState;
import org.elasticsearch.cluster.metadata.ComponentTemplate;
import org.elasticsearch.cluster.metadata.ComposableIndexTemplate;
import org.elasticsearch.cluster.metadata.DataStream;
import org.elasticsearch.cluster.metadata.IndexMetadata;
import org.elasticsearch.common.bytes.BytesArray;
import org.elasticsearch.common.util.concurrent.ThreadContext;
import org.elasticsearch.core.TimeValue;
import org.elasticsearch.index.mapper.DocumentParsingException;
import org.elasticsearch.threadpool.ThreadPool;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.XContentParserConfiguration;
import org.elasticsearch.xcontent.XContentType;
import org.eslm.compat.ProjectScope;
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
 * <p>The data stream's index template is built as Elasticsearch builds its own managed ones: the
 * plugin's mappings and settings in the component templates {@value #MAPPINGS} and
 * {@value #SETTINGS}, then {@value #CUSTOM}, which the user may create with their own mappings,
 * settings or lifecycle and which the plugin never writes (listed in
 * {@code ignore_missing_component_templates}, so its absence changes nothing). The documents'
 * shape has a version, {@value #FORMAT}: a data stream whose write index still maps the shape of
 * before (version 1's flat {@code event} keyword) is rolled over once the templates are
 * installed, so its next write goes to a backing index with the new mappings; documents refused
 * for their shape later (an older node put its template back) make it install them again.
 *
 * <p>The writes run as Elasticsearch's own, under the {@value #ORIGIN} action origin, not as the
 * user whose request caused the event.
 */
public final class LockHistory implements Closeable {
    /** The data stream, and the name of its index template. */
    public static final String DATA_STREAM = "locks-history";
    /** The component template of the documents' mappings. */
    static final String MAPPINGS = DATA_STREAM + "@mappings";
    /** The component template of the backing indices' settings and the lifecycle's retention. */
    static final String SETTINGS = DATA_STREAM + "@settings";
    /** The user's component template, composed last: the plugin never writes it. */
    static final String CUSTOM = DATA_STREAM + "@custom";
    /**
     * The documents' shape, the templates' {@code version}: 1 had flat names ({@code event},
     * {@code key}, {@code held_ms}...), 2 the Elastic Common Schema's ({@code event.action},
     * {@code lock.key}, {@code event.duration}...; docs/API.md "Lock history").
     */
    static final long FORMAT = 2;
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
    private final AtomicLong lastReinstall = new AtomicLong(System.nanoTime() - WARN_EVERY_NANOS);

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

    /**
     * Installs the templates (mappings, settings with {@code retention}, then the index template
     * composing them with {@value #CUSTOM}), then rolls an older shape's write index over; each
     * step after the one before, the whole a single write in flight.
     */
    private void installTemplate(TimeValue retention) {
        Consumer<Exception> failed = e -> {
            warn("could not install the lock history's templates [" + DATA_STREAM + "]", e);
            done(false);
        };
        putComponent(
                MAPPINGS,
                mappings(),
                failed,
                () -> putComponent(SETTINGS, settings(retention), failed, () -> {
                    TransportPutComposableIndexTemplateAction.Request request =
                            new TransportPutComposableIndexTemplateAction.Request(DATA_STREAM)
                                    .indexTemplate(template());
                    asSystem(() -> client.execute(
                            TransportPutComposableIndexTemplateAction.TYPE,
                            request,
                            ActionListener.wrap(r -> rollOverOlderShape(retention), failed::accept)));
                }));
    }

    private void putComponent(String name, ComponentTemplate template, Consumer<Exception> failed, Runnable next) {
        PutComponentTemplateAction.Request request =
                new PutComponentTemplateAction.Request(name).componentTemplate(template);
        asSystem(() -> client.execute(
                PutComponentTemplateAction.INSTANCE, request, ActionListener.wrap(r -> next.run(), failed::accept)));
    }

    /**
     * The templates are in: if the data stream exists and its write index maps the documents of
     * an older shape, rolls it over, since a document of this shape would be refused there (at
     * once, not lazily: Elasticsearch 8.19 left a lazy rollover pending at the plugin's next
     * write; nodes that find the older shape together each roll over, leaving empty backing
     * indices that the retention removes). Then the templates count as installed.
     */
    private void rollOverOlderShape(TimeValue retention) {
        Runnable finish = () -> {
            installed = retention;
            logger.info(
                    "installed the index template [{}] (format [{}], retention [{}])", DATA_STREAM, FORMAT, retention);
            done(true);
        };
        Consumer<Exception> failed = e -> {
            warn("could not roll the lock history over to its new mappings", e);
            done(false);
        };
        ClusterStateRequest state = new ClusterStateRequest(TimeValue.THIRTY_SECONDS)
                .clear()
                .metadata(true)
                .indices(DATA_STREAM);
        ActionListener<ClusterStateResponse> read = ActionListener.wrap(
                response -> {
                    if (olderShape(response.getState())) {
                        rollOver(finish, failed);
                    } else {
                        finish.run();
                    }
                },
                failed::accept);
        asSystem(() -> client.admin().cluster().state(state, read));
    }

    private void rollOver(Runnable finish, Consumer<Exception> failed) {
        ActionListener<RolloverResponse> rolled = ActionListener.wrap(
                r -> {
                    logger.info(
                            "the write index of [{}] had the lock history's older mappings: rolled over to [{}]",
                            DATA_STREAM,
                            r.getNewIndex());
                    finish.run();
                },
                failed::accept);
        asSystem(() -> client.execute(RolloverAction.INSTANCE, new RolloverRequest(DATA_STREAM, null), rolled));
    }

    /** Whether the data stream's write index maps version 1's documents ({@code event} a keyword). */
    static boolean olderShape(ClusterState state) {
        DataStream stream = ProjectScope.dataStream(state, DATA_STREAM);
        if (stream == null) {
            return false;
        }
        IndexMetadata write = ProjectScope.index(state, stream.getWriteIndex().getName());
        return write != null
                && write.mapping() != null
                && olderShape(write.mapping().sourceAsMap());
    }

    /** Whether {@code mapping} (an index's, without its type) maps {@code event} as version 1 did. */
    static boolean olderShape(Map<String, Object> mapping) {
        return mapping.get("properties") instanceof Map<?, ?> properties
                && properties.get("event") instanceof Map<?, ?> event
                && "keyword".equals(event.get("type"));
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
        boolean shapeRefused = false;
        for (BulkItemResponse item : response.getItems()) {
            if (item.isFailed()) {
                if (failed == 0) {
                    warn("lock history documents refused: " + item.getFailureMessage(), null);
                }
                failed++;
                shapeRefused |=
                        ExceptionsHelper.unwrapCause(item.getFailure().getCause()) instanceof DocumentParsingException;
            }
        }
        if (shapeRefused) {
            reinstallSoon();
        }
        return failed;
    }

    /**
     * The write index refused the documents' shape: another node put back an older template (a
     * node of the older plugin in a mixed cluster, or a downgrade) and its index rolled over, or
     * the user's {@value #CUSTOM} maps a field otherwise. The next step installs the templates
     * again, which rolls an older shape over; at most once a minute, since the user's mapping is
     * not the plugin's to change.
     */
    private void reinstallSoon() {
        long last = lastReinstall.get();
        long now = System.nanoTime();
        if (now - last >= WARN_EVERY_NANOS && lastReinstall.compareAndSet(last, now)) {
            installed = null;
        }
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
     * The data stream's index template: a data stream of the plugin's component templates and then
     * the user's {@value #CUSTOM}, which may be missing; nothing of its own, so that a
     * {@value #CUSTOM} can change any mapping, setting or the lifecycle.
     */
    static ComposableIndexTemplate template() {
        String json = """
                {
                  "index_patterns": ["%s"],
                  "data_stream": {},
                  "priority": 500,
                  "version": %d,
                  "composed_of": ["%s", "%s", "%s"],
                  "ignore_missing_component_templates": ["%s"],
                  "_meta": {"managed_by": "lock-manager", "managed": true,
                            "description": "lock history (docs/API.md); add your own in %s"}
                }
                """.formatted(DATA_STREAM, FORMAT, MAPPINGS, SETTINGS, CUSTOM, CUSTOM, CUSTOM);
        try (XContentParser parser = parser(json)) {
            return ComposableIndexTemplate.parse(parser);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The fields of docs/API.md "Lock history" mapped for search and charts: the Elastic Common
     * Schema's as it types them, the lock's own under {@code lock}; unknown fields kept in the
     * source but not indexed.
     */
    static ComponentTemplate mappings() {
        return component("""
                {
                  "dynamic": false,
                  "properties": {
                    "@timestamp": {"type": "date"},
                    "ecs": {"properties": {"version": {"type": "keyword"}}},
                    "event": {"properties": {
                      "kind": {"type": "keyword"},
                      "module": {"type": "keyword"},
                      "dataset": {"type": "keyword"},
                      "action": {"type": "keyword"},
                      "duration": {"type": "long"},
                      "reason": {"type": "keyword", "ignore_above": 1024}
                    }},
                    "lock": {"properties": {
                      "key": {"type": "keyword"},
                      "scope": {"type": "keyword"},
                      "owner": {"type": "keyword"},
                      "mode": {"type": "keyword"},
                      "fencing_token": {"type": "long"},
                      "partition": {"type": "integer"},
                      "wait": {"properties": {"duration": {"type": "long"}}}
                    }},
                    "service": {"properties": {"node": {"properties": {"name": {"type": "keyword"}}}}}
                  }
                }""", "mappings", "the lock history's fields");
    }

    /** One shard, a replica where there is a second node, and the lifecycle's {@code retention}. */
    static ComponentTemplate settings(TimeValue retention) {
        String json = """
                {"settings": {"index.number_of_shards": 1, "index.auto_expand_replicas": "0-1"},
                 "lifecycle": {"data_retention": "%s"}}""".formatted(retention.getStringRep());
        return component(json, null, "the lock history's settings and retention");
    }

    /** A component template of {@code body} (its {@code template}), or of {@code body} under {@code key}. */
    private static ComponentTemplate component(String body, String key, String description) {
        String template = key == null ? body : "{\"" + key + "\": " + body + "}";
        String json = """
                {"template": %s, "version": %d,
                 "_meta": {"managed_by": "lock-manager", "managed": true, "description": "%s"}}""".formatted(template, FORMAT, description);
        try (XContentParser parser = parser(json)) {
            return ComponentTemplate.parse(parser);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static XContentParser parser(String json) throws IOException {
        return XContentType.JSON.xContent().createParser(XContentParserConfiguration.EMPTY, json);
    }
}
