//! Rendering a tax registration as an ElsterXML v11 document: a [`TaxRegistration`] (UG, GmbH)
//! around `FsE_KapG/KapG`, a [`GbrTaxRegistration`] (GbR, eGbR) around `FsE_PersG/PersG`. The
//! envelope and the blocks both questionnaires share (addresses, persons, bank account, profit,
//! payroll, VAT) are written by the same functions.
//!
//! The element tree, its order and its code lists follow the most complete public
//! implementation of the FsE for corporations; docs/elster.md maps every element to its source
//! line there, or marks it as ours. Free text is written in ISO 8859-15
//! ([`domain::latin9::transliterate`]).

use std::io;

use domain::gbr::{GbrTaxRegistration, IndividualPartner, PartnershipLegalForm};
use domain::latin9::{is_elster_text, transliterate};
use domain::tax::{
    AccountingMethod, BalanceType, CommercialRegister, Director, FinancialEstimates, FormationType,
    IndividualShareholder, KapLegalForm, Payroll, Percentage, PostalAddress, ReturnFrequency,
    ReverseChargeServiceType, TaxId, TaxRegistration, Vat,
};
use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use time::Date;

use domain::street::split_street;

/// Namespace of the ElsterXML v11 envelope.
pub const ELSTER_NS: &str = "http://www.elster.de/elsterxml/schema/v11";
/// Namespace of the questionnaire for corporations (Kapitalgesellschaften), version 202401.
pub const FSE_KAPG_NS: &str = "http://finkonsens.de/elster/elsterfse/kapg/v202401";
/// The `version` attribute of `FsE_KapG`.
pub const FSE_KAPG_VERSION: &str = "202401";
/// Namespace of the questionnaire for partnerships (Personengesellschaften), version 202401.
/// Not published: named after [`FSE_KAPG_NS`] (docs/elster.md).
pub const FSE_PERSG_NS: &str = "http://finkonsens.de/elster/elsterfse/persg/v202401";
/// The `version` attribute of `FsE_PersG`.
pub const FSE_PERSG_VERSION: &str = "202401";
/// Namespace of the questionnaire for a natural person's activity (a sole proprietor's,
/// `crate::eun`), version 202401 (E:167 of docs/elster-eun-reference.md).
pub const FSE_EUN_NS: &str = "http://finkonsens.de/elster/elsterfse/eun/v202401";
/// The `version` attribute of `FsE_EUn`.
pub const FSE_EUN_VERSION: &str = "202401";
/// `Testmerker` of a test submission: ELSTER processes it without effect.
pub const TESTMERKER_SANDBOX: &str = "700000004";
/// ELSTER's test manufacturer id (`HerstellerID`), for documents with a `Testmerker` only: a
/// production document never carries it ([`XmlContext`] refuses it).
pub const TEST_HERSTELLER_ID: &str = "74931";

/// What the document needs besides the registration: the addressee and the sender.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XmlContext {
    /// `Empfaenger id="F"`: the 4-digit tax office number (BUFA). The caller resolves it.
    pub tax_office_number: String,
    /// Sandbox: `Testmerker` 700000004, a test case for ELSTER.
    pub sandbox: bool,
    /// `HerstellerID`: 5 digits from configuration; [`TEST_HERSTELLER_ID`] only with `sandbox`.
    pub hersteller_id: String,
    /// `DatenLieferant`: the submitting party, from configuration (1 to 256 characters of
    /// ELSTER's character set, [`domain::latin9::is_elster_char`]).
    pub daten_lieferant: String,
    /// `NutzdatenTicket`: the caller's reference of this payload, 1 to 15 letters, digits, `-`
    /// or `_` (e.g. derived from the registration id).
    pub nutzdaten_ticket: String,
}

#[derive(Debug, thiserror::Error)]
pub enum XmlError {
    /// A field of the [`XmlContext`] has the wrong shape (the message names it).
    #[error("invalid XML context: {0}")]
    Context(&'static str),
    #[error("writing the XML failed: {0}")]
    Io(#[from] io::Error),
    /// The written document does not pass the bundled schemas: a bug, never the caller's fault.
    #[error("the generated XML violates its schema: {}", .0.join("; "))]
    SchemaViolations(Vec<String>),
}

impl XmlContext {
    fn check(&self) -> Result<(), XmlError> {
        let digits = |s: &str, n: usize| s.len() == n && s.bytes().all(|b| b.is_ascii_digit());
        if !digits(&self.tax_office_number, 4) {
            return Err(XmlError::Context("tax_office_number must be 4 digits"));
        }
        if !digits(&self.hersteller_id, 5) {
            return Err(XmlError::Context("hersteller_id must be 5 digits"));
        }
        if !self.sandbox && self.hersteller_id == TEST_HERSTELLER_ID {
            return Err(XmlError::Context(
                "hersteller_id 74931 is ELSTER's test manufacturer id, for sandbox documents only",
            ));
        }
        let n = self.daten_lieferant.trim().chars().count();
        if n == 0 || n > 256 || !is_elster_text(&self.daten_lieferant) {
            return Err(XmlError::Context(
                "daten_lieferant must have 1 to 256 characters of ISO 8859-15",
            ));
        }
        let t = &self.nutzdaten_ticket;
        if t.is_empty()
            || t.len() > 15
            || !t
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        {
            return Err(XmlError::Context(
                "nutzdaten_ticket must be 1 to 15 letters, digits, '-' or '_'",
            ));
        }
        Ok(())
    }
}

/// Namespace of the attachments block (`Anhaenge`) beside the questionnaire (K:432, 684-701).
pub const ANHAENGE_NS: &str = "http://finkonsens.de/elster/anhaenge/simple/v3";

/// A document filed with the questionnaire, in its `Anhaenge` block: its designation (the file
/// name without `.pdf`, K:684-701), its type and its bytes (written in base64).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// `Dateibezeichnung`, e.g. `Gesellschaftsvertrag`.
    pub name: String,
    /// `Dateityp`: `application/pdf`.
    pub content_type: String,
    pub bytes: Vec<u8>,
}

/// The ElsterXML document of `reg` (`DatenArt` KapG, `FsE_KapG`): UTF-8 with an XML
/// declaration, indented by two spaces, byte-for-byte the same for the same input. Does not
/// validate (see [`crate::validate`]). Without attachments; [`write_with`] adds them.
pub fn write(reg: &TaxRegistration, ctx: &XmlContext) -> Result<Vec<u8>, XmlError> {
    write_with(reg, ctx, &[])
}

/// [`write`] with `attachments` in the `Anhaenge` block beside `FsE_KapG` (none: no block).
pub fn write_with(
    reg: &TaxRegistration,
    ctx: &XmlContext,
    attachments: &[Attachment],
) -> Result<Vec<u8>, XmlError> {
    document(ctx, "KapG", true, |x| {
        fse_kapg(x, reg)?;
        anhaenge(x, reg, attachments)
    })
}

/// The ElsterXML document of a partnership (`DatenArt` PersG, `FsE_PersG`), written like
/// [`write`]. Does not validate (see [`crate::validate`]). Its element names are all ours (no
/// public source describes the partnership's questionnaire), so it writes what the
/// corporation's leaves out for want of a source, under names of ours (docs/elster.md).
pub fn write_persg(reg: &GbrTaxRegistration, ctx: &XmlContext) -> Result<Vec<u8>, XmlError> {
    document(ctx, "PersG", false, |x| fse_persg(x, reg))
}

/// The envelope with `payload` as its `Nutzdaten`.
pub(crate) fn document(
    ctx: &XmlContext,
    daten_art: &str,
    sourced_only: bool,
    payload: impl FnOnce(&mut Xml) -> io::Result<()>,
) -> Result<Vec<u8>, XmlError> {
    ctx.check()?;
    let mut x = Xml {
        w: Writer::new_with_indent(Vec::with_capacity(8 * 1024), b' ', 2),
        sourced_only,
    };
    x.w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    x.open_with("Elster", &[("xmlns", ELSTER_NS)])?;
    transfer_header(&mut x, ctx, daten_art)?;
    x.open("DatenTeil")?;
    x.open("Nutzdatenblock")?;
    x.open_with("NutzdatenHeader", &[("version", "11")])?;
    x.leaf("NutzdatenTicket", &ctx.nutzdaten_ticket)?;
    x.leaf_with("Empfaenger", &[("id", "F")], &ctx.tax_office_number)?;
    x.close("NutzdatenHeader")?;
    x.open("Nutzdaten")?;
    payload(&mut x)?;
    x.close("Nutzdaten")?;
    x.close("Nutzdatenblock")?;
    x.close("DatenTeil")?;
    x.close("Elster")?;
    let mut out = x.w.into_inner();
    out.push(b'\n');
    Ok(out)
}

fn transfer_header(x: &mut Xml, ctx: &XmlContext, daten_art: &str) -> io::Result<()> {
    x.open_with("TransferHeader", &[("version", "11")])?;
    x.leaf("Verfahren", "ElsterFSE")?;
    x.leaf("DatenArt", daten_art)?;
    x.leaf("Vorgang", "send-Auth")?;
    if ctx.sandbox {
        x.leaf("Testmerker", TESTMERKER_SANDBOX)?;
    }
    x.leaf("HerstellerID", &ctx.hersteller_id)?;
    x.text("DatenLieferant", &ctx.daten_lieferant)?;
    x.open("Datei")?;
    x.leaf("Verschluesselung", "CMSEncryptedData")?;
    x.leaf("Kompression", "GZIP")?;
    // Filled in by ERiC when it encrypts and sends the document (as in ELSTER's own examples).
    x.open("Erstellung")?;
    x.open("Eric")?;
    x.leaf("Version", "")?;
    x.close("Eric")?;
    x.close("Erstellung")?;
    x.close("Datei")?;
    x.close("TransferHeader")
}

/// A questionnaire: its payload element with namespace and version, its own element, and its
/// `FragebogenTyp`.
type Questionnaire = (
    &'static str,
    &'static str,
    &'static str,
    &'static str,
    &'static str,
);

/// Gruendung einer Kapitalgesellschaft.
const KAPG: Questionnaire = ("FsE_KapG", FSE_KAPG_NS, FSE_KAPG_VERSION, "KapG", "GRNDKPG");
/// Gruendung einer Personengesellschaft (ours, after GRNDKPG).
const PERSG: Questionnaire = (
    "FsE_PersG",
    FSE_PERSG_NS,
    FSE_PERSG_VERSION,
    "PersG",
    "GRNDPG",
);

/// The values every questionnaire ends with: estimates, whether there are employees, the
/// payroll, VAT.
type Closing<'a> = (&'a FinancialEstimates, bool, Option<&'a Payroll>, &'a Vat);

/// What the questionnaires read alike of a tax registration of either legal form.
trait Registration {
    fn closing(&self) -> Closing<'_>;
    /// The start of the activity, whether the fiscal year deviates from the calendar year, and
    /// the start of a deviating one.
    fn activity(&self) -> (Date, bool, Option<Date>);
}

/// [`Registration`] for the tax registrations (the same fields, by name).
macro_rules! registration {
    ($($t:ty),*) => {$(
        impl Registration for $t {
            fn closing(&self) -> Closing<'_> {
                (&self.financial_estimates, self.has_employees, self.payroll.as_ref(), &self.vat)
            }
            fn activity(&self) -> (Date, bool, Option<Date>) {
                (
                    self.operational_activity_start_date,
                    self.fiscal_year_deviates_from_calendar,
                    self.fiscal_year_deviating_start_date,
                )
            }
        }
    )*};
}
registration!(TaxRegistration, GbrTaxRegistration);

/// Writes questionnaire `q`: its head, what `own` writes, then the estimates, the payroll and
/// VAT.
/// Writes questionnaire `q`: its head, what `own` writes, then the estimates, the payroll and
/// VAT, and what `last` writes after them.
fn questionnaire(
    x: &mut Xml,
    q: Questionnaire,
    (estimates, has_employees, payroll, vat): Closing,
    own: impl FnOnce(&mut Xml) -> io::Result<()>,
    last: impl FnOnce(&mut Xml) -> io::Result<()>,
) -> io::Result<()> {
    let (payload, namespace, version, element, fragebogen_typ) = q;
    x.open_with(payload, &[("xmlns", namespace), ("version", version)])?;
    x.open(element)?;
    questionnaire_head(x, fragebogen_typ)?;
    own(x)?;
    festsetzung(x, estimates)?;
    lohnberechnung(x, has_employees, payroll)?;
    umsatzsteuer(x, estimates, vat)?;
    last(x)?;
    x.close(element)?;
    x.close(payload)
}

fn fse_kapg(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    questionnaire(
        x,
        KAPG,
        reg.closing(),
        |x| {
            allg_angaben(x, reg)?;
            gesellschafter(x, reg)?;
            gruendung(x, reg)
        },
        |x| freistellung(x, reg),
    )
}

/// `Gruendung/AuswahlBarSach`: `1`, a cash formation (K:500-502); the codes of an in-kind
/// formation or a conversion are not public, so those write nothing (listed on the case).
fn gruendung(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    if reg.formation_type != FormationType::Cash {
        return Ok(());
    }
    x.wrapped_leaf("Gruendung", "AuswahlBarSach", "1")
}

/// `Freistellungsbescheinigung/AntragFreistBauabzugsSt` (St225:57), when requested.
fn freistellung(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    if !reg.request_construction_exemption_certificate {
        return Ok(());
    }
    x.wrapped_leaf(
        "Freistellungsbescheinigung",
        "AntragFreistBauabzugsSt",
        "true",
    )
}

/// The questionnaire's type and its `Ordnungskriterium` (no tax number yet).
pub(crate) fn questionnaire_head(x: &mut Xml, fragebogen_typ: &str) -> io::Result<()> {
    x.leaf("FragebogenTyp", fragebogen_typ)?;
    x.open("Ordnungskriterium")?;
    x.leaf("OrdNrArt", "O")?;
    x.close("Ordnungskriterium")
}

/// `AllgAngaben` up to the activity: name, seat (`seat_element`, the partnership's only: the
/// corporation's `SitzKapGes` has no public content), address, the company's `Komm`,
/// `ArtTaet/GewerbeArt`.
fn company_head(
    x: &mut Xml,
    seat_element: Option<&str>,
    name: &str,
    seat: &PostalAddress,
    komm: impl FnOnce(&mut Xml) -> io::Result<()>,
    purpose: &str,
) -> io::Result<()> {
    x.text("Firmenname", name)?;
    if let Some(element) = seat_element {
        x.text(element, &seat.city)?;
    }
    adrkette(x, seat)?;
    komm(x)?;
    x.open("ArtTaet")?;
    x.text("GewerbeArt", purpose)?;
    x.close("ArtTaet")
}

/// The company's `Komm` (St12:83-123): `Tel` of a German number split at its area code, with
/// `IntVorw` `+49` (K:493-494, 598-607), and `Web/Adresse`; nothing without either.
fn komm(x: &mut Xml, phone: Option<&str>, website: Option<&str>) -> io::Result<()> {
    let tel = phone.and_then(|p| match domain::phone::parts(p) {
        domain::phone::PhoneParts::German { area, number } => Some((area, number)),
        _ => None,
    });
    if tel.is_none() && website.is_none() {
        return Ok(());
    }
    x.open("Komm")?;
    if let Some((area, number)) = tel {
        x.open("Tel")?;
        x.leaf("IntVorw", "+49")?;
        x.leaf("NatVorw", &area)?;
        x.leaf("RufNr", &number)?;
        x.close("Tel")?;
    }
    if let Some(web) = website {
        x.wrapped_text("Web", "Adresse", web)?;
    }
    x.close("Komm")
}

fn allg_angaben(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    x.open("AllgAngaben")?;
    company_head(
        x,
        None,
        &reg.name,
        &reg.address,
        |x| komm(x, reg.phone.as_deref(), reg.website.as_deref()),
        &reg.purpose,
    )?;
    for d in &reg.directors {
        x.open("Vertreter")?;
        let first = match d.middle_name.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => format!("{} {m}", d.first_name.trim()),
            _ => d.first_name.trim().to_owned(),
        };
        nat_pers(x, &first, d)?;
        x.close("Vertreter")?;
    }
    // No `BankKonto`: its children are not public (the account is listed on the case).
    x.open("NotarVertrag")?;
    x.leaf("DatumGVertrag", &date(reg.notarization_date))?;
    register(x, Some(&reg.commercial_register), &HRG)?;
    if let Some(n) = &reg.notary {
        x.open("GruendungsNotar")?;
        x.text("Vorname", &n.first_name)?;
        x.text("Name", &n.last_name)?;
        adrkette(x, &n.address)?;
        x.close("GruendungsNotar")?;
    }
    x.close("NotarVertrag")?;
    rechtsform_and_start(
        x,
        match reg.legal_form {
            KapLegalForm::Gmbh => "350",
            KapLegalForm::Ug => "370",
        },
        reg,
    )?;
    x.open("HoeheGrundStammkapital")?;
    x.leaf("Grundstammkapital", &reg.capital.to_string())?;
    x.leaf("Eingezahlteskapital", &reg.paid_in_capital.to_string())?;
    x.close("HoeheGrundStammkapital")?;
    x.close("AllgAngaben")
}

/// `Rechtsform` with code `id`, `BeginnTaetigkeit` and `GewinnErmittlgsAngaben`.
fn rechtsform_and_start(x: &mut Xml, id: &str, reg: &impl Registration) -> io::Result<()> {
    x.wrapped_leaf("Rechtsform", "RechtsformId", id)?;
    let (start, deviates, deviating_start) = reg.activity();
    beginn_taetigkeit(x, start)?;
    gewinn_ermittlung(x, deviates, deviating_start)
}

fn beginn_taetigkeit(x: &mut Xml, start: Date) -> io::Result<()> {
    x.open("BeginnTaetigkeit")?;
    x.leaf("Betriebsbeginn", &date(start))?;
    x.close("BeginnTaetigkeit")
}

/// The element names of a register block: the Handelsregister of a corporation, the
/// Gesellschaftsregister of a partnership (ours, after the Handelsregister's).
struct RegisterNames {
    block: &'static str,
    applied: &'static str,
    entered: &'static str,
    court: &'static str,
    designation_element: &'static str,
    designation: &'static str,
    number: &'static str,
}

const HRG: RegisterNames = RegisterNames {
    block: "HrgAngaben",
    applied: "HrgAntragGestellt",
    entered: "HrgEintragVorhanden",
    court: "HandelsregisterGericht",
    designation_element: "HrgRegisterbezeichnung",
    designation: "HRB",
    number: "HrgRegisternummer",
};

const GSR: RegisterNames = RegisterNames {
    block: "GsrAngaben",
    applied: "GsrAntragGestellt",
    entered: "GsrEintragVorhanden",
    court: "GesellschaftsregisterGericht",
    designation_element: "GsrRegisterbezeichnung",
    designation: "GsR",
    number: "GsrRegisternummer",
};

/// The register block: whether the entry is applied for and made, with the dates beside the
/// flags; `None` (a GbR outside the register) as not applied.
fn register(x: &mut Xml, status: Option<&CommercialRegister>, n: &RegisterNames) -> io::Result<()> {
    x.open(n.block)?;
    match status {
        None | Some(CommercialRegister::NotApplied) => {
            x.leaf(n.applied, "false")?;
            x.leaf(n.entered, "false")?;
        }
        Some(CommercialRegister::ApplicationFiled {
            registration_application_date,
        }) => {
            x.leaf(n.applied, "true")?;
            x.leaf("TagDesAntrags", &date(*registration_application_date))?;
            x.leaf(n.entered, "false")?;
        }
        Some(CommercialRegister::Registered {
            registration_application_date,
            registration_number,
            registration_date,
            registration_court,
        }) => {
            x.leaf(n.applied, "true")?;
            // When the caller knows it (listed on the case when not).
            if let Some(applied) = registration_application_date {
                x.leaf("TagDesAntrags", &date(*applied))?;
            }
            x.leaf(n.entered, "true")?;
            x.leaf("TagDerEintragung", &date(*registration_date))?;
            x.text(n.court, registration_court)?;
            x.leaf(n.designation_element, n.designation)?;
            x.leaf(n.number, registration_number.trim())?;
        }
    }
    x.close(n.block)
}

fn gesellschafter(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    x.open("Gesellschafter")?;
    // The nominal amount and the percentage it is of the capital, always consistent.
    let shares = reg.filed_shares();
    let individuals = reg.shareholders.individuals.iter().map(Holder::Individual);
    let entities = reg.shareholders.entities.iter().map(Holder::Entity);
    for (i, holder) in individuals.chain(entities).enumerate() {
        x.open("Anteilseigner")?;
        // The running numbers of the shares as the list of shareholders states them, only as
        // sent (St81:377-388 asks for the "laufende Nummer(n) der Geschäftsanteile"); a
        // holder's position is not that number, so without them `not_in_xml` lists the line.
        if let Some(numbers) = holder.share_numbers() {
            x.leaf("ZeichnerNummer", numbers.trim())?;
        }
        match holder {
            Holder::Individual(s) => {
                x.open("NatPers")?;
                nat_pers(x, s.first_name.trim(), s)?;
                x.close("NatPers")?;
            }
            Holder::Entity(s) => nnat_pers(x, &s.name, &s.address)?,
        }
        let (nominal, share) = shares[i];
        x.open("Beteiligung")?;
        x.leaf("Nominal", &format!("{nominal}.00"))?;
        x.leaf("ProzentAnteil", &share.to_four_decimals())?;
        x.close("Beteiligung")?;
        x.close("Anteilseigner")?;
    }
    // Trust relationships as answered (K:467-469 writes `false`, the answer when none is sent).
    x.wrapped_leaf(
        "Treuhandverhaeltnisse",
        "Treuhand",
        bool_text(reg.has_trust_relationships == Some(true)),
    )?;
    x.close("Gesellschafter")
}

enum Holder<'a> {
    Individual(&'a domain::tax::IndividualShareholder),
    Entity(&'a domain::tax::EntityShareholder),
}

impl Holder<'_> {
    fn share_numbers(&self) -> Option<&str> {
        match self {
            Holder::Individual(s) => s.share_numbers.as_deref(),
            Holder::Entity(s) => s.share_numbers.as_deref(),
        }
    }
}

/// A natural person of the filing (a director, a shareholder, a partner): what `NatPers` says
/// of one but the first name, which a director's middle name joins.
trait NaturalPerson {
    fn last_name(&self) -> &str;
    fn dob(&self) -> Date;
    fn tax_id(&self) -> Option<&TaxId>;
    fn address(&self) -> &PostalAddress;
}

/// [`NaturalPerson`] for the types with these fields, by name.
macro_rules! natural_person {
    ($($t:ty),*) => {$(
        impl NaturalPerson for $t {
            fn last_name(&self) -> &str { &self.last_name }
            fn dob(&self) -> Date { self.dob }
            fn tax_id(&self) -> Option<&TaxId> { self.tax_identification_number.as_ref() }
            fn address(&self) -> &PostalAddress { &self.address }
        }
    )*};
}
natural_person!(Director, IndividualShareholder, IndividualPartner);

fn nat_pers(x: &mut Xml, first_name: &str, p: &impl NaturalPerson) -> io::Result<()> {
    x.text("Vorname", first_name)?;
    x.text("Name", p.last_name())?;
    x.leaf("GebDat", &date(p.dob()))?;
    if let Some(id) = p.tax_id() {
        x.leaf("PersIdNr", id.0.trim())?;
    }
    adrkette(x, p.address())
}

fn nnat_pers(x: &mut Xml, name: &str, address: &PostalAddress) -> io::Result<()> {
    x.open("NNatPers")?;
    x.text("Firmenname", name)?;
    adrkette(x, address)?;
    x.close("NNatPers")
}

/// `Adrkette/StrAdr` of an address in Germany (St3:97-156); one abroad only in a document of
/// our own names (`AuslPlz`, `Staat`): the corporation's leaves it out (listed on the case).
pub(crate) fn adrkette(x: &mut Xml, a: &PostalAddress) -> io::Result<()> {
    if !a.country.is_germany() && x.sourced_only {
        return Ok(());
    }
    x.open("Adrkette")?;
    x.open("StrAdr")?;
    let s = split_street(&a.street);
    x.text("Str", s.street)?;
    if let Some(n) = s.number {
        x.leaf("HausNr", n)?;
    }
    if let Some(z) = &s.suffix {
        x.leaf("HausNrZu", z)?;
    }
    if let Some(extra) = a.street_second_line.as_deref().map(str::trim)
        && !extra.is_empty()
    {
        x.text("AdressErg", extra)?;
    }
    if a.country.is_germany() {
        x.leaf("Plz", a.zip.trim())?;
        x.text("Ort", &a.city)?;
    } else {
        x.leaf("AuslPlz", a.zip.trim())?;
        x.text("Ort", &a.city)?;
        x.text("Staat", a.country.german_name())?;
    }
    x.close("StrAdr")?;
    x.close("Adrkette")
}

fn bank_konto(x: &mut Xml, iban: Option<&str>, bic: Option<&str>) -> io::Result<()> {
    if let Some(iban) = iban {
        x.open("BankKonto")?;
        x.leaf("IBAN", &compact_upper(iban))?;
        if let Some(bic) = bic {
            x.leaf("BIC", &compact_upper(bic))?;
        }
        x.close("BankKonto")?;
    }
    Ok(())
}

fn gewinn_ermittlung(x: &mut Xml, deviates: bool, start: Option<Date>) -> io::Result<()> {
    x.open("GewinnErmittlgsAngaben")?;
    x.leaf("MerkerAbwWirtschaftsjahr", bool_text(deviates))?;
    if deviates && let Some(start) = start {
        x.leaf("AbwWJ_ab", &date(start))?;
    }
    x.close("GewinnErmittlgsAngaben")
}

/// `FestsetzungsAngaben/Gewinn` (St172:63,74): whole euros without a sign in the reference's
/// form, so a loss is left out of the corporation's document (listed on the case), and the
/// block with it when both years are losses; the partnership's (our names) keeps the sign.
fn festsetzung(x: &mut Xml, est: &FinancialEstimates) -> io::Result<()> {
    profit_years(
        x,
        est,
        &["FestsetzungsAngaben", "Gewinn"],
        ("GruendJahr", "FolgeJahr"),
    )
}

/// The expected profit of both years below the elements `path` (opened in order), under the
/// names `years`: a loss only in a document of our own names (a source's amounts have no
/// sign), and nothing when neither year is written.
pub(crate) fn profit_years(
    x: &mut Xml,
    est: &FinancialEstimates,
    path: &[&str],
    (founding_name, following_name): (&str, &str),
) -> io::Result<()> {
    let year = |amount: i64| (!x.sourced_only || amount >= 0).then(|| amount.to_string());
    let (founding, following) = (
        year(est.formation_year.profit_amount),
        year(est.following_year.profit_amount),
    );
    if founding.is_none() && following.is_none() {
        return Ok(());
    }
    for element in path {
        x.open(element)?;
    }
    if let Some(founding) = founding {
        x.leaf(founding_name, &founding)?;
    }
    if let Some(following) = following {
        x.leaf(following_name, &following)?;
    }
    for element in path.iter().rev() {
        x.close(element)?;
    }
    Ok(())
}

/// `LohnberechnungsStelle`, only with employees.
fn lohnberechnung(x: &mut Xml, has_employees: bool, payroll: Option<&Payroll>) -> io::Result<()> {
    let Some(p) = payroll.filter(|_| has_employees) else {
        return Ok(());
    };
    x.open("LohnberechnungsStelle")?;
    x.leaf(
        "AnzahlBeschaeftigteArbeitnehmer",
        &p.employee_count.to_string(),
    )?;
    x.leaf(
        "AnzahlGesellschafterBeschaeftigte",
        &p.shareholder_employee_count.to_string(),
    )?;
    if let Some(marginal) = p.marginal_employee_count {
        x.leaf("AnzahlGeringfuegigBeschaeftigte", &marginal.to_string())?;
    }
    x.leaf("BeginnLohnzahlungen", &date(p.payroll_start_date))?;
    x.leaf(
        "VoraussichtlicheLohnsteuer",
        &p.estimated_annual_wage_tax.to_string(),
    )?;
    x.close("LohnberechnungsStelle")
}

fn fse_persg(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    questionnaire(
        x,
        PERSG,
        reg.closing(),
        |x| {
            persg_allg_angaben(x, reg)?;
            beteiligte(x, reg)
        },
        |_| Ok(()),
    )
}

fn persg_allg_angaben(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    x.open("AllgAngaben")?;
    company_head(
        x,
        Some("SitzPersGes"),
        &reg.name,
        &reg.address,
        |_| Ok(()),
        &reg.purpose,
    )?;
    bank_konto(x, reg.iban.as_deref(), reg.bic.as_deref())?;
    x.open("GesVertrag")?;
    x.leaf("DatumGVertrag", &date(reg.partnership_agreement_date))?;
    register(x, reg.company_register.as_ref(), &GSR)?;
    x.close("GesVertrag")?;
    // No public code exists for a GbR or eGbR: the abbreviation stands where the KapG writes
    // its code (docs/elster.md).
    rechtsform_and_start(
        x,
        match reg.legal_form {
            PartnershipLegalForm::Gbr => "GbR",
            PartnershipLegalForm::Egbr => "eGbR",
        },
        reg,
    )?;
    x.close("AllgAngaben")
}

/// The partners, individuals first, numbered 1, 2, ... across both lists.
fn beteiligte(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    x.open("Beteiligte")?;
    let mut number = 0u32;
    let mut open = |x: &mut Xml| -> io::Result<()> {
        number += 1;
        x.open("Beteiligter")?;
        x.leaf("BeteiligtenNummer", &number.to_string())
    };
    let close = |x: &mut Xml, share: Percentage, managing: bool| -> io::Result<()> {
        x.open("Beteiligung")?;
        x.leaf("ProzentAnteil", &share.to_four_decimals())?;
        x.close("Beteiligung")?;
        x.leaf("MerkerGeschaeftsfuehrung", bool_text(managing))?;
        x.close("Beteiligter")
    };
    for p in &reg.partners.individuals {
        open(x)?;
        x.open("NatPers")?;
        nat_pers(x, p.first_name.trim(), p)?;
        x.close("NatPers")?;
        close(x, p.share_percentage, p.is_managing_partner)?;
    }
    for p in &reg.partners.entities {
        open(x)?;
        nnat_pers(x, &p.name, &p.address)?;
        close(x, p.share_percentage, p.is_managing_partner)?;
    }
    x.close("Beteiligte")
}

/// `Umsatzsteuer`. Exactly one small-business flag: `KleinUnternUSt` under § 19 UStG,
/// `KleinUnternUStVerzicht` otherwise (also above the thresholds, as the reference does);
/// `ZahllastUeberschuss` always, under § 19 as payable 0. Flags the API has as "no"
/// (`VoranmeldungMonatlich`, `SteuerschuldnerschaftLE`, `Onlinehandel`) write no element, as
/// the reference's "Nein" answers do; `UStIdNr` likewise, where the reference always writes the
/// request (docs/elster.md, "Open points").
fn umsatzsteuer(x: &mut Xml, est: &FinancialEstimates, vat: &Vat) -> io::Result<()> {
    x.open("Umsatzsteuer")?;
    x.open("GesUmsatz")?;
    x.leaf("GruendJahr", &est.formation_year.revenue_amount.to_string())?;
    x.leaf("FolgeJahr", &est.following_year.revenue_amount.to_string())?;
    x.close("GesUmsatz")?;
    x.open("KleinunternehmerRegelung")?;
    if vat.small_business {
        x.leaf("KleinUnternUSt", "true")?;
    } else {
        x.leaf("KleinUnternUStVerzicht", "true")?;
    }
    x.close("KleinunternehmerRegelung")?;
    // The API admits cash accounting under the turnover limit of § 20 sentence 1 no. 1 UStG
    // only, so that is the reason.
    balance_and_method(x, vat, "IstVerstUStGrundUmsatz")?;
    if vat.request_vat_id {
        x.wrapped_leaf("UStIdNr", "MerkerAntragUStId", "true")?;
    }
    if vat.request_reverse_charge_certificate {
        x.open("SteuerschuldnerschaftLE")?;
        x.leaf("NachweisBeantragt", "true")?;
        let (construction, cleaning) = match vat.reverse_charge_service_type {
            Some(ReverseChargeServiceType::Construction) => (true, false),
            Some(ReverseChargeServiceType::BuildingCleaning) => (false, true),
            Some(ReverseChargeServiceType::Both) => (true, true),
            None => (false, false),
        };
        if construction {
            x.leaf("UmfangBauleistungen", "true")?;
        }
        if cleaning {
            x.leaf("UmfangGebaeudereinigung", "true")?;
        }
        x.close("SteuerschuldnerschaftLE")?;
    }
    // `Onlinehandel`'s children are not public: only a document of our names writes one.
    if vat.sells_via_online_marketplaces && !x.sourced_only {
        x.wrapped_leaf("Onlinehandel", "MerkerOnlinehandel", "true")?;
    }
    x.close("Umsatzsteuer")
}

/// `ZahllastUeberschuss` (St184 / St542: under § 19 UStG payable 0, else the balance as sent
/// with the monthly flag where accepted) and, outside § 19, `SollIstVersteuerung` with
/// `ist_reason` as the reason for cash accounting: both questionnaires write them alike.
pub(crate) fn balance_and_method(x: &mut Xml, vat: &Vat, ist_reason: &str) -> io::Result<()> {
    let (auswahl, betrag) = match (vat.small_business, vat.estimated_balance_type) {
        (true, _) => ("1", 0),
        (false, Some(BalanceType::Refundable)) => ("2", vat.estimated_balance_amount.unwrap_or(0)),
        (false, _) => ("1", vat.estimated_balance_amount.unwrap_or(0)),
    };
    x.open("ZahllastUeberschuss")?;
    x.leaf("Auswahl", auswahl)?;
    x.leaf("Betrag", &betrag.to_string())?;
    if !vat.small_business && vat.return_frequency == Some(ReturnFrequency::Monthly) {
        x.leaf("VoranmeldungMonatlich", "true")?;
    }
    x.close("ZahllastUeberschuss")?;
    if let Some(m) = vat.accounting_method.filter(|_| !vat.small_business) {
        x.open("SollIstVersteuerung")?;
        match m {
            AccountingMethod::Accrual => x.leaf("AuswahlSollIstVerst", "1")?,
            AccountingMethod::Cash => {
                x.leaf("AuswahlSollIstVerst", "2")?;
                x.leaf(ist_reason, "true")?;
            }
        }
        x.close("SollIstVersteuerung")?;
    }
    Ok(())
}

/// The attachments block beside the questionnaire (K:432, 684-701): `Rueckmeldung` to the
/// first director's e-mail where one is known (the reference sends its user's), then one
/// `Anhang` per attachment; nothing without attachments.
fn anhaenge(x: &mut Xml, reg: &TaxRegistration, attachments: &[Attachment]) -> io::Result<()> {
    use base64::Engine;
    if attachments.is_empty() {
        return Ok(());
    }
    x.open_with("Anhaenge", &[("xmlns", ANHAENGE_NS), ("version", "3")])?;
    if let Some(email) = reg.directors.iter().find_map(|d| d.email.as_deref()) {
        x.open("Rueckmeldung")?;
        x.leaf("RueckmeldungGewuenscht", "true")?;
        x.text("EmailRueckmeldung", email)?;
        x.close("Rueckmeldung")?;
    }
    for a in attachments {
        x.open("Anhang")?;
        x.text("Dateibezeichnung", &a.name)?;
        x.leaf("Dateityp", &a.content_type)?;
        x.leaf(
            "Dateiinhalt",
            &base64::engine::general_purpose::STANDARD.encode(&a.bytes),
        )?;
        x.close("Anhang")?;
    }
    x.close("Anhaenge")
}

/// `DD.MM.YYYY`.
pub(crate) fn date(d: Date) -> String {
    format!("{:02}.{:02}.{:04}", d.day(), u8::from(d.month()), d.year())
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

/// IBAN and BIC without spaces, upper-case.
fn compact_upper(s: &str) -> String {
    s.chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| c.to_ascii_uppercase())
        .collect()
}

/// Thin helpers over the quick-xml writer: every text and attribute value is escaped by
/// quick-xml.
pub(crate) struct Xml {
    w: Writer<Vec<u8>>,
    /// Whether only elements a public source gives are written (the corporation's document);
    /// the partnership's, whose names are all ours, writes its own where that one has none.
    sourced_only: bool,
}

impl Xml {
    pub(crate) fn open(&mut self, name: &str) -> io::Result<()> {
        self.w.write_event(Event::Start(BytesStart::new(name)))
    }

    pub(crate) fn open_with(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        let start = BytesStart::new(name).with_attributes(attrs.iter().copied());
        self.w.write_event(Event::Start(start))
    }

    pub(crate) fn close(&mut self, name: &str) -> io::Result<()> {
        self.w.write_event(Event::End(BytesEnd::new(name)))
    }

    /// A leaf with a code, number, date or identifier (ASCII by construction).
    pub(crate) fn leaf(&mut self, name: &str, text: &str) -> io::Result<()> {
        self.leaf_with(name, &[], text)
    }

    /// `<outer><name>text</name></outer>`.
    pub(crate) fn wrapped_leaf(&mut self, outer: &str, name: &str, text: &str) -> io::Result<()> {
        self.open(outer)?;
        self.leaf(name, text)?;
        self.close(outer)
    }

    /// `<outer><name>text</name></outer>` with free text.
    pub(crate) fn wrapped_text(&mut self, outer: &str, name: &str, text: &str) -> io::Result<()> {
        self.open(outer)?;
        self.text(name, text)?;
        self.close(outer)
    }

    /// A leaf with free text: in ISO 8859-15 ([`transliterate`]), trimmed.
    pub(crate) fn text(&mut self, name: &str, text: &str) -> io::Result<()> {
        self.leaf_with(name, &[], transliterate(text).trim())
    }

    fn leaf_with(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) -> io::Result<()> {
        self.open_with(name, attrs)?;
        self.w.write_event(Event::Text(BytesText::new(text)))?;
        self.close(name)
    }
}
