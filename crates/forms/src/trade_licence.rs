//! The sample trade licence of the sandbox: "Gewerbeanmeldung – Empfangsbescheinigung (Muster)".
//!
//! A trade office confirms a trade registration with a receipt of the notice (§ 15 Abs. 1 GewO,
//! colloquially "Gewerbeschein"). In the sandbox no trade office exists, so the service renders
//! a look-alike for integrators to download and display. It is a sample by construction: every
//! page carries the "MUSTER - SANDBOX" mark whatever the registration's environment, and the
//! text says that no authority issued it.
//!
//! One A4 page: the issuing office, title, the receipt sentence, a facts table (reference,
//! business, persons, establishment, activity, start, fee) and the notes. Long values shrink the
//! whole page uniformly so it always stays one page.

use domain::trade::{BusinessType, TradeRegistration};
use krilla::page::PageSettings;

use crate::canvas::Canvas;
use crate::flow::{Flow, Item};
use crate::font;
use crate::pdf::{self, A4_HEIGHT, A4_WIDTH};
use crate::{RenderError, TradeLicenceContext, format_date, street_zip_city};

const LABEL_WIDTH: f32 = 132.0;
const BODY: f32 = 10.0;
const GREY: (u8, u8, u8) = (70, 70, 70);
const BLACK: (u8, u8, u8) = (0, 0, 0);
const RED: (u8, u8, u8) = (200, 30, 30);

fn business_type_de(t: BusinessType) -> &'static str {
    match t {
        BusinessType::Industry => "Industrie",
        BusinessType::Trade => "Handel",
        BusinessType::Craft => "Handwerk",
        BusinessType::Other => "Sonstiges",
    }
}

/// Cents as German euros: `1.234,50 EUR`.
pub(crate) fn euros_cents(cents: i64) -> String {
    let sign = if cents < 0 { "-" } else { "" };
    let abs = cents.unsigned_abs();
    // The whole euros of any i64's magnitude fit an i64 (|i64::MIN| / 100 does).
    let whole = domain::money::grouped_euros((abs / 100) as i64);
    format!("{sign}{whole},{:02}\u{a0}EUR", abs % 100)
}

fn establishment(reg: &TradeRegistration) -> String {
    let o = &reg.registered_office;
    street_zip_city(&o.street, o.street_second_line.as_deref(), &o.zip, &o.city).join(", ")
}

pub(crate) fn render(
    reg: &TradeRegistration,
    ctx: &TradeLicenceContext,
) -> Result<Vec<u8>, RenderError> {
    let fonts = font::fonts()?;
    let para = |bold: bool, size: f32, color: (u8, u8, u8), s: &str| Item::Para {
        bold,
        size,
        color,
        run: font::shape_in(fonts, bold, s),
    };
    let row = |label: &str, lines: Vec<String>| Item::Row {
        label: font::shape_in(fonts, true, label),
        lines: lines
            .iter()
            .map(|l| font::shape_in(fonts, false, l))
            .collect(),
    };

    let mut office = vec![ctx.trade_office_name.clone()];
    office.extend(ctx.trade_office_address.clone());
    let receipt = match ctx.received_on {
        Some(d) => format!(
            "Die Gewerbeanzeige (Vordruck GewA 1) ist am {} bei der oben genannten Behörde eingegangen. Der Empfang der Anzeige wird hiermit bescheinigt.",
            format_date(d)
        ),
        None => "Der Empfang der Gewerbeanzeige (Vordruck GewA 1) bei der oben genannten Behörde wird hiermit bescheinigt.".to_owned(),
    };
    let mut business = vec![
        reg.name.clone(),
        format!("Rechtsform: {}", reg.legal_form.german_name()),
    ];
    if let Some(n) = &reg.registration_number {
        business.push(format!("Registernummer: {n}"));
    }
    let persons: Vec<String> = reg
        .owners
        .iter()
        .map(|o| {
            format!(
                "{} {}, geboren am {}",
                o.first_name,
                o.last_name,
                format_date(o.dob)
            )
        })
        .collect();
    let persons_label = if reg.legal_form.is_legal_person() {
        "Vertretungsberechtigte"
    } else {
        "Gewerbetreibende"
    };
    let mut place = vec![establishment(reg)];
    if let Some(key) = &ctx.municipality_key {
        place.push(format!("Gemeindekennzahl: {key}"));
    }
    let kinds = reg
        .business_type
        .iter()
        .map(|b| business_type_de(*b))
        .collect::<Vec<_>>()
        .join(", ");
    let fee = match ctx.fee_cents {
        Some(c) => format!(
            "{} ({})",
            euros_cents(c),
            if ctx.fee_paid { "bezahlt" } else { "offen" }
        ),
        None => "nicht festgesetzt".to_owned(),
    };

    let mut items = vec![para(true, 11.0, BLACK, &ctx.trade_office_name)];
    if let Some(a) = &ctx.trade_office_address {
        items.push(para(false, 9.0, GREY, a));
    }
    items.extend([
        Item::Space(22.0),
        para(
            true,
            16.0,
            BLACK,
            "Gewerbeanmeldung \u{2013} Empfangsbescheinigung (Muster)",
        ),
        para(
            false,
            9.0,
            GREY,
            "Bescheinigung über den Empfang der Gewerbeanzeige nach § 15 Abs. 1 der Gewerbeordnung (GewO)",
        ),
        Item::Space(14.0),
        para(false, BODY, BLACK, &receipt),
        Item::Space(12.0),
        row("Ausstellende Behörde", office),
        row("Aktenzeichen", vec![ctx.reference.clone()]),
        row("Datum der Bescheinigung", vec![format_date(ctx.issued_on)]),
        row("Betrieb", business),
        row(persons_label, persons),
        row("Betriebsstätte", place),
        row("Angemeldete Tätigkeit", vec![reg.purpose.clone()]),
        row("Art des Betriebes", vec![kinds]),
        row(
            "Beginn der Tätigkeit",
            vec![format_date(reg.operational_activity_start_date)],
        ),
        row("Gebühr", vec![fee]),
        Item::Space(10.0),
        Item::Rule,
        Item::Space(8.0),
        para(
            false,
            8.5,
            GREY,
            "Diese Bescheinigung berechtigt nicht zur Ausübung einer erlaubnispflichtigen Tätigkeit und ersetzt keine Erlaubnis, Eintragung oder Genehmigung, die nach anderen Vorschriften erforderlich ist.",
        ),
        Item::Space(6.0),
        para(
            true,
            9.0,
            RED,
            "Muster aus der Sandbox des Registration Filing Service: von keiner Behörde ausgestellt, ohne Rechtswirkung und kein Nachweis einer Gewerbeanmeldung.",
        ),
        Item::Space(14.0),
        para(
            false,
            9.0,
            BLACK,
            "Im Auftrag \u{2013} maschinell erstelltes Muster, ohne Unterschrift",
        ),
    ]);

    // Shrink everything uniformly until it fits the page (nine owners, long names).
    let flow = Flow {
        items,
        label_width: LABEL_WIDTH,
    };
    let scale = flow.fitting_scale(fonts);

    let mut document = pdf::new_document()?;
    document.set_metadata(pdf::metadata(
        format!(
            "Gewerbeanmeldung \u{2013} Empfangsbescheinigung (Muster) - {}",
            reg.name
        ),
        format!(
            "Muster einer Empfangsbescheinigung (Sandbox) für {}, Aktenzeichen {}",
            reg.name, ctx.reference
        ),
        Some(ctx.trade_office_name.clone()),
        ctx.timestamp,
    ));
    let settings = PageSettings::from_wh(A4_WIDTH, A4_HEIGHT).ok_or(RenderError::Font)?;
    {
        let mut page = document.start_page_with(settings);
        let mut surface = page.surface();
        flow.run(scale, fonts, Some(&mut surface as &mut dyn Canvas));
        // Always: a sample licence must never pass for a real one.
        pdf::sandbox_mark(&mut surface)?;
    }
    pdf::finish(document)
}

#[cfg(test)]
mod tests {
    use super::euros_cents;

    #[test]
    fn euros_in_german_notation() {
        assert_eq!(euros_cents(2600), "26,00\u{a0}EUR");
        assert_eq!(euros_cents(5), "0,05\u{a0}EUR");
        assert_eq!(euros_cents(123_456_789), "1.234.567,89\u{a0}EUR");
        assert_eq!(euros_cents(-150), "-1,50\u{a0}EUR");
    }
}
