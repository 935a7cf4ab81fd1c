package org.eslm.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import co.elastic.clients.transport.rest5_client.low_level.Rest5Client;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import org.apache.http.HttpHost;
import org.elasticsearch.client.RestClient;
import org.eslm.client.errors.LockTransportException;
import org.junit.jupiter.api.Test;

/**
 * No answer (a refused connection) reaches the caller as the client's own {@link
 * LockTransportException}, with the I/O failure as its cause, over both transports.
 */
class TransportFailureTest {
    @Test
    void aRefusedConnectionIsALockTransportExceptionOverRestClient() throws IOException {
        String url = closedPortUrl();
        try (RestClient rest = RestClient.builder(HttpHost.create(url)).build();
                LockClient locks = LockClientBuilder.forRestClient(rest).build()) {
            assertRefused(locks);
        }
    }

    @Test
    void aRefusedConnectionIsALockTransportExceptionOverRest5Client() throws IOException {
        String url = closedPortUrl();
        try (Rest5Client rest = Rest5Client.builder(URI.create(url)).build();
                LockClient locks = LockClientBuilder.forRest5Client(rest).build()) {
            assertRefused(locks);
        }
    }

    private static void assertRefused(LockClient locks) {
        LockTransportException failed = assertThrows(LockTransportException.class, () -> locks.acquire("refused"));
        assertEquals(0, failed.status(), "no answer came");
        assertTrue(causes(failed, ConnectException.class), "caused by the refused connection: " + failed);
        assertInstanceOf(LockTransportException.class, assertThrows(RuntimeException.class, () -> locks.isLocked("x")));
    }

    private static boolean causes(Throwable error, Class<? extends Throwable> type) {
        for (Throwable cause = error.getCause(); cause != null; cause = cause.getCause()) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }

    /** A loopback port nothing listens on: bound, then closed. */
    private static String closedPortUrl() throws IOException {
        try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return "http://127.0.0.1:" + socket.getLocalPort();
        }
    }
}
