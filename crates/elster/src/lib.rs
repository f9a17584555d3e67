//! ElsterXML documents for the tax registration questionnaire (Fragebogen zur steuerlichen
//! Erfassung), the XSDs they are validated against, and the validation itself.
