//! The GewA 1's fields as the trade office reads them: each test renders a form and reads the
//! text at the field's position back (issue 34).

mod common;

use common::*;
use domain::country::CountryCode;
use domain::trade::{
    CraftCard, EstablishmentType, MainEstablishment, PersonName, PostalAddress, PreviousBusiness,
    Reason,
};
use forms::render_gewa1;

fn code(c: &str) -> CountryCode {
    CountryCode::parse(c).unwrap()
}

fn ticked(pdf: &[u8], name: &str) -> bool {
    gewa1_box_text(pdf, name) == "X"
}

#[test]
fn field_10_names_the_nationality_not_the_country() {
    let mut reg = example("trade-registration-self");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "10"), "türkisch");
    assert!(!ticked(&pdf, "10_german"));

    // Several: "deutsch" ticked, the others after "andere", in the order given.
    reg.owners[0].nationality = code("PL");
    reg.owners[0].other_nationalities = vec![code("DE"), code("UA")];
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(ticked(&pdf, "10_german"));
    assert_eq!(gewa1_box_text(&pdf, "10"), "polnisch, ukrainisch");

    // German only: nothing after "andere".
    reg.owners[0].nationality = code("DE");
    reg.owners[0].other_nationalities.clear();
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(ticked(&pdf, "10_german"));
    assert_eq!(gewa1_box_text(&pdf, "10"), "");
}

/// Every code the API accepts as a nationality prints its designation from the official list,
/// whole and legible, in field 10.
#[test]
fn field_10_for_every_accepted_code() {
    let mut reg = example("trade-registration-self");
    let mut checked = 0;
    for c in CountryCode::all() {
        let Some(designation) = domain::nationality::designation(c) else {
            continue; // refused by the validator (Antarctica)
        };
        reg.owners[0].nationality = c;
        let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
        if c.is_germany() {
            assert!(ticked(&pdf, "10_german"));
        } else {
            assert_eq!(
                no_space(&gewa1_box_text(&pdf, "10")),
                no_space(designation),
                "{c}"
            );
        }
        checked += 1;
    }
    assert_eq!(checked, 249, "every code but Antarctica");
}

#[test]
fn field_2_names_the_register_court_and_number() {
    let mut reg = example("trade-registration-self");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(
        gewa1_box_text(&pdf, "2"),
        "Amtsgericht Charlottenburg, HRB 245789 B"
    );
    // A number without a court (cases from before the field) stays as it was.
    reg.registration_court = None;
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "2"), "HRB 245789 B");
}

#[test]
fn field_14_and_16_for_a_branch() {
    let mut reg = example("trade-registration-assisted");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "14"), "Weber, Jonas");
    // Without main_establishment: business_address, its contact rows empty.
    assert_eq!(
        gewa1_box_text(&pdf, "16"),
        "Rue de la Paix 8 75002 Paris Frankreich"
    );
    assert_eq!(gewa1_box_text(&pdf, "16_phone"), "");

    reg.establishment_type = EstablishmentType::DependentBranch;
    reg.main_establishment = Some(MainEstablishment {
        address: PostalAddress {
            street: "Kaiserstraße 12".into(),
            street_second_line: None,
            zip: "60311".into(),
            city: "Frankfurt am Main".into(),
            state: None,
            country: code("DE"),
        },
        phone: Some("+49 69 123456".into()),
        email: Some("zentrale@example.de".into()),
    });
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(
        gewa1_box_text(&pdf, "16"),
        "Kaiserstraße 12 60311 Frankfurt am Main"
    );
    assert_eq!(gewa1_box_text(&pdf, "16_phone"), "+49 69 123456");
    assert_eq!(gewa1_box_text(&pdf, "16_email"), "zentrale@example.de");
    assert_eq!(gewa1_box_text(&pdf, "14"), "Weber, Jonas");

    // A main office: field 14 and 16 stay empty.
    let pdf = render_gewa1(&example("trade-registration-self"), 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "14"), "");
    assert_eq!(gewa1_box_text(&pdf, "16"), "");
}

#[test]
fn fields_26_and_27_for_a_takeover() {
    let mut reg = example("trade-registration-self");
    reg.reason = Reason::Takeover;
    reg.previous_business = Some(PreviousBusiness {
        name: "Gabler Software e. K.".into(),
        accident_insurer: Some("Verwaltungs-Berufsgenossenschaft (VBG)".into()),
        accident_insurance_number: Some("123 456 789".into()),
    });
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "26"), "Gabler Software e. K.");
    assert_eq!(
        gewa1_box_text(&pdf, "27_insurer"),
        "Verwaltungs-Berufsgenossenschaft (VBG)"
    );
    assert_eq!(gewa1_box_text(&pdf, "27_number"), "123 456 789");
    assert!(!ticked(&pdf, "27_insurer_unknown"));
    assert!(!ticked(&pdf, "27_number_unknown"));

    // Unknown insurer and number: "nicht bekannt" ticked for each.
    reg.previous_business = Some(PreviousBusiness {
        name: "Gabler Software e. K.".into(),
        accident_insurer: None,
        accident_insurance_number: None,
    });
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(ticked(&pdf, "27_insurer_unknown"));
    assert!(ticked(&pdf, "27_number_unknown"));
    assert_eq!(gewa1_box_text(&pdf, "27_insurer"), "");
}

#[test]
fn field_29_the_craft_card() {
    let reg = example("trade-registration-assisted");
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(ticked(&pdf, "29_yes"));
    assert!(!ticked(&pdf, "29_no"));
    assert_eq!(
        gewa1_box_text(&pdf, "29"),
        "30.09.2024, Handwerkskammer Berlin"
    );
    let mut without = reg.clone();
    without.craft_card = Some(CraftCard {
        held: false,
        issue_date: None,
        chamber: None,
    });
    let pdf = render_gewa1(&without, 0, &gewa1_ctx()).unwrap();
    assert!(ticked(&pdf, "29_no"));
    assert_eq!(gewa1_box_text(&pdf, "29"), "");
    // Not a craft business of Annex A (or not said): field 29 stays empty.
    let pdf = render_gewa1(&example("trade-registration-self"), 0, &gewa1_ctx()).unwrap();
    assert!(!ticked(&pdf, "29_no") && !ticked(&pdf, "29_yes"));
}

#[test]
fn field_31_states_the_restriction() {
    let mut reg = example("trade-registration-self");
    reg.owners[0].has_employment_restrictions = Some(true);
    reg.owners[0].employment_restriction_details =
        Some("Selbständige Tätigkeit nur als Softwareentwicklerin gestattet".into());
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(ticked(&pdf, "31_yes"));
    assert_eq!(
        gewa1_box_text(&pdf, "31"),
        "Selbständige Tätigkeit nur als Softwareentwicklerin gestattet"
    );
}

/// Field 14 of an AG (a main office).
#[test]
fn field_14_for_an_ag() {
    let mut reg = example("trade-registration-self");
    reg.legal_form = domain::trade::LegalForm::Ag;
    reg.name = "Mustermann Software AG".into();
    reg.authorized_representative = Some(PersonName {
        first_name: "Jonas".into(),
        last_name: "Weber".into(),
    });
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "14"), "Weber, Jonas");
}

/// A birth name of 72 characters of wide DIN 91379 letters used to shrink field 7 to 5.75 pt.
/// It now goes to the supplementary sheet in full, the box points there, and no text of the
/// form is smaller than 6 pt.
#[test]
fn field_7_holds_the_6_pt_floor() {
    let mut reg = example("trade-registration-self");
    let long: String = "ǄŴẞÆŒ ".repeat(12).chars().take(72).collect::<String>();
    let long = long.trim().to_owned();
    reg.owners[0].birth_name = Some(long.clone());
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(
        smallest_text_size(&pdf) >= 6.0 - 1e-3,
        "{}",
        smallest_text_size(&pdf)
    );
    assert_eq!(gewa1_box_text(&pdf, "7"), "siehe Beiblatt");
    assert_eq!(page_count(&pdf), 3);
    let sheet = squash(&page_text(&pdf, 3));
    assert!(
        sheet.contains("Beiblatt zur Gewerbe-Anmeldung (GewA 1)"),
        "{sheet}"
    );
    // The company's form names its representative.
    assert!(
        sheet.contains(
            "zum Vordruck für Mustermann Software GmbH (gesetzlicher Vertreter: Erika Mustermann)"
        ),
        "{sheet}"
    );
    assert!(sheet.contains("Feld 7 – Geburtsname"), "{sheet}");
    assert!(no_space(&sheet).contains(&no_space(&long)), "{sheet}");
    // A name that fits keeps its box and the form its two pages.
    reg.owners[0].birth_name = Some("Gabler".into());
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert_eq!(gewa1_box_text(&pdf, "7"), "Gabler");
    assert_eq!(page_count(&pdf), 2);
}

/// The longest designations of the list, four at once: readable in full (in the box or on the
/// supplementary sheet), nothing under 6 pt.
#[test]
fn field_10_with_the_longest_designations() {
    let mut reg = example("trade-registration-self");
    reg.owners[0].nationality = code("MK");
    reg.owners[0].other_nationalities = vec![code("KP"), code("CD"), code("AE")];
    let pdf = render_gewa1(&reg, 0, &gewa1_ctx()).unwrap();
    assert!(smallest_text_size(&pdf) >= 6.0 - 1e-3);
    let all = no_space(&raw_text(&pdf));
    for c in ["MK", "KP", "CD", "AE"] {
        let d = domain::nationality::designation(code(c)).unwrap();
        assert!(all.contains(&no_space(d)), "{c}: {d:?} missing");
    }
}
