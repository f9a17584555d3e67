//! Official documents rendered as PDF: the GewA 1 (Gewerbe-Anmeldung) and the power of attorney.
