package org.eslm.rest;

import java.io.IOException;
import java.util.List;
import org.elasticsearch.common.Strings;
import org.elasticsearch.xcontent.ObjectParser;
import org.elasticsearch.xcontent.ObjectParser.ValueType;
import org.elasticsearch.xcontent.ParseField;
import org.elasticsearch.xcontent.XContentBuilder;
import org.elasticsearch.xcontent.XContentParser;
import org.elasticsearch.xcontent.json.JsonXContent;
import org.eslm.action.LockOpRequest;
import org.eslm.settings.LockSettings;

/**
 * The bodies of {@code /_groups/{name}/_join|_leave|_heartbeat|_update} (docs/API.md "Groups"),
 * parsed into the operation they are: a membership is a shared lock of the key {@code name} in
 * scope {@code group} whose owner is the {@code member} and whose value is the member's
 * {@code capabilities} (any JSON value, kept as its JSON text, bounded like an election's value).
 */
final class GroupBodies {
    private GroupBodies() {}

    /** The core's name of the group scope. */
    static final String GROUP = LockOpRequest.GROUP_SCOPE;

    private static final ObjectParser<LockBodies.Args, LockSettings.Values> JOIN =
            new ObjectParser<>("group_join_request", LockBodies.Args::new);
    private static final ObjectParser<LockBodies.Args, LockSettings.Values> LEAVE =
            new ObjectParser<>("group_leave_request", LockBodies.Args::new);
    private static final ObjectParser<LockBodies.Args, LockSettings.Values> HEARTBEAT =
            new ObjectParser<>("group_heartbeat_request", LockBodies.Args::new);
    private static final ObjectParser<LockBodies.Args, LockSettings.Values> UPDATE =
            new ObjectParser<>("group_update_request", LockBodies.Args::new);

    static {
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(JOIN, LEAVE, HEARTBEAT, UPDATE)) {
            p.declareString((a, v) -> a.put("owner", LockBodies.boundedOwner("member", v)), new ParseField("member"));
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(JOIN, LEAVE, HEARTBEAT)) {
            p.declareString(
                    (a, v) -> a.put(LockBodies.ACQUISITION_FIELD, v), new ParseField(LockBodies.ACQUISITION_FIELD));
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(LEAVE, HEARTBEAT)) {
            p.declareLong((a, v) -> a.put("fencing_token", v), new ParseField("fencing_token"));
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(JOIN, HEARTBEAT)) {
            p.declareField(
                    (a, v) -> a.raw.put("lease", v), LockBodies::rawValue, new ParseField("lease"), ValueType.VALUE);
        }
        for (ObjectParser<LockBodies.Args, LockSettings.Values> p : List.of(JOIN, UPDATE)) {
            p.declareField(
                    (a, v) -> a.put("value", v),
                    GroupBodies::capabilities,
                    new ParseField("capabilities"),
                    ValueType.VALUE_OBJECT_ARRAY);
        }
        JOIN.declareString((a, v) -> a.put("session", v), new ParseField("session"));
    }

    /** A join: a shared acquire of the group that never waits (a member never conflicts). */
    static LockBodies.Args join(String name, XContentParser body, LockSettings.Values settings) throws IOException {
        LockBodies.Args args = parsed(JOIN, name, body, settings);
        args.put("mode", "shared");
        return args;
    }

    /** A leave (release) or a heartbeat (renew): the membership named by acquisition or token. */
    static LockBodies.Args keyed(boolean leave, String name, XContentParser body, LockSettings.Values settings)
            throws IOException {
        return parsed(leave ? LEAVE : HEARTBEAT, name, body, settings).namesGrant("fencing_token");
    }

    /** New capabilities of a member: the core's {@code GROUP_UPDATE} arguments. */
    static LockBodies.Args update(String name, XContentParser body, LockSettings.Values settings) throws IOException {
        LockBodies.Args parsed = parsed(UPDATE, name, body, settings);
        LockBodies.Args args = new LockBodies.Args();
        args.put(GROUP, name);
        args.put("member", parsed.get("owner"));
        if (parsed.containsKey("value")) {
            args.put("capabilities", parsed.get("value"));
        }
        return args;
    }

    private static LockBodies.Args parsed(
            ObjectParser<LockBodies.Args, LockSettings.Values> p,
            String name,
            XContentParser body,
            LockSettings.Values settings)
            throws IOException {
        return LockBodies.ownedBy("member", p, name, GROUP, body, settings);
    }

    /**
     * Any JSON value as its compact JSON text, which the core keeps and bounds (the member's
     * {@code value}, at most 1024 bytes, refused naming {@code [value]}).
     */
    private static String capabilities(XContentParser parser, LockSettings.Values settings) throws IOException {
        try (XContentBuilder b = JsonXContent.contentBuilder()) {
            b.copyCurrentStructure(parser);
            return Strings.toString(b);
        }
    }
}
