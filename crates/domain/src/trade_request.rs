//! `POST /v1/trade-registration`: every field rule of the specification, applied to the request
//! JSON at once, producing the validated [`TradeRegistration`] the renderers read.

use serde_json::Value;
use time::Date;
use uuid::Uuid;

use crate::Violations;
use crate::country::CountryCode;
use crate::din91379::TextType;
use crate::rules::{self, Obj, object, req_enum};
use crate::signature::SignaturePath;
use crate::trade::*;

/// Most owners on one registration.
pub const MAX_OWNERS: usize = 9;

/// A validated create request.
#[derive(Debug, Clone, PartialEq)]
pub struct TradeRequest {
    /// The existing client company, when named.
    pub company_id: Option<Uuid>,
    pub registration: TradeRegistration,
}

const TOP: &[&str] = &[
    "company_id",
    "package",
    "environment",
    "client_reference",
    "client_preferred_language",
    "reason",
    "operational_activity_start_date",
    "establishment_type",
    "acquisition_type",
    "name",
    "legal_form",
    "registration_number",
    "business_type",
    "purpose",
    "registered_office",
    "business_address",
    "phone",
    "email",
    "industrial_license",
    "has_public_sector_participation",
    "employees",
    "authorized_representative",
    "main_establishment",
    "previous_business",
    "craft_card",
    "registration_court",
    "previous_establishment",
    "owners",
];

/// Most further nationalities of one owner (field 10).
pub const MAX_OTHER_NATIONALITIES: usize = 3;

const PACKAGES: &[&str] = &["self", "assisted"];
const ENVIRONMENTS: &[&str] = &["sandbox", "production"];
const LANGUAGES: &[&str] = &["en", "fr", "de", "it", "es"];
const REASONS: &[&str] = &[
    "new-foundation",
    "takeover",
    "reopening-after-relocation",
    "legal-form-change",
    "partner-entry",
    "transformation-law",
];
const ESTABLISHMENT_TYPES: &[&str] = &[
    "main-office",
    "branch-office",
    "dependent-branch",
    "travel-industry",
];
const ACQUISITION_TYPES: &[&str] = &["main-occupation", "secondary-occupation"];
const LEGAL_FORMS: &[&str] = &[
    "einzelunternehmen",
    "ug",
    "gmbh",
    "gbr",
    "einzelkaufmann-ek",
    "gmbh-co-kg",
    "kg",
    "ohg",
    "ug-co-kg",
    "ggmbh",
    "ag",
    "kgaa",
    "other",
];
const BUSINESS_TYPES: &[&str] = &["industry", "trade", "craft", "other"];
const GENDERS: &[&str] = &["male", "female", "diverse", "no-information"];
const EMPLOYEE_BRACKETS: &[&str] = &[
    "0", "1", "2", "3", "4", "5", "6-10", "11-20", "21-50", "50+",
];

rules::text_fields!(rules::text);

/// The German 5-digit `zip` of `o` and the place in its field `place`.
fn german_place(o: &Obj, place: &str, errs: &mut Violations) -> (Option<String>, Option<String>) {
    let zip = o
        .req("zip", errs)
        .and_then(|v| rules::german_zip(v, &o.path("zip"), errs));
    let city = o
        .req(place, errs)
        .and_then(|v| rules::city(v, &o.path(place), errs));
    (zip, city)
}

fn registered_office(v: &Value, path: &str, errs: &mut Violations) -> Option<RegisteredOffice> {
    let o = object(
        v,
        path,
        &["street", "street_second_line", "zip", "city"],
        errs,
    )?;
    let street = req_text(&o, "street", 72, TextType::B, errs);
    let second = opt_text(&o, "street_second_line", 72, TextType::B, errs);
    let (zip, city) = german_place(&o, "city", errs);
    // The trade office is decided on this address: a postal code that does not exist or a
    // city of another postal code is refused (docs/offices.md, "Address checks").
    crate::offices::check_request_address(
        path,
        zip.as_deref(),
        city.as_deref(),
        street.as_deref(),
        errs,
    );
    Some(RegisteredOffice {
        street: street?,
        street_second_line: second,
        zip: zip?,
        city: city?,
    })
}

fn foreign_address(
    v: &Value,
    path: &str,
    zip_max: usize,
    errs: &mut Violations,
) -> Option<PostalAddress> {
    let o = object(v, path, PostalAddress::FIELDS, errs)?;
    address_fields(&o, zip_max, errs)
}

/// The fields of an address that may be abroad, in an object already checked for its keys.
fn address_fields(o: &Obj, zip_max: usize, errs: &mut Violations) -> Option<PostalAddress> {
    address_in(
        o,
        |errs| o.read("country", true, errs, rules::country),
        zip_max,
        errs,
    )
}

/// The fields of an address in the country `country` reads (its postal code checked against
/// that country's format), in an object already checked for its keys.
fn address_in(
    o: &Obj,
    country: impl FnOnce(&mut Violations) -> Option<CountryCode>,
    zip_max: usize,
    errs: &mut Violations,
) -> Option<PostalAddress> {
    let street = req_text(o, "street", 72, TextType::B, errs);
    let second = opt_text(o, "street_second_line", 72, TextType::B, errs);
    let country = country(errs);
    let zip = o
        .req("zip", errs)
        .and_then(|v| rules::zip_for_country(v, &o.path("zip"), country.as_ref(), zip_max, errs));
    let city = o.read("city", true, errs, rules::city);
    let state = opt_text(o, "state", 72, TextType::B, errs);
    PostalAddress::assemble(street, second, zip, city, state, country)
}

fn signature(v: &Value, path: &str, errs: &mut Violations) -> Option<SignaturePath> {
    let s = rules::string(v, path, errs)?;
    match SignaturePath::parse(s) {
        Ok(p) => Some(p),
        Err(e) => {
            errs.push(path, e.code(), e.to_string());
            None
        }
    }
}

/// A country code whose people have a nationality designation (field 10).
fn nationality_code(v: &Value, path: &str, errs: &mut Violations) -> Option<CountryCode> {
    let code = rules::country(v, path, errs)?;
    if crate::nationality::of(code).is_none() {
        errs.push(
            path,
            "no_nationality",
            format!(
                "{code} ({}) has no nationality on the official German list of state names; \
                 name the state whose nationality the person holds",
                code.german_name()
            ),
        );
        return None;
    }
    Some(code)
}

/// Whether the owner's `nationality` field is `code` (for duplicates among the others).
fn nationality_is(o: &Obj, code: CountryCode) -> bool {
    o.opt("nationality")
        .and_then(|v| v.as_str())
        .and_then(|s| CountryCode::parse(s.trim()).ok())
        == Some(code)
}

/// Where an owner signs the GewA 1 (`documents.gewa_1` and `signatures.gewa_1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seat {
    /// On a form of his own (a sole trader, each managing partner), or as the first legal
    /// representative on the company's one form: he signs it, or uploads it signed.
    Own,
    /// As a further legal representative, on a supplementary sheet of the company's form:
    /// he signs his sheet, unless `owners[0]` uploads the company's form signed by all.
    Further { company_upload: bool },
}

fn owner(
    v: &Value,
    path: &str,
    package: Option<Package>,
    seat: Seat,
    today: Date,
    errs: &mut Violations,
) -> Option<Owner> {
    let o = object(
        v,
        path,
        &[
            "first_name",
            "last_name",
            "birth_name",
            "dob",
            "place_of_birth",
            "country_of_birth",
            "nationality",
            "other_nationalities",
            "gender",
            "phone",
            "email",
            "signatures",
            "documents",
            "residence_permit",
            "has_employment_restrictions",
            "employment_restriction_details",
            "address",
        ],
        errs,
    )?;
    let first_name = req_text(&o, "first_name", 72, TextType::A, errs);
    let last_name = req_text(&o, "last_name", 72, TextType::A, errs);
    let birth_name = opt_text(&o, "birth_name", 72, TextType::A, errs);
    let dob = o.req("dob", errs).and_then(|v| {
        let p = o.path("dob");
        let d = rules::date(v, &p, errs)?;
        if d >= today {
            errs.push(p, "not_in_past", "must be a date of birth in the past");
            return None;
        }
        Some(d)
    });
    let place_of_birth = o
        .req("place_of_birth", errs)
        .and_then(|v| rules::city(v, &o.path("place_of_birth"), errs));
    let country_of_birth = o
        .req("country_of_birth", errs)
        .and_then(|v| rules::country(v, &o.path("country_of_birth"), errs));
    let nationality = o
        .req("nationality", errs)
        .and_then(|v| nationality_code(v, &o.path("nationality"), errs));
    let other_nationalities = match o.opt("other_nationalities") {
        None => Some(Vec::new()),
        Some(v) => {
            let p = o.path("other_nationalities");
            rules::array(v, &p, 0, MAX_OTHER_NATIONALITIES, errs).and_then(|items| {
                let mut out: Vec<CountryCode> = Vec::new();
                let mut ok = true;
                for (i, item) in items.iter().enumerate() {
                    let ip = format!("{p}[{i}]");
                    match nationality_code(item, &ip, errs) {
                        Some(c) if out.contains(&c) || nationality_is(&o, c) => {
                            errs.push(ip, "duplicate", "names a nationality already given");
                            ok = false;
                        }
                        Some(c) => out.push(c),
                        None => ok = false,
                    }
                }
                ok.then_some(out)
            })
        }
    };
    let gender = req_enum(&o, "gender", GENDERS, errs);
    let phone = o
        .req("phone", errs)
        .and_then(|v| rules::phone(v, &o.path("phone"), errs));
    let email = o
        .req("email", errs)
        .and_then(|v| rules::email(v, &o.path("email"), errs));

    // documents.gewa_1.file: a signed PDF sent as a multipart part instead of a signature.
    let documents = match o.opt("documents") {
        None => Some(OwnerDocuments::default()),
        Some(v) => {
            let dp = o.path("documents");
            object(v, &dp, &["gewa_1"], errs).and_then(|d| {
                let gewa_1 = match d.opt("gewa_1") {
                    None => None,
                    Some(g) => Some(uploaded_document(g, &d.path("gewa_1"), errs)?),
                };
                if gewa_1.is_some() && matches!(seat, Seat::Further { .. }) {
                    errs.push(
                        d.path("gewa_1"),
                        "not_allowed",
                        "a legal person files one GewA 1 for the company: upload it, signed by \
                         every legal representative, once, as owners[0].documents.gewa_1",
                    );
                }
                Some(OwnerDocuments { gewa_1 })
            })
        }
    };

    // signatures: gewa_1 XOR documents.gewa_1; power_of_attorney only and always for assisted.
    let sp = o.path("signatures");
    let signatures =
        match o.req("signatures", errs) {
            None => None,
            Some(v) => object(v, &sp, &["gewa_1", "power_of_attorney"], errs).map(|s| {
                let gewa_1 = s
                    .opt("gewa_1")
                    .and_then(|v| signature(v, &s.path("gewa_1"), errs));
                let power_of_attorney = s
                    .opt("power_of_attorney")
                    .and_then(|v| signature(v, &s.path("power_of_attorney"), errs));
                let uploaded = documents.as_ref().is_some_and(|d| d.gewa_1.is_some());
                match (s.has("gewa_1"), uploaded, seat) {
                (true, true, _) => errs.push(
                    s.path("gewa_1"),
                    "conflict",
                    "send either signatures.gewa_1 or documents.gewa_1, not both",
                ),
                (true, false, Seat::Further { company_upload: true }) => errs.push(
                    s.path("gewa_1"),
                    "not_allowed",
                    "owners[0].documents.gewa_1 uploads the company's one GewA 1, which carries \
                     every legal representative's signature: send no signature of your own",
                ),
                (false, false, Seat::Own | Seat::Further { company_upload: false }) => errs.push(
                    s.path("gewa_1"),
                    "required",
                    if seat == Seat::Own {
                        "is required unless a signed GewA 1 is uploaded as documents.gewa_1"
                    } else {
                        "is required: each further legal representative signs his \
                         supplementary sheet of the company's GewA 1, unless \
                         owners[0].documents.gewa_1 uploads the form signed by all"
                    },
                ),
                _ => {}
            }
                s.sent_exactly_when(
                    "power_of_attorney",
                    package.map(|p| p == Package::Assisted),
                    "is required for the assisted package",
                    "is only accepted for the assisted package",
                    errs,
                );
                Signatures {
                    gewa_1,
                    power_of_attorney,
                }
            }),
        };

    let residence_permit = o.opt("residence_permit").and_then(|v| {
        let rp = o.path("residence_permit");
        let r = object(v, &rp, &["issue_date", "issuing_authority"], errs)?;
        let issue_date = r
            .req("issue_date", errs)
            .and_then(|v| rules::past_date(v, &r.path("issue_date"), today, errs));
        let issuing_authority = req_text(&r, "issuing_authority", 120, TextType::B, errs);
        Some(ResidencePermit {
            issue_date: issue_date?,
            issuing_authority: issuing_authority?,
        })
    });
    // Field 30: "Nur für Ausländer, die einen Aufenthaltstitel benötigen".
    // Judged on what was sent, also when another entry of the list is broken.
    let german = nationality_is(&o, CountryCode::DE)
        || o.opt("other_nationalities")
            .and_then(Value::as_array)
            .is_some_and(|items| {
                items.iter().any(|v| {
                    v.as_str()
                        .and_then(|s| CountryCode::parse(s.trim()).ok())
                        .is_some_and(|c| c.is_germany())
                })
            });
    // Citizens of the EU, the EEA and Switzerland need none either.
    let free_movement = o
        .opt("nationality")
        .into_iter()
        .chain(
            o.opt("other_nationalities")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        )
        .filter_map(|v| v.as_str().and_then(|s| CountryCode::parse(s.trim()).ok()))
        .find(|c| !c.is_germany() && crate::nationality::free_movement(*c));
    let needs_no_title = if german {
        Some("the owner is German".to_string())
    } else {
        free_movement.map(|c| {
            format!(
                "the owner is a citizen of {} ({c}), who needs none: citizens of the EU, the \
                 EEA and Switzerland live and work in Germany without one (FreizügG/EU, \
                 Freizügigkeitsabkommen EU-Schweiz)",
                c.german_name()
            )
        })
    };
    if let Some(why) = &needs_no_title {
        for (field, number) in [
            ("residence_permit", 30),
            ("has_employment_restrictions", 31),
        ] {
            if o.has(field) {
                errs.push(
                    o.path(field),
                    "not_allowed",
                    format!(
                        "is only for foreigners who need a residence title (GewA 1 field \
                         {number}); {why}"
                    ),
                );
            }
        }
    }
    let has_restrictions = o
        .opt("has_employment_restrictions")
        .and_then(|v| rules::boolean(v, &o.path("has_employment_restrictions"), errs));
    o.sent_exactly_when(
        "has_employment_restrictions",
        Some(o.has("residence_permit")),
        "is required when residence_permit is sent",
        "is only accepted together with residence_permit",
        errs,
    );
    // Field 31 wants the condition's wording when there is one.
    let restriction_details =
        opt_text(&o, "employment_restriction_details", 200, TextType::C, errs);
    let restricted = if o.has("has_employment_restrictions") {
        has_restrictions // None when the value itself is broken: nothing more to say
    } else {
        Some(false)
    };
    o.sent_exactly_when(
        "employment_restriction_details",
        restricted,
        "is required when has_employment_restrictions is true: the condition or restriction \
         as the residence title states it (GewA 1 field 31)",
        "is only accepted when has_employment_restrictions is true",
        errs,
    );
    let address = o
        .opt("address")
        .and_then(|v| foreign_address(v, &o.path("address"), 12, errs))
        .map(ResidentialAddress::from);

    let last_name = last_name?;
    // "omit when equal to last_name": an equal birth name says nothing and is dropped.
    let birth_name = birth_name.filter(|b| *b != last_name);
    Some(Owner {
        first_name: first_name?,
        last_name,
        birth_name,
        dob: dob?,
        place_of_birth: place_of_birth?,
        country_of_birth: country_of_birth?,
        nationality: nationality?,
        other_nationalities: other_nationalities?,
        gender: gender?,
        phone: phone?,
        email: email?,
        signatures: signatures?,
        documents: documents?,
        residence_permit: if o.has("residence_permit") {
            Some(residence_permit?)
        } else {
            None
        },
        has_employment_restrictions: has_restrictions,
        employment_restriction_details: restriction_details,
        address: if o.has("address") {
            Some(address?)
        } else {
            None
        },
    })
}

/// A document sent as a multipart part, `{"file": "<part name>"}`: 1 to 100 letters, digits,
/// `-`, `_`, `.`, not `data` (the payload's part). The trade owners' `documents.gewa_1` and the
/// tax registration's `attachments` name their parts so.
pub(crate) fn uploaded_document(
    v: &Value,
    path: &str,
    errs: &mut Violations,
) -> Option<UploadedDocument> {
    let g = object(v, path, &["file"], errs)?;
    let file = g.req("file", errs).and_then(|f| {
        let fp = g.path("file");
        let name = rules::string(f, &fp, errs)?;
        let ok = !name.is_empty()
            && name.len() <= 100
            && name != "data"
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
        if !ok {
            errs.push(
                fp,
                "invalid_value",
                "must name a multipart part: 1 to 100 letters, digits, - _ . (not `data`)",
            );
            return None;
        }
        Some(name.to_string())
    })?;
    Some(UploadedDocument { file })
}

/// Field 17: the former establishment of a relocated business, in Germany unless `country`
/// says otherwise (a move from abroad).
fn previous_establishment(v: &Value, errs: &mut Violations) -> Option<PostalAddress> {
    let o = object(v, "previous_establishment", PostalAddress::FIELDS, errs)?;
    let country = |errs: &mut Violations| match o.opt("country") {
        None => Some(CountryCode::DE),
        Some(c) => rules::country(c, &o.path("country"), errs),
    };
    address_in(&o, country, 12, errs)
}

/// Field 16 with its contact rows: an address (may be abroad) with an optional phone and email.
fn main_establishment(v: &Value, errs: &mut Violations) -> Option<MainEstablishment> {
    let mut keys = PostalAddress::FIELDS.to_vec();
    keys.extend(["phone", "email"]);
    let m = object(v, "main_establishment", &keys, errs)?;
    let address = address_fields(&m, 12, errs);
    let phone = m
        .opt("phone")
        .and_then(|v| rules::phone(v, &m.path("phone"), errs));
    let email = m
        .opt("email")
        .and_then(|v| rules::email(v, &m.path("email"), errs));
    Some(MainEstablishment {
        address: address?,
        phone,
        email,
    })
}

/// Applies every rule; `today` decides which dates are in the past.
pub fn parse(body: &Value, today: Date) -> Result<TradeRequest, Violations> {
    let mut errs = Violations::new();
    let Some(o) = object(body, "", TOP, &mut errs) else {
        return Err(errs);
    };
    let e = &mut errs;

    let company_id = o
        .opt("company_id")
        .and_then(|v| rules::uuid(v, "company_id", e));
    let package: Option<Package> = req_enum(&o, "package", PACKAGES, e);
    let environment = match o.opt("environment") {
        None => Some(Environment::default()),
        Some(v) => rules::enumeration(v, "environment", ENVIRONMENTS, e),
    };
    let client_reference = opt_text(&o, "client_reference", 255, TextType::C, e);
    let language = match o.opt("client_preferred_language") {
        None => Some(Language::default()),
        Some(v) => rules::enumeration(v, "client_preferred_language", LANGUAGES, e),
    };
    let reason = req_enum(&o, "reason", REASONS, e);
    let start = o
        .req("operational_activity_start_date", e)
        .and_then(|v| rules::date(v, "operational_activity_start_date", e));
    let establishment_type = req_enum(&o, "establishment_type", ESTABLISHMENT_TYPES, e);
    let acquisition_type = req_enum(&o, "acquisition_type", ACQUISITION_TYPES, e);
    let name = req_text(&o, "name", 120, TextType::B, e);
    let legal_form = req_enum(&o, "legal_form", LEGAL_FORMS, e);
    if let (Some(n), Some(f)) = (&name, legal_form) {
        crate::legal_name::check(n, crate::legal_name::designations(f), e);
    }
    let registration_number = opt_text(&o, "registration_number", 30, TextType::B, e);
    let registration_court = o.opt("registration_court").and_then(|v| {
        let text = rules::text(v, "registration_court", 120, TextType::B, e)?;
        match crate::register_court::find(&text) {
            Some(court) => Some(court.name()),
            None => {
                e.push(
                    "registration_court",
                    "unknown_register_court",
                    "must name a German register court (Registergericht) by its place, such as \
                     Amtsgericht Charlottenburg or München (the list: GET /v1/register-courts)",
                );
                None
            }
        }
    });
    if o.has("registration_court") && !o.has("registration_number") {
        e.push(
            "registration_court",
            "not_allowed",
            "is only accepted together with registration_number (GewA 1 field 2: place and \
             number of the register entry)",
        );
    }
    let business_type = o.req("business_type", e).and_then(|v| {
        let items = rules::array(v, "business_type", 1, BUSINESS_TYPES.len(), e)?;
        let mut out: Vec<BusinessType> = Vec::new();
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            let p = format!("business_type[{i}]");
            match rules::enumeration::<BusinessType>(item, &p, BUSINESS_TYPES, e) {
                Some(t) if out.contains(&t) => {
                    e.push(p, "duplicate", "is listed twice");
                    ok = false;
                }
                Some(t) => out.push(t),
                None => ok = false,
            }
        }
        ok.then_some(out)
    });
    let purpose = req_text(&o, "purpose", 200, TextType::C, e);
    let registered_office = o
        .req("registered_office", e)
        .and_then(|v| registered_office(v, "registered_office", e));
    let business_address = o.opt("business_address").and_then(|v| {
        if company_id.is_some() || o.has("company_id") {
            e.push(
                "business_address",
                "not_allowed",
                "is only accepted when company_id is omitted (it describes the company to create)",
            );
            return None;
        }
        foreign_address(v, "business_address", 12, e)
    });
    // A branch's form names its main office (field 16): the request's business_address, or
    // the stored address of the company company_id names.
    if establishment_type.is_some_and(EstablishmentType::is_branch)
        && !o.has("business_address")
        && !o.has("company_id")
        && !o.has("main_establishment")
    {
        e.push(
            "business_address",
            "required",
            "is the main office (Hauptniederlassung, GewA 1 field 16), required for a \
             branch-office or dependent-branch unless main_establishment is sent or company_id \
             names the company",
        );
    }
    let main_establishment = o
        .opt("main_establishment")
        .and_then(|v| main_establishment(v, e));
    if o.has("main_establishment") && establishment_type.is_some_and(|t| !t.is_branch()) {
        e.push(
            "main_establishment",
            "not_allowed",
            "is only accepted for a branch-office or dependent-branch (GewA 1 field 16)",
        );
    }
    let authorized_representative = o.opt("authorized_representative").and_then(|v| {
        let r = object(
            v,
            "authorized_representative",
            &["first_name", "last_name"],
            e,
        )?;
        let first_name = req_text(&r, "first_name", 72, TextType::A, e);
        let last_name = req_text(&r, "last_name", 72, TextType::A, e);
        Some(PersonName {
            first_name: first_name?,
            last_name: last_name?,
        })
    });
    if o.has("authorized_representative")
        && let (Some(t), Some(f)) = (establishment_type, legal_form)
        && !(t.is_branch() || f == LegalForm::Ag)
    {
        e.push(
            "authorized_representative",
            "not_allowed",
            "is only accepted for a branch-office, a dependent-branch or an AG (GewA 1 field 14)",
        );
    }
    let phone = o.req("phone", e).and_then(|v| rules::phone(v, "phone", e));
    let email = o.req("email", e).and_then(|v| rules::email(v, "email", e));
    let today_ = today;
    let industrial_license = o.opt("industrial_license").and_then(|v| {
        let l = object(
            v,
            "industrial_license",
            &["issue_date", "issuing_authority", "zip", "location"],
            e,
        )?;
        let issue_date = l
            .req("issue_date", e)
            .and_then(|v| rules::past_date(v, &l.path("issue_date"), today_, e));
        let issuing_authority = req_text(&l, "issuing_authority", 120, TextType::B, e);
        let (zip, location) = german_place(&l, "location", e);
        Some(IndustrialLicense {
            issue_date: issue_date?,
            issuing_authority: issuing_authority?,
            zip: zip?,
            location: location?,
        })
    });
    let previous_business = o.opt("previous_business").and_then(|v| {
        let b = object(
            v,
            "previous_business",
            &["name", "accident_insurer", "accident_insurance_number"],
            e,
        )?;
        let name = req_text(&b, "name", 120, TextType::B, e);
        let insurer = opt_text(&b, "accident_insurer", 120, TextType::B, e);
        let number = opt_text(&b, "accident_insurance_number", 30, TextType::B, e);
        Some(PreviousBusiness {
            name: name?,
            accident_insurer: insurer,
            accident_insurance_number: number,
        })
    });
    if o.has("previous_business") && reason == Some(Reason::NewFoundation) {
        e.push(
            "previous_business",
            "not_allowed",
            "is only accepted when reason is not new-foundation (GewA 1 fields 26 and 27)",
        );
    }
    let previous_establishment = o
        .opt("previous_establishment")
        .and_then(|v| previous_establishment(v, e));
    o.sent_exactly_when(
        "previous_establishment",
        reason.map(|r| r == Reason::ReopeningAfterRelocation),
        "is required when reason is reopening-after-relocation: the former establishment \
         (GewA 1 field 17), to which the new office passes the deregistration",
        "is only accepted when reason is reopening-after-relocation (GewA 1 field 17)",
        e,
    );
    if let (Some(before), Some(now)) = (&previous_establishment, &registered_office)
        && before.country.is_germany()
        && before.zip == now.zip
        && same_text(&before.street, &now.street)
        && same_text(&before.city, &now.city)
    {
        e.push(
            "previous_establishment",
            "conflict",
            "is the establishment itself (registered_office): a business that moves within \
             the district files a change (GewA 2), not this Anmeldung",
        );
    }
    let craft_card = o.opt("craft_card").and_then(|v| {
        let c = object(v, "craft_card", &["held", "issue_date", "chamber"], e)?;
        let held = c
            .req("held", e)
            .and_then(|v| rules::boolean(v, &c.path("held"), e));
        let issue_date = c
            .opt("issue_date")
            .and_then(|v| rules::past_date(v, &c.path("issue_date"), today_, e));
        let chamber = opt_text(&c, "chamber", 120, TextType::B, e);
        for field in ["issue_date", "chamber"] {
            c.sent_exactly_when(
                field,
                held,
                "is required when held is true (GewA 1 field 29)",
                "is only accepted when held is true",
                e,
            );
        }
        Some(CraftCard {
            held: held?,
            issue_date,
            chamber,
        })
    });
    if o.has("craft_card")
        && business_type
            .as_ref()
            .is_some_and(|t: &Vec<BusinessType>| !t.contains(&BusinessType::Craft))
    {
        e.push(
            "craft_card",
            "not_allowed",
            "is only accepted when business_type includes craft (GewA 1 field 29)",
        );
    }
    let public_sector = o
        .req("has_public_sector_participation", e)
        .and_then(|v| rules::boolean(v, "has_public_sector_participation", e));
    let employees = o.opt("employees").and_then(|v| {
        let em = object(v, "employees", &["full_time", "part_time"], e)?;
        let full_time = req_enum(&em, "full_time", EMPLOYEE_BRACKETS, e);
        let part_time = req_enum(&em, "part_time", EMPLOYEE_BRACKETS, e);
        Some(Employees {
            full_time: full_time?,
            part_time: part_time?,
        })
    });
    let owners = o.req("owners", e).and_then(|v| {
        let items = rules::array(v, "owners", 1, MAX_OWNERS, e)?;
        // A legal person's further representatives sign the company's one form.
        let one_form = legal_form.is_some_and(LegalForm::files_one_gewa1);
        let company_upload = items
            .first()
            .and_then(|o| o.pointer("/documents/gewa_1"))
            .is_some_and(|v| !v.is_null());
        let parsed: Vec<Option<Owner>> = items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let seat = if one_form && i > 0 {
                    Seat::Further { company_upload }
                } else {
                    Seat::Own
                };
                owner(item, &format!("owners[{i}]"), package, seat, today, e)
            })
            .collect();
        // Two owners cannot send the same file part.
        let mut seen: Vec<&str> = Vec::new();
        for (i, ow) in parsed.iter().enumerate() {
            if let Some(f) = ow.as_ref().and_then(|o| o.documents.gewa_1.as_ref()) {
                if seen.contains(&f.file.as_str()) {
                    e.push(
                        format!("owners[{i}].documents.gewa_1.file"),
                        "duplicate",
                        "names a file part another owner already uses",
                    );
                }
                seen.push(&f.file);
            }
        }
        parsed.into_iter().collect::<Option<Vec<Owner>>>()
    });

    let build = || -> Option<TradeRegistration> {
        Some(TradeRegistration {
            package: package?,
            environment: environment?,
            client_reference: client_reference.clone(),
            client_preferred_language: language?,
            reason: reason?,
            operational_activity_start_date: start?,
            establishment_type: establishment_type?,
            acquisition_type: acquisition_type?,
            name: name.clone()?,
            legal_form: legal_form?,
            registration_number: registration_number.clone(),
            registration_court: registration_court.clone(),
            business_type: business_type.clone()?,
            purpose: purpose.clone()?,
            registered_office: registered_office.clone()?,
            business_address: business_address.clone(),
            phone: phone.clone()?,
            email: email.clone()?,
            industrial_license: industrial_license.clone(),
            has_public_sector_participation: public_sector?,
            employees,
            authorized_representative: authorized_representative.clone(),
            main_establishment: main_establishment.clone(),
            previous_business: previous_business.clone(),
            previous_establishment: previous_establishment.clone(),
            craft_card: craft_card.clone(),
            owners: owners.clone()?,
        })
    };
    let registration = build();
    let registration = errs.into_result(registration)?;
    Ok(TradeRequest {
        company_id,
        registration,
    })
}

/// Whether two texts are the same but for case and runs of white space.
fn same_text(a: &str, b: &str) -> bool {
    let fold = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    fold(a) == fold(b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rule_cases::example;
    use serde_json::json;

    fn today() -> Date {
        time::macros::date!(2026 - 11 - 22)
    }

    #[test]
    fn examples_are_valid_and_match_the_model() {
        for name in ["self", "assisted", "two-directors"] {
            let v = example(name);
            let parsed = parse(&v, today()).unwrap_or_else(|e| panic!("{name}: {e}"));
            let direct: TradeRegistration = serde_json::from_value(v).unwrap();
            assert_eq!(parsed.registration, direct, "{name}");
        }
    }

    #[test]
    fn every_error_is_reported() {
        let mut v = example("self");
        v["name"] = Value::from("");
        v["owners"][0]["dob"] = Value::from("2030-01-01");
        v["owners"][0]["email"] = Value::from("nope");
        v["surprise"] = Value::from(1);
        let errs = parse(&v, today()).unwrap_err();
        let fields: Vec<(&str, &str)> = errs
            .iter()
            .map(|e| (e.field.as_str(), e.code.as_str()))
            .collect();
        for want in [
            ("surprise", "unknown_field"),
            ("name", "empty"),
            ("owners[0].dob", "not_in_past"),
            ("owners[0].email", "invalid_email"),
        ] {
            assert!(fields.contains(&want), "{want:?} not in {fields:?}");
        }
        assert_eq!(fields.len(), 4, "{fields:?}");
    }

    #[test]
    fn text_is_normalised() {
        let mut v = example("self");
        v["owners"][0]["first_name"] = Value::from("Rene\u{301}");
        let r = parse(&v, today()).unwrap();
        assert_eq!(r.registration.owners[0].first_name, "René");
    }

    /// A legal person's further representatives sign the company's one form, or none signs
    /// when `owners[0]` uploads it; a partnership's partners each file their own.
    #[test]
    fn a_legal_persons_upload_is_the_companys_once() {
        let mut v = example("two-directors");
        v["owners"][0]["signatures"] = json!({});
        v["owners"][0]["documents"] = json!({"gewa_1": {"file": "gewa1_company"}});
        v["owners"][1]["signatures"] = json!({});
        let r = parse(&v, today()).expect("one upload for the company, no signature");
        assert!(r.registration.owners[1].signatures.gewa_1.is_none());
        // A GbR: each managing partner uploads or signs his own.
        let mut gbr = v.clone();
        gbr["legal_form"] = json!("gbr");
        gbr["name"] = json!("Hoffmann & Łukasiewicz GbR");
        let errs = parse(&gbr, today()).unwrap_err();
        assert_eq!(
            crate::rule_cases::field_codes(&errs),
            [(
                "owners[1].signatures.gewa_1".to_string(),
                "required".to_string()
            )]
        );
    }

    /// An EU, EEA or Swiss citizen needs no residence title, whichever of his nationalities
    /// gives him free movement; every other foreigner may state one.
    #[test]
    fn fields_30_and_31_only_for_who_needs_a_residence_title() {
        for (nationality, others, allowed) in [
            ("TR", json!([]), true),
            ("UA", json!([]), true),
            ("PL", json!([]), false),
            ("NO", json!([]), false),
            ("CH", json!([]), false),
            ("GR", json!([]), false),
            ("TR", json!(["AT"]), false),
            ("DE", json!([]), false),
        ] {
            let mut v = example("self");
            v["owners"][0]["nationality"] = json!(nationality);
            v["owners"][0]["other_nationalities"] = others.clone();
            let fields: Vec<(String, String)> = match parse(&v, today()) {
                Ok(_) => Vec::new(),
                Err(errs) => crate::rule_cases::field_codes(&errs),
            };
            let refused = [
                ("owners[0].residence_permit", "not_allowed"),
                ("owners[0].has_employment_restrictions", "not_allowed"),
            ]
            .map(|(f, c)| (f.to_string(), c.to_string()));
            if allowed {
                assert!(fields.is_empty(), "{nationality} {others}: {fields:?}");
            } else {
                assert_eq!(fields, refused, "{nationality} {others}");
            }
        }
        let mut v = example("self");
        v["owners"][0]["nationality"] = json!("PL");
        let errs = parse(&v, today()).unwrap_err();
        let message = &errs.iter().next().unwrap().message;
        assert!(message.contains("Polen (PL)"), "{message}");
        assert!(message.contains("EU, the EEA and Switzerland"), "{message}");
    }

    #[test]
    fn a_relocation_names_its_former_establishment() {
        let mut v = example("self");
        v["reason"] = json!("reopening-after-relocation");
        v["previous_establishment"] =
            json!({"street": "Leopoldstraße 10", "zip": "80802", "city": "München"});
        let r = parse(&v, today()).unwrap();
        let p = r.registration.previous_establishment.unwrap();
        assert_eq!((p.zip.as_str(), p.country), ("80802", CountryCode::DE));
        // From abroad: the country's own postal code format.
        v["previous_establishment"] =
            json!({"street": "Graben 1", "zip": "1010", "city": "Wien", "country": "AT"});
        assert!(parse(&v, today()).is_ok());
        v["previous_establishment"]["country"] = json!("DE");
        let errs = parse(&v, today()).unwrap_err();
        assert_eq!(
            crate::rule_cases::field_codes(&errs),
            [(
                "previous_establishment.zip".to_string(),
                "invalid_zip".to_string()
            )]
        );
    }

    #[test]
    fn each_rule_names_its_field_and_code() {
        for case in crate::rule_cases::trade_cases() {
            let v = case.request();
            let errs = parse(&v, today()).expect_err(&format!("{} should be refused", case.field));
            case.assert_named_in(&errs);
        }
    }
}
