//! Companies: the provider that calls the API and the client companies its cases are for.

use serde::{Deserialize, Serialize};
use uuid::Uuid;

/// `sandbox` (staging company, nothing is filed) or `production` (live company).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Environment {
    Sandbox,
    #[default]
    Production,
}

impl Environment {
    pub fn as_str(self) -> &'static str {
        match self {
            Environment::Sandbox => "sandbox",
            Environment::Production => "production",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sandbox" => Some(Environment::Sandbox),
            "production" => Some(Environment::Production),
            _ => None,
        }
    }
}

/// Whether a company calls the API (provider) or is the subject of cases (client).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum CompanyKind {
    Provider,
    Client,
}

impl CompanyKind {
    pub fn as_str(self) -> &'static str {
        match self {
            CompanyKind::Provider => "provider",
            CompanyKind::Client => "client",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "provider" => Some(CompanyKind::Provider),
            "client" => Some(CompanyKind::Client),
            _ => None,
        }
    }
}

/// A company as stored. Client companies name the provider that created them and carry the
/// environment of their cases; providers have neither.
#[derive(Debug, Clone, PartialEq)]
pub struct Company {
    pub id: Uuid,
    pub kind: CompanyKind,
    pub name: String,
    pub provider_id: Option<Uuid>,
    pub environment: Option<Environment>,
    pub legal_form: Option<String>,
    pub registration_number: Option<String>,
    pub business_address: Option<serde_json::Value>,
    pub created_at: time::OffsetDateTime,
}

impl Company {
    /// docs/api/authentication.md: a provider sees the companies it created; a client company sees itself.
    /// Anything else must answer exactly as an unknown id.
    pub fn visible_to(&self, caller_company: Uuid) -> bool {
        self.id == caller_company || self.provider_id == Some(caller_company)
    }

    /// What a create naming this company (`company_id`) says otherwise than the company: the
    /// `name` and `legal_form` it must still send are printed on its forms, while reads show
    /// the company's (docs/spec/api.md), so they must agree. Names compare with runs of white space as
    /// one; a trade registration's `gbr` is the company's `egbr` too (that endpoint has no
    /// `egbr`).
    pub fn mismatches(&self, name: &str, legal_form: &str) -> crate::Violations {
        let mut errs = crate::Violations::new();
        if !name.split_whitespace().eq(self.name.split_whitespace()) {
            errs.push(
                "name",
                "company_mismatch",
                format!(
                    "must be the name of company {} ({:?}); to rename it, create the case without \
                     company_id",
                    self.id, self.name
                ),
            );
        }
        if let Some(stored) = self.legal_form.as_deref()
            && stored != legal_form
            && !(stored == "egbr" && legal_form == "gbr")
        {
            errs.push(
                "legal_form",
                "company_mismatch",
                format!("must be the legal form of company {} ({stored})", self.id),
            );
        }
        errs
    }
}
