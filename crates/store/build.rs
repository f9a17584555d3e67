fn main() {
    // `sqlx::migrate!` embeds the migration folders at compile time; without this a new migration
    // file would not rebuild the crate.
    println!("cargo::rerun-if-changed=migrations");
    // The PostgreSQL tests are ignored without `TEST_DATABASE_URL`, so that cargo reports them
    // as not run, with the reason, instead of passed (docs/testing.md).
    cfg_when_unset("TEST_DATABASE_URL", "no_test_database");
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
