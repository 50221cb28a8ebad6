//! The README's quick starts, run as written in a directory outside the checkout (issue 35), as a
//! new user would: the C quick start against the checkout's build; the same program against an
//! installed tree with pkg-config and with CMake (the README's "Installing for C and C++"; the
//! tree installed from the tests' debug build where the README installs a release one, and its
//! `/opt/libpti` replaced by that tree's prefix); the Rust quick start as a new cargo project
//! with a path dependency. Nothing of the checkout's environment leaks into them: no
//! `LD_LIBRARY_PATH`, no `PTI_LIB_DIR`, no cargo variables of this test run. The Python quick
//! start runs in `pti-python/tests` (against the wheel, in its own virtual environment).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use pti_tests::{lib_dir, out_dir, root, run_ok};

/// The README's section `title` (from its heading to the next one).
fn section(title: &str) -> String {
    let readme = std::fs::read_to_string(root().join("README.md")).expect("README.md");
    let start = readme
        .find(&format!("\n## {title}\n"))
        .unwrap_or_else(|| panic!("README.md has no section {title:?}"));
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |e| e + 3);
    rest[..end].to_string()
}

/// The code blocks of `lang` in `text`, in order.
fn blocks(text: &str, lang: &str) -> Vec<String> {
    let fence = format!("```{lang}\n");
    text.split(&fence)
        .skip(1)
        .map(|b| b.split("```").next().unwrap_or_default().to_string())
        .collect()
}

/// A fresh directory outside the checkout for one quick start.
fn outside(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("pti-quick-start-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create a directory outside the checkout");
    assert!(
        !dir.starts_with(root()),
        "{} is inside the checkout",
        dir.display()
    );
    dir
}

/// `sh -c script` in `dir`, with `env`, and none of this test run's environment that a new
/// user's shell would not have.
fn sh(script: &str, dir: &Path, env: &[(&str, &Path)]) -> Output {
    let mut cmd = Command::new("sh");
    cmd.arg("-ec").arg(script).current_dir(dir);
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        let cargo_own = key.starts_with("CARGO_") && key != "CARGO_HOME";
        if cargo_own
            || key.starts_with("RUSTC")
            || key.ends_with("RUSTFLAGS")
            || key == "RUSTDOCFLAGS"
            || [
                "LD_LIBRARY_PATH",
                "PTI_LIB_DIR",
                "PKG_CONFIG_PATH",
                "LIBPTI",
            ]
            .contains(&&*key)
        {
            cmd.env_remove(&key);
        }
    }
    for (key, value) in env {
        cmd.env(key, value);
    }
    run_ok(&mut cmd)
}

fn stdout(output: &Output) -> String {
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// What the C quick start prints on a machine with PoCL (the tests' OpenCL platform).
fn check_c_output(what: &str, out: &str) {
    for want in [
        "enter clGetPlatformInfo [correlation 1]",
        "exit  clGetPlatformInfo [correlation 1]",
        "OpenCL platform: Portable Computing Language",
    ] {
        assert!(out.contains(want), "{what}: no {want:?} in:\n{out}");
    }
}

#[test]
fn c_quick_start_against_the_checkout() {
    // The README's step before: `cargo build -p pti-capi` in the checkout.
    lib_dir();
    let text = section("C quick start");
    let dir = outside("c");
    std::fs::write(dir.join("quick.c"), &blocks(&text, "c")[0]).unwrap();
    let commands = blocks(&text, "sh");
    let out = sh(&commands[0], &dir, &[("LIBPTI", &root())]);
    check_c_output("the C quick start", &stdout(&out));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn c_quick_start_installed_with_pkg_config_and_cmake() {
    lib_dir();
    let prefix = out_dir().join(format!("quick-start-installed-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&prefix);
    xtask::install::install(&root(), &prefix, xtask::install::Profile::Debug)
        .expect("install the debug build");
    let program = blocks(&section("C quick start"), "c").remove(0);
    let text = section("Installing for C and C++");
    let commands = blocks(&text, "sh");
    let installed = |s: &str| s.replace("/opt/libpti", &prefix.display().to_string());
    assert!(
        commands[0].starts_with("cargo xtask install --prefix /opt/libpti"),
        "the section begins with the install: {:?}",
        commands[0]
    );

    let dir = outside("pkg-config");
    std::fs::write(dir.join("quick.c"), &program).unwrap();
    let out = sh(&installed(&commands[1]), &dir, &[]);
    check_c_output("pkg-config", &stdout(&out));

    let dir_cmake = outside("cmake");
    std::fs::write(dir_cmake.join("quick.c"), &program).unwrap();
    std::fs::write(dir_cmake.join("CMakeLists.txt"), &blocks(&text, "cmake")[0]).unwrap();
    let out = sh(&installed(&commands[2]), &dir_cmake, &[]);
    check_c_output("CMake", &stdout(&out));
    for d in [&dir, &dir_cmake, &prefix] {
        let _ = std::fs::remove_dir_all(d);
    }
}

#[test]
fn rust_quick_start_as_a_new_project() {
    lib_dir();
    let text = section("Rust quick start");
    let (commands, rust) = (blocks(&text, "sh"), blocks(&text, "rust"));
    assert_eq!(
        (commands.len(), rust.len()),
        (2, 2),
        "the Rust quick start: commands (new project, run) and Rust blocks (build.rs, main.rs)"
    );
    let dir = outside("rust");
    // Offline: the crates libpti needs are in cargo's cache since the workspace was built.
    let offline = Path::new("true");
    sh(
        &commands[0],
        &dir,
        &[("LIBPTI", &root()), ("CARGO_NET_OFFLINE", offline)],
    );
    let project = dir.join("my-tool");
    std::fs::write(project.join("build.rs"), &rust[0]).unwrap();
    std::fs::write(project.join("src/main.rs"), &rust[1]).unwrap();
    let out = sh(&commands[1], &project, &[("CARGO_NET_OFFLINE", offline)]);
    let out = stdout(&out);
    assert!(
        out.contains(&format!(
            "libpti {}: tracing every OpenCL, Level Zero and SYCL call of this process",
            env!("CARGO_PKG_VERSION")
        )),
        "the Rust quick start printed:\n{out}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
