//! Drift test: every generated file (API-ID tables, ID headers, cbindgen headers) must be
//! committed exactly as the generators produce it from the current sources and data.

#[test]
fn committed_generated_files_are_current() {
    let stale = xtask::stale_generated_files().expect("generators run");
    assert!(
        stale.is_empty(),
        "these generated files differ from what `cargo xtask gen` produces: {stale:?}\n\
         regenerate them with `cargo xtask gen` and commit the result; never edit them by hand"
    );
}
