//! Field-level validation errors, collected so that a request reports every broken rule at once.

use serde::Serialize;

/// One broken rule: the path of the field as sent (`owners[0].dob`), a stable machine code and an
/// English message for people.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FieldError {
    pub field: String,
    pub code: String,
    pub message: String,
}

impl FieldError {
    pub fn new(
        field: impl Into<String>,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> Self {
        Self {
            field: field.into(),
            code: code.into(),
            message: message.into(),
        }
    }
}

/// Every broken rule of one request, in the order they were found.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations(Vec<FieldError>);

impl Violations {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(
        &mut self,
        field: impl Into<String>,
        code: impl Into<String>,
        message: impl Into<String>,
    ) {
        self.0.push(FieldError::new(field, code, message));
    }

    /// Appends every violation of `other`.
    pub fn extend(&mut self, other: Violations) {
        self.0.extend(other.0);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &FieldError> {
        self.0.iter()
    }

    pub fn into_vec(self) -> Vec<FieldError> {
        self.0
    }

    /// `Ok(value)` when nothing was found, else every violation.
    pub fn finish<T>(self, value: T) -> Result<T, Violations> {
        if self.0.is_empty() {
            Ok(value)
        } else {
            Err(self)
        }
    }
}

impl Violations {
    /// `Ok(value)` when it was built and nothing was found; else every violation. A value
    /// missing without a violation is a validator bug: it is reported as `body` `invalid`
    /// rather than accepted (every path that yields `None` must record why).
    pub fn into_result<T>(mut self, value: Option<T>) -> Result<T, Violations> {
        match value {
            Some(v) if self.is_empty() => Ok(v),
            _ => {
                if self.is_empty() {
                    self.push("body", "invalid", "the request is invalid");
                }
                Err(self)
            }
        }
    }
}

impl From<FieldError> for Violations {
    fn from(e: FieldError) -> Self {
        Self(vec![e])
    }
}

impl From<Vec<FieldError>> for Violations {
    fn from(v: Vec<FieldError>) -> Self {
        Self(v)
    }
}

impl std::fmt::Display for Violations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{}: {}", e.field, e.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn into_result_needs_a_value_and_no_violation() {
        assert_eq!(Violations::new().into_result(Some(1)), Ok(1));
        let missing = Violations::new().into_result::<i32>(None).unwrap_err();
        assert_eq!(missing.len(), 1);
        assert_eq!(missing.iter().next().unwrap().field, "body");
        let mut found = Violations::new();
        found.push("name", "empty", "must not be empty");
        let errs = found.into_result(Some(1)).unwrap_err();
        assert_eq!(
            errs.iter().map(|e| e.code.as_str()).collect::<Vec<_>>(),
            ["empty"]
        );
    }
}
