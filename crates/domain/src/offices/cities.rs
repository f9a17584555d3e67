//! The tax office of a company by its kind: the register's office ([`tax_office_for`]), then
//! the rules of the states and cities that move companies of a kind elsewhere
//! ([`super::rules`]; docs/offices.md, "Rules by kind").

use super::district::{self, Unlocated};
use super::rules::{self, Basis, CityAreas};
use super::tax::{
    self, CityRule, ConfirmationReason, LegalFamily, OfficeAddress, Suggestion, SuggestionBasis,
    TaxOfficeLookup, TaxOfficeQuery, current, push, tax_office_for,
};
use super::{Municipality, OfficePurpose};

/// The tax office of a company at `query.address` (the seat, or the place of management where
/// the caller knows it differs): [`tax_office_for`], then the rules by kind:
///
/// - **Berlin**, GmbH/UG: the Bezirk of the address decides among the Finanzämter für
///   Körperschaften I-IV, determined unless the address is not placed or the company belongs
///   to a group; GbR/eGbR: the Ortsteil's regional office, suggested;
/// - **München and the Landkreis München** (the register's Finanzamt München 9147): 9143 for
///   every company; **Stuttgart**, GmbH/UG: 2899; **Frankfurt am Main**, GmbH/UG: 2614;
///   **Bremen**: 2460; each determined, with its [`Basis`];
/// - **Hamburg**: the regional offices suggested (the Anordnung's known rows first);
/// - **Leipzig, Dresden, Chemnitz, Düsseldorf, Duisburg**: by district, which no data places an
///   address in: suggested, the area the city field names first;
/// - **Köln, Essen, Dortmund, Hannover, Nürnberg**, and Stuttgart's and Frankfurt's
///   partnerships: no public rule found, the city's offices suggested;
/// - a **corporation** in a state that concentrates corporations elsewhere
///   ([`rules::state_concentration`]: Schleswig-Holstein, Hessen, Baden-Württemberg, Bayern):
///   the register's office only suggested.
///
/// Nothing is determined from an address whose city names another municipality.
pub fn tax_office_at(query: &TaxOfficeQuery) -> TaxOfficeLookup {
    let a = &query.address;
    let family = query.family;
    if let Some(berlin) = super::berlin_by_register(a.zip, a.city, a.street.unwrap_or("")) {
        return tax::berlin(query, berlin, family);
    }
    let base = tax_office_for(a.zip, a.city);
    let municipality = match &base {
        // Several municipalities sharing one office: the state's rule still applies.
        TaxOfficeLookup::Determined { municipalities, .. } if municipalities.len() > 1 => {
            let first = municipalities[0];
            if municipalities
                .iter()
                .all(|m| m.register_tax_office_number() == Some("9147"))
            {
                return determined(
                    &base,
                    first,
                    "9143",
                    CityRule::MuenchenCompanies,
                    rules::MUENCHEN,
                );
            }
            let concentrating = municipalities
                .iter()
                .find(|m| {
                    family == LegalFamily::Corporation
                        && rules::state_concentration(m.state_key()).is_some()
                })
                .copied()
                .unwrap_or(first);
            return by_state(base, concentrating, family);
        }
        TaxOfficeLookup::Determined { municipalities, .. } => municipalities[0],
        TaxOfficeLookup::NeedsConfirmation {
            municipalities,
            reasons,
            ..
        } if municipalities.len() == 1
            && !reasons
                .iter()
                .any(|r| matches!(r, ConfirmationReason::CityNotOfPostalCode { .. })) =>
        {
            municipalities[0]
        }
        _ => return base,
    };
    let corporation = family == LegalFamily::Corporation;
    match municipality.key {
        district::BERLIN => return tax::berlin(query, municipality, family),
        district::HAMBURG => return hamburg(base),
        _ => {}
    }
    // München and the Landkreis München: the register's Finanzamt München, whose corporations
    // and partnerships its department 9143 takes; Bremen's 2460 takes every company. Neither
    // rule speaks of natural persons: their office is suggested.
    if family == LegalFamily::NaturalPerson {
        match (municipality.register_tax_office_number(), municipality.key) {
            (Some("9147"), _) => return person_suggested(base, municipality, "München", None),
            (_, "04011000") => {
                return person_suggested(base, municipality, "Bremen", Some("2460"));
            }
            _ => {}
        }
    }
    if municipality.register_tax_office_number() == Some("9147") {
        return determined(
            &base,
            municipality,
            "9143",
            CityRule::MuenchenCompanies,
            rules::MUENCHEN,
        );
    }
    let fixed = match municipality.key {
        "08111000" if corporation => {
            Some(("2899", CityRule::StuttgartCorporations, rules::STUTTGART))
        }
        "06412000" if corporation => {
            Some(("2614", CityRule::FrankfurtCorporations, rules::FRANKFURT))
        }
        "04011000" => Some(("2460", CityRule::Bremen, rules::BREMEN)),
        _ => None,
    };
    if let Some((number, rule, basis)) = fixed {
        return determined(&base, municipality, number, rule, basis);
    }
    if let Some(areas) = rules::city_areas(municipality.key) {
        return by_area(base, municipality, areas, a.city);
    }
    if let Some(city) = rules::no_public_rule(municipality.key) {
        return amend_confirmation(base, |reasons, suggestions| {
            reasons.insert(0, ConfirmationReason::NoPublicRule { city });
            // A partnership is no corporation office's (Stuttgart-Körperschaften).
            if !corporation {
                reasons.retain(|r| !matches!(r, ConfirmationReason::CorporationOffices { .. }));
                suggestions.retain(|s| s.office.purpose != OfficePurpose::Corporations);
            }
        });
    }
    by_state(base, municipality, family)
}

/// `number` (or its successor) determined by `rule`.
fn determined(
    base: &TaxOfficeLookup,
    municipality: Municipality,
    number: &'static str,
    rule: CityRule,
    basis: Basis,
) -> TaxOfficeLookup {
    let now = current(number);
    let Some(office) = super::tax_office(now) else {
        return base.clone();
    };
    let merged_from = match base {
        _ if now != number => Some(number),
        TaxOfficeLookup::Determined { merged_from, .. } => *merged_from,
        _ => None,
    };
    let municipalities = match base {
        TaxOfficeLookup::Determined { municipalities, .. } => municipalities.clone(),
        _ => vec![municipality],
    };
    TaxOfficeLookup::Determined {
        office,
        municipalities,
        merged_from,
        rule: Some(rule),
        locality: None,
        basis,
    }
}

/// The register's office by the state's rule for the kind: a partnership's district office; a
/// corporation's only where the state does not move corporations elsewhere.
fn by_state(
    base: TaxOfficeLookup,
    municipality: Municipality,
    family: LegalFamily,
) -> TaxOfficeLookup {
    let concentration = match family {
        LegalFamily::Corporation => rules::state_concentration(municipality.state_key()),
        LegalFamily::Partnership | LegalFamily::NaturalPerson => None,
    };
    match base {
        TaxOfficeLookup::Determined {
            office,
            municipalities,
            merged_from,
            rule,
            locality,
            basis,
        } => match concentration {
            Some(state) => {
                let mut suggestions = Vec::new();
                push(&mut suggestions, office, SuggestionBasis::Register);
                TaxOfficeLookup::NeedsConfirmation {
                    reasons: vec![ConfirmationReason::StateConcentratesCorporations {
                        basis: state,
                    }],
                    municipalities,
                    register_number: municipality.register_tax_office_number(),
                    suggestions,
                    locality,
                }
            }
            None => TaxOfficeLookup::Determined {
                office,
                municipalities,
                merged_from,
                rule,
                locality,
                basis: match (merged_from, family, municipality.state_key()) {
                    (Some(_), _, _) => basis,
                    (None, _, "14") => rules::SACHSEN,
                    (None, LegalFamily::NaturalPerson, _) => rules::REGISTER_NATURAL_PERSON,
                    (None, LegalFamily::Partnership, _) => rules::REGISTER_PARTNERSHIP,
                    (None, LegalFamily::Corporation, _) => rules::REGISTER_CORPORATION,
                },
            },
        },
        other => match concentration {
            Some(state) => amend_confirmation(other, |reasons, _| {
                reasons.push(ConfirmationReason::StateConcentratesCorporations { basis: state });
            }),
            None => other,
        },
    }
}

/// Hamburg: the regional offices, those the Anordnung's readable rows name first, the office
/// for large companies dropped (it takes no new companies).
fn hamburg(base: TaxOfficeLookup) -> TaxOfficeLookup {
    let TaxOfficeLookup::NeedsConfirmation {
        municipalities,
        register_number,
        suggestions: found,
        ..
    } = base
    else {
        return base;
    };
    let mut suggestions = Vec::new();
    for number in rules::HAMBURG_ORDER {
        if let Some(office) = super::tax_office(current(number)) {
            push(&mut suggestions, office, SuggestionBasis::CityRule);
        }
    }
    for s in found {
        if s.office.number != rules::HAMBURG_LARGE_COMPANIES
            && s.office.purpose == OfficePurpose::General
        {
            push(&mut suggestions, s.office, s.basis);
        }
    }
    TaxOfficeLookup::NeedsConfirmation {
        reasons: vec![
            ConfirmationReason::RuleNotVerified {
                rule: CityRule::HamburgOrtsteil,
            },
            ConfirmationReason::DistrictNotDetermined {
                cause: Unlocated::NoDistrictData,
            },
        ],
        municipalities,
        register_number,
        suggestions,
        locality: None,
    }
}

/// A city split by district: the office of the area the city field names first, then the
/// offices by likelihood, then the rest of the register's suggestions.
fn by_area(
    base: TaxOfficeLookup,
    municipality: Municipality,
    areas: &'static CityAreas,
    city: &str,
) -> TaxOfficeLookup {
    let register = municipality.register_tax_office_number();
    let rule = if areas.basis.rule == rules::NRW_STADTTEILE.rule {
        CityRule::NrwStadtteil
    } else {
        CityRule::SachsenStadtbezirk
    };
    let named = areas.named(municipality.name, city);
    let mut suggestions: Vec<Suggestion> = Vec::new();
    if let Some((office, _)) = named
        && let Some(office) = super::tax_office(current(office))
    {
        push(&mut suggestions, office, SuggestionBasis::CityRule);
    }
    for number in areas.ranked(register) {
        if let Some(office) = super::tax_office(current(number)) {
            let basis = if Some(number) == register {
                SuggestionBasis::Register
            } else {
                SuggestionBasis::CityRule
            };
            push(&mut suggestions, office, basis);
        }
    }
    let (municipalities, found) = match base {
        TaxOfficeLookup::Determined {
            office,
            municipalities,
            ..
        } => (
            municipalities,
            vec![Suggestion {
                office,
                basis: SuggestionBasis::Register,
            }],
        ),
        TaxOfficeLookup::NeedsConfirmation {
            municipalities,
            suggestions,
            ..
        } => (municipalities, suggestions),
        TaxOfficeLookup::NotFound => return TaxOfficeLookup::NotFound,
    };
    for s in found {
        push(&mut suggestions, s.office, s.basis);
    }
    TaxOfficeLookup::NeedsConfirmation {
        reasons: vec![ConfirmationReason::AreaNotDetermined {
            rule,
            named_area: named.map(|(_, area)| area),
        }],
        municipalities,
        register_number: register,
        suggestions,
        locality: None,
    }
}

/// `base` with its reasons and suggestions changed by `amend` when it needs confirmation;
/// a determined office stays as it is.
/// A natural person where the city's rule is for companies only: the register's office (and
/// `also`, the office of the companies' rule) suggested, as no public rule for persons was read.
fn person_suggested(
    base: TaxOfficeLookup,
    municipality: Municipality,
    city: &'static str,
    also: Option<&'static str>,
) -> TaxOfficeLookup {
    let (municipalities, locality, mut reasons, mut suggestions) = match base {
        TaxOfficeLookup::Determined {
            office,
            municipalities,
            locality,
            ..
        } => {
            let mut suggestions = Vec::new();
            push(&mut suggestions, office, SuggestionBasis::Register);
            (municipalities, locality, Vec::new(), suggestions)
        }
        TaxOfficeLookup::NeedsConfirmation {
            municipalities,
            locality,
            reasons,
            suggestions,
            ..
        } => (municipalities, locality, reasons, suggestions),
        other => return other,
    };
    reasons.insert(0, ConfirmationReason::NoPublicRule { city });
    // A person is no corporation office's (München-Körperschaften).
    reasons.retain(|r| !matches!(r, ConfirmationReason::CorporationOffices { .. }));
    suggestions.retain(|s| s.office.purpose != OfficePurpose::Corporations);
    if let Some(office) = also.and_then(|n| super::tax_office(current(n))) {
        push(&mut suggestions, office, SuggestionBasis::CityRule);
    }
    TaxOfficeLookup::NeedsConfirmation {
        reasons,
        municipalities,
        register_number: municipality.register_tax_office_number(),
        suggestions,
        locality,
    }
}

/// The tax office of a natural person's business (a sole proprietor): the office of the
/// residence (§ 19 (1) AO), decided as [`tax_office_at`] decides for a natural person. Where the
/// business is run in another office's district, that office takes VAT (§ 21 AO), the trade
/// tax base (§ 22 AO) and the separate determination of the profit (§ 18 (1) nos. 2 and 3,
/// § 180 (1) no. 2 b AO), and which of the two receives the questionnaire is for a person to
/// confirm: both are suggested, the residence's first. Without a residence in Germany the
/// business decides (§ 19 (3) AO). `None` when neither address is in Germany.
pub fn natural_person_office(
    residence: Option<OfficeAddress>,
    business: Option<OfficeAddress>,
) -> Option<TaxOfficeLookup> {
    let at = |address: OfficeAddress| {
        tax_office_at(&TaxOfficeQuery {
            address,
            family: LegalFamily::NaturalPerson,
            group: false,
        })
    };
    let Some(residence) = residence else {
        return business.map(at);
    };
    let home = at(residence);
    let Some(business) = business else {
        return Some(home);
    };
    let work = at(business);
    let Some(home_office) = home.office() else {
        return Some(home);
    };
    if work
        .office()
        .is_some_and(|w| w.number == home_office.number)
    {
        return Some(home);
    }
    let TaxOfficeLookup::Determined {
        municipalities,
        locality,
        ..
    } = home
    else {
        return Some(home);
    };
    let mut suggestions = Vec::new();
    push(&mut suggestions, home_office, SuggestionBasis::Register);
    let business_office = work.office().map(|o| o.number);
    match &work {
        TaxOfficeLookup::Determined { office, .. } => {
            push(&mut suggestions, office, SuggestionBasis::BusinessOffice);
        }
        TaxOfficeLookup::NeedsConfirmation {
            suggestions: theirs,
            ..
        } => {
            for s in theirs {
                push(&mut suggestions, s.office, SuggestionBasis::BusinessOffice);
            }
        }
        TaxOfficeLookup::NotFound => {}
    }
    Some(TaxOfficeLookup::NeedsConfirmation {
        reasons: vec![ConfirmationReason::BusinessInAnotherDistrict {
            residence_office: home_office.number,
            business_office,
        }],
        register_number: municipalities
            .first()
            .and_then(|m| m.register_tax_office_number()),
        municipalities,
        suggestions,
        locality,
    })
}

fn amend_confirmation(
    mut base: TaxOfficeLookup,
    amend: impl FnOnce(&mut Vec<ConfirmationReason>, &mut Vec<Suggestion>),
) -> TaxOfficeLookup {
    if let TaxOfficeLookup::NeedsConfirmation {
        reasons,
        suggestions,
        ..
    } = &mut base
    {
        amend(reasons, suggestions);
    }
    base
}
