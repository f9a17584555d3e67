//! Amounts as German documents write them.

/// Whole euros with a dot between thousands and a leading minus, without the unit:
/// `-20.000`, `25.000`, `0`. The tax summary, the operator's list of answers and the sample
/// licence add their own unit (and cents) to it.
pub fn grouped_euros(amount: i64) -> String {
    let digits = amount.unsigned_abs().to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if amount < 0 {
        grouped.push('-');
    }
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(c);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::grouped_euros;

    #[test]
    fn thousands_are_grouped_with_dots_and_the_sign_leads() {
        assert_eq!(grouped_euros(0), "0");
        assert_eq!(grouped_euros(999), "999");
        assert_eq!(grouped_euros(1_000), "1.000");
        assert_eq!(grouped_euros(25_000), "25.000");
        assert_eq!(grouped_euros(-1_500), "-1.500");
        assert_eq!(grouped_euros(1_234_567), "1.234.567");
        assert_eq!(grouped_euros(i64::MIN), "-9.223.372.036.854.775.808");
    }
}
