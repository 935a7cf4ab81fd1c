//! The committed C header must be exactly what cbindgen generates from the current sources.
//!
//! Run with `ESLM_BLESS=1 cargo test -p lock-jni --test header_is_current` to rewrite it after
//! an intended change of the C ABI.

use std::path::PathBuf;

#[test]
fn committed_header_matches_generated() {
    let crate_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config =
        cbindgen::Config::from_file(crate_dir.join("cbindgen.toml")).expect("cbindgen.toml parses");
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
        .with_config(config)
        .generate()
        .expect("cbindgen generates the header")
        .write(&mut generated);
    let generated = String::from_utf8(generated).expect("header is UTF-8");
    let path = crate_dir.join("include/eslm.h");
    if std::env::var_os("ESLM_BLESS").is_some() {
        std::fs::write(&path, &generated).expect("write header");
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/eslm.h is stale: run `ESLM_BLESS=1 cargo test -p lock-jni --test header_is_current` \
         and commit the result.\n--- generated ---\n{generated}"
    );
}
