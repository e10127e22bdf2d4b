-- Every version of every entity attribute, in document time, with the entity's name.
select a.attribute_id, a.entity_id, e.name as entity_name, e.entity_type, a.attr_key, a.value,
       a.valid_from, a.valid_until,
       row_number() over (partition by a.entity_id, a.attr_key order by a.valid_from) as version,
       a.valid_until is null as is_current,
       a.supersedes_value, a.superseded_by_value,
       a.confidence, a.observation_count, a.source_document_ids
from {{ source('kg', 'entity_attributes') }} a
join {{ ref('stg_current_entities') }} e using (entity_id)
