//! Free space on the workspace's disk. A full `cargo xtask test` takes about 11 GiB at its peak
//! (build outputs, virtual environments, downloads) in a fresh clone, and leaves about 9; on a disk without that room the run used to
//! fail deep inside a later step (pip, a linker) with a message that did not say why. The test
//! command checks first, and every failed step says how much room was left.

use std::path::Path;
use std::process::Command;

/// What a full `cargo xtask test` in a fresh clone needs, in GiB (its peak, about 11 measured,
/// plus margin).
pub const TEST_NEEDS_GIB: u64 = 13;

/// GiB free on the file system holding `path` (`df -Pk`), or `None` where df cannot tell.
pub fn free_gib(path: &Path) -> Option<u64> {
    let out = Command::new("df").arg("-Pk").arg(path).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout);
    // POSIX format: a header, then "fs blocks used available capacity mount".
    let kib: u64 = text
        .lines()
        .nth(1)?
        .split_whitespace()
        .nth(3)?
        .parse()
        .ok()?;
    Some(kib / (1024 * 1024))
}

/// Fails, saying what to free, when the disk holding `root` has less than `needed` GiB, unless
/// `PTI_SKIP_DISK_CHECK=1`. Space already taken by an earlier run of the same workspace counts as
/// free: its outputs are reused.
pub fn require(root: &Path, needed: u64) -> Result<(), String> {
    if std::env::var("PTI_SKIP_DISK_CHECK").as_deref() == Ok("1") {
        return Ok(());
    }
    let Some(free) = free_gib(root) else {
        eprintln!(
            "xtask: df could not tell the free space of {}",
            root.display()
        );
        return Ok(());
    };
    let reused = used_gib(&root.join("target")) + used_gib(&root.join(".venv"));
    if free + reused >= needed {
        return Ok(());
    }
    Err(format!(
        "{free} GiB free on the disk of {} ({reused} GiB more already built there); a full test \
         run needs about {needed} GiB: free some room (other clones' target/ directories), or set \
         PTI_SKIP_DISK_CHECK=1 to try anyway",
        root.display()
    ))
}

/// GiB that `path` takes (`du -sk`), 0 where it is absent.
fn used_gib(path: &Path) -> u64 {
    if !path.exists() {
        return 0;
    }
    Command::new("du")
        .arg("-sk")
        .arg(path)
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .split_whitespace()
                .next()?
                .parse::<u64>()
                .ok()
        })
        .map_or(0, |kib| kib / (1024 * 1024))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn df_and_du_are_read() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        assert!(
            free_gib(here).is_some(),
            "df -Pk gave no free space for {here:?}"
        );
        assert_eq!(used_gib(&here.join("no-such-directory")), 0);
        assert!(require(here, 0).is_ok());
        let err = require(here, u64::MAX / 2).unwrap_err();
        assert!(err.contains("GiB free"), "{err}");
    }
}
