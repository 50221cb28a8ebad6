//! The minimum supported Rust version: the workspace's `rust-version`, installed by
//! `cargo xtask setup` (rustup, a minimal profile) and built with by `cargo xtask test`, so that
//! the version the manifests and the README state is one the code builds with (docs/stability.md).

use std::path::Path;
use std::process::Command;

use crate::run::step;

/// The `rust-version` of `[workspace.package]` in the root `Cargo.toml`.
pub fn version(root: &Path) -> Result<String, String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml"))
        .map_err(|e| format!("cannot read Cargo.toml: {e}"))?;
    toml_value(&manifest, "workspace.package", "rust-version")
        .ok_or_else(|| "[workspace.package] of Cargo.toml has no rust-version".to_string())
}

/// The value of `key = "..."` in the `[section]` of a TOML file's text, in the simple form the
/// project's manifests use (one key per line); also what `tests/docs.rs` reads them with.
pub fn toml_value(text: &str, section: &str, key: &str) -> Option<String> {
    let body = text.split(&format!("[{section}]\n")).nth(1)?;
    body.lines()
        .take_while(|l| !l.starts_with('['))
        .find_map(|l| {
            let value = l.strip_prefix(key)?.trim_start().strip_prefix('=')?;
            Some(value.trim().trim_matches('"').to_string())
        })
}

/// Installs the toolchain of [`version`] (rustup's minimal profile), unless it is there.
pub fn install(root: &Path) -> Result<(), String> {
    let v = version(root)?;
    let present = Command::new("rustup")
        .args(["run", &v, "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    if present {
        return Ok(());
    }
    step(
        &format!("install Rust {v}, the minimum supported version"),
        Command::new("rustup").args(["toolchain", "install", &v, "--profile", "minimal"]),
    )
}

/// Checks what is shipped with the minimum supported version (a separate build directory, removed
/// afterwards: 0.4 GB that no later step uses).
pub fn check(root: &Path, shipped: &[&str]) -> Result<(), String> {
    let v = version(root)?;
    let mut cmd = Command::new("rustup");
    cmd.current_dir(root)
        .args(["run", &v, "cargo", "check"])
        .args(shipped)
        .args(["-p", "libpti", "--target-dir", "target/msrv"])
        .env("CARGO_INCREMENTAL", "0")
        // What cargo set for xtask names the default toolchain's tools.
        .env_remove("CARGO")
        .env_remove("RUSTC")
        .env_remove("RUSTUP_TOOLCHAIN");
    step(
        &format!("build with Rust {v}, the minimum supported version"),
        &mut cmd,
    )?;
    let _ = std::fs::remove_dir_all(root.join("target/msrv"));
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_workspace_states_a_minimum_version() {
        let v = super::version(&crate::workspace_root()).unwrap();
        assert!(v.split('.').all(|p| p.parse::<u32>().is_ok()), "{v}");
    }
}
