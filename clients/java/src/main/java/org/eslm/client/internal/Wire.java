package org.eslm.client.internal;

import java.util.Locale;

/** Enum constants on the wire: their names in lower case (docs/API.md: modes, scopes). */
public final class Wire {
    private Wire() {}

    public static String name(Enum<?> constant) {
        return constant.name().toLowerCase(Locale.ROOT);
    }

    public static <E extends Enum<E>> E parse(Class<E> type, String name) {
        return Enum.valueOf(type, name.toUpperCase(Locale.ROOT));
    }
}
