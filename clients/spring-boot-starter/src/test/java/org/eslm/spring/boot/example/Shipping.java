package org.eslm.spring.boot.example;

import java.time.Duration;
import org.eslm.client.AcquireOptions;
import org.eslm.client.HeldLock;
import org.eslm.client.LockClient;
import org.springframework.stereotype.Service;

/** The README's first lock: a service given the starter's LockClient (README.md shows it as compiled). */
// README:start
@Service
public class Shipping {
    private final LockClient locks;

    public Shipping(LockClient locks) { // the starter's, over Spring Boot's Rest5Client
        this.locks = locks;
    }

    public long ship(String orderId) {
        AcquireOptions options = AcquireOptions.defaults().withWait(Duration.ofSeconds(5));
        try (HeldLock lock = locks.acquire("orders-" + orderId, options)) {
            // write the order with lock.fencingToken(): docs/API.md "The fencing recipe"
            return lock.fencingToken();
        }
    }
}
// README:end
