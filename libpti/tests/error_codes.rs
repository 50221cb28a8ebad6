//! `libpti::Error` against the `libpti.so` it links: every code the library names as an error
//! has its variant, every variant round-trips through its code, and each carries the library's
//! name. A code added to libpti without a variant here fails this test.

use libpti::Error;

/// Codes of Intel PTI's metrics and PC-sampling APIs, which this crate does not wrap: named by
/// `ptiResultTypeToString` (libpti's C face answers them), arriving here as `Error::Other`.
fn metrics_code(name: &str) -> bool {
    name.contains("_METRICS_") || name.contains("_PC_SAMPLING_") || name.starts_with("PTI_WARN_")
}

#[test]
fn every_error_code_of_the_library_has_its_variant() {
    let mut named = 0;
    for code in 2..4096 {
        let name = Error::Other(code).name();
        if name == "UNKNOWN_PTI_RESULT" || metrics_code(&name) {
            assert_eq!(Error::from_code(code), Error::Other(code), "{code} {name}");
            continue;
        }
        named += 1;
        let e = Error::from_code(code);
        assert_ne!(e, Error::Other(code), "{name} ({code}) has no variant");
        assert_eq!((e.code(), e.name()), (code, name.clone()));
        assert_eq!(e.to_string(), format!("libpti: {name} ({code})"));
    }
    assert_eq!(named, Error::known().count());
}

#[test]
fn variants_round_trip_and_are_errors() {
    for e in Error::known() {
        assert_eq!(Error::from_code(e.code()), e);
        assert!(e.name().starts_with("PTI_ERROR_"), "{e:?}: {}", e.name());
    }
    assert_eq!(Error::from_code(0), Error::Other(0));
    assert_eq!(Error::from_code(1), Error::Other(1));
    assert_eq!(Error::Other(77_777).code(), 77_777);
    // A tool matches on what went wrong.
    let outcome = match Error::from_code(3) {
        Error::BadArgument => "bad argument",
        _ => "something else",
    };
    assert_eq!(outcome, "bad argument");
}
