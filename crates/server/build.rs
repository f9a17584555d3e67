// The tests that need a test server are ignored when its variable is unset, so that cargo
// reports them as not run, with the reason, instead of passed (docs/testing.md):
// `cfg(no_test_database)` without `TEST_DATABASE_URL`, `cfg(no_test_s3)` without
// `TEST_S3_ENDPOINT`.
fn main() {
    cfg_when_unset("TEST_DATABASE_URL", "no_test_database");
    cfg_when_unset("TEST_S3_ENDPOINT", "no_test_s3");
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
