//! Issue 51: a newcomer finds each file of the bridge's ops in their map, the table of
//! `src/ops/mod.rs`'s header.

use std::fs;
use std::path::PathBuf;

#[test]
fn every_file_of_the_ops_is_in_their_map() {
    let ops = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("src/ops");
    let header: String = fs::read_to_string(ops.join("mod.rs"))
        .expect("ops/mod.rs")
        .lines()
        .filter(|l| l.starts_with("//!"))
        .collect::<Vec<_>>()
        .join("\n");
    let mut missing: Vec<String> = fs::read_dir(&ops)
        .expect("ops folder")
        .map(|e| e.expect("dir entry").path())
        .filter_map(|p| {
            let name = p.file_name()?.to_string_lossy().into_owned();
            let stem = name.strip_suffix(".rs").map(str::to_owned);
            let module = stem.unwrap_or_else(|| name.clone());
            (module != "mod" && !header.contains(&format!("`{module}`"))).then_some(name)
        })
        .collect();
    missing.sort();
    assert_eq!(missing, Vec::<String>::new(), "files missing from the map of src/ops/mod.rs");
}
