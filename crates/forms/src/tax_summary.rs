//! The German summary of a tax registration ("Fragebogen zur steuerlichen Erfassung -
//! Zusammenfassung") for a UG or GmbH, and for a GbR or eGbR. The sections both have (head,
//! register, holders, bank, estimates, VAT, payroll, signature) are written by the same
//! functions.
//!
//! A4 pages in the questionnaire's order of sections, every submitted value as a labelled row
//! (bold label left, wrapped value right), then place, date and the drawn signature. The content
//! is laid out once into blocks of known height; blocks never break across pages (very long
//! values are pre-split into continuation rows), and a section heading is kept with its first
//! row. Every page carries a footer "Seite x von y" and, in the sandbox, the sandbox mark.

use domain::company::Environment;
use domain::country::CountryCode;
use domain::gbr::{GbrTaxRegistration, PartnershipLegalForm};
use domain::signature::SignaturePath;
use domain::tax::{
    AccountingMethod, BalanceType, CommercialRegister, ConversionType, FinancialEstimates,
    FormationType, KapLegalForm, Payroll, Percentage, PostalAddress, ReturnFrequency,
    ReverseChargeServiceType, TaxPackage, TaxRegistration, Vat, VatRegime,
};
use krilla::color::rgb;
use krilla::page::PageSettings;
use krilla::surface::Surface;

use crate::pdf::{self, A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Fonts, LINE_HEIGHT, Rect, Run};
use crate::{RenderError, TaxSummaryContext, format_date};

const MARGIN_X: f32 = 56.0;
const TOP: f32 = 50.0;
/// Lowest y of content; the footer sits below.
const BOTTOM: f32 = A4_HEIGHT - 52.0;
const WIDTH: f32 = A4_WIDTH - 2.0 * MARGIN_X;
const LABEL_WIDTH: f32 = 200.0;
const ROW_SIZE: f32 = 9.0;
const ROW_GAP: f32 = 3.5;
/// Rows taller than this are split into continuation rows, so every block fits a page.
const MAX_ROW_HEIGHT: f32 = 240.0;
const SIGNATURE_WIDTH: f32 = 210.0;
const SIGNATURE_HEIGHT: f32 = 52.0;
const PLACE_SIZE: f32 = 9.5;
const HEADING_SIZE: f32 = 10.5;

const TITLE: &str = "Fragebogen zur steuerlichen Erfassung - Zusammenfassung";

const BLACK: (u8, u8, u8) = (0, 0, 0);
const GREY: (u8, u8, u8) = (90, 90, 90);
const LABEL_GREY: (u8, u8, u8) = (60, 60, 60);
const ACCENT: (u8, u8, u8) = (20, 45, 100);

/// A piece of the flow with a fixed height.
enum Block {
    /// A paragraph in the full width, pre-wrapped.
    Para {
        bold: bool,
        size: f32,
        color: (u8, u8, u8),
        lines: Vec<Run>,
    },
    /// A section heading with a rule below; kept on the page of the block after it.
    Heading(Run),
    /// A sub-heading inside a section (e.g. "Natürliche Personen"); also kept with the next block.
    SubHeading(Run),
    /// A labelled row: label lines left, value lines right (pre-wrapped), `muted` in grey.
    Row {
        label: Vec<Run>,
        value: Vec<Run>,
        muted: bool,
    },
    Space(f32),
    /// Place and date, the signature box with line and caption: one block, so the signature is
    /// never separated from its place and date.
    Signature {
        place_date: Vec<Run>,
        caption: Vec<Run>,
    },
}

impl Block {
    fn height(&self) -> f32 {
        match self {
            Block::Para { size, lines, .. } => lines.len() as f32 * LINE_HEIGHT * size,
            Block::Heading(_) => HEADING_SIZE * LINE_HEIGHT + 2.0 + 5.0,
            Block::SubHeading(_) => ROW_SIZE * LINE_HEIGHT + 3.0,
            Block::Row { label, value, .. } => {
                label.len().max(value.len()) as f32 * LINE_HEIGHT * ROW_SIZE + ROW_GAP
            }
            Block::Space(h) => *h,
            Block::Signature {
                place_date,
                caption,
            } => {
                place_date.len() as f32 * LINE_HEIGHT * PLACE_SIZE
                    + 4.0
                    + SIGNATURE_HEIGHT
                    + 4.0
                    + caption.len() as f32 * LINE_HEIGHT * 8.0
            }
        }
    }

    /// Headings stay with the block after them; so does space (a heading's space before it
    /// moves to the next page with it, where it is dropped).
    fn keep_with_next(&self) -> bool {
        matches!(
            self,
            Block::Heading(_) | Block::SubHeading(_) | Block::Space(_)
        )
    }
}

/// Wraps `content` (hard breaks with `\n`) into `width` at `size`.
fn wrap(fonts: &Fonts, bold: bool, content: &str, width: f32, size: f32) -> Vec<Run> {
    let mut out = Vec::new();
    for part in content.split('\n').filter(|p| !p.trim().is_empty()) {
        let run = text::shape_in(fonts, bold, part);
        let laid = text::layout(
            std::slice::from_ref(&run),
            Rect {
                x: 0.0,
                y: 0.0,
                w: width,
                h: f32::MAX,
            },
            text::Fit {
                max: size,
                min: size,
                valign: text::VAlign::Top,
            },
        );
        out.extend(laid.lines);
    }
    out
}

/// Builds the blocks of the flow.
struct Flow<'a> {
    fonts: &'a Fonts,
    blocks: Vec<Block>,
}

impl Flow<'_> {
    fn para(&mut self, bold: bool, size: f32, color: (u8, u8, u8), content: &str) {
        let lines = wrap(self.fonts, bold, content, WIDTH, size);
        self.blocks.push(Block::Para {
            bold,
            size,
            color,
            lines,
        });
    }

    fn heading(&mut self, content: &str) {
        self.blocks.push(Block::Space(6.0));
        self.blocks
            .push(Block::Heading(text::shape_in(self.fonts, true, content)));
    }

    fn sub_heading(&mut self, content: &str) {
        self.blocks.push(Block::Space(2.0));
        self.blocks
            .push(Block::SubHeading(text::shape_in(self.fonts, true, content)));
    }

    fn row(&mut self, label: &str, value: &str) {
        self.row_with(label, value, false);
    }

    fn row_with(&mut self, label: &str, value: &str, muted: bool) {
        let label = wrap(self.fonts, true, label, LABEL_WIDTH - 8.0, ROW_SIZE);
        let value = wrap(self.fonts, false, value, WIDTH - LABEL_WIDTH, ROW_SIZE);
        let line = LINE_HEIGHT * ROW_SIZE;
        let max_lines = ((MAX_ROW_HEIGHT / line) as usize).max(1);
        if value.len() <= max_lines {
            self.blocks.push(Block::Row {
                label,
                value,
                muted,
            });
            return;
        }
        // A value too long for one block: continuation rows without a label.
        for (i, chunk) in value.chunks(max_lines).enumerate() {
            self.blocks.push(Block::Row {
                label: if i == 0 { label.clone() } else { Vec::new() },
                value: chunk.to_vec(),
                muted,
            });
        }
    }
}

/// Whole euros with a thousands dot: `25.000 €`, `-1.500 €`.
fn euros(amount: i64) -> String {
    let digits = amount.unsigned_abs().to_string();
    let mut grouped = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push('.');
        }
        grouped.push(c);
    }
    let sign = if amount < 0 { "-" } else { "" };
    format!("{sign}{grouped}\u{a0}€")
}

/// `33,3333 %`: the exact decimal with a German decimal comma.
fn percent(p: Percentage) -> String {
    format!("{}\u{a0}%", p.to_decimal_string().replace('.', ","))
}

fn yes_no(b: bool) -> &'static str {
    if b { "ja" } else { "nein" }
}

fn country(c: &CountryCode) -> &'static str {
    c.german_name()
}

/// All parts of an address on one line: street, second line, zip city, state, country.
fn address_line(a: &PostalAddress) -> String {
    let mut parts = vec![a.street.clone()];
    if let Some(s) = a
        .street_second_line
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        parts.push(s.to_owned());
    }
    parts.push(format!("{} {}", a.zip, a.city));
    if let Some(s) = a.state.as_deref().filter(|s| !s.trim().is_empty()) {
        parts.push(s.to_owned());
    }
    parts.push(country(&a.country).to_owned());
    parts.join(", ")
}

/// The address as lines (for the company's seat).
fn address_lines(a: &PostalAddress) -> String {
    let mut lines = vec![a.street.clone()];
    if let Some(s) = a
        .street_second_line
        .as_deref()
        .filter(|s| !s.trim().is_empty())
    {
        lines.push(s.to_owned());
    }
    lines.push(format!("{} {}", a.zip, a.city));
    match a.state.as_deref().filter(|s| !s.trim().is_empty()) {
        Some(state) => lines.push(format!("{state}, {}", country(&a.country))),
        None => lines.push(country(&a.country).to_owned()),
    }
    lines.join("\n")
}

fn legal_form(f: KapLegalForm) -> &'static str {
    match f {
        KapLegalForm::Ug => "UG (haftungsbeschränkt)",
        KapLegalForm::Gmbh => "GmbH",
    }
}

fn formation(reg: &TaxRegistration) -> String {
    match reg.formation_type {
        FormationType::Cash => "Bargründung".to_owned(),
        FormationType::InKind => "Sachgründung".to_owned(),
        FormationType::Conversion => match reg.conversion_type {
            Some(c) => format!(
                "Umwandlung: {}",
                match c {
                    ConversionType::Merger => "Verschmelzung",
                    ConversionType::Division => "Spaltung",
                    ConversionType::FormChange => "Formwechsel",
                    ConversionType::AssetTransfer => "Vermögensübertragung",
                }
            ),
            None => "Umwandlung".to_owned(),
        },
    }
}

fn tax_id(id: Option<&domain::tax::TaxId>) -> String {
    match id {
        Some(id) => id.0.clone(),
        None => "nicht angegeben".to_owned(),
    }
}

/// Spaces every four characters, as IBANs are printed.
fn iban_grouped(iban: &str) -> String {
    let compact: Vec<char> = iban.chars().filter(|c| !c.is_whitespace()).collect();
    compact
        .chunks(4)
        .map(|c| c.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join(" ")
}

fn director_name(d: &domain::tax::Director) -> String {
    match d.middle_name.as_deref().filter(|m| !m.trim().is_empty()) {
        Some(m) => format!("{} {} {}", d.first_name, m, d.last_name),
        None => format!("{} {}", d.first_name, d.last_name),
    }
}

/// Title, the kind of company, the office, the reference and the package.
fn head(
    flow: &mut Flow,
    kind: &str,
    ctx: &TaxSummaryContext,
    tax_office_number: Option<&str>,
    client_reference: Option<&str>,
    package: TaxPackage,
) {
    flow.para(true, 16.0, BLACK, "Fragebogen zur steuerlichen Erfassung");
    flow.para(
        false,
        9.5,
        GREY,
        &format!(
            "Zusammenfassung der Angaben \u{2013} {kind}, erstellt am {}",
            format_date(ctx.created_on)
        ),
    );
    flow.blocks.push(Block::Space(8.0));
    match (&ctx.tax_office, tax_office_number) {
        (Some((number, name)), _) => flow.row("Finanzamt", &format!("{name} ({number})")),
        (None, Some(number)) => flow.row("Finanzamt", &format!("Finanzamtsnummer {number}")),
        (None, None) => {}
    }
    if let (Some((number, _)), Some(sent)) = (&ctx.tax_office, tax_office_number)
        && number != sent
    {
        flow.row("Angegebene Finanzamtsnummer", sent);
    }
    if let Some(r) = client_reference.filter(|r| !r.trim().is_empty()) {
        flow.row_with("Mandantenreferenz", r, true);
    }
    flow.row_with(
        "Leistungspaket",
        match package {
            TaxPackage::SelfService => "Selbstständige Übermittlung (self)",
            TaxPackage::Guided => "Begleitete Übermittlung (guided)",
        },
        true,
    );
}

/// The rows of section 1 that every company has: seat, purpose, start, fiscal year.
fn seat_purpose_start(
    flow: &mut Flow,
    seat: &PostalAddress,
    purpose: &str,
    start: time::Date,
    (deviates, fiscal_start): (bool, Option<time::Date>),
) {
    flow.row("Sitz / Anschrift", &address_lines(seat));
    flow.row("Gegenstand des Unternehmens", purpose);
    flow.row("Beginn der Tätigkeit", &format_date(start));
    flow.row("Wirtschaftsjahr", &fiscal_year(deviates, fiscal_start));
}

fn fiscal_year(deviates: bool, start: Option<time::Date>) -> String {
    if deviates {
        match start {
            Some(d) => format!("abweichend vom Kalenderjahr, Beginn am {}", format_date(d)),
            None => "abweichend vom Kalenderjahr".to_owned(),
        }
    } else {
        "Kalenderjahr".to_owned()
    }
}

/// The rows of a register status; `prefix` names the register (`HRB`, `GsR`).
fn register_rows(flow: &mut Flow, register: &CommercialRegister, prefix: &str) {
    match register {
        CommercialRegister::NotApplied => {
            flow.row("Status", "Eintragung noch nicht beantragt");
        }
        CommercialRegister::ApplicationFiled {
            registration_application_date,
        } => {
            flow.row("Status", "Eintragung beantragt");
            flow.row(
                "Datum des Antrags",
                &format_date(*registration_application_date),
            );
        }
        CommercialRegister::Registered {
            registration_number,
            registration_date,
            registration_court,
        } => {
            flow.row("Status", "eingetragen");
            flow.row("Datum der Eintragung", &format_date(*registration_date));
            flow.row("Registergericht", registration_court);
            flow.row("Registernummer", &format!("{prefix} {registration_number}"));
        }
    }
}

fn bank(flow: &mut Flow, n: &str, iban: Option<&str>, bic: Option<&str>) {
    flow.heading(&format!("{n}. Bankverbindung"));
    flow.row(
        "IBAN",
        &iban
            .map(iban_grouped)
            .unwrap_or_else(|| "keine Angabe".to_owned()),
    );
    flow.row("BIC", bic.unwrap_or("keine Angabe"));
}

fn estimates(flow: &mut Flow, n: &str, fe: &FinancialEstimates) {
    flow.heading(&format!("{n}. Voraussichtliche Umsätze und Gewinne"));
    flow.row(
        "Umsatz im Gründungsjahr",
        &euros(fe.formation_year.revenue_amount),
    );
    flow.row(
        "Gewinn im Gründungsjahr",
        &euros(fe.formation_year.profit_amount),
    );
    flow.row(
        "Umsatz im Folgejahr",
        &euros(fe.following_year.revenue_amount),
    );
    flow.row(
        "Gewinn im Folgejahr",
        &euros(fe.following_year.profit_amount),
    );
}

fn vat(flow: &mut Flow, n: &str, vat: &Vat, estimates: &FinancialEstimates) {
    flow.heading(&format!("{n}. Umsatzsteuer"));
    flow.row(
        "Gewählte Besteuerung",
        match vat.regime {
            // Above the thresholds a `regime` sent has no effect (and is no waiver).
            _ if !estimates.small_business_election_available() => {
                "keine Wahl (Kleinunternehmerregelung nicht möglich)"
            }
            Some(VatRegime::SmallBusiness) => "Kleinunternehmerregelung",
            Some(VatRegime::Standard) => {
                "Regelbesteuerung (Verzicht nach §\u{a0}19\u{a0}Abs.\u{a0}2\u{a0}UStG)"
            }
            None => "keine Wahl (Kleinunternehmerregelung nicht möglich)",
        },
    );
    flow.row(
        "Kleinunternehmerregelung (§\u{a0}19\u{a0}UStG)",
        if vat.small_business {
            "ja, die Kleinunternehmerregelung wird angewendet"
        } else {
            "nein"
        },
    );
    if let Some(m) = vat.accounting_method {
        flow.row(
            "Versteuerung",
            match m {
                AccountingMethod::Accrual => "Sollversteuerung (nach vereinbarten Entgelten)",
                AccountingMethod::Cash => "Istversteuerung (nach vereinnahmten Entgelten)",
            },
        );
    }
    if vat.estimated_balance_type.is_some() || vat.estimated_balance_amount.is_some() {
        let kind = match vat.estimated_balance_type {
            Some(BalanceType::Payable) => "Zahllast",
            Some(BalanceType::Refundable) => "Erstattung",
            None => "Betrag",
        };
        let amount = vat
            .estimated_balance_amount
            .map(euros)
            .unwrap_or_else(|| "ohne Betrag".to_owned());
        flow.row(
            "Voraussichtliche Umsatzsteuer",
            &format!("{kind}: {amount}"),
        );
    }
    if let Some(f) = vat.return_frequency {
        flow.row(
            "Voranmeldungszeitraum",
            match f {
                ReturnFrequency::Monthly => "monatlich",
                ReturnFrequency::Quarterly => "vierteljährlich",
            },
        );
    }
    flow.row("USt-IdNr. beantragt", yes_no(vat.request_vat_id));
    flow.row(
        "Verkauf über Online-Marktplätze",
        yes_no(vat.sells_via_online_marketplaces),
    );
    let certificate = if vat.request_reverse_charge_certificate {
        match vat.reverse_charge_service_type {
            Some(ReverseChargeServiceType::Construction) => "beantragt für Bauleistungen",
            Some(ReverseChargeServiceType::BuildingCleaning) => {
                "beantragt für Gebäudereinigungsleistungen"
            }
            Some(ReverseChargeServiceType::Both) => {
                "beantragt für Bauleistungen und Gebäudereinigungsleistungen"
            }
            None => "beantragt",
        }
    } else {
        "nicht beantragt"
    };
    // The tax office's certificate for the recipient's reverse charge on construction and
    // building-cleaning services (§ 13b (5) UStG), form USt 1 TG; a "Freistellungsbescheinigung"
    // is the construction withholding tax's (§ 48b EStG), which is another matter.
    flow.row(
        "Nachweis USt\u{a0}1\u{a0}TG (§\u{a0}13b Abs.\u{a0}5\u{a0}UStG)",
        certificate,
    );
}

fn payroll(flow: &mut Flow, n: &str, has_employees: bool, payroll: Option<&Payroll>) {
    flow.heading(&format!("{n}. Lohnsteuer"));
    flow.row("Arbeitnehmer beschäftigt", yes_no(has_employees));
    if let Some(p) = payroll {
        flow.row("Anzahl der Arbeitnehmer", &p.employee_count.to_string());
        flow.row(
            "davon Gesellschafter",
            &p.shareholder_employee_count.to_string(),
        );
        flow.row(
            "Beginn der Lohnzahlungen",
            &format_date(p.payroll_start_date),
        );
        flow.row(
            "Voraussichtliche Lohnsteuer",
            &format!("{} jährlich", euros(p.estimated_annual_wage_tax)),
        );
    }
}

/// Place and date, and the signature with its caption: one block.
fn signature(flow: &mut Flow, city: &str, created_on: time::Date, caption: &str) {
    flow.blocks.push(Block::Space(18.0));
    let place_date = wrap(
        flow.fonts,
        false,
        &format!("{city}, den {}", format_date(created_on)),
        WIDTH,
        PLACE_SIZE,
    );
    let caption = wrap(flow.fonts, false, caption, WIDTH, 8.0);
    flow.blocks.push(Block::Signature {
        place_date,
        caption,
    });
}

/// An individual holder's value: name, birth and tax id, address, share.
fn person_text(
    first_name: &str,
    last_name: &str,
    dob: time::Date,
    tax_identification_number: Option<&domain::tax::TaxId>,
    address: &PostalAddress,
    share: Percentage,
) -> String {
    format!(
        "{first_name} {last_name}\ngeboren am {}, Steuer-IdNr.: {}\n{}\nAnteil: {}",
        format_date(dob),
        tax_id(tax_identification_number),
        address_line(address),
        percent(share)
    )
}

/// An entity holder's value: name, seat, share.
fn entity_text(name: &str, address: &PostalAddress, share: Percentage) -> String {
    format!(
        "{name}\n{}\nAnteil: {}",
        address_line(address),
        percent(share)
    )
}

/// Shareholders or partners, numbered across both lists, and the sum of their shares.
fn holder_rows(
    flow: &mut Flow,
    individuals: &[String],
    entities: &[String],
    shares: impl Iterator<Item = Percentage>,
) {
    let mut n = 0;
    for (heading, values) in [
        ("Natürliche Personen", individuals),
        ("Gesellschaften", entities),
    ] {
        if values.is_empty() {
            continue;
        }
        flow.sub_heading(heading);
        for value in values {
            n += 1;
            flow.row(&format!("{n}. Gesellschafter/in"), value);
        }
    }
    if n == 0 {
        flow.row("Gesellschafter", "keine Angabe");
    } else {
        let total: u64 = shares.map(|p| u64::from(p.0)).sum();
        let total = Percentage(u32::try_from(total).unwrap_or(u32::MAX));
        flow.row_with("Summe der Anteile", &percent(total), true);
    }
}

fn partnership_legal_form(f: PartnershipLegalForm) -> &'static str {
    match f {
        PartnershipLegalForm::Gbr => "Gesellschaft bürgerlichen Rechts (GbR)",
        PartnershipLegalForm::Egbr => "eingetragene Gesellschaft bürgerlichen Rechts (eGbR)",
    }
}

/// The partnership's summary: its own sections 1 to 3, then the ones it shares with a
/// corporation's.
fn build_partnership(reg: &GbrTaxRegistration, ctx: &TaxSummaryContext, flow: &mut Flow) {
    head(
        flow,
        &format!("Personengesellschaft ({})", reg.legal_form.german()),
        ctx,
        reg.tax_office_number.as_deref(),
        reg.client_reference.as_deref(),
        reg.package,
    );

    // 1. Allgemeine Angaben.
    flow.heading("1. Allgemeine Angaben");
    flow.row("Name der Gesellschaft", &reg.name);
    flow.row("Rechtsform", partnership_legal_form(reg.legal_form));
    seat_purpose_start(
        flow,
        &reg.address,
        &reg.purpose,
        reg.operational_activity_start_date,
        (
            reg.fiscal_year_deviates_from_calendar,
            reg.fiscal_year_deviating_start_date,
        ),
    );
    flow.row(
        "Gesellschaftsvertrag vom",
        &format_date(reg.partnership_agreement_date),
    );

    // 2. Gesellschaftsregister.
    flow.heading("2. Gesellschaftsregister");
    match &reg.company_register {
        Some(register) => register_rows(flow, register, "GsR"),
        None => flow.row("Status", "nicht eingetragen (GbR)"),
    }

    // 3. Gesellschafter.
    flow.heading("3. Gesellschafter");
    let managing = |m: bool| format!("\nGeschäftsführung und Vertretung: {}", yes_no(m));
    let individuals: Vec<String> = reg
        .partners
        .individuals
        .iter()
        .map(|p| {
            person_text(
                &p.first_name,
                &p.last_name,
                p.dob,
                p.tax_identification_number.as_ref(),
                &p.address,
                p.share_percentage,
            ) + &managing(p.is_managing_partner)
        })
        .collect();
    let entities: Vec<String> = reg
        .partners
        .entities
        .iter()
        .map(|p| {
            entity_text(&p.name, &p.address, p.share_percentage) + &managing(p.is_managing_partner)
        })
        .collect();
    holder_rows(flow, &individuals, &entities, reg.partners.shares());
    let managers = reg.partners.managing_names();
    flow.row("Vertretungsberechtigt", &managers.join("\n"));

    bank(flow, "4", reg.iban.as_deref(), reg.bic.as_deref());
    estimates(flow, "5", &reg.financial_estimates);
    vat(flow, "6", &reg.vat, &reg.financial_estimates);
    payroll(flow, "7", reg.has_employees, reg.payroll.as_ref());

    let caption = if managers.is_empty() {
        "Unterschrift (vertretungsberechtigte Gesellschafter)".to_owned()
    } else {
        format!(
            "Unterschrift vertretungsberechtigte Gesellschafter: {}",
            managers.join(", ")
        )
    };
    signature(flow, &reg.address.city, ctx.created_on, &caption);
}

fn build(reg: &TaxRegistration, ctx: &TaxSummaryContext, flow: &mut Flow) {
    head(
        flow,
        &format!("Kapitalgesellschaft ({})", legal_form(reg.legal_form)),
        ctx,
        reg.tax_office_number.as_deref(),
        reg.client_reference.as_deref(),
        reg.package,
    );

    // 1. Allgemeine Angaben.
    flow.heading("1. Allgemeine Angaben");
    flow.row("Firma", &reg.name);
    flow.row("Rechtsform", legal_form(reg.legal_form));
    seat_purpose_start(
        flow,
        &reg.address,
        &reg.purpose,
        reg.operational_activity_start_date,
        (
            reg.fiscal_year_deviates_from_calendar,
            reg.fiscal_year_deviating_start_date,
        ),
    );
    flow.row(
        "Notarielle Beurkundung am",
        &format_date(reg.notarization_date),
    );
    flow.row("Gründung", &formation(reg));
    flow.row(
        "Holdinggesellschaft",
        match reg.is_holding {
            Some(b) => yes_no(b),
            None => "keine Angabe",
        },
    );
    flow.row("Stammkapital", &euros(reg.capital));
    flow.row("Eingezahltes Kapital", &euros(reg.paid_in_capital));

    // 2. Notar.
    flow.heading("2. Notar");
    match &reg.notary {
        Some(n) => {
            flow.row("Name", &format!("{} {}", n.first_name, n.last_name));
            flow.row("Anschrift", &address_line(&n.address));
        }
        None => flow.row("Notar", "keine Angabe"),
    }

    // 3. Handelsregister.
    flow.heading("3. Handelsregister");
    register_rows(flow, &reg.commercial_register, "HRB");

    // 4. Geschäftsführer.
    flow.heading("4. Geschäftsführer (gesetzliche Vertreter)");
    for (i, d) in reg.directors.iter().enumerate() {
        flow.sub_heading(&format!("Geschäftsführer/in {}", i + 1));
        flow.row("Name", &director_name(d));
        flow.row("Geburtsdatum", &format_date(d.dob));
        flow.row(
            "Steuer-IdNr.",
            &tax_id(d.tax_identification_number.as_ref()),
        );
        flow.row("Anschrift", &address_line(&d.address));
        let mut contact = Vec::new();
        if let Some(e) = d.email.as_deref().filter(|s| !s.trim().is_empty()) {
            contact.push(format!("E-Mail: {e}"));
        }
        if let Some(p) = d.phone.as_deref().filter(|s| !s.trim().is_empty()) {
            contact.push(format!("Telefon: {p}"));
        }
        if !contact.is_empty() {
            flow.row_with(
                "Kontakt (nicht Teil der Übermittlung)",
                &contact.join("\n"),
                true,
            );
        }
    }

    // 5. Gesellschafter.
    flow.heading("5. Gesellschafter");
    let individuals: Vec<String> = reg
        .shareholders
        .individuals
        .iter()
        .map(|s| {
            person_text(
                &s.first_name,
                &s.last_name,
                s.dob,
                s.tax_identification_number.as_ref(),
                &s.address,
                s.share_percentage,
            )
        })
        .collect();
    let entities: Vec<String> = reg
        .shareholders
        .entities
        .iter()
        .map(|s| entity_text(&s.name, &s.address, s.share_percentage))
        .collect();
    // Each share's whole-euro nominal amount, as the ELSTER XML files it.
    let nominal = reg.nominal_amounts();
    let with_nominal = |(text, amount): (String, &i64)| -> String {
        format!("{text}, Nennbetrag {}", euros(*amount))
    };
    let individuals: Vec<String> = individuals
        .into_iter()
        .zip(&nominal)
        .map(with_nominal)
        .collect();
    let entities: Vec<String> = entities
        .into_iter()
        .zip(&nominal[individuals.len()..])
        .map(with_nominal)
        .collect();
    let shares = reg
        .shareholders
        .individuals
        .iter()
        .map(|s| s.share_percentage)
        .chain(reg.shareholders.entities.iter().map(|s| s.share_percentage));
    holder_rows(flow, &individuals, &entities, shares);

    bank(flow, "6", reg.iban.as_deref(), reg.bic.as_deref());
    estimates(flow, "7", &reg.financial_estimates);
    vat(flow, "8", &reg.vat, &reg.financial_estimates);
    payroll(flow, "9", reg.has_employees, reg.payroll.as_ref());

    let signers: Vec<String> = reg.directors.iter().map(director_name).collect();
    let caption = if signers.is_empty() {
        "Unterschrift (gesetzliche/r Vertreter/in)".to_owned()
    } else {
        format!("Unterschrift Geschäftsführung: {}", signers.join(", "))
    };
    signature(flow, &reg.address.city, ctx.created_on, &caption);
}

/// Assigns each block to a page and a y; returns per page the `(block index, y)` list.
fn paginate(blocks: &[Block]) -> Vec<Vec<(usize, f32)>> {
    let mut pages: Vec<Vec<(usize, f32)>> = vec![Vec::new()];
    let mut y = TOP;
    let mut i = 0;
    while i < blocks.len() {
        // A heading travels with the block after it (and that one's heading, and so on).
        let mut group_end = i;
        while group_end + 1 < blocks.len() && blocks[group_end].keep_with_next() {
            group_end += 1;
        }
        let group: f32 = blocks[i..=group_end].iter().map(Block::height).sum();
        let page_empty = pages.last().is_none_or(|p| p.is_empty());
        if y + group > BOTTOM + 1e-3 && !page_empty {
            pages.push(Vec::new());
            y = TOP;
            // No leading space on a new page.
            while i < blocks.len() && matches!(blocks[i], Block::Space(_)) {
                i += 1;
            }
            continue;
        }
        for (k, block) in blocks.iter().enumerate().take(group_end + 1).skip(i) {
            if let Some(page) = pages.last_mut() {
                page.push((k, y));
            }
            y += block.height();
        }
        i = group_end + 1;
    }
    pages
}

fn draw_block(
    surface: &mut Surface,
    fonts: &Fonts,
    block: &Block,
    y: f32,
    signature: &SignaturePath,
) {
    match block {
        Block::Para {
            bold,
            size,
            color,
            lines,
        } => {
            let face = if *bold { &fonts.bold } else { &fonts.regular };
            draw_lines(surface, face, lines, MARGIN_X, y, *size, *color);
        }
        Block::Heading(run) => {
            let size = HEADING_SIZE;
            draw_lines(
                surface,
                &fonts.bold,
                std::slice::from_ref(run),
                MARGIN_X,
                y,
                size,
                ACCENT,
            );
            pdf::hline(
                surface,
                MARGIN_X,
                MARGIN_X + WIDTH,
                y + size * LINE_HEIGHT + 2.0,
                (150, 160, 185),
            );
        }
        Block::SubHeading(run) => {
            draw_lines(
                surface,
                &fonts.bold,
                std::slice::from_ref(run),
                MARGIN_X,
                y,
                ROW_SIZE,
                BLACK,
            );
        }
        Block::Row {
            label,
            value,
            muted,
        } => {
            let color = if *muted { GREY } else { BLACK };
            draw_lines(
                surface,
                &fonts.bold,
                label,
                MARGIN_X,
                y,
                ROW_SIZE,
                LABEL_GREY,
            );
            draw_lines(
                surface,
                &fonts.regular,
                value,
                MARGIN_X + LABEL_WIDTH,
                y,
                ROW_SIZE,
                color,
            );
        }
        Block::Space(_) => {}
        Block::Signature {
            place_date,
            caption,
        } => {
            draw_lines(
                surface,
                &fonts.regular,
                place_date,
                MARGIN_X,
                y,
                PLACE_SIZE,
                BLACK,
            );
            let y = y + place_date.len() as f32 * LINE_HEIGHT * PLACE_SIZE + 4.0;
            let rect = Rect {
                x: MARGIN_X,
                y,
                w: SIGNATURE_WIDTH,
                h: SIGNATURE_HEIGHT,
            };
            pdf::draw_signature(surface, signature, rect);
            pdf::hline(
                surface,
                MARGIN_X,
                MARGIN_X + SIGNATURE_WIDTH,
                y + SIGNATURE_HEIGHT + 1.0,
                GREY,
            );
            draw_lines(
                surface,
                &fonts.regular,
                caption,
                MARGIN_X,
                y + SIGNATURE_HEIGHT + 4.0,
                8.0,
                BLACK,
            );
        }
    }
}

fn draw_lines(
    surface: &mut Surface,
    face: &text::Face,
    lines: &[Run],
    x: f32,
    y: f32,
    size: f32,
    (r, g, b): (u8, u8, u8),
) {
    surface.set_fill(Some(pdf::fill(rgb::Color::new(r, g, b))));
    for (i, line) in lines.iter().enumerate() {
        let baseline = y + (i as f32 * LINE_HEIGHT + text::ASCENT) * size;
        text::draw_run(surface, face, line, x, baseline, size, 1.0);
    }
}

/// Footer: document name on the left, "Seite x von y" on the right.
fn footer(surface: &mut Surface, fonts: &Fonts, left: &Run, page: usize, pages: usize) {
    let size = 7.5;
    let y = A4_HEIGHT - 30.0;
    pdf::hline(
        surface,
        MARGIN_X,
        MARGIN_X + WIDTH,
        y - 10.0,
        (170, 170, 170),
    );
    let right = text::shape(&fonts.regular, &format!("Seite {page} von {pages}"));
    let right_w = right.width_em() * size;
    surface.set_fill(Some(pdf::fill(rgb::Color::new(90, 90, 90))));
    // The left text is squeezed so that it never runs into the page number.
    let room = WIDTH - right_w - 12.0;
    let squash = (room / (left.width_em() * size).max(1.0)).min(1.0);
    text::draw_run(surface, &fonts.regular, left, MARGIN_X, y, size, squash);
    text::draw_run(
        surface,
        &fonts.regular,
        &right,
        MARGIN_X + WIDTH - right_w,
        y,
        size,
        1.0,
    );
}

pub(crate) fn render(
    reg: &TaxRegistration,
    ctx: &TaxSummaryContext,
) -> Result<Vec<u8>, RenderError> {
    let kind = legal_form(reg.legal_form);
    let doc = Document {
        name: &reg.name,
        kind,
        environment: reg.environment,
        signature: &reg.signature_path,
    };
    render_document(&doc, ctx, |flow| build(reg, ctx, flow))
}

pub(crate) fn render_partnership(
    reg: &GbrTaxRegistration,
    ctx: &TaxSummaryContext,
) -> Result<Vec<u8>, RenderError> {
    let doc = Document {
        name: &reg.name,
        kind: reg.legal_form.german(),
        environment: reg.environment,
        signature: &reg.signature_path,
    };
    render_document(&doc, ctx, |flow| build_partnership(reg, ctx, flow))
}

/// What the pages of a summary need besides its blocks.
struct Document<'a> {
    name: &'a str,
    /// The legal form for the metadata (`GmbH`, `GbR` ...).
    kind: &'a str,
    environment: Environment,
    signature: &'a SignaturePath,
}

fn render_document(
    doc: &Document,
    ctx: &TaxSummaryContext,
    build: impl FnOnce(&mut Flow),
) -> Result<Vec<u8>, RenderError> {
    let fonts = text::fonts()?;
    let mut flow = Flow {
        fonts,
        blocks: Vec::new(),
    };
    build(&mut flow);
    let blocks = flow.blocks;
    let pages = paginate(&blocks);
    let footer_left = text::shape(&fonts.regular, &format!("{} \u{2013} {TITLE}", doc.name));

    let mut document = pdf::new_document()?;
    document.set_metadata(pdf::metadata(
        format!("{TITLE} - {}", doc.name),
        format!(
            "Zusammenfassung des Fragebogens zur steuerlichen Erfassung für {} ({})",
            doc.name, doc.kind
        ),
        None,
        ctx.timestamp,
    ));
    let settings = PageSettings::from_wh(A4_WIDTH, A4_HEIGHT).ok_or(RenderError::Font)?;
    let total = pages.len();
    for (p, placed) in pages.iter().enumerate() {
        let mut page = document.start_page_with(settings.clone());
        let mut surface = page.surface();
        for &(i, y) in placed {
            draw_block(&mut surface, fonts, &blocks[i], y, doc.signature);
        }
        footer(&mut surface, fonts, &footer_left, p + 1, total);
        if doc.environment == Environment::Sandbox {
            pdf::sandbox_mark(&mut surface)?;
        }
    }
    pdf::finish(document)
}
