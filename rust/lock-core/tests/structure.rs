//! The shape of the lock core, checked as a test so that it cannot drift (issue 11):
//!
//! - no source file under `src/` is longer than [`MAX_FILE_LINES`];
//! - the modules of the crate do not import each other in a cycle: the graph of
//!   `crate::<module>` references between top-level modules (`table` and its files count as
//!   one module, `table`) must be acyclic, and a cycle is printed when it is not;
//! - nor do the files inside `table/`: the graph of their `super::<file>` references must be
//!   acyclic too (`mod.rs`, the parent every file adds methods to, is not a node);
//! - no `too_many_arguments` allowance (a small record instead).
//!
//! Function length is checked by clippy (`too-many-lines-threshold` in `clippy.toml`).
//! The checkers are plain functions, unit-tested below on hand-made input, so each test
//! demonstrably fails on a violation.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Longest source file allowed in `src/`, in lines.
const MAX_FILE_LINES: usize = 800;

/// Module name -> the modules it refers to.
type Graph = BTreeMap<String, BTreeSet<String>>;

/// Every `.rs` file under `dir`, sorted.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).expect("source dir is readable") {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// The top-level module a file belongs to: `src/table/queue.rs` -> `table`,
/// `src/mode.rs` -> `mode`, `src/lib.rs` -> `lib` (the crate root).
fn module_of(src: &Path, file: &Path) -> String {
    let rel = file.strip_prefix(src).expect("file under src");
    let first = rel.components().next().expect("non-empty path");
    let name = first.as_os_str().to_string_lossy();
    name.strip_suffix(".rs").unwrap_or(&name).to_owned()
}

/// The modules named by `crate::<name>` in code (comment lines are skipped; doc links are
/// not imports). Handles `use crate::{a, b::c}` too.
fn crate_refs(source: &str) -> BTreeSet<String> {
    path_refs(source, "crate::")
}

/// The names that follow `prefix` (`crate::` or `super::`) in code, as [`crate_refs`] reads them.
fn path_refs(source: &str, prefix: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for line in source.lines() {
        let code = line.trim_start();
        if code.starts_with("//") {
            continue;
        }
        let code = code.split("//").next().unwrap_or(code);
        for (i, _) in code.match_indices(prefix) {
            let rest = &code[i + prefix.len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or(group);
                for part in group.split(',') {
                    push_ident(&mut out, part.trim());
                }
            } else {
                push_ident(&mut out, rest);
            }
        }
    }
    out
}

fn push_ident(out: &mut BTreeSet<String>, text: &str) {
    let ident: String = text.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
    if !ident.is_empty() {
        out.insert(ident);
    }
}

/// The module graph of the crate under `src`: edges between top-level modules only (a
/// `crate::Name` that is not a module, e.g. a re-export at the root, is not an edge).
fn module_graph(src: &Path) -> Graph {
    let files = rust_files(src);
    let modules: BTreeSet<String> = files.iter().map(|f| module_of(src, f)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let from = module_of(src, file);
        let text = fs::read_to_string(file).expect("source is UTF-8");
        let edges = graph.entry(from.clone()).or_default();
        for to in crate_refs(&text) {
            if to != from && modules.contains(&to) {
                edges.insert(to);
            }
        }
    }
    graph
}

/// The graph of the files directly inside `dir` (a module folder such as `src/table`): file ->
/// the sibling files it names with `super::<file>`. `mod.rs` is left out: it declares the
/// files and holds the type they add methods to, so every file names it.
fn folder_graph(dir: &Path) -> Graph {
    let files: Vec<PathBuf> =
        rust_files(dir).into_iter().filter(|f| f.parent() == Some(dir)).collect();
    let stem = |f: &Path| f.file_stem().expect("file name").to_string_lossy().into_owned();
    let siblings: BTreeSet<String> = files.iter().map(|f| stem(f)).filter(|n| n != "mod").collect();
    let mut graph = Graph::new();
    for file in files.iter().filter(|f| stem(f) != "mod") {
        let text = fs::read_to_string(file).expect("source is UTF-8");
        let from = stem(file);
        let edges: BTreeSet<String> = path_refs(&text, "super::")
            .into_iter()
            .filter(|to| *to != from && siblings.contains(to))
            .collect();
        graph.insert(from, edges);
    }
    graph
}

/// A cycle in `graph`, as the modules along it with the first repeated at the end
/// (`a -> b -> a`), or `None` when the graph is acyclic.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        OnPath,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::OnPath) => {
                let start = path.iter().position(|n| n == node).expect("on the path");
                let mut cycle = path[start..].to_vec();
                cycle.push(node.to_owned());
                return Some(cycle);
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::OnPath);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flatten() {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        let mut path = Vec::new();
        if let Some(cycle) = visit(node, graph, &mut marks, &mut path) {
            return Some(cycle);
        }
    }
    None
}

/// Files longer than `max` lines, with their length.
fn long_files(files: &[PathBuf], max: usize) -> Vec<(PathBuf, usize)> {
    files
        .iter()
        .map(|f| (f.clone(), fs::read_to_string(f).expect("source is UTF-8").lines().count()))
        .filter(|(_, n)| *n > max)
        .collect()
}

#[test]
fn no_source_file_is_longer_than_the_limit() {
    let long = long_files(&rust_files(&src_dir()), MAX_FILE_LINES);
    assert!(long.is_empty(), "files over {MAX_FILE_LINES} lines: {long:?}");
}

#[test]
fn lock_core_modules_import_each_other_without_a_cycle() {
    let graph = module_graph(&src_dir());
    assert!(graph.contains_key("table") && graph.contains_key("error"), "{graph:?}");
    assert!(graph["table"].contains("error"), "the scan sees table's imports: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between lock-core modules: {}", cycle.join(" -> "));
    }
}

#[test]
fn the_files_of_the_table_import_each_other_without_a_cycle() {
    let graph = folder_graph(&src_dir().join("table"));
    assert!(graph["records"].contains("interner"), "the scan sees the files' imports: {graph:?}");
    assert!(graph["ids"].is_empty(), "ids.rs is the leaf the others share: {graph:?}");
    if let Some(cycle) = find_cycle(&graph) {
        panic!("import cycle between the files of table/: {}", cycle.join(" -> "));
    }
}

#[test]
fn no_too_many_arguments_allowance() {
    let lint = ["too_many", "_arguments"].concat();
    for file in rust_files(&src_dir()) {
        let text = fs::read_to_string(&file).expect("source is UTF-8");
        assert!(!text.contains(&lint), "{} allows {lint}: use a small record", file.display());
    }
}

fn graph_of(edges: &[(&str, &str)]) -> Graph {
    let mut g = Graph::new();
    for (a, b) in edges {
        g.entry((*a).to_owned()).or_default().insert((*b).to_owned());
        g.entry((*b).to_owned()).or_default();
    }
    g
}

/// The test files that `tests/all.rs` does not declare as modules: with `autotests = false`
/// (Cargo.toml) such a file would compile into nothing and its tests would silently never run.
fn undeclared_test_files(tests: &Path, root: &str) -> Vec<String> {
    let mut files: Vec<String> = fs::read_dir(tests)
        .expect("tests/")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .filter_map(|p| p.file_stem().map(|s| s.to_string_lossy().into_owned()))
        .filter(|stem| stem != "all")
        .filter(|stem| root.lines().all(|l| l.trim() != format!("mod {stem};")))
        .collect();
    files.sort();
    files
}

#[test]
fn every_test_file_is_a_module_of_the_one_test_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let root = fs::read_to_string(tests.join("all.rs")).expect("tests/all.rs");
    let missing = undeclared_test_files(&tests, &root);
    assert!(missing.is_empty(), "declare these in tests/all.rs: {missing:?}");
    // and the check finds a file left out
    let without_model = root.replace("mod model;\n", "");
    assert_eq!(undeclared_test_files(&tests, &without_model), ["model"]);
}

#[test]
fn the_cycle_checker_finds_and_prints_a_cycle() {
    // types -> error -> types was the cycle before issue 11.
    let g = graph_of(&[("table", "types"), ("types", "error"), ("error", "types")]);
    let cycle = find_cycle(&g).expect("a cycle");
    assert_eq!(cycle.join(" -> "), "error -> types -> error");
    let g = graph_of(&[("a", "b"), ("b", "c"), ("c", "d"), ("d", "b")]);
    assert_eq!(find_cycle(&g).expect("a cycle"), ["b", "c", "d", "b"]);
    let acyclic = graph_of(&[("a", "b"), ("a", "c"), ("b", "c"), ("c", "d")]);
    assert_eq!(find_cycle(&acyclic), None);
}

#[test]
fn the_reference_scanner_reads_code_not_comments() {
    let refs = crate_refs(
        "use crate::error::LockError;\n\
         use crate::{mode::Mode, types};\n\
         //! see [`crate::partition`]\n\
         /// [`crate::stats::Counters`]\n\
         let x = crate::config::Config::default(); // crate::event\n",
    );
    let names: Vec<&str> = refs.iter().map(String::as_str).collect();
    assert_eq!(names, ["config", "error", "mode", "types"]);
}

#[test]
fn the_folder_scanner_sees_sibling_files_named_with_super() {
    let dir = std::env::temp_dir().join(format!("lock-core-folder-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("temp dir");
    fs::write(dir.join("mod.rs"), "mod a;\nmod b;\nuse a::A;\n").expect("write");
    fs::write(dir.join("a.rs"), "use super::{b::B, LockTable};\n// super::c\n").expect("write");
    fs::write(dir.join("b.rs"), "use super::a::A;\nuse super::LockTable;\n").expect("write");
    let graph = folder_graph(&dir);
    fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(graph, graph_of(&[("a", "b"), ("b", "a")]));
    assert_eq!(find_cycle(&graph).expect("a cycle"), ["a", "b", "a"]);
}

#[test]
fn the_length_checker_flags_a_long_file() {
    let dir = std::env::temp_dir().join(format!("lock-core-structure-{}", std::process::id()));
    fs::create_dir_all(&dir).expect("temp dir");
    let file = dir.join("long.rs");
    fs::write(&file, "fn f() {}\n".repeat(MAX_FILE_LINES + 1)).expect("write");
    let long = long_files(std::slice::from_ref(&file), MAX_FILE_LINES);
    fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(long, vec![(file, MAX_FILE_LINES + 1)]);
}

/// The files of `dir` (`.rs`, and sub-folders as modules) that `map` does not name as `` `name` ``
/// (with or without `.rs`): a module map (a README's table of files, a `mod.rs` header) that
/// forgot one.
fn unmapped(dir: &Path, map: &str) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(dir)
        .expect("source dir is readable")
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.is_dir() || p.extension().is_some_and(|e| e == "rs"))
        .map(|p| p.file_name().expect("a name").to_string_lossy().into_owned())
        .filter(|name| {
            let stem = name.strip_suffix(".rs").unwrap_or(name);
            !map.contains(&format!("`{name}`")) && !map.contains(&format!("`{stem}`"))
        })
        .collect();
    out.sort();
    out
}

/// Issue 51: a newcomer finds each file of the table in its map, `src/table/README.md`.
#[test]
fn every_file_of_the_table_is_in_its_map() {
    let table = src_dir().join("table");
    let readme = fs::read_to_string(table.join("README.md")).expect("table/README.md");
    assert_eq!(
        unmapped(&table, &readme),
        Vec::<String>::new(),
        "files missing from table/README.md"
    );
}

#[test]
fn the_map_checker_names_a_forgotten_file() {
    let dir = std::env::temp_dir().join(format!("lock-core-map-{}", std::process::id()));
    fs::create_dir_all(dir.join("requests")).expect("temp dir");
    for f in ["a.rs", "b.rs", "c.rs"] {
        fs::write(dir.join(f), "").expect("write");
    }
    let missing = unmapped(&dir, "| `a.rs` | x |\n| `b`, `requests` | y |\n");
    fs::remove_dir_all(&dir).expect("clean up");
    assert_eq!(missing, ["c.rs"]);
}
