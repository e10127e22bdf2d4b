-- The documents found through an entity's source chunks are the documents its mentions were counted in.
select entity_id, document_count, len(document_ids) as documents_listed
from {{ ref('entity_profile') }}
where document_count <> len(document_ids)
