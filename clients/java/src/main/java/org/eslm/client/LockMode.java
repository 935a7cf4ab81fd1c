package org.eslm.client;

/** docs/API.md, "Modes": one exclusive holder, or any number of shared holders. */
public enum LockMode {
    EXCLUSIVE,
    SHARED
}
