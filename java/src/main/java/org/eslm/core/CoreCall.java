package org.eslm.core;

import java.util.Map;
import org.eslm.bridge.NativeOp;

/**
 * A bridge call whose answer has been handled: its events delivered to the waiting requests and
 * the next tick scheduled. Answers the envelope for the caller to read its {@code result}.
 */
@FunctionalInterface
public interface CoreCall {
    Map<String, Object> answer(NativeOp op, int partition, String argsJson);
}
