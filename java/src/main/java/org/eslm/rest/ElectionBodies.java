package org.eslm.rest;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.elasticsearch.xcontent.ObjectParser;
import org.elasticsearch.xcontent.ObjectParser.ValueType;
import org.elasticsearch.xcontent.ParseField;
import org.elasticsearch.xcontent.XContentParser;
import org.eslm.bridge.NativeLimits;
import org.eslm.settings.LockSettings;

/**
 * The bodies of {@code /_elections/{name}/_campaign|_resign|_renew} (docs/API.md "Elections"),
 * parsed into the lock operation they are: {@code candidate} is the owner, {@code term} the
 * fencing token, in scope {@code election} on the key {@code name}.
 */
final class ElectionBodies {
    private ElectionBodies() {}

    /** The core's name of the election scope. */
    static final String ELECTION = "election";

    private static final ObjectParser<LockBodies.Args, LockSettings.Values> CAMPAIGN =
            new ObjectParser<>("election_campaign_request", LockBodies.Args::new);
    private static final ObjectParser<LockBodies.Args, LockSettings.Values> RESIGN =
            new ObjectParser<>("election_resign_request", LockBodies.Args::new);
    private static final ObjectParser<LockBodies.Args, LockSettings.Values> RENEW =
            new ObjectParser<>("election_renew_request", LockBodies.Args::new);

    static {
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(CAMPAIGN, RESIGN, RENEW)) {
            p.declareString(
                    (a, v) -> a.put("owner", LockBodies.boundedOwner("candidate", v)), new ParseField("candidate"));
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(RESIGN, RENEW)) {
            p.declareLong((a, v) -> a.put("fencing_token", term(v)), new ParseField("term"));
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(CAMPAIGN, RENEW)) {
            p.declareField(
                    (a, v) -> a.raw.put("lease", v), LockBodies::rawValue, new ParseField("lease"), ValueType.VALUE);
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(CAMPAIGN, RESIGN, RENEW)) {
            p.declareString(
                    (a, v) -> a.put(LockBodies.ACQUISITION_FIELD, v), new ParseField(LockBodies.ACQUISITION_FIELD));
        }
        CAMPAIGN.declareField(
                (a, v) -> a.raw.put("wait", v), LockBodies::rawValue, new ParseField("wait"), ValueType.VALUE);
        CAMPAIGN.declareString((a, v) -> a.put("session", v), new ParseField("session"));
        CAMPAIGN.declareString((a, v) -> a.put("value", value(v)), new ParseField("value"));
        CAMPAIGN.declareField(
                (a, v) -> a.raw.put("lock_delay", v),
                LockBodies::rawValue,
                new ParseField("lock_delay"),
                ValueType.VALUE);
    }

    /** A campaign: an exclusive acquire of the election that waits (by default) to be elected. */
    static LockBodies.Args campaign(String name, XContentParser body, LockSettings.Values settings) throws IOException {
        LockBodies.Args args = parsed(CAMPAIGN, name, body, settings);
        args.put("mode", "exclusive");
        LockBodies.defaultWait(args, settings);
        return args;
    }

    /** A resignation (release) or a renewal of the leader's lease. */
    static LockBodies.Args keyed(boolean resign, String name, XContentParser body, LockSettings.Values settings)
            throws IOException {
        return parsed(resign ? RESIGN : RENEW, name, body, settings).namesGrant("term");
    }

    private static LockBodies.Args parsed(
            ObjectParser<LockBodies.Args, LockSettings.Values> p,
            String name,
            XContentParser body,
            LockSettings.Values settings)
            throws IOException {
        return LockBodies.ownedBy("candidate", p, name, ELECTION, body, settings);
    }

    private static long term(long v) {
        if (v < 1) {
            throw new IllegalArgumentException("[term] must be a positive whole number, got [" + v + "]");
        }
        return v;
    }

    private static String value(String v) {
        int bytes = v.getBytes(StandardCharsets.UTF_8).length;
        if (bytes > NativeLimits.MAX_VALUE_BYTES) {
            throw new IllegalArgumentException(
                    "[value] must be at most " + NativeLimits.MAX_VALUE_BYTES + " bytes (UTF-8), got [" + bytes + "]");
        }
        return v;
    }
}
