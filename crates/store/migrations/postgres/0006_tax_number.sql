-- The tax number (Steuernummer) the tax office issued, recorded when the case completes.
ALTER TABLE tax_registrations ADD COLUMN tax_number TEXT;
