// The libxml crate links the libxml2 that `LIBXML2` names (.cargo/config.toml: where Debian's
// and Ubuntu's `libxml2-dev` put it). Without that package its build script fails with a
// panic that names no package; this one says what to install, in one line, and runs first (it
// needs nothing built, the libxml crate's needs bindgen).
fn main() {
    println!("cargo::rerun-if-env-changed=LIBXML2");
    let Some(library) = std::env::var_os("LIBXML2") else {
        // Found with pkg-config instead, which says what is missing itself.
        return;
    };
    if !std::path::Path::new(&library).is_file() {
        println!(
            "cargo::error=libxml2 is missing ({} does not exist): install libxml2-dev \
             (apt-get install libxml2-dev), or set LIBXML2 to the path of libxml2.so",
            library.to_string_lossy()
        );
    }
}
