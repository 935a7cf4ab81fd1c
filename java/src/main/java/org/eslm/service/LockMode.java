package org.eslm.service;

import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** Lock modes as named in the REST API and in the bridge JSON. */
public enum LockMode {
    EXCLUSIVE,
    SHARED;

    /** The name used on the wire and in JSON: {@code exclusive}, {@code shared}. */
    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Parses a mode name.
     *
     * @throws IllegalArgumentException naming the field and the accepted values
     */
    public static LockMode parse(String value) {
        for (LockMode m : values()) {
            if (m.wireName().equals(value)) {
                return m;
            }
        }
        String accepted = Arrays.stream(values()).map(LockMode::wireName).collect(Collectors.joining(", "));
        throw new IllegalArgumentException("[mode] must be one of [" + accepted + "], got [" + value + "]");
    }
}
