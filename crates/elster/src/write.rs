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

/// The ElsterXML document of `reg` (`DatenArt` KapG, `FsE_KapG`): UTF-8 with an XML
/// declaration, indented by two spaces, byte-for-byte the same for the same input. Does not
/// validate (see [`crate::validate`]).
pub fn write(reg: &TaxRegistration, ctx: &XmlContext) -> Result<Vec<u8>, XmlError> {
    document(ctx, "KapG", |x| fse_kapg(x, reg))
}

/// The ElsterXML document of a partnership (`DatenArt` PersG, `FsE_PersG`), written like
/// [`write`]. Does not validate (see [`crate::validate`]).
pub fn write_persg(reg: &GbrTaxRegistration, ctx: &XmlContext) -> Result<Vec<u8>, XmlError> {
    document(ctx, "PersG", |x| fse_persg(x, reg))
}

/// The envelope with `payload` as its `Nutzdaten`.
fn document(
    ctx: &XmlContext,
    daten_art: &str,
    payload: impl FnOnce(&mut Xml) -> io::Result<()>,
) -> Result<Vec<u8>, XmlError> {
    ctx.check()?;
    let mut x = Xml {
        w: Writer::new_with_indent(Vec::with_capacity(8 * 1024), b' ', 2),
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
fn questionnaire(
    x: &mut Xml,
    q: Questionnaire,
    (estimates, has_employees, payroll, vat): Closing,
    own: impl FnOnce(&mut Xml) -> io::Result<()>,
) -> io::Result<()> {
    let (payload, namespace, version, element, fragebogen_typ) = q;
    x.open_with(payload, &[("xmlns", namespace), ("version", version)])?;
    x.open(element)?;
    questionnaire_head(x, fragebogen_typ)?;
    own(x)?;
    festsetzung(x, estimates)?;
    lohnberechnung(x, has_employees, payroll)?;
    umsatzsteuer(x, estimates, vat)?;
    x.close(element)?;
    x.close(payload)
}

fn fse_kapg(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    questionnaire(x, KAPG, reg.closing(), |x| {
        allg_angaben(x, reg)?;
        gesellschafter(x, reg)?;
        gruendung(x, reg)
    })
}

fn gruendung(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    x.open("Gruendung")?;
    x.leaf(
        "AuswahlBarSach",
        match reg.formation_type {
            FormationType::Cash => "1",
            FormationType::InKind => "2",
            FormationType::Conversion => "3",
        },
    )?;
    x.close("Gruendung")
}

/// The questionnaire's type and its `Ordnungskriterium` (no tax number yet).
fn questionnaire_head(x: &mut Xml, fragebogen_typ: &str) -> io::Result<()> {
    x.leaf("FragebogenTyp", fragebogen_typ)?;
    x.open("Ordnungskriterium")?;
    x.leaf("OrdNrArt", "O")?;
    x.close("Ordnungskriterium")
}

/// `AllgAngaben` up to the activity: name, seat, address, `ArtTaet/GewerbeArt`.
fn company_head(
    x: &mut Xml,
    seat_element: &str,
    name: &str,
    seat: &PostalAddress,
    purpose: &str,
) -> io::Result<()> {
    x.text("Firmenname", name)?;
    x.text(seat_element, &seat.city)?;
    adrkette(x, seat)?;
    x.open("ArtTaet")?;
    x.text("GewerbeArt", purpose)?;
    x.close("ArtTaet")
}

fn allg_angaben(x: &mut Xml, reg: &TaxRegistration) -> io::Result<()> {
    x.open("AllgAngaben")?;
    company_head(x, "SitzKapGes", &reg.name, &reg.address, &reg.purpose)?;
    for d in &reg.directors {
        x.open("Vertreter")?;
        let first = match d.middle_name.as_deref().map(str::trim) {
            Some(m) if !m.is_empty() => format!("{} {m}", d.first_name.trim()),
            _ => d.first_name.trim().to_owned(),
        };
        nat_pers(x, &first, d)?;
        x.close("Vertreter")?;
    }
    bank_konto(x, reg.iban.as_deref(), reg.bic.as_deref())?;
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
            registration_number,
            registration_date,
            registration_court,
        }) => {
            // The model has no application date for a company already entered.
            x.leaf(n.applied, "true")?;
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
    let nominal = reg.nominal_amounts();
    let individuals = reg.shareholders.individuals.iter().map(Holder::Individual);
    let entities = reg.shareholders.entities.iter().map(Holder::Entity);
    for (i, holder) in individuals.chain(entities).enumerate() {
        x.open("Anteilseigner")?;
        x.leaf("ZeichnerNummer", &(i + 1).to_string())?;
        let share = match holder {
            Holder::Individual(s) => {
                x.open("NatPers")?;
                nat_pers(x, s.first_name.trim(), s)?;
                x.close("NatPers")?;
                s.share_percentage
            }
            Holder::Entity(s) => {
                nnat_pers(x, &s.name, &s.address)?;
                s.share_percentage
            }
        };
        x.open("Beteiligung")?;
        x.leaf("Nominal", &format!("{}.00", nominal[i]))?;
        x.leaf("ProzentAnteil", &share.to_four_decimals())?;
        x.close("Beteiligung")?;
        x.close("Anteilseigner")?;
    }
    // No trust relationships (Treuhandverhaeltnisse): the API has no input for one.
    x.wrapped_leaf("Treuhandverhaeltnisse", "Treuhand", "false")?;
    x.close("Gesellschafter")
}

enum Holder<'a> {
    Individual(&'a domain::tax::IndividualShareholder),
    Entity(&'a domain::tax::EntityShareholder),
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

fn adrkette(x: &mut Xml, a: &PostalAddress) -> io::Result<()> {
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

fn festsetzung(x: &mut Xml, est: &FinancialEstimates) -> io::Result<()> {
    x.open("FestsetzungsAngaben")?;
    x.open("Gewinn")?;
    x.leaf("GruendJahr", &est.formation_year.profit_amount.to_string())?;
    x.leaf("FolgeJahr", &est.following_year.profit_amount.to_string())?;
    x.close("Gewinn")?;
    x.close("FestsetzungsAngaben")
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
    x.leaf("BeginnLohnzahlungen", &date(p.payroll_start_date))?;
    x.leaf(
        "VoraussichtlicheLohnsteuer",
        &p.estimated_annual_wage_tax.to_string(),
    )?;
    x.close("LohnberechnungsStelle")
}

fn fse_persg(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    questionnaire(x, PERSG, reg.closing(), |x| {
        persg_allg_angaben(x, reg)?;
        beteiligte(x, reg)
    })
}

fn persg_allg_angaben(x: &mut Xml, reg: &GbrTaxRegistration) -> io::Result<()> {
    x.open("AllgAngaben")?;
    company_head(x, "SitzPersGes", &reg.name, &reg.address, &reg.purpose)?;
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
    let (auswahl, betrag) = match (vat.small_business, vat.estimated_balance_type) {
        (false, Some(BalanceType::Refundable)) => ("2", vat.estimated_balance_amount),
        (false, _) => ("1", vat.estimated_balance_amount),
        (true, _) => ("1", Some(0)),
    };
    x.open("ZahllastUeberschuss")?;
    x.leaf("Auswahl", auswahl)?;
    x.leaf("Betrag", &betrag.unwrap_or(0).to_string())?;
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
                // The API admits cash accounting under the turnover limit of § 20 sentence 1
                // no. 1 UStG only, so that is the reason.
                x.leaf("IstVerstUStGrundUmsatz", "true")?;
            }
        }
        x.close("SollIstVersteuerung")?;
    }
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
    if vat.sells_via_online_marketplaces {
        x.wrapped_leaf("Onlinehandel", "MerkerOnlinehandel", "true")?;
    }
    x.close("Umsatzsteuer")
}

/// `DD.MM.YYYY`.
fn date(d: Date) -> String {
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
struct Xml {
    w: Writer<Vec<u8>>,
}

impl Xml {
    fn open(&mut self, name: &str) -> io::Result<()> {
        self.w.write_event(Event::Start(BytesStart::new(name)))
    }

    fn open_with(&mut self, name: &str, attrs: &[(&str, &str)]) -> io::Result<()> {
        let start = BytesStart::new(name).with_attributes(attrs.iter().copied());
        self.w.write_event(Event::Start(start))
    }

    fn close(&mut self, name: &str) -> io::Result<()> {
        self.w.write_event(Event::End(BytesEnd::new(name)))
    }

    /// A leaf with a code, number, date or identifier (ASCII by construction).
    fn leaf(&mut self, name: &str, text: &str) -> io::Result<()> {
        self.leaf_with(name, &[], text)
    }

    /// `<outer><name>text</name></outer>`.
    fn wrapped_leaf(&mut self, outer: &str, name: &str, text: &str) -> io::Result<()> {
        self.open(outer)?;
        self.leaf(name, text)?;
        self.close(outer)
    }

    /// A leaf with free text: in ISO 8859-15 ([`transliterate`]), trimmed.
    fn text(&mut self, name: &str, text: &str) -> io::Result<()> {
        self.leaf_with(name, &[], transliterate(text).trim())
    }

    fn leaf_with(&mut self, name: &str, attrs: &[(&str, &str)], text: &str) -> io::Result<()> {
        self.open_with(name, attrs)?;
        self.w.write_event(Event::Text(BytesText::new(text)))?;
        self.close(name)
    }
}
