//! The power of attorney ("Vollmacht zur Einreichung") for the `assisted` package.
//!
//! One A4 page: the owner authorises the service operator to file the trade registration and to
//! receive the trade office's correspondence on the owner's and the company's behalf. Where the
//! preferred language is not German a courtesy translation follows the German text, marked as
//! non-binding.

use domain::trade::{Environment, Language, Owner, TradeRegistration};
use krilla::color::rgb;
use krilla::geom::PathBuilder;
use krilla::page::PageSettings;
use krilla::paint::Stroke;
use krilla::surface::Surface;

use crate::pdf::{self, A4_HEIGHT, A4_WIDTH};
use crate::text::{self, Face, LINE_HEIGHT, Rect, Run};
use crate::{PowerOfAttorneyContext, RenderError, format_date};

const MARGIN_X: f32 = 62.0;
const TOP: f32 = 56.0;
const BOTTOM: f32 = A4_HEIGHT - 48.0;
const WIDTH: f32 = A4_WIDTH - 2.0 * MARGIN_X;
/// Height of the signature box.
const SIGNATURE_HEIGHT: f32 = 52.0;
const SIGNATURE_WIDTH: f32 = 210.0;

/// The translated body for one language.
struct Translation {
    heading: &'static str,
    note: &'static str,
    body: fn(&Facts) -> Vec<String>,
}

/// The values the text is built from.
struct Facts {
    owner_name: String,
    owner_dob: String,
    owner_address: String,
    company: String,
    legal_form: &'static str,
    establishment: String,
    operator_name: String,
    operator_address: String,
    start: String,
}

fn german(f: &Facts) -> Vec<String> {
    vec![
        format!(
            "Ich, {}, geboren am {}, wohnhaft {}, bevollmächtige hiermit",
            f.owner_name, f.owner_dob, f.owner_address
        ),
        format!("{}, {},", f.operator_name, f.operator_address),
        format!(
            "in meinem Namen und im Namen des Unternehmens {} (Rechtsform: {}), Betriebsstätte {}, die Gewerbeanmeldung nach § 14 der Gewerbeordnung (Vordruck GewA 1) für die Aufnahme der Tätigkeit am {} bei der zuständigen Behörde einzureichen, dabei alle hierfür erforderlichen Erklärungen abzugeben und Unterlagen vorzulegen sowie Schreiben, Bescheide und Bescheinigungen der Behörde zu dieser Gewerbeanmeldung, insbesondere die Bestätigung über den Empfang der Gewerbeanzeige, entgegenzunehmen.",
            f.company, f.legal_form, f.establishment, f.start
        ),
        "Die Vollmacht gilt für diese Angelegenheit bis zu ihrem Abschluss. Sie kann jederzeit widerrufen werden.".to_owned(),
    ]
}

fn english(f: &Facts) -> Vec<String> {
    vec![
        format!(
            "I, {}, born on {}, residing at {}, hereby authorise",
            f.owner_name, f.owner_dob, f.owner_address
        ),
        format!("{}, {},", f.operator_name, f.operator_address),
        format!(
            "on my behalf and on behalf of the business {} (legal form: {}), establishment at {}, to file the trade registration under section 14 of the German Trade Regulation Act (form GewA 1) for the start of business on {} with the competent authority, to make all declarations and submit all documents required for it, and to receive the authority's letters, decisions and certificates concerning this trade registration, in particular the confirmation of receipt of the registration.",
            f.company, f.legal_form, f.establishment, f.start
        ),
        "This power of attorney is valid for this matter until it is concluded. It may be revoked at any time.".to_owned(),
    ]
}

fn french(f: &Facts) -> Vec<String> {
    vec![
        format!(
            "Je soussigné(e), {}, né(e) le {}, demeurant {}, donne par la présente pouvoir à",
            f.owner_name, f.owner_dob, f.owner_address
        ),
        format!("{}, {},", f.operator_name, f.operator_address),
        format!(
            "en mon nom et au nom de l'entreprise {} (forme juridique : {}), établissement situé {}, de déposer auprès de l'autorité compétente la déclaration d'activité professionnelle prévue à l'article 14 du code allemand des activités professionnelles (formulaire GewA 1) pour le début de l'activité le {}, de faire toutes les déclarations et de produire tous les documents nécessaires à cet effet, ainsi que de recevoir les courriers, décisions et attestations de l'autorité relatifs à cette déclaration, en particulier l'accusé de réception de la déclaration.",
            f.company, f.legal_form, f.establishment, f.start
        ),
        "Ce pouvoir est valable pour cette affaire jusqu'à sa conclusion. Il peut être révoqué à tout moment.".to_owned(),
    ]
}

fn italian(f: &Facts) -> Vec<String> {
    vec![
        format!(
            "Io sottoscritto/a, {}, nato/a il {}, residente in {}, con la presente conferisco delega a",
            f.owner_name, f.owner_dob, f.owner_address
        ),
        format!("{}, {},", f.operator_name, f.operator_address),
        format!(
            "a presentare in mio nome e in nome dell'impresa {} (forma giuridica: {}), sede operativa {}, presso l'autorità competente la denuncia di inizio attività ai sensi del § 14 del codice tedesco delle attività economiche (modulo GewA 1) per l'inizio dell'attività il {}, a rendere tutte le dichiarazioni e a presentare tutti i documenti a tal fine necessari, nonché a ricevere le comunicazioni, i provvedimenti e le attestazioni dell'autorità relativi a tale denuncia, in particolare la conferma di ricevimento della denuncia.",
            f.company, f.legal_form, f.establishment, f.start
        ),
        "La presente delega è valida per questa pratica fino alla sua conclusione. Può essere revocata in qualsiasi momento.".to_owned(),
    ]
}

fn spanish(f: &Facts) -> Vec<String> {
    vec![
        format!(
            "Yo, {}, nacido/a el {}, con domicilio en {}, por la presente autorizo a",
            f.owner_name, f.owner_dob, f.owner_address
        ),
        format!("{}, {},", f.operator_name, f.operator_address),
        format!(
            "para que, en mi nombre y en nombre de la empresa {} (forma jurídica: {}), establecimiento en {}, presente ante la autoridad competente la declaración de actividad comercial conforme al artículo 14 del Código alemán de Actividades Comerciales (formulario GewA 1) para el inicio de la actividad el {}, realice todas las declaraciones y aporte todos los documentos necesarios a tal efecto, y reciba las comunicaciones, resoluciones y certificados de la autoridad relativos a esta declaración, en particular el acuse de recibo de la declaración.",
            f.company, f.legal_form, f.establishment, f.start
        ),
        "Este poder es válido para este asunto hasta su conclusión. Puede revocarse en cualquier momento.".to_owned(),
    ]
}

fn translation(lang: Language) -> Option<Translation> {
    let (heading, note, body): (&str, &str, fn(&Facts) -> Vec<String>) = match lang {
        Language::De => return None,
        Language::En => (
            "Power of attorney to file the trade registration",
            "Courtesy translation (English). Only the German text above is binding.",
            english,
        ),
        Language::Fr => (
            "Procuration pour le dépôt de la déclaration d'activité",
            "Traduction de courtoisie (français). Seul le texte allemand ci-dessus fait foi.",
            french,
        ),
        Language::It => (
            "Delega per la presentazione della denuncia di attività",
            "Traduzione di cortesia (italiano). Fa fede esclusivamente il testo tedesco sopra riportato.",
            italian,
        ),
        Language::Es => (
            "Poder para presentar la declaración de actividad comercial",
            "Traducción de cortesía (español). Solo el texto alemán anterior es vinculante.",
            spanish,
        ),
    };
    Some(Translation {
        heading,
        note,
        body,
    })
}

fn one_line_address(reg: &TradeRegistration, owner: &Owner) -> String {
    match &owner.address {
        Some(a) => {
            let mut parts = vec![a.street.clone()];
            if let Some(s) = a.street_second_line.as_deref().filter(|s| !s.trim().is_empty()) {
                parts.push(s.to_owned());
            }
            parts.push(format!("{} {}", a.zip, a.city));
            if !a.country.is_germany() {
                parts.push(a.country.german_name().to_owned());
            }
            parts.join(", ")
        }
        None => establishment(reg),
    }
}

fn establishment(reg: &TradeRegistration) -> String {
    let o = &reg.registered_office;
    let mut parts = vec![o.street.clone()];
    if let Some(s) = o.street_second_line.as_deref().filter(|s| !s.trim().is_empty()) {
        parts.push(s.to_owned());
    }
    parts.push(format!("{} {}", o.zip, o.city));
    parts.join(", ")
}

/// One block of text: a face, a size and paragraphs; spacing after each paragraph in em.
struct Block<'a> {
    face: &'a Face,
    size: f32,
    paragraphs: Vec<String>,
    gap_after: f32,
    color: rgb::Color,
}

/// Lays out all blocks with a common scale factor so that everything fits the page.
fn measure(blocks: &[Block], scale: f32) -> Option<(f32, Vec<Vec<(Run, f32)>>)> {
    let mut total = 0.0;
    let mut laid = Vec::new();
    for b in blocks {
        let size = b.size * scale;
        let mut lines = Vec::new();
        for p in &b.paragraphs {
            let run = text::shape(b.face, p);
            let l = text::layout(
                std::slice::from_ref(&run),
                Rect {
                    x: 0.0,
                    y: 0.0,
                    w: WIDTH,
                    h: f32::MAX,
                },
                text::Fit {
                    max: size,
                    min: size,
                    valign: text::VAlign::Top,
                },
            );
            for line in l.lines {
                lines.push((line, l.size));
                total += LINE_HEIGHT * l.size;
            }
            total += b.gap_after * size;
        }
        laid.push(lines);
    }
    Some((total, laid))
}

pub(crate) fn render(
    reg: &TradeRegistration,
    index: usize,
    ctx: &PowerOfAttorneyContext,
) -> Result<Vec<u8>, RenderError> {
    let owner = reg
        .owners
        .get(index)
        .ok_or(RenderError::NoSuchOwner(index))?;
    let signature = owner
        .signatures
        .power_of_attorney
        .as_ref()
        .ok_or(RenderError::MissingSignature(index))?;
    let fonts = text::fonts()?;
    let facts = Facts {
        owner_name: format!("{} {}", owner.first_name, owner.last_name),
        owner_dob: format_date(owner.dob),
        owner_address: one_line_address(reg, owner),
        company: reg.name.clone(),
        legal_form: reg.legal_form.german_name(),
        establishment: establishment(reg),
        operator_name: ctx.operator.name.clone(),
        operator_address: ctx.operator.address.clone(),
        start: format_date(reg.operational_activity_start_date),
    };
    let place = ctx
        .place
        .clone()
        .or_else(|| owner.address.as_ref().map(|a| a.city.clone()))
        .unwrap_or_else(|| reg.registered_office.city.clone());

    let black = rgb::Color::black();
    let grey = rgb::Color::new(70, 70, 70);
    let mut blocks = vec![
        Block {
            face: &fonts.bold,
            size: 15.0,
            paragraphs: vec!["Vollmacht zur Einreichung der Gewerbeanmeldung".to_owned()],
            gap_after: 0.6,
            color: black,
        },
        Block {
            face: &fonts.regular,
            size: 10.0,
            paragraphs: german(&facts),
            gap_after: 0.6,
            color: black,
        },
        Block {
            face: &fonts.regular,
            size: 10.0,
            paragraphs: vec![format!("{place}, den {}", format_date(ctx.created_on))],
            gap_after: 0.4,
            color: black,
        },
    ];
    let translation = translation(reg.client_preferred_language);
    // Index of the block after which the signature box goes.
    let signature_after = blocks.len() - 1;
    if let Some(t) = &translation {
        blocks.push(Block {
            face: &fonts.bold,
            size: 10.0,
            paragraphs: vec![t.heading.to_owned()],
            gap_after: 0.3,
            color: grey,
        });
        blocks.push(Block {
            face: &fonts.regular,
            size: 8.0,
            paragraphs: vec![t.note.to_owned()],
            gap_after: 0.5,
            color: grey,
        });
        blocks.push(Block {
            face: &fonts.regular,
            size: 8.5,
            paragraphs: (t.body)(&facts),
            gap_after: 0.5,
            color: grey,
        });
    }

    // Shrink everything uniformly until it fits with the signature box.
    let available = BOTTOM - TOP - SIGNATURE_HEIGHT - 40.0;
    let mut scale = 1.0;
    let (_, laid) = loop {
        match measure(&blocks, scale) {
            Some((h, laid)) if h <= available || scale <= 0.3 => break (h, laid),
            _ => scale -= 0.05,
        }
    };

    let mut document = pdf::new_document()?;
    document.set_metadata(pdf::metadata(
        format!("Vollmacht - {}", facts.owner_name),
        format!(
            "Vollmacht zur Einreichung der Gewerbeanmeldung für {}",
            reg.name
        ),
        Some(facts.owner_name.clone()),
        ctx.timestamp,
    ));
    let settings = PageSettings::from_wh(A4_WIDTH, A4_HEIGHT).ok_or(RenderError::Font)?;
    {
        let mut page = document.start_page_with(settings);
        let mut surface = page.surface();
        let mut y = TOP;
        for (i, (block, lines)) in blocks.iter().zip(&laid).enumerate() {
            surface.set_fill(Some(pdf::fill(block.color)));
            let per_paragraph = lines.len();
            let _ = per_paragraph;
            for (run, size) in lines {
                text::draw_run(
                    &mut surface,
                    block.face,
                    run,
                    MARGIN_X,
                    y + text::ASCENT * size,
                    *size,
                    1.0,
                );
                y += LINE_HEIGHT * size;
            }
            y += block.gap_after * block.size * scale * block.paragraphs.len() as f32;
            if i == signature_after {
                y = signature_block(&mut surface, fonts, signature, &facts, y)?;
            }
        }
        if reg.environment == Environment::Sandbox {
            pdf::sandbox_mark(&mut surface)?;
        }
    }
    pdf::finish(document)
}

/// Draws the signature box and caption at `y`; returns the y below it.
fn signature_block(
    surface: &mut Surface,
    fonts: &text::Fonts,
    signature: &domain::signature::SignaturePath,
    facts: &Facts,
    y: f32,
) -> Result<f32, RenderError> {
    let rect = Rect {
        x: MARGIN_X,
        y,
        w: SIGNATURE_WIDTH,
        h: SIGNATURE_HEIGHT,
    };
    pdf::draw_signature(surface, signature, rect);
    // Signature line and caption.
    let mut line = PathBuilder::new();
    line.move_to(MARGIN_X, y + SIGNATURE_HEIGHT + 1.0);
    line.line_to(MARGIN_X + SIGNATURE_WIDTH, y + SIGNATURE_HEIGHT + 1.0);
    if let Some(path) = line.finish() {
        surface.set_fill(None);
        surface.set_stroke(Some(Stroke {
            paint: rgb::Color::new(90, 90, 90).into(),
            width: 0.6,
            ..Default::default()
        }));
        surface.draw_path(&path);
        surface.set_stroke(None);
    }
    surface.set_fill(Some(pdf::fill(rgb::Color::black())));
    let caption = text::shape(
        &fonts.regular,
        &format!("Unterschrift {} (Vollmachtgeber/in)", facts.owner_name),
    );
    let size = 8.0;
    text::draw_run(
        surface,
        &fonts.regular,
        &caption,
        MARGIN_X,
        y + SIGNATURE_HEIGHT + 1.0 + text::ASCENT * size + 1.0,
        size,
        1.0,
    );
    Ok(y + SIGNATURE_HEIGHT + 1.0 + LINE_HEIGHT * size + 18.0)
}
