/// jemalloc instead of glibc's malloc (its options are set at build time in
/// `.cargo/config.toml`, `JEMALLOC_SYS_WITH_MALLOC_CONF`): the request path allocates many
/// small, short-lived buffers across threads (JSON, shaped glyph runs, PDF streams), and
/// `malloc`/`free` were a visible share of the server's CPU in the GET profile. mimalloc was as fast but kept far more
/// resident under 32 concurrent trade creates (PDFs rendered on blocking threads and freed on
/// others); jemalloc stayed below glibc's figure (BENCHMARKS.md, "What the profiles showed, and what changed").
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() -> std::process::ExitCode {
    // Everything the service creates (database, WAL, documents, secrets, spool) is its own:
    // owner-only whatever umask it was started with.
    server::app::owner_only_files();
    let cli = server::cli::parse();
    server::cli::run(cli)
}
