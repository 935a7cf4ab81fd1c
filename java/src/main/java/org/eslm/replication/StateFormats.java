package org.eslm.replication;

/**
 * Telling a state the core refused by its format from one that does not follow (docs/ARCHITECTURE.md
 * "Formats and versions"): the core names the field {@code format} ({@code [format] state of format
 * [3] is newer than this build's [2] ...}), as every invalid argument names its field.
 */
final class StateFormats {
    private StateFormats() {}

    /** Whether the core refused a state document by its format. */
    static boolean refused(IllegalArgumentException e) {
        return e.getMessage() != null && e.getMessage().startsWith("[format]");
    }
}
