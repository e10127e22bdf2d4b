-- Current canonical entities (the row with valid_until NULL).
select entity_id, name, entity_type, aliases, mention_count, document_count, first_seen, last_seen, source_chunk_ids
from {{ source('kg', 'entities') }}
where valid_until is null
