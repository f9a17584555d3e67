//! `POST /v1/tax-registration` (UG and GmbH): every field rule of the specification, applied
//! to the request JSON at once, producing the validated [`TaxRegistration`].
//!
//! Only what is a corporation's own is written here: the notarization date, the capital and
//! formation, the notary, the directors, the shareholders and the Handelsregister. What every
//! tax registration has is read by [`crate::tax_core::request`].

use serde_json::Value;
use time::Date;

use crate::Violations;
use crate::din91379::TextType;
use crate::rules::{self, object};
use crate::tax::*;
use crate::tax_core::request::{
    CoreRequest, CreateRequest, LegalFormRules, RegisterKind, each, entity_holder, holder_lists,
    individual_holder, opt_bool, opt_text, past_date, register, req_enum, req_euros, req_text,
    shares_sum_to_100, tax_address, tax_id, with_core,
};
use crate::tax_core::{PartyFirm, PartyPerson};
// The field lists of the request's objects that every tax registration request has.
pub use crate::tax_core::request::{ENTITY_HOLDER_FIELDS, INDIVIDUAL_HOLDER_FIELDS, VAT_FIELDS};

pub const MAX_DIRECTORS: usize = 9;
pub const MAX_SHAREHOLDERS: usize = 99;

impl LegalFormRules for KapLegalForm {
    const VALUES: &'static [&'static str] = &["ug", "gmbh"];
    const FOUNDED: &'static str = "notarization_date";
    const BEFORE_FOUNDED: &'static str = "before_notarization";

    fn designations(self) -> &'static [&'static [&'static str]] {
        crate::legal_name::kap_designations(self)
    }
}

/// A validated create request.
pub type TaxRequest = CreateRequest<TaxRegistration>;

/// The top-level fields of the request (anything else is `unknown_field`); the OpenAPI
/// document's request schema is checked against it.
pub const FIELDS: &[&str] = &with_core::<47>(&[
    "notarization_date",
    "capital",
    "paid_in_capital",
    "formation_type",
    "conversion_type",
    "is_holding",
    "notary",
    "directors",
    "shareholders",
    "commercial_register",
    "phone",
    "website",
    "place_of_management",
    "tax_advisor",
    "authorized_recipient",
    "bank_account_holder",
    "request_construction_exemption_certificate",
    "attachments",
    "po_box",
    "manages_own_assets_only",
    "has_trust_relationships",
    "payroll_establishment",
]);

/// The fields of a shareholder of a corporation: a holder's, the share's nominal amount and
/// its running numbers in the list of shareholders.
pub fn shareholder_individual_fields() -> Vec<&'static str> {
    [
        INDIVIDUAL_HOLDER_FIELDS,
        &["nominal_amount", "share_numbers"],
    ]
    .concat()
}

/// The fields of a company as a shareholder of a corporation.
pub const SHAREHOLDER_ENTITY_FIELDS: [&str; 5] = [
    "name",
    "address",
    "share_percentage",
    "nominal_amount",
    "share_numbers",
];

/// The fields of a person or a firm (`tax_advisor`, `authorized_recipient`).
pub const PARTY_FIELDS: &[&str] = &[
    "type",
    "first_name",
    "last_name",
    "name",
    "address",
    "phone",
];

/// The fields of a `directors` entry.
pub const DIRECTOR_FIELDS: &[&str] = &[
    "first_name",
    "middle_name",
    "last_name",
    "email",
    "phone",
    "dob",
    "tax_identification_number",
    "address",
];

/// The fields of `notary`.
pub const NOTARY_FIELDS: &[&str] = &["first_name", "last_name", "address"];

/// Whether every share of `capital` euros can be a whole-euro share of at least one euro
/// (§ 5 (2) GmbHG): the filing derives the nominal amounts from the percentages
/// ([`crate::tax::nominal_amounts`]), each within a euro of its exact amount, so a share worth
/// less than one euro has no whole-euro amount. Each such share is a violation.
fn shares_are_whole_euros(holders: &Shareholders, capital: i64, e: &mut Violations) -> bool {
    let individuals = holders
        .individuals
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("shareholders.individuals[{i}]"), s.share_percentage));
    let entities = holders
        .entities
        .iter()
        .enumerate()
        .map(|(i, s)| (format!("shareholders.entities[{i}]"), s.share_percentage));
    let mut ok = true;
    for (path, share) in individuals.chain(entities) {
        if crate::tax::share_below_one_euro(capital, share) {
            e.push(
                format!("{path}.share_percentage"),
                "share_below_one_euro",
                format!(
                    "is less than one euro of the capital of {capital} euros; a share's nominal \
                     amount is whole euros, at least 1 (§ 5 (2) GmbHG)"
                ),
            );
            ok = false;
        }
    }
    ok
}

/// A shareholder's `nominal_amount`: whole euros, at least 1; `Some(None)` when absent, `None`
/// when broken.
fn nominal_amount(x: &rules::Obj, e: &mut Violations) -> Option<Option<i64>> {
    let Some(v) = x.opt("nominal_amount") else {
        return Some(None);
    };
    let path = x.path("nominal_amount");
    let n = rules::whole_euros(v, &path, e)?;
    if n < 1 {
        e.push(
            path,
            "out_of_range",
            "must be at least 1 euro (§ 5 (2) GmbHG)",
        );
        return None;
    }
    Some(Some(n))
}

/// A shareholder's `share_numbers`: the running numbers of its shares in the list of
/// shareholders, free text of at most 100 characters in ELSTER's character set; `Some(None)`
/// when absent, `None` when broken.
fn share_numbers(x: &rules::Obj, e: &mut Violations) -> Option<Option<String>> {
    let numbers = opt_text(x, "share_numbers", 100, TextType::C, e);
    if x.has("share_numbers") && numbers.is_none() {
        return None;
    }
    Some(numbers)
}

fn has_nominal_amounts(holders: &Shareholders) -> bool {
    holders
        .individuals
        .iter()
        .any(|s| s.nominal_amount.is_some())
        || holders.entities.iter().any(|s| s.nominal_amount.is_some())
}

/// The shareholders' nominal amounts (`nominal_amount`, whole euros): sent for every
/// shareholder or for none, summing exactly to `capital` (§ 5 (3) GmbHG), each share's
/// percentage then the part its amount is of the capital (four decimals); a percentage sent
/// beside an amount must be that part within 0.005 (a percentage of two decimals matches).
/// Sets the derived percentages; `false` after a violation.
fn nominal_shares(
    holders: &mut Shareholders,
    raw: &Value,
    capital: i64,
    e: &mut Violations,
) -> bool {
    let sent_percentage = |list: &str, i: usize| {
        raw.get(list)
            .and_then(|l| l.get(i))
            .and_then(|x| x.get("share_percentage"))
            .is_some_and(|v| !v.is_null())
    };
    let mut shares: Vec<(String, Option<i64>, &mut Percentage, bool)> = Vec::new();
    for (i, s) in holders.individuals.iter_mut().enumerate() {
        let sent = sent_percentage("individuals", i);
        shares.push((
            format!("shareholders.individuals[{i}]"),
            s.nominal_amount,
            &mut s.share_percentage,
            sent,
        ));
    }
    for (i, s) in holders.entities.iter_mut().enumerate() {
        let sent = sent_percentage("entities", i);
        shares.push((
            format!("shareholders.entities[{i}]"),
            s.nominal_amount,
            &mut s.share_percentage,
            sent,
        ));
    }
    let mut ok = true;
    for (path, nominal, _, _) in &shares {
        if nominal.is_none() {
            e.push(
                format!("{path}.nominal_amount"),
                "required",
                "is required for every shareholder once one shareholder's nominal_amount is \
                 sent (the shareholder list states each share's nominal amount)",
            );
            ok = false;
        }
    }
    if !ok {
        return false;
    }
    let sum: i64 = shares.iter().filter_map(|s| s.1).sum();
    if sum != capital {
        e.push(
            "shareholders",
            "nominal_sum_mismatch",
            format!(
                "nominal_amount values must sum to the capital of {capital} euros (they sum \
                 to {sum}; § 5 (3) GmbHG)"
            ),
        );
        return false;
    }
    for (path, nominal, percentage, sent) in shares {
        let derived = Percentage::of_whole(nominal.unwrap_or(0), capital);
        // 0.005 percentage points are 50 ten-thousandths.
        if sent && percentage.0.abs_diff(derived.0) > 50 {
            e.push(
                format!("{path}.share_percentage"),
                "conflict",
                format!(
                    "is not the share nominal_amount is of the capital: {} euros of {capital} \
                     are {} % (omit share_percentage to have it derived)",
                    nominal.unwrap_or(0),
                    derived.to_decimal_string()
                ),
            );
            ok = false;
        } else if !sent {
            *percentage = derived;
        }
    }
    ok
}

/// The company's `phone`: a valid number; a German one with its area code apart, as the
/// questionnaire files it ([`crate::phone`]).
fn company_phone(v: &Value, e: &mut Violations) -> Option<String> {
    let phone = rules::phone(v, "phone", e)?;
    if crate::phone::parts(&phone) == crate::phone::PhoneParts::Unsplit {
        e.push(
            "phone",
            "invalid_phone",
            "a German number must write its area code apart from the number, as the \
             questionnaire files them: +49 30 12345678, 030 12345678 or 030/12345678",
        );
        return None;
    }
    Some(phone)
}

/// `website`: an `http` or `https` address of at most 200 characters.
fn website(v: &Value, e: &mut Violations) -> Option<String> {
    let text = rules::text(v, "website", 200, TextType::C, e)?;
    let ok = url::Url::parse(&text)
        .ok()
        .is_some_and(|u| matches!(u.scheme(), "http" | "https") && u.host_str().is_some());
    if !ok {
        e.push(
            "website",
            "invalid_url",
            "must be a web address with http:// or https://, such as https://www.example.de",
        );
        return None;
    }
    Some(text)
}

/// A person or firm object (`tax_advisor`, `authorized_recipient`), or, where
/// `tax_advisor_allowed`, the tick "the tax adviser".
#[derive(Debug, Clone, PartialEq, Eq)]
enum Party {
    TaxAdvisor,
    Person(PartyPerson),
    Firm(PartyFirm),
}

fn party(v: &Value, path: &str, tax_advisor_allowed: bool, e: &mut Violations) -> Option<Party> {
    let o = object(v, path, PARTY_FIELDS, e)?;
    let types: &[&str] = if tax_advisor_allowed {
        &["tax-advisor", "person", "firm"]
    } else {
        &["person", "firm"]
    };
    let kind = o.req("type", e).and_then(|t| {
        let p = o.path("type");
        let s = rules::string(t, &p, e)?;
        if types.contains(&s) {
            Some(s.to_owned())
        } else {
            e.push(
                p,
                "invalid_value",
                format!("must be one of: {}", types.join(", ")),
            );
            None
        }
    })?;
    let fields: &[&str] = match kind.as_str() {
        "tax-advisor" => &["type"],
        "person" => &["type", "first_name", "last_name", "address", "phone"],
        _ => &["type", "name", "address", "phone"],
    };
    for field in PARTY_FIELDS {
        if o.has(field) && !fields.contains(field) {
            e.push(
                o.path(field),
                "not_allowed",
                format!("is not accepted with type {kind}"),
            );
        }
    }
    if kind == "tax-advisor" {
        return Some(Party::TaxAdvisor);
    }
    let address = o
        .req("address", e)
        .and_then(|v| tax_address(v, &o.path("address"), e));
    let phone = o
        .opt("phone")
        .and_then(|v| rules::phone(v, &o.path("phone"), e));
    if o.has("phone") && phone.is_none() {
        return None;
    }
    if kind == "person" {
        let first_name = req_text(&o, "first_name", 72, TextType::A, e);
        let last_name = req_text(&o, "last_name", 72, TextType::A, e);
        Some(Party::Person(PartyPerson {
            first_name: first_name?,
            last_name: last_name?,
            address: address?,
            phone,
        }))
    } else {
        let name = req_text(&o, "name", 120, TextType::B, e);
        Some(Party::Firm(PartyFirm {
            name: name?,
            address: address?,
            phone,
        }))
    }
}

/// `tax_advisor`: a person or a firm (also a sole proprietor's).
pub(crate) fn tax_advisor(v: &Value, e: &mut Violations) -> Option<TaxAdvisor> {
    party(v, "tax_advisor", false, e).map(|p| match p {
        Party::Person(p) => TaxAdvisor::Person(p),
        Party::Firm(f) => TaxAdvisor::Firm(f),
        Party::TaxAdvisor => unreachable!("refused by party"),
    })
}

/// `po_box`: 1 to 6 digits, a German postal code and the place.
fn po_box(v: &Value, e: &mut Violations) -> Option<PoBox> {
    let o = object(v, "po_box", &["number", "zip", "city"], e)?;
    let number = o.req("number", e).and_then(|v| {
        let p = o.path("number");
        let s = rules::string(v, &p, e)?.trim();
        if (1..=6).contains(&s.len()) && s.bytes().all(|b| b.is_ascii_digit()) {
            Some(s.to_owned())
        } else {
            e.push(
                p,
                "invalid_value",
                "must be a post office box number of 1 to 6 digits",
            );
            None
        }
    });
    let zip = o
        .req("zip", e)
        .and_then(|v| rules::german_zip(v, &o.path("zip"), e));
    let city = o
        .req("city", e)
        .and_then(|v| rules::city(v, &o.path("city"), e));
    Some(PoBox {
        number: number?,
        zip: zip?,
        city: city?,
    })
}

/// `attachments`: each names a multipart part as a trade owner's `documents.gewa_1` does.
fn attachments(v: &Value, e: &mut Violations) -> Option<Attachments> {
    let o = object(v, "attachments", &Attachments::FIELDS, e)?;
    let read =
        |field: &str, e: &mut Violations| -> Option<Option<crate::trade::UploadedDocument>> {
            let Some(v) = o.opt(field) else {
                return Some(None);
            };
            crate::trade_request::uploaded_document(v, &o.path(field), e).map(Some)
        };
    let articles = read("articles_of_association", e);
    let list = read("shareholder_list", e);
    let mandate = read("sepa_mandate", e);
    let attachments = Attachments {
        articles_of_association: articles?,
        shareholder_list: list?,
        sepa_mandate: mandate?,
    };
    // Each part once.
    let parts = attachments.parts();
    for (i, (field, part)) in parts.iter().enumerate() {
        if let Some((first, _)) = parts[..i].iter().find(|(_, p)| p == part) {
            e.push(
                format!("attachments.{field}.file"),
                "duplicate",
                format!("names the part attachments.{first}.file names already"),
            );
            return None;
        }
    }
    Some(attachments)
}

/// Applies every rule; `today` decides which dates are in the past. `known_tax_office` says
/// whether a 4-digit office number is in the bundled directory.
pub fn parse(
    body: &Value,
    today: Date,
    known_tax_office: &dyn Fn(&str) -> bool,
) -> Result<TaxRequest, Violations> {
    let mut errs = Violations::new();
    let Some(o) = object(body, "", FIELDS, &mut errs) else {
        return Err(errs);
    };
    let e = &mut errs;

    let mut core = CoreRequest::<KapLegalForm>::head(&o, today, known_tax_office, e);
    let (legal_form, environment) = (core.legal_form, core.environment);
    let capital = req_euros(&o, "capital", e).and_then(|c| {
        let ok = match legal_form {
            Some(KapLegalForm::Ug) => (1..=24_999).contains(&c),
            Some(KapLegalForm::Gmbh) => c >= 25_000,
            None => true,
        };
        if !ok {
            let rule = if legal_form == Some(KapLegalForm::Ug) {
                "a UG's capital must be 1 to 24,999 euros"
            } else {
                "a GmbH's capital must be at least 25,000 euros"
            };
            e.push("capital", "out_of_range", rule);
            return None;
        }
        Some(c)
    });
    let paid_in = req_euros(&o, "paid_in_capital", e).and_then(|p| {
        if p < 0 {
            e.push("paid_in_capital", "out_of_range", "must not be negative");
            None
        } else if capital.is_some_and(|c| p > c) {
            e.push(
                "paid_in_capital",
                "exceeds_capital",
                "cannot exceed capital",
            );
            None
        } else {
            Some(p)
        }
    });
    let formation_type: Option<FormationType> =
        req_enum(&o, "formation_type", &["cash", "in-kind", "conversion"], e);
    let conversion_type = match (formation_type, o.opt("conversion_type")) {
        (Some(FormationType::Conversion), None) => {
            e.push(
                "conversion_type",
                "required",
                "is required when formation_type is conversion",
            );
            None
        }
        (Some(FormationType::Conversion), Some(v)) => rules::enumeration(
            v,
            "conversion_type",
            &["merger", "division", "form-change", "asset-transfer"],
            e,
        ),
        (_, Some(_)) => {
            e.push(
                "conversion_type",
                "not_allowed",
                "is only accepted when formation_type is conversion",
            );
            None
        }
        (_, None) => None,
    };
    let is_holding = opt_bool(&o, "is_holding", e);
    core.address(&o, e);
    let notary = o.opt("notary").and_then(|v| {
        let n = object(v, "notary", NOTARY_FIELDS, e)?;
        let first = req_text(&n, "first_name", 72, TextType::A, e);
        let last = req_text(&n, "last_name", 72, TextType::A, e);
        let addr = n
            .req("address", e)
            .and_then(|v| tax_address(v, "notary.address", e));
        Some(Notary {
            first_name: first?,
            last_name: last?,
            address: addr?,
        })
    });

    let directors = o.req("directors", e).and_then(|v| {
        let items = rules::array(v, "directors", 1, MAX_DIRECTORS, e)?;
        each(items, "directors", DIRECTOR_FIELDS, e, |d, e| {
            let first = req_text(d, "first_name", 72, TextType::A, e);
            let middle = opt_text(d, "middle_name", 72, TextType::A, e);
            let last = req_text(d, "last_name", 72, TextType::A, e);
            let email = d
                .opt("email")
                .and_then(|v| rules::email(v, &d.path("email"), e));
            let phone = d
                .opt("phone")
                .and_then(|v| rules::phone(v, &d.path("phone"), e));
            let dob = past_date(d, "dob", today, e);
            let tin = tax_id(d, "tax_identification_number", environment, e);
            let addr = d
                .req("address", e)
                .and_then(|v| tax_address(v, &d.path("address"), e));
            let ok_tin = !d.has("tax_identification_number") || tin.is_some();
            let ok_contact =
                (!d.has("email") || email.is_some()) && (!d.has("phone") || phone.is_some());
            if !(ok_tin && ok_contact) || (d.has("middle_name") && middle.is_none()) {
                return None;
            }
            Some(Director {
                first_name: first?,
                middle_name: middle,
                last_name: last?,
                email,
                phone,
                dob: dob?,
                tax_identification_number: tin,
                address: addr?,
            })
        })
    });
    let shareholders = o.req("shareholders", e).and_then(|v| {
        let (ind, ent) = holder_lists(v, "shareholders", 1, MAX_SHAREHOLDERS, e)?;
        let individuals = each(
            ind,
            "shareholders.individuals",
            &shareholder_individual_fields(),
            e,
            |x, e| {
                let mut s = individual_holder(x, today, environment, e);
                let nominal = nominal_amount(x, e);
                let numbers = share_numbers(x, e);
                if let Some(s) = s.as_mut() {
                    s.nominal_amount = nominal?;
                    s.share_numbers = numbers?;
                }
                s
            },
        );
        let entities = each(
            ent,
            "shareholders.entities",
            &SHAREHOLDER_ENTITY_FIELDS,
            e,
            |x, e| {
                let mut s = entity_holder(x, e);
                let nominal = nominal_amount(x, e);
                let numbers = share_numbers(x, e);
                if let Some(s) = s.as_mut() {
                    s.nominal_amount = nominal?;
                    s.share_numbers = numbers?;
                }
                s
            },
        );
        let (individuals, entities) = (individuals?, entities?);
        let mut holders = Shareholders {
            individuals,
            entities,
        };
        if has_nominal_amounts(&holders) {
            // The percentages follow from the nominal amounts.
            return nominal_shares(&mut holders, v, capital?, e).then_some(holders);
        }
        let shares = holders
            .individuals
            .iter()
            .map(|x| x.share_percentage)
            .chain(holders.entities.iter().map(|x| x.share_percentage));
        if !shares_sum_to_100(shares, "shareholders", e) {
            return None;
        }
        if let Some(capital) = capital
            && !shares_are_whole_euros(&holders, capital, e)
        {
            return None;
        }
        Some(holders)
    });

    let register = match o.opt("commercial_register") {
        None => Some(CommercialRegister::NotApplied),
        Some(v) => register(v, "commercial_register", RegisterKind::Commercial, e),
    };
    let phone = o.opt("phone").and_then(|v| company_phone(v, e));
    let website = o.opt("website").and_then(|v| website(v, e));
    let place_of_management = o
        .opt("place_of_management")
        .and_then(|v| tax_address(v, "place_of_management", e));
    // It decides the tax office (§ 20 AO), so it is checked as the seat is.
    if let Some(a) = &place_of_management
        && a.country.is_germany()
    {
        crate::offices::check_request_address(
            "place_of_management",
            Some(&a.zip),
            Some(&a.city),
            Some(&a.street),
            e,
        );
    }
    let tax_advisor = o.opt("tax_advisor").and_then(|v| tax_advisor(v, e));
    let authorized_recipient = o.opt("authorized_recipient").and_then(|v| {
        let p = party(v, "authorized_recipient", true, e)?;
        if p == Party::TaxAdvisor && !o.has("tax_advisor") {
            e.push(
                "authorized_recipient.type",
                "conflict",
                "tax-advisor names the tax adviser of tax_advisor, which was not sent",
            );
            return None;
        }
        Some(match p {
            Party::TaxAdvisor => AuthorizedRecipient::TaxAdvisor,
            Party::Person(p) => AuthorizedRecipient::Person(p),
            Party::Firm(f) => AuthorizedRecipient::Firm(f),
        })
    });
    let bank_account_holder = opt_text(&o, "bank_account_holder", 120, TextType::B, e);
    if o.has("bank_account_holder") && !o.has("iban") {
        e.push(
            "bank_account_holder",
            "not_allowed",
            "is only accepted with iban: it names the holder of that account when it is not \
             the company",
        );
    }
    let exemption = opt_bool(&o, "request_construction_exemption_certificate", e);
    let attachments = match o.opt("attachments") {
        None => Some(Attachments::default()),
        Some(v) => attachments(v, e),
    };
    let sepa_sent = o
        .opt("attachments")
        .and_then(|a| a.get("sepa_mandate"))
        .is_some_and(|m| !m.is_null());
    if sepa_sent && !o.has("iban") {
        e.push(
            "attachments.sepa_mandate",
            "not_allowed",
            "is only accepted with iban: the mandate is for that account",
        );
    }
    let po_box = o.opt("po_box").and_then(|v| po_box(v, e));
    let own_assets = opt_bool(&o, "manages_own_assets_only", e);
    let trust = opt_bool(&o, "has_trust_relationships", e);
    let payroll_establishment = o
        .opt("payroll_establishment")
        .and_then(|v| tax_address(v, "payroll_establishment", e));
    core.tail(&o, e);
    if o.has("payroll_establishment") && core.has_employees != Some(true) {
        e.push(
            "payroll_establishment",
            "not_allowed",
            "is only accepted with has_employees true",
        );
    }

    let registration = (|| {
        let own = CorporationFields {
            capital: capital?,
            paid_in_capital: paid_in?,
            formation_type: formation_type?,
            conversion_type,
            is_holding,
            notary: notary.clone(),
            directors: directors.clone()?,
            shareholders: shareholders.clone()?,
            commercial_register: register.clone()?,
            phone: phone.clone(),
            website: website.clone(),
            place_of_management: place_of_management.clone(),
            tax_advisor: tax_advisor.clone(),
            authorized_recipient: authorized_recipient.clone(),
            bank_account_holder: bank_account_holder.clone(),
            request_construction_exemption_certificate: exemption.unwrap_or(false),
            attachments: attachments.clone()?,
            po_box: po_box.clone(),
            manages_own_assets_only: own_assets,
            has_trust_relationships: trust,
            payroll_establishment: payroll_establishment.clone(),
        };
        let sent = |field: &str, read: bool| !o.has(field) || read;
        if !(sent("phone", phone.is_some())
            && sent("website", website.is_some())
            && sent("place_of_management", place_of_management.is_some())
            && sent("tax_advisor", tax_advisor.is_some())
            && sent("authorized_recipient", authorized_recipient.is_some())
            && sent("bank_account_holder", bank_account_holder.is_some())
            && sent(
                "request_construction_exemption_certificate",
                exemption.is_some(),
            )
            && sent("po_box", po_box.is_some())
            && sent("manages_own_assets_only", own_assets.is_some())
            && sent("has_trust_relationships", trust.is_some())
            && sent("payroll_establishment", payroll_establishment.is_some()))
        {
            return None;
        }
        Some(TaxRegistration::from_core(core.complete()?, own))
    })();
    core.request(registration, errs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule_cases::{example, known, tax_cases, today};

    /// 1 to 9 directors (api.md; ELSTER's `Vertreter` occurs at most 9 times).
    #[test]
    fn nine_directors_and_no_more() {
        let with = |n: usize| {
            let mut v = example("gmbh");
            let first = v["directors"][0].clone();
            v["directors"] = Value::Array(vec![first; n]);
            v
        };
        let nine = parse(&with(9), today(), &known).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(nine.registration.directors.len(), 9);
        for (n, code) in [(0, "too_few"), (10, "too_many")] {
            let errs = parse(&with(n), today(), &known).expect_err("refused");
            let got: Vec<(&str, &str)> = errs
                .iter()
                .map(|e| (e.field.as_str(), e.code.as_str()))
                .collect();
            assert_eq!(got, [("directors", code)], "{n}");
        }
    }

    #[test]
    fn examples_are_valid() {
        let g = parse(&example("gmbh"), today(), &known).unwrap_or_else(|e| panic!("gmbh: {e}"));
        let r = &g.registration;
        assert_eq!(r.capital, 25_000);
        assert!(!r.vat.small_business);
        assert_eq!(r.vat.return_frequency, Some(ReturnFrequency::Monthly));
        assert_eq!(
            r.commercial_register,
            CommercialRegister::Registered {
                registration_application_date: Some(time::macros::date!(2025 - 02 - 12)),
                registration_number: "245789B".into(),
                registration_date: time::macros::date!(2025 - 02 - 20),
                registration_court: "Amtsgericht Charlottenburg".into(),
            }
        );
        assert_eq!(r.payroll.as_ref().map(|p| p.employee_count), Some(3));
        assert_eq!(
            r.payroll.as_ref().and_then(|p| p.marginal_employee_count),
            Some(1)
        );
        assert_eq!(r.phone.as_deref(), Some("+49 30 98765400"));
        assert!(matches!(r.tax_advisor, Some(TaxAdvisor::Firm(_))));
        assert_eq!(
            r.authorized_recipient,
            Some(AuthorizedRecipient::TaxAdvisor)
        );
        assert_eq!(
            r.shareholders.individuals.len() + r.shareholders.entities.len(),
            3
        );
        assert!(g.business_address.is_some());

        let u = parse(&example("ug"), today(), &known).unwrap_or_else(|e| panic!("ug: {e}"));
        assert!(u.registration.vat.small_business);
        assert_eq!(u.registration.vat.return_frequency, None);
        assert_eq!(u.registration.payroll, None);
        // The model round-trips through JSON (it is stored that way).
        let json = serde_json::to_value(&u.registration).unwrap();
        let back: TaxRegistration = serde_json::from_value(json).unwrap();
        assert_eq!(back, u.registration);
    }

    /// Nominal amounts sent for every shareholder: the percentages follow from them (four
    /// decimals), and one sent beside them must agree within 0.005.
    #[test]
    fn nominal_amounts_decide_the_percentages() {
        let mut v = example("gmbh");
        for (pointer, nominal) in [
            ("/shareholders/individuals/0", 12_500),
            ("/shareholders/individuals/1", 6_250),
            ("/shareholders/entities/0", 6_250),
        ] {
            let holder = v.pointer_mut(pointer).unwrap();
            holder["nominal_amount"] = nominal.into();
            holder.as_object_mut().unwrap().remove("share_percentage");
        }
        let r = parse(&v, today(), &known)
            .unwrap_or_else(|e| panic!("{e}"))
            .registration;
        assert_eq!(r.nominal_amounts(), [12_500, 6_250, 6_250]);
        let pct: Vec<String> = r
            .share_percentages()
            .iter()
            .map(|p| p.to_four_decimals())
            .collect();
        assert_eq!(pct, ["50.0000", "25.0000", "25.0000"]);
        // A two-decimal percentage beside an amount it rounds to is accepted.
        v["shareholders"]["individuals"][0]["share_percentage"] = 50.into();
        assert!(parse(&v, today(), &known).is_ok());
        // The thirds: 8,333 / 8,333 / 8,334 of 25,000 euros file as 33.3320 / 33.3320 / 33.3360 %.
        let g = parse(&example("gmbh"), today(), &known)
            .unwrap()
            .registration;
        let filed: Vec<(i64, String)> = g
            .filed_shares()
            .into_iter()
            .map(|(n, p)| (n, p.to_four_decimals()))
            .collect();
        assert_eq!(
            filed,
            [
                (8333, "33.3320".to_string()),
                (8333, "33.3320".to_string()),
                (8334, "33.3360".to_string())
            ]
        );
    }

    #[test]
    fn each_rule_names_its_field_and_code() {
        for case in tax_cases() {
            let errs = parse(&case.request(), today(), &known)
                .expect_err(&format!("{} {} should be refused", case.field, case.code));
            case.assert_named_in(&errs);
        }
    }

    /// Shares are summed as exact ten-thousandths of a percent, not as floating point (where
    /// 33.3333 + 33.3333 + 33.3334 is not 100.0): the example's thirds are accepted, and a sum
    /// one ten-thousandth short of 100 or over it is refused with that sum.
    #[test]
    fn decimal_shares_sum_exactly() {
        let g = parse(&example("gmbh"), today(), &known).unwrap_or_else(|e| panic!("{e}"));
        let shares: Vec<u32> = g
            .registration
            .share_percentages()
            .iter()
            .map(|p| p.0)
            .collect();
        assert_eq!(shares, [333_333, 333_333, 333_334]);
        assert_eq!(shares.iter().sum::<u32>(), Percentage::HUNDRED.0);
        for (last, sum) in [(33.3333, "99.9999"), (33.3335, "100.0001")] {
            let mut v = example("gmbh");
            v["shareholders"]["entities"][0]["share_percentage"] = last.into();
            let errs = parse(&v, today(), &known).expect_err(sum);
            assert_eq!(
                crate::rule_cases::field_codes(&errs),
                [(
                    "shareholders".to_string(),
                    "shares_do_not_sum_to_100".to_string()
                )],
                "{sum}"
            );
            assert!(
                errs.iter()
                    .any(|e| e.message.ends_with(&format!("(they sum to {sum})"))),
                "{errs}"
            );
        }
    }

    #[test]
    fn vat_rule_table() {
        // (founding revenue, following revenue, regime, small business?, ok?)
        let rows: &[(i64, i64, Option<&str>, bool, bool)] = &[
            (18_000, 60_000, Some("small-business"), true, true),
            (18_000, 60_000, Some("standard"), false, true),
            (25_000, 100_000, Some("small-business"), true, true),
            (18_000, 150_000, Some("small-business"), false, false),
            (18_000, 150_000, Some("standard"), false, true),
            (30_000, 60_000, Some("small-business"), false, true),
            (30_000, 60_000, None, false, true),
        ];
        for &(founding, following, regime, small, ok) in rows {
            let mut v = example("ug");
            v["financial_estimates"]["formation_year"]["revenue_amount"] = founding.into();
            v["financial_estimates"]["following_year"]["revenue_amount"] = following.into();
            match regime {
                Some(r) => v["vat"]["regime"] = r.into(),
                None => {
                    v["vat"].as_object_mut().unwrap().remove("regime");
                }
            }
            if !small {
                v["vat"]["accounting_method"] = "accrual".into();
                v["vat"]["estimated_balance_type"] = "payable".into();
                v["vat"]["estimated_balance_amount"] = 1000.into();
            }
            let r = parse(&v, today(), &known);
            assert_eq!(r.is_ok(), ok, "{founding} {following} {regime:?}: {r:?}");
            if let Ok(r) = r {
                assert_eq!(
                    r.registration.vat.small_business, small,
                    "{founding} {following} {regime:?}"
                );
            }
        }
    }
}
