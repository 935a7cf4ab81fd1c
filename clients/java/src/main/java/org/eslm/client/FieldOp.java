package org.eslm.client;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * One field operation of a fenced change (docs/API.md "Fenced changes"): the operations of a
 * change run in order on the document as its primary holds it, so a counter or a list needs no
 * read.
 *
 * <pre>{@code
 * lock.update("orders", "42", List.of(FieldOp.inc("items"), FieldOp.append("log", "packed")));
 * }</pre>
 *
 * <p>{@code field} is a dotted path ({@code "stats.count"}). A bad operation (an {@code inc} of
 * something else than a finite number, an empty segment, the fence's own field) is refused with
 * {@link IllegalArgumentException} when it is made, before anything is sent.
 *
 * @param op {@code inc}, {@code append}, {@code set} or {@code remove}
 * @param field the dotted name of the field
 * @param value the number to add, the element to append, the value to set (null: JSON null); null
 *     for {@code remove}
 */
public record FieldOp(String op, String field, Object value) {
    private static final Set<String> OPS = Set.of("inc", "append", "set", "remove");

    public FieldOp {
        if (!OPS.contains(op)) {
            throw new IllegalArgumentException(
                    "[op] must be one of [set], [inc], [append], [remove], got [" + op + "]");
        }
        if (field == null || field.isEmpty() || field.startsWith(".") || field.endsWith(".") || field.contains("..")) {
            throw new IllegalArgumentException(
                    "[field] must be a dotted field name without an empty segment, got [" + field + "]");
        }
        if (field.split("\\.")[0].equals(Fenced.FENCE_FIELD)) {
            throw new IllegalArgumentException(
                    "[field] must not name [" + Fenced.FENCE_FIELD + "]: the fence is the plugin's to write");
        }
        if (op.equals("inc") && !finite(value)) {
            throw new IllegalArgumentException("[value] of [inc] must be a finite number, got [" + value + "]");
        }
        if (op.equals("remove") && value != null) {
            throw new IllegalArgumentException("[remove] takes no [value]");
        }
    }

    /** Adds 1 to the number in {@code field}; a missing field counts as 0. */
    public static FieldOp inc(String field) {
        return inc(field, 1);
    }

    /** Adds {@code by} to the number in {@code field}; a missing field counts as 0. Whole numbers stay whole. */
    public static FieldOp inc(String field, Number by) {
        return new FieldOp("inc", field, by);
    }

    /** Appends {@code value} to the list in {@code field}; a missing field is an empty list. */
    public static FieldOp append(String field, Object value) {
        return new FieldOp("append", field, value);
    }

    /** Sets {@code field} to {@code value}; objects on the way are created. */
    public static FieldOp set(String field, Object value) {
        return new FieldOp("set", field, value);
    }

    /** Removes {@code field} if it is there. */
    public static FieldOp remove(String field) {
        return new FieldOp("remove", field, null);
    }

    /** The operation as the plugin's script takes it: {@code remove} without a value. */
    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("op", op);
        json.put("field", field);
        if (!op.equals("remove")) {
            json.put("value", value);
        }
        return json;
    }

    private static boolean finite(Object value) {
        if (value instanceof Double d) {
            return Double.isFinite(d);
        }
        if (value instanceof Float f) {
            return Float.isFinite(f);
        }
        return value instanceof Number;
    }
}
