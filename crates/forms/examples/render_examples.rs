//! Renders the example requests in `examples/` to PDFs, for review and for the snapshots in
//! `docs/img/`:
//!
//! ```sh
//! cargo run -p forms --example render_examples -- /tmp/forms-out
//! ```
//!
//! With `FORMS_SANDBOX=1` the documents are rendered as sandbox documents.

use std::path::PathBuf;

mod contexts;

use forms::TradeRegistration;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = PathBuf::from(
        std::env::args()
            .nth(1)
            .unwrap_or_else(|| "forms-out".into()),
    );
    std::fs::create_dir_all(&out)?;
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../examples/production");
    let timestamp = time::macros::datetime!(2025-03-20 09:30:00 UTC);
    for name in ["trade-registration-self", "trade-registration-assisted"] {
        let json = std::fs::read_to_string(root.join(format!("{name}.json")))?;
        let mut reg: TradeRegistration = serde_json::from_str(&json)?;
        if std::env::var_os("FORMS_SANDBOX").is_some() {
            reg.environment = domain::trade::Environment::Sandbox;
        }
        for i in 0..reg.owners.len() {
            let pdf = forms::render_gewa1(&reg, i, &contexts::gewa1(timestamp))?;
            std::fs::write(out.join(format!("{name}-gewa1-{i}.pdf")), pdf)?;
            if reg.owners[i].signatures.power_of_attorney.is_some() {
                let ctx = contexts::power_of_attorney(timestamp);
                let pdf = forms::render_power_of_attorney(&reg, i, &ctx)?;
                std::fs::write(out.join(format!("{name}-poa-{i}.pdf")), pdf)?;
            }
        }
    }
    Ok(())
}
