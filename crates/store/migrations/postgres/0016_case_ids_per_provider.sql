-- Tax registration ids are unique per provider, not across the service
-- (docs/adr/0006-case-ids-per-provider.md): `public_id` is the id the provider chose or was given
-- (`tax_registration_id` in its API), `id` stays the case's key, which documents, history and the
-- outbox refer to. A case whose chosen id another provider's case has as its key gets a key of
-- its own; every existing case keeps its id as both. Providers find their cases by
-- (provider_id, public_id), which the unique index also keeps unique per provider.
ALTER TABLE tax_registrations ADD COLUMN public_id UUID;
UPDATE tax_registrations SET public_id = id;
ALTER TABLE tax_registrations ALTER COLUMN public_id SET NOT NULL;
CREATE UNIQUE INDEX tax_registrations_public_id ON tax_registrations (provider_id, public_id);
-- A row written without `public_id` (by an instance still on the release before this one,
-- during a rolling restart) gets its key as its public id, as the rows above did, instead of
-- failing the NOT NULL.
CREATE FUNCTION tax_registrations_public_id_default() RETURNS TRIGGER
LANGUAGE plpgsql AS $$
BEGIN
    NEW.public_id := NEW.id;
    RETURN NEW;
END;
$$;
CREATE TRIGGER tax_registrations_public_id_default BEFORE INSERT ON tax_registrations
FOR EACH ROW WHEN (NEW.public_id IS NULL) EXECUTE FUNCTION tax_registrations_public_id_default();
