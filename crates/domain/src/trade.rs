//! The validated trade registration (GewA 1) model.
//!
//! This is the shape the request validator produces and the PDF renderer reads: a rule lives in
//! exactly one place. Field names and enum values are the API's (see the API specification), so
//! a request's `data` JSON and a stored record deserialise into [`TradeRegistration`].
//! Dates are `YYYY-MM-DD` strings. The types carry no I/O.
//!
//! Length limits, DIN 91379 character checks and cross-field rules (for example "signatures.gewa_1
//! or documents.gewa_1, never both") belong to the validator; this module only fixes the shape and
//! the value sets. Signatures and country codes are checked on deserialisation by
//! [`SignaturePath`] and [`CountryCode`].

use serde::{Deserialize, Serialize};
use time::Date;

pub use crate::address::PostalAddress;
use crate::case::DocumentType;
use crate::country::CountryCode;
use crate::lifecycle::TradeStatus;
use crate::signature::SignaturePath;

time::serde::format_description!(pub(crate) iso_date, Date, "[year]-[month]-[day]");

/// A trade registration as accepted by `POST /v1/trade-registration` (the `data` part).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct TradeRegistration {
    pub package: Package,
    #[serde(default)]
    pub environment: Environment,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_reference: Option<String>,
    #[serde(default)]
    pub client_preferred_language: Language,
    pub reason: Reason,
    #[serde(with = "iso_date")]
    pub operational_activity_start_date: Date,
    pub establishment_type: EstablishmentType,
    pub acquisition_type: AcquisitionType,
    /// Business name with legal-form suffix (max 120).
    pub name: String,
    pub legal_form: LegalForm,
    /// Public-register number, when registered (max 30).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub registration_number: Option<String>,
    /// The register court keeping that entry (field 2), named by its place ("Charlottenburg",
    /// "Amtsgericht München") or code; stored and returned as `Amtsgericht <place>`. One of the
    /// German register courts `GET /v1/register-courts` lists; only with `registration_number`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(example = "Amtsgericht Charlottenburg"))]
    pub registration_court: Option<String>,
    /// At least one entry.
    pub business_type: Vec<BusinessType>,
    /// Activity description (max 200).
    pub purpose: String,
    /// The establishment (Betriebsstätte); always in Germany.
    pub registered_office: RegisteredOffice,
    /// Address of the client company when it differs (may be abroad); for a branch this is the
    /// main office, required for `branch-office` and `dependent-branch` without `company_id`
    /// (with it, the company's stored address is printed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub business_address: Option<PostalAddress>,
    pub phone: String,
    pub email: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub industrial_license: Option<IndustrialLicense>,
    pub has_public_sector_participation: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub employees: Option<Employees>,
    /// Field 14: the person authorised to represent the establishment or manage it
    /// (Vertretungsberechtigte Person/Betriebsleiter); only for `branch-office`,
    /// `dependent-branch` and an AG.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub authorized_representative: Option<PersonName>,
    /// Field 16 with its contact rows: the main establishment of a `branch-office` or
    /// `dependent-branch`. Printed instead of `business_address` or the company's stored
    /// address when sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub main_establishment: Option<MainEstablishment>,
    /// Fields 26 and 27: the previous business, for every reason except `new-foundation`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_business: Option<PreviousBusiness>,
    /// Field 17: the former establishment (Frühere Betriebsstätte) of a business moved here
    /// from another office's district; required with reason `reopening-after-relocation`,
    /// refused with every other. Since 1.11.2025 this Anmeldung at the new office also
    /// deregisters the business at the old one (§ 14 Abs. 1 Satz 3 GewO), which the new office
    /// informs from it. `country` defaults to `DE` (a German 5-digit postal code then).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub previous_establishment: Option<PostalAddress>,
    /// Field 29: the Handwerkskarte of a craft business of Annex A of the Handwerksordnung;
    /// only when `business_type` includes `craft`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub craft_card: Option<CraftCard>,
    /// 1 to 9 owners in the order they should appear.
    pub owners: Vec<Owner>,
}

/// One Anmeldung: one GewA 1 document and whose data it carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gewa1Form {
    /// The owners on it, in request order (indexes into `owners`): the first fills fields 4
    /// to 11, 30, 31 and 33 of the form itself, each further one (a further legal
    /// representative) a supplementary sheet with the same fields and his own signature.
    pub owners: Vec<usize>,
    /// Whether it is the company's one form ([`LegalForm::files_one_gewa1`]), stored as a
    /// document of the case rather than of an owner.
    pub company: bool,
}

impl Gewa1Form {
    /// The owner whose data the form's own fields 4 to 11 hold.
    pub fn owner(&self) -> usize {
        self.owners[0]
    }

    /// The further legal representatives, one supplementary sheet each.
    pub fn further(&self) -> &[usize] {
        &self.owners[1..]
    }

    /// The owner a stored document of this form belongs to: none for the company's form.
    pub fn document_owner(&self) -> Option<usize> {
        (!self.company).then(|| self.owner())
    }

    /// A form of owner `owner` alone, as every GewA 1 was before 2026-12-01 (stored cases of
    /// legal persons keep that shape when their forms are rendered again).
    pub fn single(owner: usize) -> Self {
        Gewa1Form {
            owners: vec![owner],
            company: false,
        }
    }
}

impl TradeRegistration {
    /// The Anmeldungen the case files: for a legal person one, naming every owner (the
    /// further ones on supplementary sheets); else one per owner.
    pub fn gewa1_forms(&self) -> Vec<Gewa1Form> {
        if self.legal_form.files_one_gewa1() {
            vec![Gewa1Form {
                owners: (0..self.owners.len()).collect(),
                company: true,
            }]
        } else {
            (0..self.owners.len()).map(Gewa1Form::single).collect()
        }
    }

    /// The Anmeldung owner `owner` is on (for a legal person, the company's one).
    pub fn gewa1_form_of(&self, owner: usize) -> Option<Gewa1Form> {
        self.gewa1_forms()
            .into_iter()
            .find(|f| f.owners.contains(&owner))
    }

    /// Whether `name` is a name entered in a register (GewA 1 field 1: "Im Handels-,
    /// Genossenschafts- oder Vereinsregister ... eingetragener Name mit Rechtsform") rather
    /// than a business designation (field 3, "Name des Geschäfts"). A sole trader without a
    /// register entry (`einzelunternehmen`) and a GbR without one have no registered name;
    /// every other form is entered in a register, or will be (a legal person before its entry
    /// files as "in Gründung", [`TradeRegistration::registered_name`]).
    pub fn name_is_registered(&self) -> bool {
        self.registration_number.is_some()
            || !matches!(
                self.legal_form,
                LegalForm::Einzelunternehmen | LegalForm::Gbr
            )
    }

    /// The name field 1 prints: `name`, and for a legal person without `registration_number`
    /// (before its entry) "(in Gründung)" after it, unless the name already says so ("i. G.",
    /// "in Gründung"). The municipal filling instructions ask for it (e.g. Ilm-Kreis,
    /// "Ausfüllhinweise zur Gewerbeanzeige", Feld-Nr. 1 und 2; docs/forms.md).
    pub fn registered_name(&self) -> String {
        if self.legal_form.is_legal_person()
            && self.registration_number.is_none()
            && !says_in_formation(&self.name)
        {
            format!("{} (in Gründung)", self.name)
        } else {
            self.name.clone()
        }
    }
}

/// Whether a company name already carries "in Gründung" or its abbreviation "i. G." (any
/// case, with or without the space, in parentheses or not).
fn says_in_formation(name: &str) -> bool {
    let lower = name.to_lowercase();
    let words: Vec<&str> = lower
        .split(|c: char| c.is_whitespace() || c == '(' || c == ')')
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .any(|w| w == ["in", "gründung"] || w == ["i.", "g."])
        || words.iter().any(|w| *w == "i.g." || *w == "i.g")
}

/// A person's name (field 14).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({"first_name": "Jonas", "last_name": "Weber"})))]
pub struct PersonName {
    /// Max 72, DIN 91379 names of natural persons.
    pub first_name: String,
    /// Max 72, DIN 91379 names of natural persons.
    pub last_name: String,
}

/// The main establishment of a branch (field 16): its address (may be abroad) and the
/// contacts the form's rows beside it ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({
    "street": "Rue de la Paix 8", "zip": "75002", "city": "Paris", "country": "FR",
    "phone": "+33 1 42 60 00 00", "email": "siege@example.fr"
})))]
pub struct MainEstablishment {
    #[serde(flatten)]
    pub address: PostalAddress,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phone: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub email: Option<String>,
}

/// Fields 26 and 27 of the GewA 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({
    "name": "Café Gabler, Inh. Erika Gabler e. K.",
    "accident_insurer": "BGN Berufsgenossenschaft Nahrungsmittel und Gastgewerbe",
    "accident_insurance_number": "123456789"
})))]
pub struct PreviousBusiness {
    /// Field 26: the previous business owner or the former company name (max 120).
    pub name: String,
    /// Field 27: the previous statutory accident insurer (Berufsgenossenschaft, max 120);
    /// absent ticks "nicht bekannt".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accident_insurer: Option<String>,
    /// Field 27: the previous membership number with that insurer (max 30); absent ticks
    /// "nicht bekannt".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accident_insurance_number: Option<String>,
}

/// Field 29 of the GewA 1: whether a Handwerkskarte is held, and if so its date and chamber.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[cfg_attr(feature = "openapi", schema(example = json!({
    "held": true, "issue_date": "2024-09-30", "chamber": "Handwerkskammer Berlin"
})))]
pub struct CraftCard {
    pub held: bool,
    /// Issue date; required when `held`, rejected otherwise.
    #[serde(
        default,
        with = "iso_date::option",
        skip_serializing_if = "Option::is_none"
    )]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, format = Date))]
    pub issue_date: Option<Date>,
    /// The Handwerkskammer that issued it (max 120); required when `held`, rejected otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chamber: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Package {
    /// The owners file the GewA 1 themselves.
    #[serde(rename = "self")]
    SelfService,
    /// The service files for the owners (needs a power of attorney per owner).
    Assisted,
}

impl Package {
    /// The request value: `self` or `assisted`.
    pub fn as_str(self) -> &'static str {
        match self {
            Package::SelfService => "self",
            Package::Assisted => "assisted",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Package::SelfService, Package::Assisted]
            .into_iter()
            .find(|p| p.as_str() == s)
    }

    /// Where a new case goes from `initiated`: the owners of a `self` case file their own
    /// forms (`form-rendered`); an `assisted` case is ours to file (`submitted`).
    pub fn initial_status(self) -> TradeStatus {
        match self {
            Package::SelfService => TradeStatus::FormRendered,
            Package::Assisted => TradeStatus::Submitted,
        }
    }

    /// Whether each owner signs a power of attorney for us (we file in their name).
    pub fn needs_power_of_attorney(self) -> bool {
        self == Package::Assisted
    }

    /// The documents a create produces for each owner: the GewA 1, and for an `assisted` case
    /// the power of attorney.
    pub fn owner_documents(self) -> &'static [DocumentType] {
        match self {
            Package::SelfService => &[DocumentType::TradeLicenceApplication],
            Package::Assisted => &[
                DocumentType::TradeLicenceApplication,
                DocumentType::PowerOfAttorney,
            ],
        }
    }

    /// Whether a case's GewA 1 forms still follow its trade office (an office assigned later
    /// heads them): until someone files them. Our operators file an assisted case's forms (it
    /// is `submitted` from the create, and `blocked` when the office asks for more, such as
    /// filing with another office), so they follow until the case is completed; a self case's
    /// owners file their own, so they follow only while `form-rendered`.
    pub fn forms_follow_office(self, status: TradeStatus) -> bool {
        match status {
            TradeStatus::FormRendered => true,
            TradeStatus::Submitted | TradeStatus::Blocked => self == Package::Assisted,
            TradeStatus::Initiated | TradeStatus::Completed | TradeStatus::Cancelled => false,
        }
    }
}

pub use crate::company::Environment;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Language {
    #[default]
    De,
    En,
    Fr,
    It,
    Es,
}

impl Language {
    /// Every language, German first.
    pub const ALL: [Language; 5] = [
        Language::De,
        Language::En,
        Language::Fr,
        Language::It,
        Language::Es,
    ];
}

/// Field 25 of the GewA 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Reason {
    NewFoundation,
    Takeover,
    ReopeningAfterRelocation,
    LegalFormChange,
    PartnerEntry,
    TransformationLaw,
}

impl Reason {
    /// Every reason, in the order of field 25 (for what is prepared once per form, such as the
    /// power of attorney's fonts).
    pub const ALL: [Reason; 6] = [
        Reason::NewFoundation,
        Reason::Takeover,
        Reason::ReopeningAfterRelocation,
        Reason::LegalFormChange,
        Reason::PartnerEntry,
        Reason::TransformationLaw,
    ];
}

/// Fields 23 and 24 of the GewA 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum EstablishmentType {
    MainOffice,
    BranchOffice,
    DependentBranch,
    TravelIndustry,
}

impl EstablishmentType {
    /// A branch (Zweigniederlassung, unselbständige Zweigstelle): the GewA 1 names its main
    /// office (Hauptniederlassung) in field 16.
    pub fn is_branch(self) -> bool {
        matches!(
            self,
            EstablishmentType::BranchOffice | EstablishmentType::DependentBranch
        )
    }
}

/// Field 19 of the GewA 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum AcquisitionType {
    MainOccupation,
    SecondaryOccupation,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum LegalForm {
    Einzelunternehmen,
    Ug,
    Gmbh,
    Gbr,
    EinzelkaufmannEk,
    GmbhCoKg,
    Kg,
    Ohg,
    UgCoKg,
    Ggmbh,
    Ag,
    Kgaa,
    Other,
}

impl LegalForm {
    /// German designation as written on forms.
    pub fn german_name(self) -> &'static str {
        match self {
            LegalForm::Einzelunternehmen => "Einzelunternehmen",
            LegalForm::Ug => "UG (haftungsbeschränkt)",
            LegalForm::Gmbh => "GmbH",
            LegalForm::Gbr => "GbR",
            LegalForm::EinzelkaufmannEk => "eingetragener Kaufmann (e. K.)",
            LegalForm::GmbhCoKg => "GmbH & Co. KG",
            LegalForm::Kg => "KG",
            LegalForm::Ohg => "OHG",
            LegalForm::UgCoKg => "UG (haftungsbeschränkt) & Co. KG",
            LegalForm::Ggmbh => "gGmbH",
            LegalForm::Ag => "AG",
            LegalForm::Kgaa => "KGaA",
            LegalForm::Other => "sonstige Rechtsform",
        }
    }

    /// Legal persons (juristische Personen): GmbH, UG, gGmbH, AG, KGaA. For these the GewA 1
    /// fields 4-11, 30 and 31 hold the legal representative and field 12 counts the
    /// representatives.
    pub fn is_legal_person(self) -> bool {
        matches!(
            self,
            LegalForm::Ug | LegalForm::Gmbh | LegalForm::Ggmbh | LegalForm::Ag | LegalForm::Kgaa
        )
    }

    /// Whether the business files **one** GewA 1 for the company, with every further legal
    /// representative on a supplementary sheet of that same document: the legal persons, and
    /// a GmbH & Co. KG or UG & Co. KG, whose one managing partner is its general partner, a
    /// legal person, whose representatives the request's owners are. The model form's head:
    /// "Bei juristischen Personen sind in den Feldern 4 bis 11, 30 und 31 die Angaben zum
    /// gesetzlichen Vertreter einzutragen ... Bei weiteren gesetzlichen Vertretern sind die
    /// Angaben auf Beiblättern zu machen" (docs/forms.md, "One Anmeldung per company"). The
    /// other partnerships file one GewA 1 per managing partner ("für jeden
    /// geschäftsführenden Gesellschafter ein eigener Vordruck"); `other` is filed per owner
    /// too, as the API cannot tell a legal person from a partnership there.
    pub fn files_one_gewa1(self) -> bool {
        self.is_legal_person() || matches!(self, LegalForm::GmbhCoKg | LegalForm::UgCoKg)
    }

    /// Partnerships (Personengesellschaften): GbR, OHG, KG and the "& Co. KG" forms. Field 12
    /// counts the managing partners.
    pub fn is_partnership(self) -> bool {
        matches!(
            self,
            LegalForm::Gbr
                | LegalForm::Ohg
                | LegalForm::Kg
                | LegalForm::GmbhCoKg
                | LegalForm::UgCoKg
        )
    }
}

/// Field 21 of the GewA 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum BusinessType {
    Industry,
    Trade,
    Craft,
    Other,
}

/// The establishment (German address, no country field).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct RegisteredOffice {
    pub street: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub street_second_line: Option<String>,
    /// German 5-digit postal code.
    pub zip: String,
    pub city: String,
}

/// Permit (field 28).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct IndustrialLicense {
    #[serde(with = "iso_date")]
    pub issue_date: Date,
    pub issuing_authority: String,
    pub zip: String,
    pub location: String,
}

/// People working in the business at the start, without the owner (field 22).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Employees {
    pub full_time: EmployeeCount,
    pub part_time: EmployeeCount,
}

/// Bracketed head count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub enum EmployeeCount {
    #[serde(rename = "0")]
    Zero,
    #[serde(rename = "1")]
    One,
    #[serde(rename = "2")]
    Two,
    #[serde(rename = "3")]
    Three,
    #[serde(rename = "4")]
    Four,
    #[serde(rename = "5")]
    Five,
    #[serde(rename = "6-10")]
    SixToTen,
    #[serde(rename = "11-20")]
    ElevenToTwenty,
    #[serde(rename = "21-50")]
    TwentyOneToFifty,
    #[serde(rename = "50+")]
    MoreThanFifty,
}

impl EmployeeCount {
    /// The API value, also what the form shows (`"6-10"`, `"50+"`).
    pub fn as_str(self) -> &'static str {
        match self {
            EmployeeCount::Zero => "0",
            EmployeeCount::One => "1",
            EmployeeCount::Two => "2",
            EmployeeCount::Three => "3",
            EmployeeCount::Four => "4",
            EmployeeCount::Five => "5",
            EmployeeCount::SixToTen => "6-10",
            EmployeeCount::ElevenToTwenty => "11-20",
            EmployeeCount::TwentyOneToFifty => "21-50",
            EmployeeCount::MoreThanFifty => "50+",
        }
    }
}

/// Someone registering the trade (for a legal person: its legal representative).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Owner {
    pub first_name: String,
    pub last_name: String,
    /// Only when different from `last_name`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub birth_name: Option<String>,
    #[serde(with = "iso_date")]
    pub dob: Date,
    pub place_of_birth: String,
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "DE"))]
    pub country_of_birth: CountryCode,
    /// Field 10: printed as the German nationality designation ("deutsch" ticked for DE,
    /// "polnisch", "türkisch", ... after "andere").
    #[cfg_attr(feature = "openapi", schema(value_type = String, example = "DE"))]
    pub nationality: CountryCode,
    /// Further nationalities of a person with several (at most 3, none repeated).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[cfg_attr(feature = "openapi", schema(value_type = Vec<String>, example = json!(["PL"])))]
    pub other_nationalities: Vec<CountryCode>,
    pub gender: Gender,
    pub phone: String,
    pub email: String,
    /// Required in a request, as `{}` when an uploaded form and the `self` package need none
    /// (`trade_request`).
    #[serde(default)]
    #[cfg_attr(feature = "openapi", schema(required = true))]
    pub signatures: Signatures,
    #[serde(default, skip_serializing_if = "OwnerDocuments::is_empty")]
    pub documents: OwnerDocuments,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub residence_permit: Option<ResidencePermit>,
    /// Whether the residence permit restricts self-employment; present exactly when
    /// `residence_permit` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub has_employment_restrictions: Option<bool>,
    /// Field 31: the condition or restriction as the residence title states it (max 200);
    /// required when `has_employment_restrictions` is true, rejected otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(
        feature = "openapi",
        schema(example = "Selbständige Tätigkeit nur als Softwareentwickler gestattet")
    )]
    pub employment_restriction_details: Option<String>,
    /// Residential address; `None` when the owner lives at the establishment.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<ResidentialAddress>,
}

/// Field 6 of the GewA 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
#[serde(rename_all = "kebab-case")]
pub enum Gender {
    Male,
    Female,
    Diverse,
    NoInformation,
}

/// Signatures as SVG path data.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Signatures {
    /// Drawn into field 33 of the GewA 1; absent when a signed PDF was uploaded instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "M 10 20 C 20 0 30 40 40 20"))]
    pub gewa_1: Option<SignaturePath>,
    /// Signs the power of attorney (package `assisted` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[cfg_attr(feature = "openapi", schema(value_type = Option<String>, example = "M 10 20 C 20 0 30 40 40 20"))]
    pub power_of_attorney: Option<SignaturePath>,
}

/// Documents the caller supplies instead of having them generated.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct OwnerDocuments {
    /// An already signed GewA 1; no GewA 1 is rendered for this owner.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gewa_1: Option<UploadedDocument>,
}

impl OwnerDocuments {
    pub fn is_empty(&self) -> bool {
        self.gewa_1.is_none()
    }
}

/// Reference to a multipart file part.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct UploadedDocument {
    /// Name of the multipart part carrying the PDF.
    pub file: String,
}

/// Fields 30 and 31 of the GewA 1.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct ResidencePermit {
    #[serde(with = "iso_date")]
    pub issue_date: Date,
    pub issuing_authority: String,
}

crate::address::address_struct! {
    /// An owner's residential address (may be abroad).
    pub struct ResidentialAddress;
}

impl From<PostalAddress> for ResidentialAddress {
    fn from(a: PostalAddress) -> Self {
        ResidentialAddress {
            street: a.street,
            street_second_line: a.street_second_line,
            zip: a.zip,
            city: a.city,
            state: a.state,
            country: a.country,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The package's rules, each a step of the lifecycle table, and its name as the request
    /// spells it.
    #[test]
    fn each_package_decides_its_first_status_and_its_documents() {
        use crate::lifecycle::{Lifecycle, TradeStatus};
        for (package, first, poa) in [
            (Package::SelfService, TradeStatus::FormRendered, false),
            (Package::Assisted, TradeStatus::Submitted, true),
        ] {
            assert_eq!(package.initial_status(), first);
            assert_eq!(
                package
                    .owner_documents()
                    .contains(&DocumentType::PowerOfAttorney),
                poa
            );
            assert!(
                TradeStatus::Initiated.transition(first).is_ok(),
                "{package:?}"
            );
            assert_eq!(package.needs_power_of_attorney(), poa);
            let json = serde_json::to_value(package).unwrap();
            assert_eq!(json, package.as_str());
        }
    }

    #[test]
    fn forms_follow_the_office_until_someone_files_them() {
        use crate::lifecycle::{Lifecycle, TradeStatus};
        use Package::{Assisted, SelfService};
        let follows: Vec<(&str, &str)> = TradeStatus::ALL
            .iter()
            .flat_map(|&s| [(s, SelfService), (s, Assisted)])
            .filter(|&(s, p)| p.forms_follow_office(s))
            .map(|(s, p)| (s.as_str(), p.as_str()))
            .collect();
        assert_eq!(
            follows,
            [
                ("form-rendered", "self"),
                ("form-rendered", "assisted"),
                ("submitted", "assisted"),
                ("blocked", "assisted"),
            ]
        );
    }

    const MINIMAL: &str = r#"{
        "package": "self",
        "reason": "new-foundation",
        "operational_activity_start_date": "2025-03-01",
        "establishment_type": "main-office",
        "acquisition_type": "main-occupation",
        "name": "Mustermann GmbH",
        "legal_form": "gmbh",
        "business_type": ["trade", "other"],
        "purpose": "Handel mit Waren aller Art",
        "registered_office": {"street": "Musterstraße 1", "zip": "10115", "city": "Berlin"},
        "phone": "+49 30 1234567",
        "email": "info@example.de",
        "has_public_sector_participation": false,
        "employees": {"full_time": "6-10", "part_time": "50+"},
        "owners": [{
            "first_name": "Erika", "last_name": "Mustermann", "dob": "1980-01-31",
            "place_of_birth": "Köln", "country_of_birth": "de", "nationality": "AT",
            "gender": "no-information", "phone": "+49 170 1234567", "email": "erika@example.de",
            "signatures": {"gewa_1": "M0 0 L 10 5"}
        }]
    }"#;

    #[test]
    fn deserialises_with_defaults_and_round_trips() {
        let reg: TradeRegistration = serde_json::from_str(MINIMAL).unwrap();
        assert_eq!(reg.environment, Environment::Production);
        assert_eq!(reg.client_preferred_language, Language::De);
        assert_eq!(reg.package, Package::SelfService);
        assert_eq!(
            reg.operational_activity_start_date,
            time::macros::date!(2025 - 03 - 01)
        );
        assert_eq!(reg.employees.unwrap().full_time, EmployeeCount::SixToTen);
        assert_eq!(reg.owners[0].gender, Gender::NoInformation);
        assert_eq!(reg.owners[0].nationality.german_name(), "Österreich");
        let json = serde_json::to_value(&reg).unwrap();
        assert_eq!(json["operational_activity_start_date"], "2025-03-01");
        assert_eq!(json["package"], "self");
        assert_eq!(json["employees"]["part_time"], "50+");
        assert_eq!(json["owners"][0]["signatures"]["gewa_1"], "M0 0 L 10 5");
        assert_eq!(json["owners"][0]["dob"], "1980-01-31");
        let back: TradeRegistration = serde_json::from_value(json).unwrap();
        assert_eq!(back, reg);
    }

    #[test]
    fn enum_values_are_the_api_strings() {
        use serde_json::to_value as api;
        for (value, want) in [
            (api(LegalForm::EinzelkaufmannEk), "einzelkaufmann-ek"),
            (api(LegalForm::GmbhCoKg), "gmbh-co-kg"),
            (api(LegalForm::UgCoKg), "ug-co-kg"),
            (
                api(Reason::ReopeningAfterRelocation),
                "reopening-after-relocation",
            ),
            (api(Reason::TransformationLaw), "transformation-law"),
            (api(EstablishmentType::TravelIndustry), "travel-industry"),
            (api(Environment::Sandbox), "sandbox"),
            (api(EmployeeCount::ElevenToTwenty), "11-20"),
        ] {
            assert_eq!(value.unwrap().as_str(), Some(want));
        }
    }

    #[test]
    fn rejects_bad_values() {
        let bad_date = MINIMAL.replace("2025-03-01", "01.03.2025");
        assert!(serde_json::from_str::<TradeRegistration>(&bad_date).is_err());
        let bad_country = MINIMAL.replace("\"AT\"", "\"XX\"");
        assert!(serde_json::from_str::<TradeRegistration>(&bad_country).is_err());
        let bad_signature = MINIMAL.replace("M0 0 L 10 5", "not a path");
        assert!(serde_json::from_str::<TradeRegistration>(&bad_signature).is_err());
        let bad_enum = MINIMAL.replace("\"self\"", "\"premium\"");
        assert!(serde_json::from_str::<TradeRegistration>(&bad_enum).is_err());
    }
}
