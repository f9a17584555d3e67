// The tests that need what this machine may not offer are ignored without it, so that cargo
// reports them as not run, with the reason, instead of passed (docs/testing.md):
// `cfg(no_test_database)` without `TEST_DATABASE_URL`, `cfg(no_test_s3)` without
// `TEST_S3_ENDPOINT`, `cfg(no_chromedriver)` without chromedriver (`CHROMEDRIVER` or
// /usr/bin/chromedriver), `cfg(not_root)` when the build does not run as root (the storage fault
// tests `chattr +i` a folder and mount a tmpfs).
fn main() {
    cfg_when_unset("TEST_DATABASE_URL", "no_test_database");
    cfg_when_unset("TEST_S3_ENDPOINT", "no_test_s3");
    // The console's browser tests drive Debian's chromium through its chromedriver.
    println!("cargo::rustc-check-cfg=cfg(no_chromedriver)");
    println!("cargo::rerun-if-env-changed=CHROMEDRIVER");
    let driver = std::env::var_os("CHROMEDRIVER")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| "/usr/bin/chromedriver".into());
    println!("cargo::rerun-if-changed={}", driver.display());
    if !driver.exists() {
        println!("cargo::rustc-cfg=no_chromedriver");
    }
    println!("cargo::rustc-check-cfg=cfg(not_root)");
    // `sudo` and `su` set `USER`: a build as another user runs this again.
    println!("cargo::rerun-if-env-changed=USER");
    if !running_as_root() {
        println!("cargo::rustc-cfg=not_root");
    }
}

/// Declares `cfg(name)` and sets it when `variable` is unset or empty; a change of the variable
/// runs this again.
fn cfg_when_unset(variable: &str, name: &str) {
    println!("cargo::rustc-check-cfg=cfg({name})");
    println!("cargo::rerun-if-env-changed={variable}");
    if std::env::var_os(variable).is_none_or(|v| v.is_empty()) {
        println!("cargo::rustc-cfg={name}");
    }
}

/// Whether this build runs with user id 0: a file it creates belongs to its effective user.
#[cfg(unix)]
fn running_as_root() -> bool {
    use std::os::unix::fs::MetadataExt;
    let out = std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR");
    let probe = std::path::Path::new(&out).join("owner-probe");
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::metadata(&probe))
        .is_ok_and(|m| m.uid() == 0)
}

#[cfg(not(unix))]
fn running_as_root() -> bool {
    false
}
