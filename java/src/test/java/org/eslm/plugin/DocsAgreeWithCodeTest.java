package org.eslm.plugin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.elasticsearch.common.settings.Setting;
import org.elasticsearch.common.settings.Settings;
import org.eslm.action.LockActionNames;
import org.eslm.settings.LockSettings;
import org.junit.jupiter.api.Test;

/**
 * Docs that cannot drift (issue 39): the settings tables of docs/API.md "Settings" and
 * docs/OPERATIONS.md "Settings" list exactly the settings the plugin registers, each with its
 * default and whether it is dynamic; the privilege table of docs/OPERATIONS.md "Least-privilege
 * roles" lists every action of each group under that group's prefix. The checkers are tried on
 * hand-made rows too.
 */
class DocsAgreeWithCodeTest {
    private static final Path DOCS = Path.of(System.getProperty("user.dir"), "docs");
    private static final Pattern SETTING_ROW =
            Pattern.compile("^\\| `(locks\\.[a-z_.]+)` \\| ([^|]*) \\| (yes|no) \\|", Pattern.MULTILINE);
    private static final Pattern CODE = Pattern.compile("`([^`]+)`");

    /** A setting as a table documents it: its default (null when the cell is prose) and whether it is dynamic. */
    record Documented(String defaultValue, boolean dynamic) {}

    static Map<String, Documented> settingsTable(String markdown) {
        Map<String, Documented> rows = new LinkedHashMap<>();
        Matcher row = SETTING_ROW.matcher(markdown);
        while (row.find()) {
            String cell = row.group(2).trim();
            Matcher code = CODE.matcher(cell);
            String value = cell.startsWith("`") && code.find() ? code.group(1) : null;
            rows.put(row.group(1), new Documented(value, row.group(3).equals("yes")));
        }
        return rows;
    }

    /** What {@code rows} gets wrong about {@code settings}: one line per disagreement. */
    static List<String> disagreements(Map<String, Documented> rows, List<Setting<?>> settings) {
        List<String> wrong = new ArrayList<>();
        Set<String> registered = new TreeSet<>();
        for (Setting<?> setting : settings) {
            registered.add(setting.getKey());
            Documented doc = rows.get(setting.getKey());
            if (doc == null) {
                wrong.add(setting.getKey() + ": missing");
                continue;
            }
            if (doc.dynamic() != setting.isDynamic()) {
                wrong.add(setting.getKey() + ": dynamic is " + setting.isDynamic());
            }
            if (doc.defaultValue() != null && meansTheDefault(setting, doc.defaultValue()) == false) {
                wrong.add(setting.getKey() + ": default is [" + setting.getDefaultRaw(Settings.EMPTY)
                        + "], documented [" + doc.defaultValue() + "]");
            }
        }
        for (String key : rows.keySet()) {
            if (registered.contains(key) == false) {
                wrong.add(key + ": not a setting of the plugin");
            }
        }
        return wrong;
    }

    /** Whether {@code documented}, read as the setting reads a value ({@code 0s} as {@code 0ms}), is its default. */
    private static boolean meansTheDefault(Setting<?> setting, String documented) {
        try {
            Settings given =
                    Settings.builder().put(setting.getKey(), documented).build();
            return setting.get(given).equals(setting.getDefault(Settings.EMPTY));
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    void bothSettingsTablesAreTheRegisteredSettings() throws IOException {
        for (String doc : List.of("API.md", "OPERATIONS.md")) {
            Map<String, Documented> rows = settingsTable(Files.readString(DOCS.resolve(doc)));
            assertEquals(LockSettings.ALL.size(), rows.size(), doc + ": " + rows.keySet());
            assertEquals(List.of(), disagreements(rows, LockSettings.ALL), doc);
        }
    }

    @Test
    void theSettingsCheckerReportsWhatDisagrees() {
        Setting<Boolean> flag = Setting.boolSetting("locks.x", true, Setting.Property.NodeScope);
        Map<String, Documented> rows =
                settingsTable("| `locks.x` | `no` | yes | a |\n| `locks.y` | the longest lease | no | b |\n");
        assertEquals(
                List.of(
                        "locks.x: dynamic is false",
                        "locks.x: default is [true], documented [no]",
                        "locks.y: not a setting of the plugin"),
                disagreements(rows, List.of(flag)));
        assertEquals(List.of("locks.x: missing"), disagreements(Map.of(), List.of(flag)));
    }

    /** The actions of each group as the privilege table names them: the part after the group's prefix. */
    @Test
    void thePrivilegeTableNamesEveryActionUnderItsGroup() throws IOException {
        String operations = Files.readString(DOCS.resolve("OPERATIONS.md"));
        List<List<String>> groups = List.of(LockActionNames.CHANGES, LockActionNames.READS, LockActionNames.ADMIN);
        List<String> prefixes =
                List.of(LockActionNames.LOCK_CHANGES, LockActionNames.LOCK_READS, LockActionNames.LOCK_ADMIN);
        for (int g = 0; g < groups.size(); g++) {
            String prefix = prefixes.get(g);
            Set<String> expected = new TreeSet<>();
            groups.get(g).forEach(name -> expected.add(name.substring(prefix.length())));
            assertEquals(expected, documentedActions(operations, prefix), prefix);
        }
    }

    @Test
    void theActionCheckerReadsOnlyTheGroupsRow() {
        String table = "| `cluster:admin/locks/*` — changes | `acquire`, `release` | `_acquire` |\n"
                + "| `cluster:monitor/locks/*` — reads | `get` | `GET` |\n";
        assertEquals(Set.of("acquire", "release"), documentedActions(table, "cluster:admin/locks/"));
        assertEquals(Set.of("get"), documentedActions(table, "cluster:monitor/locks/"));
        assertTrue(documentedActions(table, "cluster:admin/lock_manager/").isEmpty());
    }

    /** The backquoted names of the second cell of the row whose first cell is {@code `prefix*`}. */
    static Set<String> documentedActions(String markdown, String prefix) {
        Set<String> names = new TreeSet<>();
        for (String line : markdown.split("\n")) {
            if (line.startsWith("| `" + prefix + "*`")) {
                Matcher code = CODE.matcher(line.split("\\|")[2]);
                while (code.find()) {
                    names.add(code.group(1));
                }
            }
        }
        return names;
    }
}
