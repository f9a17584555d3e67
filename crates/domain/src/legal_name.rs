//! The legal-form designation a business name must carry (api.md: "business name with
//! legal-form suffix where one applies"; for tax registrations "with legal-form suffix").
//!
//! The law names the designation, not its place in the name: § 4 GmbHG ("Gesellschaft mit
//! beschränkter Haftung" or a generally understood abbreviation), § 5a GmbHG ("UG
//! (haftungsbeschränkt)" or "Unternehmergesellschaft (haftungsbeschränkt)", never a bare "UG"),
//! § 19 HGB (e.K., OHG, KG, and for a partnership whose only liable partner is a company a
//! designation that says so: "GmbH & Co. KG"), § 4 AktG, § 279 AktG, § 707a (2) BGB (eGbR). So a
//! name passes when it contains, as words of their own, one designation of every group its form
//! lists (`GmbH & Co. KG`: a GmbH designation and a KG designation). Letters compare without
//! case; a space in a designation stands for any run of white space, or none (`e.K.` and
//! `e. K.`, `UG(haftungsbeschränkt)`).
//!
//! A sole trader (`einzelunternehmen`), a GbR and `other` carry none that the law requires;
//! their names are not checked.

use crate::Violations;
use crate::gbr::PartnershipLegalForm;
use crate::tax::KapLegalForm;
use crate::trade::LegalForm;

const GMBH: &[&str] = &[
    "GmbH",
    "gGmbH",
    "G.m.b.H.",
    "Gesellschaft mbH",
    "Gesellschaft mit beschränkter Haftung",
    "gemeinnützige GmbH",
    "gemeinnützige Gesellschaft mit beschränkter Haftung",
];
const UG: &[&str] = &[
    "UG (haftungsbeschränkt)",
    "UG (haftungsbeschraenkt)",
    "Unternehmergesellschaft (haftungsbeschränkt)",
    "Unternehmergesellschaft (haftungsbeschraenkt)",
];
const GGMBH: &[&str] = &[
    "gGmbH",
    "gemeinnützige GmbH",
    "gemeinnützige Gesellschaft mbH",
    "gemeinnützige Gesellschaft mit beschränkter Haftung",
];
const KG: &[&str] = &["KG", "Kommanditgesellschaft"];
const OHG: &[&str] = &["OHG", "offene Handelsgesellschaft"];
const EK: &[&str] = &[
    "e. K.",
    "e. Kfm.",
    "e. Kfr.",
    "eingetragener Kaufmann",
    "eingetragene Kauffrau",
];
const AG: &[&str] = &["AG", "Aktiengesellschaft"];
const KGAA: &[&str] = &["KGaA", "Kommanditgesellschaft auf Aktien"];
const EGBR: &[&str] = &["eGbR", "eingetragene Gesellschaft bürgerlichen Rechts"];

/// The designations a name of `form` must carry: one of every group. Empty when the law
/// requires none.
pub fn designations(form: LegalForm) -> &'static [&'static [&'static str]] {
    match form {
        LegalForm::Einzelunternehmen | LegalForm::Gbr | LegalForm::Other => &[],
        LegalForm::Gmbh => &[GMBH],
        LegalForm::Ug => &[UG],
        LegalForm::Ggmbh => &[GGMBH],
        LegalForm::GmbhCoKg => &[GMBH, KG],
        LegalForm::UgCoKg => &[UG, KG],
        LegalForm::Kg => &[KG],
        LegalForm::Ohg => &[OHG],
        LegalForm::EinzelkaufmannEk => &[EK],
        LegalForm::Ag => &[AG],
        LegalForm::Kgaa => &[KGAA],
    }
}

/// The corporations of the tax registration, as the trade forms.
pub fn kap_designations(form: KapLegalForm) -> &'static [&'static [&'static str]] {
    designations(match form {
        KapLegalForm::Ug => LegalForm::Ug,
        KapLegalForm::Gmbh => LegalForm::Gmbh,
    })
}

/// The partnerships of the tax registration: an eGbR says so; a GbR needs no designation.
pub fn partnership_designations(form: PartnershipLegalForm) -> &'static [&'static [&'static str]] {
    match form {
        PartnershipLegalForm::Gbr => &[],
        PartnershipLegalForm::Egbr => &[EGBR],
    }
}

/// Names `name` (the top-level field) with `missing_legal_form` when it lacks a designation.
pub fn check(name: &str, groups: &[&[&str]], errs: &mut Violations) {
    if let Some(message) = missing(name, groups) {
        errs.push("name", "missing_legal_form", message);
    }
}

/// `None` when `name` carries a designation of every group; else the message naming the
/// first group it lacks, e.g. `must carry the legal form: "GmbH" or "Gesellschaft mbH" ...`.
pub fn missing(name: &str, groups: &[&[&str]]) -> Option<String> {
    let chars: Vec<char> = name.chars().collect();
    let lacking = groups
        .iter()
        .find(|group| !group.iter().any(|d| contains_word(&chars, d)))?;
    let names: Vec<String> = lacking.iter().map(|d| format!("\"{d}\"")).collect();
    Some(format!(
        "must carry its legal form, one of {}",
        names.join(", ")
    ))
}

/// Whether `designation` occurs in `name` with no letter or digit right before or after it.
fn contains_word(name: &[char], designation: &str) -> bool {
    let pattern: Vec<char> = designation.chars().collect();
    (0..name.len()).any(|start| {
        let before_ok = start == 0 || !name[start - 1].is_alphanumeric();
        before_ok
            && match_at(name, start, &pattern).is_some_and(|end| {
                // A designation ending in a dot ends its word itself (`e.K.Muster` is unusual,
                // but `e.K.` is the word).
                end == name.len()
                    || !name[end].is_alphanumeric()
                    || pattern.last().is_some_and(|c| !c.is_alphanumeric())
            })
    })
}

/// The end of `pattern` matched at `start`, or `None`: letters without case, a space in the
/// pattern any run of white space (or none), and white space in the name after a `.` or before
/// a `(` skipped as well.
fn match_at(name: &[char], start: usize, pattern: &[char]) -> Option<usize> {
    let mut i = start;
    for (k, &p) in pattern.iter().enumerate() {
        if p == ' ' {
            while i < name.len() && name[i].is_whitespace() {
                i += 1;
            }
            continue;
        }
        // `G.m.b.H.` also as `G. m. b. H.`; `UG (…)` also as `UG(…)` (the space above).
        if k > 0 && pattern[k - 1] == '.' {
            while i < name.len() && name[i].is_whitespace() {
                i += 1;
            }
        }
        let c = *name.get(i)?;
        if !c.to_lowercase().eq(p.to_lowercase()) {
            return None;
        }
        i += 1;
    }
    Some(i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(name: &str, form: LegalForm) -> bool {
        missing(name, designations(form)).is_none()
    }

    #[test]
    fn names_that_carry_their_form() {
        use LegalForm::*;
        for (name, form) in [
            ("Mustermann Software GmbH", Gmbh),
            ("MUSTERMANN SOFTWARE GMBH", Gmbh),
            ("Mustermann Software G.m.b.H.", Gmbh),
            ("Mustermann Software G. m. b. H.", Gmbh),
            ("Mustermann Gesellschaft mit beschränkter Haftung", Gmbh),
            ("Mustermann Software Gesellschaft mbH", Gmbh),
            ("GmbH Mustermann", Gmbh),
            ("Kleinstart UG (haftungsbeschränkt)", Ug),
            ("Kleinstart UG(haftungsbeschränkt)", Ug),
            (
                "Kleinstart Unternehmergesellschaft (haftungsbeschränkt)",
                Ug,
            ),
            ("Kleinstart UG (haftungsbeschraenkt)", Ug),
            ("Hilfswerk gGmbH", Ggmbh),
            ("Hilfswerk gemeinnützige GmbH", Ggmbh),
            ("Mustermann Verwaltungs GmbH & Co. KG", GmbhCoKg),
            ("Mustermann GmbH & Co KG", GmbhCoKg),
            ("Mustermann UG (haftungsbeschränkt) & Co. KG", UgCoKg),
            ("Mustermann KG", Kg),
            ("Mustermann Kommanditgesellschaft", Kg),
            ("Mustermann & Söhne OHG", Ohg),
            ("Mustermann oHG", Ohg),
            ("Erika Mustermann e.K.", EinzelkaufmannEk),
            ("Erika Mustermann e. K.", EinzelkaufmannEk),
            ("Erika Mustermann e.Kfr.", EinzelkaufmannEk),
            ("Max Mustermann eingetragener Kaufmann", EinzelkaufmannEk),
            ("Mustermann AG", Ag),
            ("Mustermann Aktiengesellschaft", Ag),
            ("Mustermann GmbH & Co. KGaA", Kgaa),
            ("Erika Mustermann", Einzelunternehmen),
            ("Mustermann & Łukasiewicz Gastronomie", Gbr),
            ("Irgendwas", Other),
        ] {
            assert!(ok(name, form), "{name:?} as {form:?}");
        }
    }

    #[test]
    fn names_without_their_form() {
        use LegalForm::*;
        for (name, form) in [
            ("Mustermann Software", Gmbh),
            ("Mustermann Software UG (haftungsbeschränkt)", Gmbh),
            // The word must stand alone.
            ("Mustermann SoftwareGmbH", Gmbh),
            ("Mustermann GmbHX", Gmbh),
            // A bare "UG" is not the designation § 5a GmbHG requires.
            ("Kleinstart UG", Ug),
            ("Kleinstart GmbH", Ug),
            ("Hilfswerk GmbH", Ggmbh),
            ("Mustermann GmbH", GmbhCoKg),
            ("Mustermann KG", GmbhCoKg),
            ("Mustermann GmbH & Co. KG", UgCoKg),
            ("Mustermann KGaA", Kg),
            ("Mustermann Agentur", Ag),
            ("Mustermann KG", Kgaa),
            ("Erika Mustermann", EinzelkaufmannEk),
            ("Mustermann OHGmbH", Ohg),
        ] {
            assert!(!ok(name, form), "{name:?} as {form:?}");
        }
    }

    #[test]
    fn the_message_names_what_is_missing() {
        assert_eq!(
            missing("Mustermann GmbH", designations(LegalForm::GmbhCoKg)).as_deref(),
            Some("must carry its legal form, one of \"KG\", \"Kommanditgesellschaft\"")
        );
        assert!(
            missing(
                "Rheinblick Immobilien GbR",
                partnership_designations(PartnershipLegalForm::Egbr)
            )
            .is_some()
        );
        assert!(
            missing(
                "Rheinblick Immobilien eGbR",
                partnership_designations(PartnershipLegalForm::Egbr)
            )
            .is_none()
        );
        assert!(
            missing("Kleinstart", kap_designations(KapLegalForm::Ug))
                .unwrap()
                .contains("\"UG (haftungsbeschränkt)\"")
        );
    }
}
