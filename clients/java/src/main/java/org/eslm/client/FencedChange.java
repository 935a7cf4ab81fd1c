package org.eslm.client;

import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * One change of {@link HeldLock#bulk}: a partial document, field operations, or a delete of one
 * document (docs/API.md "Fenced changes"). No function of the document: a read-modify-write needs
 * its read first ({@link HeldLock#update(String, String, java.util.function.UnaryOperator)}).
 */
public final class FencedChange {
    private final String index;
    private final String id;
    private final Map<String, Object> params;

    private FencedChange(String index, String id, Map<String, Object> params) {
        this.index = Fenced.name(index, "index");
        this.id = Fenced.name(id, "id");
        this.params = params;
    }

    /** Merges the partial document {@code doc} into {@code index/_doc/id}, as {@code _update}'s {@code doc} does. */
    public static FencedChange doc(String index, String id, Map<String, ?> doc) {
        return new FencedChange(index, id, Fenced.docParams(doc));
    }

    /** Runs {@code ops} in order on {@code index/_doc/id}. */
    public static FencedChange ops(String index, String id, List<FieldOp> ops) {
        return new FencedChange(index, id, Fenced.opsParams(ops));
    }

    /** Deletes {@code index/_doc/id}, leaving a tombstone that keeps the fence. */
    public static FencedChange delete(String index, String id) {
        return new FencedChange(index, id, Fenced.DELETE);
    }

    public String index() {
        return index;
    }

    public String id() {
        return id;
    }

    /** The script's params of the change (without the token and key). */
    Map<String, Object> params() {
        return params;
    }

    @Override
    public boolean equals(Object other) {
        return other instanceof FencedChange that
                && index.equals(that.index)
                && id.equals(that.id)
                && params.equals(that.params);
    }

    @Override
    public int hashCode() {
        return Objects.hash(index, id, params);
    }

    @Override
    public String toString() {
        return "FencedChange[" + index + "/" + id + " " + params + "]";
    }
}
