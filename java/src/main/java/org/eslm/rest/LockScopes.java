package org.eslm.rest;

import org.eslm.action.LockOpRequest;

/** The core's names of the scopes the REST layer addresses keys in (docs/LOCK_CORE.md "Scopes and tree locks"). */
final class LockScopes {
    private LockScopes() {}

    static final String SEMAPHORE = "semaphore";
    static final String ELECTION = "election";
    static final String GROUP = LockOpRequest.GROUP_SCOPE;
}
