//! Link the binaries with packed relative relocations (DT_RELR) where the
//! toolchain supports them.
//!
//! The release binary carries ~70,000 relative relocations. As classic
//! `RELA` entries they are 1.7 MB that the dynamic loader reads on every
//! start, before `main`; packed they take a few KB. That is a share of the
//! time to the first frame and of the resident memory after start (see the
//! README's Performance section). It needs GNU ld ≥ 2.38 or lld ≥ 15 and
//! glibc ≥ 2.36, so the flag is passed only if a probe link with it succeeds
//! without a warning (an older GNU ld ignores an unknown `-z` option with a
//! warning); otherwise the binaries are linked as before. Only the binaries'
//! link step gets it, so no dependency is built again.

use std::path::Path;
use std::process::Command;

const RELR: &str = "-Wl,-z,pack-relative-relocs";

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    println!("cargo::rerun-if-env-changed=RUSTC_LINKER");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    // DT_RELR is read by glibc's loader (and musl's, but its static
    // binaries have no loader); other targets keep their defaults.
    if os != "linux" || env != "gnu" {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR") else {
        return;
    };
    if links_with(Path::new(&out), RELR) {
        println!("cargo::rustc-link-arg-bins={RELR}");
    } else {
        println!(
            "cargo::warning=the linker does not take {RELR}: binaries linked with plain relocations"
        );
    }
}

/// Whether the linker rustc uses for this target (the one cargo was told
/// about, or the target's C compiler, which rustc runs by default) links a
/// position-independent executable with `flag`, without a warning.
fn links_with(out: &Path, flag: &str) -> bool {
    let linker = match std::env::var_os("RUSTC_LINKER") {
        Some(l) => Command::new(l),
        None => match cc::Build::new()
            .cargo_metadata(false)
            .cargo_warnings(false)
            .try_get_compiler()
        {
            Ok(c) => c.to_command(),
            Err(_) => return false,
        },
    };
    let src = out.join("relr_probe.c");
    let exe = out.join("relr_probe");
    // A pointer in initialised data: one relative relocation to pack.
    let code = "static int x;\nint *p = &x;\nint main(void) { return *p; }\n";
    if std::fs::write(&src, code).is_err() {
        return false;
    }
    let mut cmd = linker;
    cmd.arg("-fPIE")
        .arg("-pie")
        .arg(&src)
        .arg("-o")
        .arg(&exe)
        .arg(flag)
        .arg("-Wl,--fatal-warnings");
    let ok = cmd.output().is_ok_and(|o| o.status.success());
    let _ = std::fs::remove_file(&src);
    let _ = std::fs::remove_file(&exe);
    ok
}
