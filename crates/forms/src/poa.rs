//! The power of attorney ("Vollmacht zur Einreichung") for the `assisted` package.
//!
//! One A4 page: the owner authorises the service operator to file the trade registration and to
//! receive the trade office's correspondence on the owner's and the company's behalf. Where the
//! preferred language is not German a courtesy translation follows the German text, marked as
//! non-binding.

use std::sync::OnceLock;

use domain::trade::{Environment, Language, Owner, TradeRegistration};

use crate::canvas::Canvas;
use crate::direct::{Document, Info, Preparer, Template};
use crate::flow::{Flow, Item};
use crate::font;
use crate::pdf;
use crate::{Operator, PowerOfAttorneyContext, RenderError, format_date, street_zip_city};

/// The translated body for one language.
struct Translation {
    heading: &'static str,
    note: &'static str,
    body: &'static Body,
}

/// The values the text is built from.
#[derive(Default)]
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

/// A courtesy translation's text around the facts: the sentence giving power of attorney
/// (the parts around the owner's name, date of birth and address, then the operator, then the
/// parts around the company, legal form, establishment and start) and the closing paragraph.
struct Body {
    intro: [&'static str; 4],
    mandate: [&'static str; 5],
    closing: &'static str,
}

impl Body {
    /// The paragraphs' parts with `f` filled in; all but the last form one sentence.
    fn text(&self, f: &Facts) -> Vec<String> {
        let [i0, i1, i2, i3] = self.intro;
        let [m0, m1, m2, m3, m4] = self.mandate;
        vec![
            format!(
                "{i0}{}{i1}{}{i2}{}{i3}",
                f.owner_name, f.owner_dob, f.owner_address
            ),
            format!("{}, {},", f.operator_name, f.operator_address),
            format!(
                "{m0}{}{m1}{}{m2}{}{m3}{}{m4}",
                f.company, f.legal_form, f.establishment, f.start
            ),
            self.closing.to_owned(),
        ]
    }
}

/// The binding German text; the facts table above it names the parties.
fn german(f: &Facts) -> Vec<String> {
    vec![
        format!(
            "Hiermit bevollmächtige ich, {}, die oben genannte Bevollmächtigte, in meinem Namen und im Namen des oben genannten Unternehmens {} die Gewerbeanmeldung nach § 14 der Gewerbeordnung (Vordruck GewA 1) für die oben genannte Betriebsstätte und die Aufnahme der Tätigkeit am {} bei der zuständigen Behörde einzureichen, dabei alle hierfür erforderlichen Erklärungen abzugeben und Unterlagen vorzulegen sowie Schreiben, Bescheide und Bescheinigungen der Behörde zu dieser Gewerbeanmeldung, insbesondere die Bestätigung über den Empfang der Gewerbeanzeige, entgegenzunehmen.",
            f.owner_name, f.company, f.start
        ),
        "Die Vollmacht gilt für diese Angelegenheit bis zu ihrem Abschluss. Sie kann jederzeit widerrufen werden.".to_owned(),
    ]
}

const ENGLISH: Body = Body {
    intro: ["I, ", ", born on ", ", residing at ", ", hereby authorise"],
    mandate: [
        "on my behalf and on behalf of the business ",
        " (legal form: ",
        "), establishment at ",
        ", to file the trade registration under section 14 of the German Trade Regulation Act (form GewA 1) for the start of business on ",
        " with the competent authority, to make all declarations and submit all documents required for it, and to receive the authority's letters, decisions and certificates concerning this trade registration, in particular the confirmation of receipt of the registration.",
    ],
    closing: "This power of attorney is valid for this matter until it is concluded. It may be revoked at any time.",
};

const FRENCH: Body = Body {
    intro: [
        "Je soussigné(e), ",
        ", né(e) le ",
        ", demeurant ",
        ", donne par la présente pouvoir à",
    ],
    mandate: [
        "en mon nom et au nom de l'entreprise ",
        " (forme juridique : ",
        "), établissement situé ",
        ", de déposer auprès de l'autorité compétente la déclaration d'activité professionnelle prévue à l'article 14 du code allemand des activités professionnelles (formulaire GewA 1) pour le début de l'activité le ",
        ", de faire toutes les déclarations et de produire tous les documents nécessaires à cet effet, ainsi que de recevoir les courriers, décisions et attestations de l'autorité relatifs à cette déclaration, en particulier l'accusé de réception de la déclaration.",
    ],
    closing: "Ce pouvoir est valable pour cette affaire jusqu'à sa conclusion. Il peut être révoqué à tout moment.",
};

const ITALIAN: Body = Body {
    intro: [
        "Io sottoscritto/a, ",
        ", nato/a il ",
        ", residente in ",
        ", con la presente conferisco delega a",
    ],
    mandate: [
        "a presentare in mio nome e in nome dell'impresa ",
        " (forma giuridica: ",
        "), sede operativa ",
        ", presso l'autorità competente la denuncia di inizio attività ai sensi del § 14 del codice tedesco delle attività economiche (modulo GewA 1) per l'inizio dell'attività il ",
        ", a rendere tutte le dichiarazioni e a presentare tutti i documenti a tal fine necessari, nonché a ricevere le comunicazioni, i provvedimenti e le attestazioni dell'autorità relativi a tale denuncia, in particolare la conferma di ricevimento della denuncia.",
    ],
    closing: "La presente delega è valida per questa pratica fino alla sua conclusione. Può essere revocata in qualsiasi momento.",
};

const SPANISH: Body = Body {
    intro: [
        "Yo, ",
        ", nacido/a el ",
        ", con domicilio en ",
        ", por la presente autorizo a",
    ],
    mandate: [
        "para que, en mi nombre y en nombre de la empresa ",
        " (forma jurídica: ",
        "), establecimiento en ",
        ", presente ante la autoridad competente la declaración de actividad comercial conforme al artículo 14 del Código alemán de Actividades Comerciales (formulario GewA 1) para el inicio de la actividad el ",
        ", realice todas las declaraciones y aporte todos los documentos necesarios a tal efecto, y reciba las comunicaciones, resoluciones y certificados de la autoridad relativos a esta declaración, en particular el acuse de recibo de la declaración.",
    ],
    closing: "Este poder es válido para este asunto hasta su conclusión. Puede revocarse en cualquier momento.",
};

const HEADING: &str = "Vollmacht zur Einreichung der Gewerbeanmeldung";
const SUBTITLE: &str = "Gewerbeanzeige nach § 14 der Gewerbeordnung (GewO), Vordruck GewA 1";
const LABELS: [&str; 4] = [
    "Vollmachtgeber/in",
    "Unternehmen",
    "Bevollmächtigte",
    "Angelegenheit",
];

/// The empty page with fonts prepared for the texts every power of attorney draws (headings,
/// labels, the bodies of all languages without their facts, digits, the sandbox mark); the
/// glyphs of names and addresses that these lack go into each document's own subset.
fn template() -> Result<&'static Template, RenderError> {
    static TEMPLATE: OnceLock<Result<Template, RenderError>> = OnceLock::new();
    TEMPLATE
        .get_or_init(|| {
            let fonts = font::fonts()?;
            let mut preparer = Preparer::new()?;
            preparer.page(|_| Ok(()))?;
            let blank = Facts::default();
            let mut bold: Vec<&str> = vec![HEADING, pdf::SANDBOX_MARK, pdf::SANDBOX_BANNER];
            bold.extend(LABELS);
            let mut regular: Vec<String> = vec![
                SUBTITLE.to_owned(),
                "geboren am Rechtsform: Betriebsstätte: Gewerbeanmeldung (GewA 1), Beginn der \
                 Tätigkeit am , den Unterschrift (Vollmachtgeber/in)"
                    .to_owned(),
                "0123456789 .,;:-/&()'\"ABCDEFGHIJKLMNOPQRSTUVWXYZ abcdefghijklmnopqrstuvwxyz \
                 ÄÖÜäöüß"
                    .to_owned(),
            ];
            regular.extend(german(&blank));
            regular.extend(domain::trade::Reason::ALL.map(|r| reason_de(r).to_owned()));
            for t in Language::ALL.into_iter().filter_map(translation) {
                bold.push(t.heading);
                regular.push(t.note.to_owned());
                regular.extend(t.body.text(&blank));
            }
            for t in bold {
                preparer.include(&fonts.bold, t)?;
            }
            for t in &regular {
                preparer.include(&fonts.regular, t)?;
            }
            preparer.finish()
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn translation(lang: Language) -> Option<Translation> {
    let (heading, note, body): (&str, &str, &Body) = match lang {
        Language::De => return None,
        Language::En => (
            "Power of attorney to file the trade registration",
            "Courtesy translation (English). Only the German text above is binding.",
            &ENGLISH,
        ),
        Language::Fr => (
            "Procuration pour le dépôt de la déclaration d'activité",
            "Traduction de courtoisie (français). Seul le texte allemand ci-dessus fait foi.",
            &FRENCH,
        ),
        Language::It => (
            "Delega per la presentazione della denuncia di attività",
            "Traduzione di cortesia (italiano). Fa fede esclusivamente il testo tedesco sopra riportato.",
            &ITALIAN,
        ),
        Language::Es => (
            "Poder para presentar la declaración de actividad comercial",
            "Traducción de cortesía (español). Solo el texto alemán anterior es vinculante.",
            &SPANISH,
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
            let mut parts =
                street_zip_city(&a.street, a.street_second_line.as_deref(), &a.zip, &a.city);
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
    street_zip_city(&o.street, o.street_second_line.as_deref(), &o.zip, &o.city).join(", ")
}

/// Whom a sandbox power of attorney names when the service's operator is not configured (the
/// sandbox mark says it is no document to file).
pub(crate) const SANDBOX_OPERATOR: &str = "Registration Filing Service (Sandbox-Betreiber)";
pub(crate) const SANDBOX_OPERATOR_ADDRESS: &str = "Anschrift in der Sandbox nicht angegeben";

const LABEL_WIDTH: f32 = 118.0;
const BODY: f32 = 10.0;

fn reason_de(reason: domain::trade::Reason) -> &'static str {
    use domain::trade::Reason::*;
    match reason {
        NewFoundation => "Neugründung",
        Takeover => "Übernahme",
        // Field 25 in the wording of the model of 11.12.2024.
        ReopeningAfterRelocation => "Verlegung des Betriebs aus einem anderen Meldebezirk",
        LegalFormChange => "Wechsel der Rechtsform",
        PartnerEntry => "Gesellschaftereintritt",
        TransformationLaw => "Übergang nach dem Umwandlungsgesetz",
    }
}

pub(crate) fn render(
    reg: &TradeRegistration,
    index: usize,
    ctx: &PowerOfAttorneyContext,
) -> Result<Vec<u8>, RenderError> {
    let (owner, signature) = crate::signed_owner(reg, index, |s| s.power_of_attorney.as_ref())?;
    let operator = match (&ctx.operator, reg.environment) {
        (Some(operator), _) => operator.clone(),
        // A sandbox document carries the sandbox mark; it may name a placeholder.
        (None, Environment::Sandbox) => Operator {
            name: SANDBOX_OPERATOR.to_owned(),
            address: SANDBOX_OPERATOR_ADDRESS.to_owned(),
        },
        (None, Environment::Production) => {
            return Err(RenderError::OperatorNotConfigured);
        }
    };
    let fonts = font::fonts()?;
    let facts = Facts {
        owner_name: format!("{} {}", owner.first_name, owner.last_name),
        owner_dob: format_date(owner.dob),
        owner_address: one_line_address(reg, owner),
        company: reg.name.clone(),
        legal_form: reg.legal_form.german_name(),
        establishment: establishment(reg),
        operator_name: operator.name,
        operator_address: operator.address,
        start: format_date(reg.operational_activity_start_date),
    };
    let place = ctx
        .place
        .clone()
        .or_else(|| owner.address.as_ref().map(|a| a.city.clone()))
        .unwrap_or_else(|| reg.registered_office.city.clone());

    let mut items = vec![
        Item::Para {
            bold: true,
            size: 16.0,
            color: (0, 0, 0),
            run: font::shape_in(fonts, true, HEADING),
        },
        Item::Para {
            bold: false,
            size: 9.0,
            color: (70, 70, 70),
            run: font::shape_in(
                fonts,
                false,
                "Gewerbeanzeige nach § 14 der Gewerbeordnung (GewO), Vordruck GewA 1",
            ),
        },
        Item::Space(16.0),
        Item::Row {
            label: font::shape_in(fonts, true, LABELS[0]),
            lines: vec![
                font::shape_in(fonts, false, &facts.owner_name),
                font::shape_in(fonts, false, &format!("geboren am {}", facts.owner_dob)),
                font::shape_in(fonts, false, &facts.owner_address),
            ],
        },
        Item::Row {
            label: font::shape_in(fonts, true, LABELS[1]),
            lines: vec![
                font::shape_in(fonts, false, &facts.company),
                font::shape_in(fonts, false, &format!("Rechtsform: {}", facts.legal_form)),
                font::shape_in(
                    fonts,
                    false,
                    &format!("Betriebsstätte: {}", facts.establishment),
                ),
            ],
        },
        Item::Row {
            label: font::shape_in(fonts, true, LABELS[2]),
            lines: vec![
                font::shape_in(fonts, false, &facts.operator_name),
                font::shape_in(fonts, false, &facts.operator_address),
            ],
        },
        Item::Row {
            label: font::shape_in(fonts, true, LABELS[3]),
            lines: vec![font::shape_in(
                fonts,
                false,
                &format!(
                    "Gewerbeanmeldung (GewA 1), {}, Beginn der Tätigkeit am {}",
                    reason_de(reg.reason),
                    facts.start
                ),
            )],
        },
        Item::Space(10.0),
    ];
    for p in german(&facts) {
        items.push(Item::Para {
            bold: false,
            size: BODY,
            color: (0, 0, 0),
            run: font::shape_in(fonts, false, &p),
        });
        items.push(Item::Space(6.0));
    }
    items.push(Item::Space(12.0));
    items.push(Item::Para {
        bold: false,
        size: BODY,
        color: (0, 0, 0),
        run: font::shape_in(
            fonts,
            false,
            &format!("{place}, den {}", format_date(ctx.created_on)),
        ),
    });
    items.push(Item::Space(4.0));
    items.push(Item::Signature {
        path: signature,
        caption: font::shape_in(
            fonts,
            false,
            &format!("Unterschrift {} (Vollmachtgeber/in)", facts.owner_name),
        ),
    });
    if let Some(t) = translation(reg.client_preferred_language) {
        items.push(Item::Space(22.0));
        items.push(Item::Rule);
        items.push(Item::Space(8.0));
        items.push(Item::Para {
            bold: true,
            size: 10.0,
            color: (70, 70, 70),
            run: font::shape_in(fonts, true, t.heading),
        });
        items.push(Item::Para {
            bold: false,
            size: 8.0,
            color: (70, 70, 70),
            run: font::shape_in(fonts, false, t.note),
        });
        items.push(Item::Space(6.0));
        // The first three parts form one sentence in every language.
        let body = t.body.text(&facts);
        let split = body.len().saturating_sub(1);
        let paragraphs = [body[..split].join(" "), body[split..].join(" ")];
        for p in paragraphs {
            items.push(Item::Para {
                bold: false,
                size: 8.5,
                color: (70, 70, 70),
                run: font::shape_in(fonts, false, &p),
            });
            items.push(Item::Space(4.0));
        }
    }

    // Shrink everything uniformly until it fits the page (long names and addresses).
    let flow = Flow {
        items,
        label_width: LABEL_WIDTH,
    };
    let scale = flow.fitting_scale(fonts);

    let mut document = Document::new(template()?);
    document.page(|page| {
        flow.run(scale, fonts, Some(&mut *page as &mut dyn Canvas));
        if reg.environment == Environment::Sandbox {
            pdf::sandbox_mark(page)?;
        }
        Ok(())
    })?;
    document.finish(&Info {
        title: format!("Vollmacht - {}", facts.owner_name),
        subject: format!(
            "Vollmacht zur Einreichung der Gewerbeanmeldung für {}",
            reg.name
        ),
        author: Some(facts.owner_name.clone()),
        timestamp: ctx.timestamp,
    })
}
