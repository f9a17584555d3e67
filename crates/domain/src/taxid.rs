//! The German tax identification number (Steuerliche Identifikationsnummer, Steuer-IdNr):
//! 11 digits, the last a check digit (ISO 7064 MOD 11,10), and the official digit rules for
//! the first ten: exactly one digit appears twice or three times, and no digit three times in a
//! row. Numbers starting with 0 are ELSTER test numbers.

/// Why a number is not a valid Steuer-IdNr.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TaxIdError {
    /// Not exactly 11 digits.
    Format,
    /// The digit repetition rules of the first ten digits are broken.
    Digits,
    /// The check digit does not match.
    CheckDigit,
    /// A test number (leading 0) outside the sandbox.
    TestNumber,
}

impl TaxIdError {
    pub fn code(self) -> &'static str {
        match self {
            TaxIdError::TestNumber => "test_tax_id",
            _ => "invalid_tax_id",
        }
    }

    pub fn message(self) -> &'static str {
        match self {
            TaxIdError::Format => "must be a tax identification number of 11 digits",
            TaxIdError::Digits => {
                "is not a tax identification number: its digits break the official rules"
            }
            TaxIdError::CheckDigit => {
                "is not a tax identification number: the check digit does not match"
            }
            TaxIdError::TestNumber => {
                "is an ELSTER test number (leading 0), accepted only in the sandbox environment"
            }
        }
    }
}

/// The ISO 7064 MOD 11,10 check digit of `digits`.
pub fn check_digit(digits: &[u8]) -> u8 {
    let mut product: u32 = 10;
    for &d in digits {
        let mut sum = (u32::from(d) + product) % 10;
        if sum == 0 {
            sum = 10;
        }
        product = (sum * 2) % 11;
    }
    let check = 11 - product;
    if check == 10 { 0 } else { check as u8 }
}

/// Checks a Steuer-IdNr; test numbers (leading 0) only when `allow_test_numbers`.
pub fn validate(number: &str, allow_test_numbers: bool) -> Result<(), TaxIdError> {
    let bytes = number.as_bytes();
    if bytes.len() != 11 || !bytes.iter().all(u8::is_ascii_digit) {
        return Err(TaxIdError::Format);
    }
    let digits: Vec<u8> = bytes.iter().map(|b| b - b'0').collect();
    let first_ten = &digits[..10];
    let mut counts = [0u8; 10];
    for &d in first_ten {
        counts[d as usize] += 1;
    }
    let repeated: Vec<usize> = (0..10).filter(|&d| counts[d] >= 2).collect();
    let ok = repeated.len() == 1 && matches!(counts[repeated[0]], 2 | 3);
    if !ok {
        return Err(TaxIdError::Digits);
    }
    let d = repeated[0] as u8;
    if counts[d as usize] == 3 && first_ten.windows(3).any(|w| w.iter().all(|&x| x == d)) {
        return Err(TaxIdError::Digits);
    }
    if check_digit(first_ten) != digits[10] {
        return Err(TaxIdError::CheckDigit);
    }
    if digits[0] == 0 && !allow_test_numbers {
        return Err(TaxIdError::TestNumber);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The official vectors: production and sandbox validity per row.
    #[test]
    fn official_vectors() {
        let csv = include_str!("../data/test-vectors/steuer_idnr.csv");
        let mut n = 0;
        for line in csv.lines().skip(1) {
            let cols: Vec<&str> = line.splitn(4, ',').collect();
            let (id, production, sandbox) = (cols[0], cols[1] == "true", cols[2] == "true");
            assert_eq!(validate(id, false).is_ok(), production, "{id} production");
            assert_eq!(validate(id, true).is_ok(), sandbox, "{id} sandbox");
            n += 1;
        }
        assert!(n >= 20, "only {n} vectors");
    }

    #[test]
    fn error_kinds() {
        assert_eq!(validate("8609574271", false), Err(TaxIdError::Format));
        assert_eq!(validate("8609574271x", false), Err(TaxIdError::Format));
        assert_eq!(validate("86095742718", false), Err(TaxIdError::CheckDigit));
        assert_eq!(validate("12345678901", false), Err(TaxIdError::Digits));
        assert_eq!(validate("02476291358", false), Err(TaxIdError::TestNumber));
        assert!(validate("02476291358", true).is_ok());
    }
}
