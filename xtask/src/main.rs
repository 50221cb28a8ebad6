//! `cargo xtask <command>`: see `cargo xtask help`.

use std::process::ExitCode;

const HELP: &str = "\
usage: cargo xtask <command>
  demo       set up the machine, build libpti and run the main job (the README's first command)
  test       set up the machine, build, lint and run every test (the README's second command)
  setup      install the Debian packages and the Python virtual environment (.venv) the project needs
  wheel [--release]
             build libpti and its Python wheel (target/wheels/libpti-*.whl): pip install it
  gen        regenerate the API-ID tables and the C headers
  check-gen  fail if a committed generated file differs from what the generators produce
  bench [quick]
             build libpti (release) and run the overhead benchmark (benches/overhead.sh): OpenCL
             untraced and under libpti in five modes, and CUDA under CUPTI where there is a GPU
  sanitize [--long]
             pti-core's tests under AddressSanitizer and LeakSanitizer, C test programs under gcc's
             address and undefined-behaviour sanitizers, and the fuzz/ targets (30 s each, or
             10 min each with --long); `test` runs the short form
  spark      build, then check that Spark (pyspark in target/spark-venv, local mode) reads the
             Parquet dataset of a multi-rank job and gives DuckDB's and merge's figures; `test`
             runs it
  scale [RANKS,...]
             build, then trace jobs of 8, 16, 32 and 64 ranks (or RANKS) on PoCL, export them in
             parallel, query them with DuckDB and merge them: the times and memory of
             docs/BENCHMARKS.md
  install --prefix P [--debug]
             build (release, unless --debug) and install libpti, its headers, pkg-config and CMake
             files, and pti-trace under P";

fn main() -> ExitCode {
    let command = std::env::args().nth(1).unwrap_or_default();
    let result = match command.as_str() {
        "demo" => xtask::run::demo(),
        "test" => xtask::run::test(),
        "setup" => xtask::setup::all(&xtask::workspace_root()),
        "gen" => generate(),
        "wheel" => wheel(std::env::args().nth(2).as_deref() == Some("--release")),
        "check-gen" => check_gen(),
        "sanitize" => xtask::sanitizers::all(
            &xtask::workspace_root(),
            std::env::args().nth(2).as_deref() == Some("--long"),
        ),
        "install" => install(std::env::args().skip(2).collect()),
        "bench" => xtask::run::bench(std::env::args().nth(2).as_deref() == Some("quick")),
        "spark" => spark(),
        "scale" => scale(std::env::args().nth(2)),
        "help" | "-h" | "--help" => {
            println!("{HELP}");
            Ok(())
        }
        other => Err(format!("unknown command {other:?}\n{HELP}")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

fn spark() -> Result<(), String> {
    let root = xtask::workspace_root();
    xtask::setup::all(&root)?;
    xtask::run::build(false)?;
    xtask::analysis::spark(&root)
}

fn scale(ranks: Option<String>) -> Result<(), String> {
    let ranks = match ranks {
        None => vec![8, 16, 32, 64],
        Some(list) => list
            .split(',')
            .map(|r| {
                r.trim()
                    .parse()
                    .map_err(|_| format!("scale: {r:?} is not a number of ranks"))
            })
            .collect::<Result<Vec<u32>, String>>()?,
    };
    let root = xtask::workspace_root();
    xtask::setup::all(&root)?;
    xtask::run::build(false)?;
    xtask::analysis::scale(&root, &ranks)
}

fn wheel(release: bool) -> Result<(), String> {
    let root = xtask::workspace_root();
    xtask::setup::all(&root)?;
    let lib = xtask::run::build(release)?;
    let wheel = xtask::wheel::build(&root, &lib, release)?;
    let size = std::fs::metadata(&wheel).map(|m| m.len()).unwrap_or(0);
    println!("{} ({:.1} MB)", wheel.display(), size as f64 / 1e6);
    Ok(())
}

fn generate() -> Result<(), String> {
    let root = xtask::workspace_root();
    for file in xtask::generate()? {
        let path = root.join(&file.path);
        if std::fs::read_to_string(&path).ok().as_deref() != Some(&file.contents) {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
            }
            std::fs::write(&path, &file.contents)
                .map_err(|e| format!("{}: {e}", path.display()))?;
            eprintln!("xtask: wrote {}", file.path.display());
        }
    }
    Ok(())
}

fn check_gen() -> Result<(), String> {
    match xtask::stale_generated_files()?.as_slice() {
        [] => Ok(()),
        stale => Err(format!(
            "stale generated files (run `cargo xtask gen`): {stale:?}"
        )),
    }
}

fn install(args: Vec<String>) -> Result<(), String> {
    let mut prefix = None;
    let mut profile = xtask::install::Profile::Release;
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--prefix" => prefix = args.next(),
            "--debug" => profile = xtask::install::Profile::Debug,
            other => return Err(format!("install: unknown argument {other:?}\n{HELP}")),
        }
    }
    let prefix = prefix.ok_or_else(|| format!("install needs --prefix P\n{HELP}"))?;
    let prefix = std::path::absolute(&prefix).map_err(|e| format!("{prefix}: {e}"))?;
    xtask::run::build(profile == xtask::install::Profile::Release)?;
    let root = xtask::workspace_root();
    let written = xtask::install::install(&root, &prefix, profile)?;
    eprintln!(
        "xtask: installed {} files under {}; use `PKG_CONFIG_PATH={}/lib/pkgconfig pkg-config \
         --cflags --libs pti` or `find_package(Pti)` with CMAKE_PREFIX_PATH={}",
        written.len(),
        prefix.display(),
        prefix.display(),
        prefix.display()
    );
    Ok(())
}
