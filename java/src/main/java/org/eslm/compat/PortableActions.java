package org.eslm.compat;

import java.util.Collection;
import java.util.List;
import org.elasticsearch.action.ActionType;
import org.elasticsearch.action.support.TransportAction;
import org.elasticsearch.common.settings.Settings;
import org.elasticsearch.rest.RestHandler;

/**
 * A plugin's transport actions and REST handlers, declared the same way for every supported
 * Elasticsearch major. {@link VersionedActionPlugin} (one per major, under java/src/compat/)
 * hands them to that major's {@code ActionPlugin} methods, whose signatures differ (README
 * "Versions").
 */
public interface PortableActions {
    /** A transport action: its type and the class Elasticsearch instantiates for it. */
    record Action(ActionType<?> type, Class<? extends TransportAction<?, ?>> transport) {}

    /** The transport actions this plugin registers. */
    default List<Action> actions() {
        return List.of();
    }

    /** The REST handlers, built from the node's settings. */
    Collection<RestHandler> restHandlers(Settings settings);
}
