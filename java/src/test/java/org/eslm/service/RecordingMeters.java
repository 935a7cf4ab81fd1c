package org.eslm.service;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.elasticsearch.telemetry.metric.DoubleAsyncCounter;
import org.elasticsearch.telemetry.metric.DoubleCounter;
import org.elasticsearch.telemetry.metric.DoubleGauge;
import org.elasticsearch.telemetry.metric.DoubleHistogram;
import org.elasticsearch.telemetry.metric.DoubleUpDownCounter;
import org.elasticsearch.telemetry.metric.DoubleWithAttributes;
import org.elasticsearch.telemetry.metric.LongAsyncCounter;
import org.elasticsearch.telemetry.metric.LongCounter;
import org.elasticsearch.telemetry.metric.LongGauge;
import org.elasticsearch.telemetry.metric.LongHistogram;
import org.elasticsearch.telemetry.metric.LongUpDownCounter;
import org.elasticsearch.telemetry.metric.LongWithAttributes;
import org.elasticsearch.telemetry.metric.MeterRegistry;

/**
 * A {@link MeterRegistry} that records what is registered and measured, for tests of the lock
 * metrics' wiring (Elasticsearch's own {@code RecordingMeterRegistry} is in its test framework,
 * which the build does not use). Covers the instruments the plugin registers: long counters, long
 * async counters, long gauges and long and double histograms; the others are refused. Its
 * callbacks run only when {@link #collect} asks, as a registry's collection would.
 */
final class RecordingMeters implements MeterRegistry {
    /** One registration: the kind of instrument, its description and unit. */
    record Registered(String type, String description, String unit) {}

    final Map<String, Registered> registered = new LinkedHashMap<>();
    /** Values recorded by histograms and counted by counters, by name. */
    final Map<String, List<Number>> recorded = new LinkedHashMap<>();

    private final Map<String, Supplier<Collection<LongWithAttributes>>> callbacks = new LinkedHashMap<>();
    /** Callbacks closed, by name. */
    final List<String> closed = new ArrayList<>();

    /** What every callback answers now, by name (an empty list: nothing observed). */
    Map<String, List<Long>> collect() {
        Map<String, List<Long>> observed = new LinkedHashMap<>();
        callbacks.forEach((name, callback) -> {
            List<Long> values = new ArrayList<>();
            callback.get().forEach(v -> values.add(v.value()));
            observed.put(name, values);
        });
        return observed;
    }

    private void register(String name, String type, String description, String unit) {
        if (registered.putIfAbsent(name, new Registered(type, description, unit)) != null) {
            throw new IllegalStateException("already registered [" + name + "]");
        }
        recorded.put(name, new ArrayList<>());
    }

    private AutoCloseableInstrument callback(
            String name, String type, String description, String unit, Supplier<Collection<LongWithAttributes>> cb) {
        register(name, type, description, unit);
        callbacks.put(name, cb);
        return new AutoCloseableInstrument(name);
    }

    /** A callback instrument: closing it stops its callback. */
    final class AutoCloseableInstrument implements LongAsyncCounter, LongGauge {
        private final String name;

        AutoCloseableInstrument(String name) {
            this.name = name;
        }

        @Override
        public String getName() {
            return name;
        }

        @Override
        public void close() {
            callbacks.remove(name);
            closed.add(name);
        }
    }

    @Override
    public LongCounter registerLongCounter(String name, String description, String unit) {
        register(name, "long_counter", description, unit);
        return new LongCounter() {
            @Override
            public void increment() {
                incrementBy(1);
            }

            @Override
            public void incrementBy(long inc) {
                recorded.get(name).add(inc);
            }

            @Override
            public void incrementBy(long inc, Map<String, Object> attributes) {
                incrementBy(inc);
            }

            @Override
            public String getName() {
                return name;
            }
        };
    }

    @Override
    public LongAsyncCounter registerLongsAsyncCounter(
            String name, String description, String unit, Supplier<Collection<LongWithAttributes>> observer) {
        return callback(name, "long_async_counter", description, unit, observer);
    }

    @Override
    public LongGauge registerLongsGauge(
            String name, String description, String unit, Supplier<Collection<LongWithAttributes>> observer) {
        return callback(name, "long_gauge", description, unit, observer);
    }

    @Override
    public LongHistogram registerLongHistogram(String name, String description, String unit) {
        register(name, "long_histogram", description, unit);
        return new LongHistogram() {
            @Override
            public void record(long value) {
                recorded.get(name).add(value);
            }

            @Override
            public void record(long value, Map<String, Object> attributes) {
                record(value);
            }

            @Override
            public String getName() {
                return name;
            }
        };
    }

    @Override
    public DoubleHistogram registerDoubleHistogram(String name, String description, String unit) {
        register(name, "double_histogram", description, unit);
        return new DoubleHistogram() {
            @Override
            public void record(double value) {
                recorded.get(name).add(value);
            }

            @Override
            public void record(double value, Map<String, Object> attributes) {
                record(value);
            }

            @Override
            public String getName() {
                return name;
            }
        };
    }

    private static UnsupportedOperationException unused(String what) {
        return new UnsupportedOperationException("the lock metrics register no " + what);
    }

    @Override
    public DoubleCounter registerDoubleCounter(String name, String description, String unit) {
        throw unused("double counter");
    }

    @Override
    public DoubleCounter getDoubleCounter(String name) {
        throw unused("double counter");
    }

    @Override
    public DoubleUpDownCounter registerDoubleUpDownCounter(String name, String description, String unit) {
        throw unused("up-down counter");
    }

    @Override
    public DoubleUpDownCounter getDoubleUpDownCounter(String name) {
        throw unused("up-down counter");
    }

    @Override
    public DoubleGauge registerDoublesGauge(
            String name, String description, String unit, Supplier<Collection<DoubleWithAttributes>> observer) {
        throw unused("double gauge");
    }

    @Override
    public DoubleGauge getDoubleGauge(String name) {
        throw unused("double gauge");
    }

    @Override
    public DoubleHistogram getDoubleHistogram(String name) {
        throw unused("lookup");
    }

    @Override
    public LongAsyncCounter getLongAsyncCounter(String name) {
        throw unused("lookup");
    }

    @Override
    public DoubleAsyncCounter registerDoublesAsyncCounter(
            String name, String description, String unit, Supplier<Collection<DoubleWithAttributes>> observer) {
        throw unused("double async counter");
    }

    @Override
    public DoubleAsyncCounter getDoubleAsyncCounter(String name) {
        throw unused("double async counter");
    }

    @Override
    public LongCounter getLongCounter(String name) {
        throw unused("lookup");
    }

    @Override
    public LongUpDownCounter registerLongUpDownCounter(String name, String description, String unit) {
        throw unused("up-down counter");
    }

    @Override
    public LongUpDownCounter getLongUpDownCounter(String name) {
        throw unused("up-down counter");
    }

    @Override
    public LongGauge getLongGauge(String name) {
        throw unused("lookup");
    }

    @Override
    public LongHistogram getLongHistogram(String name) {
        throw unused("lookup");
    }
}
