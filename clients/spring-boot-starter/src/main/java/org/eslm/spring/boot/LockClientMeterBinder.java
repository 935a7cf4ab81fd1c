package org.eslm.spring.boot;

import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.eslm.client.LockClient;

/** The gauge {@value #HELD}: the grants the client holds open now ({@link LockClient#heldLocks()}). */
public class LockClientMeterBinder implements MeterBinder {
    public static final String HELD = "eslm.lock.held";

    private final LockClient client;

    public LockClientMeterBinder(LockClient client) {
        this.client = client;
    }

    @Override
    public void bindTo(MeterRegistry registry) {
        Gauge.builder(HELD, client, LockClient::heldLocks)
                .description("Locks the client holds now")
                .strongReference(true)
                .register(registry);
    }
}
