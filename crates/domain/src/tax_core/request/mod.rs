//! The rules of every tax registration request, whatever the legal form: the fields of
//! [`TaxCore`] and the objects both requests have (addresses, persons' fields, holders, register
//! objects, bank, estimates, VAT and payroll), each written once.

use time::Date;
use uuid::Uuid;

use crate::Violations;
use crate::address::PostalAddress;
use crate::company::Environment;
use crate::din91379::TextType;
use crate::rules::{self, Obj};
use crate::signature::SignaturePath;
use crate::tax_core::{FinancialEstimates, Payroll, TaxCore, TaxPackage, Vat};

mod bank;
mod fields;
mod holders;
mod payroll;
mod register;
mod vat;

pub(crate) use bank::bank;
pub use fields::tax_address;
pub(crate) use fields::{
    opt_bool, opt_text, past_date, req_bool, req_date, req_enum, req_euros, req_text, tax_id,
};
pub use holders::{ENTITY_HOLDER_FIELDS, INDIVIDUAL_HOLDER_FIELDS};
pub(crate) use holders::{each, entity_holder, holder_lists, individual_holder, shares_sum_to_100};
pub use payroll::payroll;
pub(crate) use register::{RegisterKind, register};
pub use register::{normalise_company_register_number, normalise_register_number};
pub(crate) use vat::estimates;
pub use vat::{VAT_FIELDS, vat};

/// The top-level fields of every tax registration request; a legal form's request adds its own
/// ([`with_core`]).
pub const CORE_FIELDS: &[&str] = &[
    "company_id",
    "business_address",
    "tax_registration_id",
    "tax_office_number",
    "legal_form",
    "package",
    "signature_path",
    "environment",
    "client_reference",
    "name",
    "purpose",
    "operational_activity_start_date",
    "fiscal_year_deviates_from_calendar",
    "fiscal_year_deviating_start_date",
    "address",
    "iban",
    "bic",
    "financial_estimates",
    "vat",
    "has_employees",
    "employee_count",
    "shareholder_employee_count",
    "marginal_employee_count",
    "payroll_start_date",
    "estimated_annual_wage_tax",
];

/// [`CORE_FIELDS`] and `own`, the fields of one legal form's request: its `N` top-level fields.
pub(crate) const fn with_core<const N: usize>(own: &[&'static str]) -> [&'static str; N] {
    assert!(
        CORE_FIELDS.len() + own.len() == N,
        "N counts the core and the own fields"
    );
    let mut all = [""; N];
    let mut i = 0;
    while i < N {
        all[i] = if i < CORE_FIELDS.len() {
            CORE_FIELDS[i]
        } else {
            own[i - CORE_FIELDS.len()]
        };
        i += 1;
    }
    all
}

/// A validated create request of a tax registration `R`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateRequest<R> {
    pub company_id: Option<Uuid>,
    pub tax_registration_id: Option<Uuid>,
    /// The company to create when `company_id` is omitted.
    pub business_address: Option<PostalAddress>,
    pub registration: R,
}

/// What the request rules need to know of a legal form.
pub(crate) trait LegalFormRules: Copy + serde::de::DeserializeOwned {
    /// The values `legal_form` may take.
    const VALUES: &'static [&'static str];
    /// The field of the founding date, which cannot be in the future ...
    const FOUNDED: &'static str;
    /// ... and the code of an activity start before it.
    const BEFORE_FOUNDED: &'static str;
    /// The designations one of which the name must carry ([`crate::legal_name::check`]).
    fn designations(self) -> &'static [&'static [&'static str]];
}

/// The fields of [`TaxCore`] as read, each `None` when absent or broken, and the request's
/// `company_id`, `business_address` and `tax_registration_id`. Read in the order of the
/// request, around the legal form's own fields: [`CoreRequest::head`] first,
/// [`CoreRequest::address`] and [`CoreRequest::tail`] where they come.
pub(crate) struct CoreRequest<L> {
    pub company_id: Option<Uuid>,
    pub business_address: Option<PostalAddress>,
    pub tax_registration_id: Option<Uuid>,
    pub tax_office_number: Option<String>,
    pub legal_form: Option<L>,
    pub package: Option<TaxPackage>,
    pub signature_path: Option<SignaturePath>,
    pub environment: Option<Environment>,
    pub client_reference: Option<String>,
    pub name: Option<String>,
    pub purpose: Option<String>,
    pub founded: Option<Date>,
    pub start: Option<Date>,
    pub fiscal_year_deviates: Option<bool>,
    pub fiscal_year_start: Option<Date>,
    pub address: Option<PostalAddress>,
    pub iban: Option<String>,
    pub bic: Option<String>,
    pub financial_estimates: Option<FinancialEstimates>,
    pub vat: Option<Vat>,
    pub has_employees: Option<bool>,
    pub payroll: Option<Payroll>,
    /// The founding-year revenue above which cash accounting is refused (§ 20 sentence 1 no.
    /// 1 UStG, [`crate::tax_core::CASH_ACCOUNTING_LIMIT`]); `None` where the registration
    /// names a reason without a limit (a sole proprietor's nos. 2 and 3).
    pub cash_accounting_limit: Option<i64>,
}

impl<L: LegalFormRules> CoreRequest<L> {
    /// Reads who the registration is for, which id, office, package and environment, the
    /// signature, the name (with its legal-form designation), the purpose, the founding and
    /// activity start dates and the fiscal year. `known_tax_office` says whether a 4-digit
    /// office number is in the bundled directory.
    pub(crate) fn head(
        o: &Obj,
        today: Date,
        known_tax_office: &dyn Fn(&str) -> bool,
        e: &mut Violations,
    ) -> Self {
        let company_id = o
            .opt("company_id")
            .and_then(|v| rules::uuid(v, "company_id", e));
        let business_address = o.opt("business_address").and_then(|v| {
            if o.has("company_id") {
                e.push(
                    "business_address",
                    "not_allowed",
                    "is only accepted when company_id is omitted (it describes the company to create)",
                );
                return None;
            }
            tax_address(v, "business_address", e)
        });
        let tax_registration_id = o
            .opt("tax_registration_id")
            .and_then(|v| rules::uuid(v, "tax_registration_id", e));
        let tax_office_number = o.opt("tax_office_number").and_then(|v| {
            let s = rules::string(v, "tax_office_number", e)?.trim();
            if !(s.len() == 4 && s.bytes().all(|b| b.is_ascii_digit())) {
                e.push(
                    "tax_office_number",
                    "invalid_value",
                    "must be a 4-digit tax office number",
                );
                None
            } else if !known_tax_office(s) {
                e.push(
                    "tax_office_number",
                    "unknown_tax_office",
                    "is not in the tax office directory",
                );
                None
            } else {
                Some(s.to_string())
            }
        });
        let legal_form: Option<L> = req_enum(o, "legal_form", L::VALUES, e);
        let package: Option<TaxPackage> = req_enum(o, "package", &["self", "guided"], e);
        let signature_path = o.req("signature_path", e).and_then(|v| {
            let s = rules::string(v, "signature_path", e)?;
            SignaturePath::parse(s)
                .map_err(|err| e.push("signature_path", err.code(), err.to_string()))
                .ok()
        });
        let environment = match o.opt("environment") {
            None => Some(Environment::default()),
            Some(v) => rules::enumeration(v, "environment", &["sandbox", "production"], e),
        };
        let client_reference = opt_text(o, "client_reference", 255, TextType::C, e);
        let name = req_text(o, "name", 120, TextType::B, e);
        let purpose = req_text(o, "purpose", 200, TextType::C, e);
        if let (Some(n), Some(f)) = (&name, legal_form) {
            crate::legal_name::check(n, f.designations(), e);
        }
        let (founded, start) = founding_dates(o, L::FOUNDED, L::BEFORE_FOUNDED, today, e);
        let (fiscal_year_deviates, fiscal_year_start) = fiscal_year(o, e);
        CoreRequest {
            company_id,
            business_address,
            tax_registration_id,
            tax_office_number,
            legal_form,
            package,
            signature_path,
            environment,
            client_reference,
            name,
            purpose,
            founded,
            start,
            fiscal_year_deviates,
            fiscal_year_start,
            address: None,
            iban: None,
            bic: None,
            financial_estimates: None,
            vat: None,
            has_employees: None,
            payroll: None,
            cash_accounting_limit: Some(crate::tax_core::CASH_ACCOUNTING_LIMIT),
        }
    }

    /// Reads `address`, the seat.
    pub(crate) fn address(&mut self, o: &Obj, e: &mut Violations) {
        self.address = o
            .req("address", e)
            .and_then(|v| tax_address(v, "address", e));
        // The tax office is decided on the seat: a German postal code that does not exist or a
        // city of another postal code is refused (docs/offices.md, "Address checks").
        if let Some(a) = &self.address
            && a.country.is_germany()
        {
            crate::offices::check_request_address(
                "address",
                Some(&a.zip),
                Some(&a.city),
                Some(&a.street),
                e,
            );
        }
    }

    /// Reads the bank account, the financial estimates, the VAT block and the payroll.
    pub(crate) fn tail(&mut self, o: &Obj, e: &mut Violations) {
        (self.iban, self.bic) = bank(o, e);
        self.financial_estimates = o
            .req("financial_estimates", e)
            .and_then(|v| estimates(v, e));
        self.vat = o.req("vat", e).and_then(|v| {
            vat::vat_with(
                v,
                self.financial_estimates.as_ref(),
                self.cash_accounting_limit,
                e,
            )
        });
        (self.has_employees, self.payroll) = payroll(o, self.start, e);
    }

    /// The create request of `registration`, unless `errs` holds a violation.
    pub(crate) fn request<R>(
        self,
        registration: Option<R>,
        errs: Violations,
    ) -> Result<CreateRequest<R>, Violations> {
        Ok(CreateRequest {
            company_id: self.company_id,
            tax_registration_id: self.tax_registration_id,
            business_address: self.business_address,
            registration: errs.into_result(registration)?,
        })
    }

    /// The validated fields, when every one was read and valid.
    pub(crate) fn complete(&self) -> Option<TaxCore<L>> {
        Some(TaxCore {
            legal_form: self.legal_form?,
            package: self.package?,
            environment: self.environment?,
            signature_path: self.signature_path.clone()?,
            client_reference: self.client_reference.clone(),
            tax_office_number: self.tax_office_number.clone(),
            name: self.name.clone()?,
            purpose: self.purpose.clone()?,
            founded: self.founded?,
            operational_activity_start_date: self.start?,
            fiscal_year_deviates_from_calendar: self.fiscal_year_deviates?,
            fiscal_year_deviating_start_date: self.fiscal_year_start,
            address: self.address.clone()?,
            iban: self.iban.clone(),
            bic: self.bic.clone(),
            financial_estimates: self.financial_estimates?,
            vat: self.vat.clone()?,
            has_employees: self.has_employees?,
            payroll: self.payroll.clone(),
        })
    }
}

/// The founding date (`agreement`: the notarization of a corporation, the partnership
/// agreement of a GbR), which cannot be in the future, and `operational_activity_start_date`,
/// which cannot be before it (code `before_code`).
fn founding_dates(
    o: &Obj,
    agreement: &str,
    before_code: &str,
    today: Date,
    e: &mut Violations,
) -> (Option<Date>, Option<Date>) {
    let founded = o.req(agreement, e).and_then(|v| {
        let d = rules::date(v, &o.path(agreement), e)?;
        if d > today {
            e.push(o.path(agreement), "not_in_past", "cannot be in the future");
            return None;
        }
        Some(d)
    });
    let start = req_date(o, "operational_activity_start_date", e).and_then(|d| {
        if founded.is_some_and(|n| d < n) {
            e.push(
                o.path("operational_activity_start_date"),
                before_code,
                format!("cannot be before {agreement}"),
            );
            None
        } else {
            Some(d)
        }
    });
    (founded, start)
}

/// `fiscal_year_deviates_from_calendar` and the start date it requires (and only then allows).
fn fiscal_year(o: &Obj, e: &mut Violations) -> (Option<bool>, Option<Date>) {
    let deviates = req_bool(o, "fiscal_year_deviates_from_calendar", e);
    let start = match (deviates, o.has("fiscal_year_deviating_start_date")) {
        (Some(true), false) => {
            e.push(
                o.path("fiscal_year_deviating_start_date"),
                "required",
                "is required when the fiscal year deviates from the calendar year",
            );
            None
        }
        (Some(true), true) => req_date(o, "fiscal_year_deviating_start_date", e),
        (Some(false), true) => {
            e.push(
                o.path("fiscal_year_deviating_start_date"),
                "not_allowed",
                "is only accepted when the fiscal year deviates from the calendar year",
            );
            None
        }
        _ => None,
    };
    (deviates, start)
}
