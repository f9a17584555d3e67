//! The GewA 1 (Gewerbe-Anmeldung), filled in for one Anmeldung: one owner's, or a legal
//! person's with its further legal representatives on supplementary sheets. The layout is the
//! 2019 model's with the wording of the model of 11.12.2024 where it is known ([`FORM_VERSION`],
//! docs/forms.md "The model of 11.12.2024").

pub(crate) mod geometry;
pub(crate) mod layout;
pub(crate) mod model;
pub(crate) mod sheet;

use crate::canvas::Canvas;
use crate::direct::{Document, Info, Page};
use crate::font;
use crate::pdf;
use crate::text::{self, Fit, Rect, VAlign};
use crate::{Gewa1Context, RenderError, format_date, street_zip_city};
use domain::trade::{
    AcquisitionType, BusinessType, Environment, EstablishmentType, Gender, Gewa1Form, LegalForm,
    Owner, Reason, TradeRegistration,
};
use layout::rect;
use sheet::Entry;

/// The model the form follows, as the PDF's metadata (its subject) and docs/forms.md name it:
/// Anlage 1 of the GewAnzV as amended by Art. 10 of the Verordnung of 11.12.2024. Its field
/// numbers and the 2019 layout are unchanged; field 25's relocation box has the 2024 wording
/// (docs/forms.md lists which labels are confirmed against the 2024 model).
pub const FORM_VERSION: &str =
    "Anlage 1 GewAnzV, Fassung der Verordnung vom 11.12.2024 (BGBl. 2024 I Nr. 411)";

/// Box of a value field: left, bottom, right, top in gazette points (see [`layout`]).
type GBox = (f32, f32, f32, f32);

// Page 1 (measured from the model form: the white areas between the shading).
const HEAD_OFFICE: GBox = (18.0, 625.0, 183.0, 654.5);
const HEAD_AGS: GBox = (198.0, 625.0, 373.5, 654.5);
const F1: GBox = (18.0, 474.0, 464.5, 525.0);
const F2: GBox = (241.0, 525.5, 464.5, 536.5);
/// Field 3: the white area under its label, down to the "Angaben zur Person" heading.
const F3: GBox = (18.0, 437.0, 464.5, 456.0);
const F4: GBox = (18.0, 396.5, 225.5, 407.0);
const F5: GBox = (241.0, 396.5, 464.5, 407.0);
const F6_MALE: GBox = (241.5, 370.5, 255.0, 380.5);
const F6_FEMALE: GBox = (306.5, 370.5, 319.5, 380.5);
const F6_DIVERSE: GBox = (362.5, 370.5, 374.5, 380.5);
const F6_NONE: GBox = (436.5, 370.5, 448.5, 380.5);
const F7: GBox = (18.0, 344.5, 177.0, 355.0);
const F8: GBox = (195.0, 344.5, 263.0, 355.0);
const F9: GBox = (280.0, 344.5, 464.5, 355.0);
const F10_GERMAN: GBox = (162.0, 326.0, 175.5, 336.0);
const F10_OTHER: GBox = (226.5, 326.0, 464.5, 336.5);
const F11_ADDRESS: GBox = (18.0, 277.5, 225.5, 310.5);
const F12: GBox = (304.5, 237.0, 464.5, 258.0);
const F13_YES: GBox = (306.0, 222.0, 319.0, 232.0);
const F13_NO: GBox = (362.0, 222.0, 374.5, 232.0);
/// Field 14: the row after "Name, Vornamen".
const F14: GBox = (79.5, 187.0, 464.5, 206.5);
const F15_ADDRESS: GBox = (18.0, 123.5, 225.5, 156.5);
const F16_ADDRESS: GBox = (18.0, 68.0, 225.5, 101.0);
/// Field 17 (Frühere Betriebsstätte): like fields 15 and 16, 3.8 pt under its label, down to
/// the page's bottom rule.
const F17_ADDRESS: GBox = (18.0, 23.5, 225.5, 56.5);
/// Baselines of the "(Mobil-)Telefonnummer" and "E-Mail-Adresse" labels of fields 11, 15, 16,
/// and the left and right edge of their value column.
const F11_CONTACT: (f32, f32) = (314.5, 292.6);
const F15_CONTACT: (f32, f32) = (160.4, 138.5);
const F16_CONTACT: (f32, f32) = (115.9, 94.0);
const CONTACT_COLUMN: (f32, f32) = (304.5, 464.5);

// Page 2.
const F18: GBox = (19.0, 524.0, 463.5, 654.5);
const F19_YES: GBox = (116.0, 502.0, 128.5, 512.0);
const F19_NO: GBox = (189.5, 502.0, 201.5, 512.0);
const F20: GBox = (295.0, 502.0, 463.5, 512.5);
const F21_INDUSTRY: GBox = (189.5, 483.5, 201.5, 493.5);
const F21_CRAFT: GBox = (280.0, 483.5, 293.0, 493.5);
const F21_TRADE: GBox = (353.5, 483.5, 368.0, 493.5);
const F21_OTHER: GBox = (439.5, 483.5, 452.0, 493.5);
const F22_FULL: GBox = (297.0, 464.5, 334.0, 475.5);
const F22_PART: GBox = (369.0, 464.5, 410.0, 475.5);
const F22_NONE: GBox = (439.5, 464.5, 452.0, 475.0);
const F23_MAIN: GBox = (189.5, 435.0, 201.0, 445.5);
const F23_BRANCH: GBox = (298.5, 435.0, 311.5, 445.5);
const F23_DEPENDENT: GBox = (439.5, 435.0, 452.0, 445.5);
const F24_TRAVEL: GBox = (189.5, 420.0, 201.0, 430.5);
const F25_NEW: GBox = (189.5, 401.5, 201.0, 412.0);
const F25_LEGAL_FORM: GBox = (189.5, 387.0, 201.0, 397.0);
const F25_PARTNER: GBox = (189.5, 372.0, 201.0, 382.0);
const F25_REOPENING: GBox = (440.0, 401.5, 452.0, 412.0);
const F25_TRANSFORMATION: GBox = (440.0, 387.0, 452.0, 397.0);
const F25_TAKEOVER: GBox = (440.0, 372.0, 452.0, 382.0);
const F26: GBox = (19.0, 344.5, 463.5, 355.0);
const F27_INSURER: GBox = (19.0, 322.0, 369.5, 333.0);
const F27_INSURER_UNKNOWN: GBox = (439.5, 322.0, 452.0, 332.5);
const F27_NUMBER: GBox = (19.0, 296.0, 369.5, 307.0);
const F27_NUMBER_UNKNOWN: GBox = (439.5, 296.0, 452.0, 306.5);
const F28_NO: GBox = (189.5, 256.5, 201.0, 266.5);
const F28_YES: GBox = (224.0, 256.5, 236.5, 266.5);
const F28_TEXT: GBox = (237.5, 234.0, 463.5, 256.0);
const F29_NO: GBox = (189.5, 219.5, 201.0, 230.0);
const F29_YES: GBox = (224.0, 219.5, 236.5, 230.0);
const F29_TEXT: GBox = (237.5, 197.0, 463.5, 219.0);
const F30_YES: GBox = (224.0, 182.5, 236.5, 192.5);
const F30_TEXT: GBox = (237.0, 160.0, 463.5, 182.5);
const F31_NO: GBox = (189.5, 145.0, 201.0, 155.5);
const F31_YES: GBox = (224.0, 145.0, 236.5, 155.5);
const F31_TEXT: GBox = (237.5, 123.0, 463.5, 145.0);
const F32: GBox = (18.5, 66.0, 86.5, 77.0);
/// Field 33: the column under "Unterschrift", from the top of its white strip to the form's
/// bottom rule.
pub(crate) const F33: GBox = (103.0, 33.0, 222.5, 77.0);

const BLACK: (u8, u8, u8) = (0, 0, 0);

/// Value font sizes: preferred and minimum before wrapping (points on A4).
const FIT: Fit = Fit {
    max: 9.0,
    min: 6.0,
    valign: VAlign::Center,
};
const FIT_TOP: Fit = Fit {
    max: 9.0,
    min: 6.0,
    valign: VAlign::Top,
};
/// Field 18 is a large multi-line box: wrap at the preferred size before shrinking.
const FIT_WRAP: Fit = Fit {
    max: 9.0,
    min: 9.0,
    valign: VAlign::Top,
};

/// Box 33 in page coordinates (for tests and documentation).
pub fn signature_box() -> (f32, f32, f32, f32) {
    let r = to_rect(F33);
    (r.x, r.y, r.w, r.h)
}

/// The text value boxes of the GewA 1 as `(name, page index, x, y, width, height)` in A4
/// points, origin top-left (as the tests read words back), then some check boxes and the first
/// page of the supplementary sheet (`sheet`). For tests and tooling.
#[doc(hidden)]
pub fn field_boxes() -> Vec<(&'static str, usize, f32, f32, f32, f32)> {
    let contact = |b: f32| (CONTACT_COLUMN.0, b - 3.4, CONTACT_COLUMN.1, b + 7.2);
    // An address box of page 1 and the phone and e-mail values beside it.
    let with_contact = |names: [&'static str; 3], address: GBox, (phone, email): (f32, f32)| {
        [
            (names[0], 0, address),
            (names[1], 0, contact(phone)),
            (names[2], 0, contact(email)),
        ]
    };
    let boxes: Vec<(&str, usize, GBox)> = [
        &[
            ("head_office", 0, HEAD_OFFICE),
            ("head_ags", 0, HEAD_AGS),
            ("1", 0, F1),
            ("2", 0, F2),
            ("3", 0, F3),
            ("4", 0, F4),
            ("5", 0, F5),
            ("7", 0, F7),
            ("8", 0, F8),
            ("9", 0, F9),
            ("10", 0, F10_OTHER),
        ][..],
        &with_contact(["11", "11_phone", "11_email"], F11_ADDRESS, F11_CONTACT),
        &[("12", 0, F12), ("14", 0, F14)],
        &with_contact(["15", "15_phone", "15_email"], F15_ADDRESS, F15_CONTACT),
        &with_contact(["16", "16_phone", "16_email"], F16_ADDRESS, F16_CONTACT),
        &[("17", 0, F17_ADDRESS)],
        &[
            ("18", 1, F18),
            ("20", 1, F20),
            ("22_full", 1, F22_FULL),
            ("26", 1, F26),
            ("27_insurer", 1, F27_INSURER),
            ("27_number", 1, F27_NUMBER),
            ("28", 1, F28_TEXT),
            ("29", 1, F29_TEXT),
            ("30", 1, F30_TEXT),
            ("31", 1, F31_TEXT),
            ("32", 1, F32),
            // Check boxes the tests read.
            ("10_german", 0, F10_GERMAN),
            ("27_insurer_unknown", 1, F27_INSURER_UNKNOWN),
            ("27_number_unknown", 1, F27_NUMBER_UNKNOWN),
            ("29_no", 1, F29_NO),
            ("29_yes", 1, F29_YES),
            ("30_yes", 1, F30_YES),
            ("31_no", 1, F31_NO),
            ("31_yes", 1, F31_YES),
            ("25_relocation", 1, F25_REOPENING),
            ("sheet", 2, (-14.0, -70.0, 482.0, 677.0)),
        ],
    ]
    .concat();
    boxes
        .iter()
        .map(|(name, page, b)| {
            let r = to_rect(*b);
            (*name, *page, r.x, r.y, r.w, r.h)
        })
        .collect()
}

fn to_rect(b: GBox) -> Rect {
    rect(b.0, b.1, b.2, b.3)
}

/// What a check box is ticked with (bold).
pub(crate) const CHECK_MARK: &str = "X";

/// A field of the form: its number (with the row, where a field has several) and label, as
/// the supplementary sheet names it.
type Field = (&'static str, &'static str);

struct Writer<'a, 'p> {
    page: &'a mut Page<'p>,
    fonts: &'static font::Fonts,
    /// Values moved to the supplementary sheet.
    sheet: &'a mut Vec<Entry>,
}

impl Writer<'_, '_> {
    /// Draws `value` in box `b`, at no less than `fit.min`; a value that does not fit there
    /// goes to the supplementary sheet and the box says so ([`sheet`]).
    fn value(&mut self, field: Field, b: GBox, value: &str, fit: Fit) {
        let r = to_rect(b).inset(1.8, 0.6);
        self.page.set_fill_rgb(BLACK);
        match text::fit_box(&self.fonts.regular, value, r, fit) {
            Some(laid) => text::draw_laid(self.page, &self.fonts.regular, &laid, r, fit.valign),
            None if value.trim().is_empty() => {}
            None => {
                self.sheet.push(Entry {
                    field: field.0,
                    label: field.1,
                    text: value.to_owned(),
                });
                text::fill_box(self.page, &self.fonts.regular, sheet::SEE_SHEET, r, fit);
            }
        }
    }

    fn check(&mut self, b: GBox) {
        let r = to_rect(b);
        let run = font::shape(&self.fonts.bold, CHECK_MARK);
        let size = (r.h * 0.8).min(10.0);
        let w = run.width_em() * size;
        let baseline = r.y + r.h / 2.0 + 0.36 * size;
        self.page.set_fill_rgb(BLACK);
        text::draw_run(
            self.page,
            &self.fonts.bold,
            &run,
            r.x + (r.w - w) / 2.0,
            baseline,
            size,
            1.0,
        );
    }

    /// Phone and email in the contact column next to address field `field`.
    fn contacts(&mut self, field: &'static str, baselines: (f32, f32), phone: &str, email: &str) {
        let (left, right) = CONTACT_COLUMN;
        for (base, label, value) in [
            (baselines.0, "(Mobil-)Telefonnummer", phone),
            (baselines.1, "E-Mail-Adresse", email),
        ] {
            self.value(
                (field, label),
                (left, base - 3.4, right, base + 7.2),
                value,
                FIT,
            );
        }
    }
}

fn address_lines(
    street: &str,
    second: Option<&str>,
    zip: &str,
    city: &str,
    state: Option<&str>,
    country: Option<domain::country::CountryCode>,
) -> String {
    let mut lines = street_zip_city(street, second, zip, city);
    // Abroad: one more line with the state (when given) and the German country name.
    if let Some(c) = country.filter(|c| !c.is_germany()) {
        match state.filter(|s| !s.trim().is_empty()) {
            Some(s) => lines.push(format!("{s}, {}", c.german_name())),
            None => lines.push(c.german_name().to_owned()),
        }
    }
    lines.join("\n")
}

/// The lines of a postal or a residential address (the same fields, by name).
macro_rules! address_of {
    ($a:expr) => {{
        let a = $a;
        address_lines(
            &a.street,
            a.street_second_line.as_deref(),
            &a.zip,
            &a.city,
            a.state.as_deref(),
            Some(a.country),
        )
    }};
}

fn postal_address(a: &domain::trade::PostalAddress) -> String {
    address_of!(a)
}

fn establishment_address(reg: &TradeRegistration) -> String {
    let o = &reg.registered_office;
    address_lines(
        &o.street,
        o.street_second_line.as_deref(),
        &o.zip,
        &o.city,
        None,
        None,
    )
}

fn owner_address(reg: &TradeRegistration, owner: &Owner) -> String {
    match &owner.address {
        Some(a) => address_of!(a),
        None => establishment_address(reg),
    }
}

/// Fields 1 and 3 (docs/forms.md, "Fields 1 and 3"): a name entered in a register goes into
/// field 1 with the legal form ("(in Gründung)" for a legal person before its entry), for a
/// GbR with the other partners, as the label asks; without a register entry (a sole trader, a
/// GbR) the name is the business designation of field 3, and field 1 holds only what the
/// form asks of a GbR there.
fn fields_1_and_3(reg: &TradeRegistration, owner: usize) -> (String, Option<String>) {
    let mut lines = Vec::new();
    let registered = reg.name_is_registered();
    if registered {
        lines.push(reg.registered_name());
    }
    if reg.legal_form != LegalForm::Einzelunternehmen || registered {
        lines.push(format!("Rechtsform: {}", reg.legal_form.german_name()));
    }
    if reg.legal_form == LegalForm::Gbr {
        let others: Vec<String> = reg
            .owners
            .iter()
            .enumerate()
            .filter(|(i, _)| *i != owner)
            .map(|(_, o)| format!("{} {}", o.first_name, o.last_name))
            .collect();
        if !others.is_empty() {
            lines.push(format!("Weitere Gesellschafter: {}", others.join(", ")));
        }
    }
    (lines.join("\n"), (!registered).then(|| reg.name.clone()))
}

/// Field 2: the register court and the entry's number ("Amtsgericht Charlottenburg, HRB
/// 245789 B"); the number alone when no court was given.
fn field2(reg: &TradeRegistration) -> Option<String> {
    let number = reg.registration_number.as_deref()?;
    Some(match reg.registration_court.as_deref() {
        Some(court) => format!("{court}, {number}"),
        None => number.to_owned(),
    })
}

/// Field 10: whether "deutsch" is ticked, and the other nationalities' designations.
fn field10(owner: &Owner) -> (bool, String) {
    let codes = std::iter::once(owner.nationality).chain(owner.other_nationalities.iter().copied());
    domain::nationality::field_10(codes)
}

/// Owner `index` of `reg` and his GewA 1 signature.
fn signed_owner(
    reg: &TradeRegistration,
    index: usize,
) -> Result<(&Owner, &domain::signature::SignaturePath), RenderError> {
    crate::signed_owner(reg, index, |s| s.gewa_1.as_ref())
}

pub(crate) fn render(
    reg: &TradeRegistration,
    form: &Gewa1Form,
    ctx: &Gewa1Context,
) -> Result<Vec<u8>, RenderError> {
    let index = form.owner();
    if reg
        .owners
        .get(index)
        .is_some_and(|o| o.documents.gewa_1.is_some())
    {
        return Err(RenderError::SignedDocumentSupplied(index));
    }
    let (owner, signature) = signed_owner(reg, index)?;
    let further = form
        .further()
        .iter()
        .map(|&i| signed_owner(reg, i))
        .collect::<Result<Vec<_>, _>>()?;
    let fonts = font::fonts()?;
    let mut document = Document::with_optional_pages(layout::template()?, 2);
    let sandbox = reg.environment == Environment::Sandbox;
    let mut moved: Vec<Entry> = Vec::new();

    // Page 1.
    document.page(|page| {
        let mut w = Writer {
            page,
            fonts,
            sheet: &mut moved,
        };
        if let Some(office) = &ctx.trade_office_name {
            w.value(
                ("Kopf", "Name der entgegennehmenden Stelle"),
                HEAD_OFFICE,
                office,
                FIT,
            );
        }
        if let Some(ags) = &ctx.municipality_key {
            w.value(("Kopf", "Gemeindekennzahl"), HEAD_AGS, ags, FIT);
        }
        let (field1, field3) = fields_1_and_3(reg, index);
        w.value(
            ("1", "Eingetragener Name mit Rechtsform"),
            F1,
            &field1,
            FIT_TOP,
        );
        if let Some(entry) = field2(reg) {
            w.value(
                ("2", "Ort und Nummer des Registereintrags"),
                F2,
                &entry,
                FIT,
            );
        }
        if let Some(name) = &field3 {
            w.value(("3", "Name des Geschäfts"), F3, name, FIT_TOP);
        }
        w.value(("4", "Name"), F4, &owner.last_name, FIT);
        w.value(("5", "Vornamen"), F5, &owner.first_name, FIT);
        w.check(match owner.gender {
            Gender::Male => F6_MALE,
            Gender::Female => F6_FEMALE,
            Gender::Diverse => F6_DIVERSE,
            Gender::NoInformation => F6_NONE,
        });
        if let Some(birth_name) = owner
            .birth_name
            .as_deref()
            .filter(|b| *b != owner.last_name)
        {
            w.value(("7", "Geburtsname"), F7, birth_name, FIT);
        }
        w.value(("8", "Geburtsdatum"), F8, &format_date(owner.dob), FIT);
        w.value(
            ("9", "Geburtsort und -land"),
            F9,
            &format!(
                "{}, {}",
                owner.place_of_birth,
                owner.country_of_birth.german_name()
            ),
            FIT,
        );
        let (german, others) = field10(owner);
        if german {
            w.check(F10_GERMAN);
        }
        if !others.is_empty() {
            w.value(
                ("10", "Staatsangehörigkeit(en), andere"),
                F10_OTHER,
                &others,
                FIT,
            );
        }
        w.value(
            ("11", "Anschrift der Wohnung"),
            F11_ADDRESS,
            &owner_address(reg, owner),
            FIT_TOP,
        );
        w.contacts("11", F11_CONTACT, &owner.phone, &owner.email);
        if reg.legal_form.is_legal_person() || reg.legal_form.is_partnership() {
            w.value(
                ("12", "Zahl der Gesellschafter/Vertreter"),
                F12,
                &reg.owners.len().to_string(),
                FIT,
            );
        }
        w.check(if reg.has_public_sector_participation {
            F13_YES
        } else {
            F13_NO
        });
        if let Some(r) = &reg.authorized_representative {
            w.value(
                ("14", "Vertretungsberechtigte Person/Betriebsleiter"),
                F14,
                &format!("{}, {}", r.last_name, r.first_name),
                FIT,
            );
        }
        w.value(
            ("15", "Betriebsstätte"),
            F15_ADDRESS,
            &establishment_address(reg),
            FIT_TOP,
        );
        w.contacts("15", F15_CONTACT, &reg.phone, &reg.email);
        if reg.establishment_type.is_branch() {
            field16(&mut w, reg, ctx);
        }
        if let Some(p) = &reg.previous_establishment {
            w.value(
                ("17", "Frühere Betriebsstätte"),
                F17_ADDRESS,
                &postal_address(p),
                FIT_TOP,
            );
        }
        if sandbox {
            pdf::sandbox_mark(w.page)?;
        }
        Ok(())
    })?;

    // Page 2.
    document.page(|page| {
        let mut w = Writer {
            page,
            fonts,
            sheet: &mut moved,
        };
        w.value(("18", "Angemeldete Tätigkeit"), F18, &reg.purpose, FIT_WRAP);
        w.check(match reg.acquisition_type {
            AcquisitionType::SecondaryOccupation => F19_YES,
            AcquisitionType::MainOccupation => F19_NO,
        });
        w.value(
            ("20", "Datum des Beginns"),
            F20,
            &format_date(reg.operational_activity_start_date),
            FIT,
        );
        for t in &reg.business_type {
            w.check(match t {
                BusinessType::Industry => F21_INDUSTRY,
                BusinessType::Craft => F21_CRAFT,
                BusinessType::Trade => F21_TRADE,
                BusinessType::Other => F21_OTHER,
            });
        }
        match reg.employees {
            Some(e)
                if !(e.full_time == domain::trade::EmployeeCount::Zero
                    && e.part_time == domain::trade::EmployeeCount::Zero) =>
            {
                w.value(("22", "Vollzeit"), F22_FULL, e.full_time.as_str(), FIT);
                w.value(("22", "Teilzeit"), F22_PART, e.part_time.as_str(), FIT);
            }
            _ => w.check(F22_NONE),
        }
        w.check(match reg.establishment_type {
            EstablishmentType::MainOffice => F23_MAIN,
            EstablishmentType::BranchOffice => F23_BRANCH,
            EstablishmentType::DependentBranch => F23_DEPENDENT,
            EstablishmentType::TravelIndustry => F24_TRAVEL,
        });
        w.check(match reg.reason {
            Reason::NewFoundation => F25_NEW,
            Reason::LegalFormChange => F25_LEGAL_FORM,
            Reason::PartnerEntry => F25_PARTNER,
            Reason::ReopeningAfterRelocation => F25_REOPENING,
            Reason::TransformationLaw => F25_TRANSFORMATION,
            Reason::Takeover => F25_TAKEOVER,
        });
        if let Some(p) = &reg.previous_business {
            w.value(
                ("26", "Früherer Gewerbetreibender oder früherer Firmenname"),
                F26,
                &p.name,
                FIT,
            );
            match &p.accident_insurer {
                Some(insurer) => w.value(
                    ("27", "Bisheriger gesetzlicher Unfallversicherungsträger"),
                    F27_INSURER,
                    insurer,
                    FIT,
                ),
                None => w.check(F27_INSURER_UNKNOWN),
            }
            match &p.accident_insurance_number {
                Some(number) => {
                    w.value(("27", "Bisherige Mitgliedsnummer"), F27_NUMBER, number, FIT)
                }
                None => w.check(F27_NUMBER_UNKNOWN),
            }
        }
        match &reg.industrial_license {
            Some(l) => {
                w.check(F28_YES);
                w.value(
                    ("28", "Erlaubnis: Ausstellungsdatum und erteilende Behörde"),
                    F28_TEXT,
                    &format!(
                        "{}, {}, {} {}",
                        format_date(l.issue_date),
                        l.issuing_authority,
                        l.zip,
                        l.location
                    ),
                    FIT,
                );
            }
            None => w.check(F28_NO),
        }
        if let Some(card) = &reg.craft_card {
            if card.held {
                w.check(F29_YES);
                let date = card.issue_date.map(format_date);
                let text = [date.as_deref(), card.chamber.as_deref()]
                    .into_iter()
                    .flatten()
                    .collect::<Vec<_>>()
                    .join(", ");
                w.value(
                    (
                        "29",
                        "Handwerkskarte: Ausstellungsdatum und Handwerkskammer",
                    ),
                    F29_TEXT,
                    &text,
                    FIT,
                );
            } else {
                w.check(F29_NO);
            }
        }
        if let Some(p) = &owner.residence_permit {
            w.check(F30_YES);
            w.value(
                (
                    "30",
                    "Aufenthaltstitel: Ausstellungsdatum und erteilende Behörde",
                ),
                F30_TEXT,
                &format!("{}, {}", format_date(p.issue_date), p.issuing_authority),
                FIT,
            );
        }
        match owner.has_employment_restrictions {
            Some(true) => {
                w.check(F31_YES);
                // Records from before the wording was asked for carry none: point to the permit.
                let text = owner
                    .employment_restriction_details
                    .as_deref()
                    .unwrap_or(RESTRICTION_POINTER);
                w.value(
                    ("31", "Auflage und/oder Beschränkung des Aufenthaltstitels"),
                    F31_TEXT,
                    text,
                    FIT,
                );
            }
            Some(false) => w.check(F31_NO),
            None => {}
        }
        w.value(("32", "Datum"), F32, &format_date(ctx.created_on), FIT);
        pdf::draw_signature(w.page, signature, to_rect(F33));
        if sandbox {
            pdf::sandbox_mark(w.page)?;
        }
        Ok(())
    })?;

    // The supplementary sheets: the values too long for their boxes (as many pages as they
    // take), then one per further legal representative.
    let full_name = format!("{} {}", owner.first_name, owner.last_name);
    let (form_of, title) = if form.company {
        (
            format!("{} (gesetzlicher Vertreter: {full_name})", reg.name),
            format!("GewA 1 - {}", reg.name),
        )
    } else {
        (
            format!("{full_name}, {}", reg.name),
            format!("GewA 1 - {full_name}"),
        )
    };
    let date = format_date(ctx.created_on);
    let heading = format!("zum Vordruck für {form_of}, vom {date}");
    let overflow = sheet::paginate(fonts, &heading, &moved);
    let representatives = reg.owners.len();
    let sheets: Vec<(
        String,
        Vec<Entry>,
        Option<&domain::signature::SignaturePath>,
    )> = overflow
        .into_iter()
        .map(|range| (heading.clone(), moved[range].to_vec(), None))
        .chain(further.iter().enumerate().map(|(i, (o, signature))| {
            (
                format!(
                    "Weiterer gesetzlicher Vertreter ({} von {representatives}), Felder 4 bis \
                     11, 30 und 31, zum Vordruck für {}, vom {date}",
                    i + 2,
                    reg.registered_name()
                ),
                representative(reg, o, ctx),
                Some(*signature),
            )
        }))
        .collect();
    let total = sheets.len();
    for (i, (heading, entries, signature)) in sheets.iter().enumerate() {
        document.page(|page| {
            sheet::draw_page(page, fonts, heading, entries, *signature, (i + 1, total));
            if sandbox {
                pdf::sandbox_mark(page)?;
            }
            Ok(())
        })?;
    }
    document.finish(&Info {
        title,
        subject: format!(
            "Gewerbe-Anmeldung (GewA 1) für {}; Vordruck: {FORM_VERSION}",
            reg.name
        ),
        author: Some(if form.company {
            reg.name.clone()
        } else {
            full_name
        }),
        timestamp: ctx.timestamp,
    })
}

/// The labels of a further legal representative's sheet, as [`representative`] writes them
/// (prepared once in the template's fonts).
pub(crate) const REPRESENTATIVE_LABELS: [&str; 11] = [
    "Name",
    "Vornamen",
    "Geschlecht",
    "Geburtsname",
    "Geburtsdatum",
    "Geburtsort und -land",
    "Staatsangehörigkeit(en)",
    "Anschrift der Wohnung",
    "Aufenthaltstitel: Ausstellungsdatum und erteilende Behörde",
    "Auflage und/oder Beschränkung des Aufenthaltstitels",
    "Datum",
];

/// A further legal representative's sheet: fields 4 to 11, 30 and 31 of the form for `o`, as
/// the form's own boxes would hold them (check boxes in words), and the date (32).
fn representative(reg: &TradeRegistration, o: &Owner, ctx: &Gewa1Context) -> Vec<Entry> {
    let [
        name,
        first,
        gender,
        birth,
        dob,
        place,
        nationality,
        address,
        permit,
        restriction,
        date,
    ] = REPRESENTATIVE_LABELS;
    let mut out = Vec::new();
    let mut push = |field: &'static str, label: &'static str, text: String| {
        out.push(Entry { field, label, text });
    };
    push("4", name, o.last_name.clone());
    push("5", first, o.first_name.clone());
    push(
        "6",
        gender,
        match o.gender {
            Gender::Male => "männlich",
            Gender::Female => "weiblich",
            Gender::Diverse => "divers",
            Gender::NoInformation => "ohne Angabe",
        }
        .to_owned(),
    );
    if let Some(b) = o.birth_name.as_deref().filter(|b| *b != o.last_name) {
        push("7", birth, b.to_owned());
    }
    push("8", dob, format_date(o.dob));
    push(
        "9",
        place,
        format!("{}, {}", o.place_of_birth, o.country_of_birth.german_name()),
    );
    let (german, others) = field10(o);
    push(
        "10",
        nationality,
        [german.then_some("deutsch"), Some(others.as_str())]
            .into_iter()
            .flatten()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join(", "),
    );
    push("11", address, owner_address(reg, o));
    push("11", "(Mobil-)Telefonnummer", o.phone.clone());
    push("11", "E-Mail-Adresse", o.email.clone());
    if let Some(p) = &o.residence_permit {
        push(
            "30",
            permit,
            format!(
                "ja – {}, {}",
                format_date(p.issue_date),
                p.issuing_authority
            ),
        );
    }
    match o.has_employment_restrictions {
        Some(true) => push(
            "31",
            restriction,
            format!(
                "ja – {}",
                o.employment_restriction_details
                    .as_deref()
                    .unwrap_or(RESTRICTION_POINTER)
            ),
        ),
        Some(false) => push("31", restriction, "nein".to_owned()),
        None => {}
    }
    push("32", date, format_date(ctx.created_on));
    out
}

/// Field 31's text for records from before the condition's wording was asked for: a pointer to
/// the permit.
const RESTRICTION_POINTER: &str =
    "Auflage/Beschränkung laut Aufenthaltstitel (siehe Zusatzblatt zum Aufenthaltstitel)";

/// Field 16 of a branch: `main_establishment` with its contacts, else `business_address` or
/// the company's stored address (whose phone and email the API does not have).
fn field16(w: &mut Writer, reg: &TradeRegistration, ctx: &Gewa1Context) {
    const FIELD: Field = ("16", "Hauptniederlassung");
    if let Some(m) = &reg.main_establishment {
        w.value(FIELD, F16_ADDRESS, &postal_address(&m.address), FIT_TOP);
        w.contacts(
            "16",
            F16_CONTACT,
            m.phone.as_deref().unwrap_or(""),
            m.email.as_deref().unwrap_or(""),
        );
    } else if let Some(main) = reg.business_address.as_ref().or(ctx.main_office.as_ref()) {
        w.value(FIELD, F16_ADDRESS, &postal_address(main), FIT_TOP);
    }
}
