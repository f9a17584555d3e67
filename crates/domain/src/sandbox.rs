//! What the sandbox makes up when a provider simulates an operator's step (docs/api/sandbox.md): the
//! demo trade office, its fee, and a demo tax number. Every value is recognisable as sandbox
//! data, so it cannot be mistaken for something an authority issued.

/// Marks every status change a provider simulated in the sandbox (the history's `reason` starts
/// with it).
pub const SIMULATION: &str = "sandbox simulation";

/// The trade office a sandbox case gets on simulated completion when none was determined.
pub const DEMO_TRADE_OFFICE_NAME: &str = "Gewerbeamt Musterstadt (Sandbox)";
/// Its key: eight zeros, which is no municipality key (no state has the number 00).
pub const DEMO_TRADE_OFFICE_KEY: &str = "00000000";
pub const DEMO_TRADE_OFFICE_ADDRESS: &str = "Musterplatz 1, 12345 Musterstadt";
/// Shown to people wherever the office appears.
pub const DEMO_TRADE_OFFICE_NOTE: &str =
    "Sandbox demo office: no trade office received this registration";
/// The city fee a sandbox case gets on simulated completion when none was recorded: 26.00 euros,
/// a typical fee for a trade notice.
pub const DEMO_CITY_FEE_CENTS: i64 = 2600;

/// A demo tax number (Steuernummer) for a sandbox case whose tax office is `office` (4-digit
/// Bundesfinanzamtsnummer), in the 13-digit ELSTER form: the office number, `0`, the district
/// `815` of the well-known sample numbers ("…/815/0815…"), four digits taken from `case_id`
/// (so different cases get different numbers) and a last digit derived from the others. That
/// digit is **not** the state's check digit: the number is plausible in shape and office, never
/// a real one to rely on. `None` when `office` is not four digits.
pub fn demo_tax_number(office: &str, case_id: uuid::Uuid) -> Option<String> {
    if office.len() != 4 || !office.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let serial = case_id.as_u128() % 10_000;
    let body = format!("{office}0815{serial:04}");
    let digit_sum: u32 = body.bytes().map(|b| u32::from(b - b'0')).sum();
    Some(format!("{body}{}", digit_sum % 10))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demo_tax_number_carries_the_office_and_the_sample_district() {
        // The serial is the id modulo 10,000.
        let id = uuid::Uuid::from_u128(7_350_000_000_000_000_000_000_004_660);
        let n = demo_tax_number("2742", id).unwrap();
        assert_eq!(n.len(), 13);
        assert!(n.bytes().all(|b| b.is_ascii_digit()));
        assert_eq!(&n[..12], "274208154660");
        let sum: u32 = n[..12].bytes().map(|b| u32::from(b - b'0')).sum();
        assert_eq!(n[12..].parse::<u32>().unwrap(), sum % 10);
        // Deterministic per case, different between cases.
        assert_eq!(demo_tax_number("2742", id), Some(n.clone()));
        let other = uuid::Uuid::from_u128(id.as_u128() + 1);
        assert_ne!(demo_tax_number("2742", other), Some(n));
        for bad in ["", "274", "27420", "27a2"] {
            assert_eq!(demo_tax_number(bad, id), None, "{bad:?}");
        }
    }
}
