-- A version ends where the next begins: valid_until is after valid_from, and only the last version is open.
select attribute_id, entity_id, attr_key, valid_from, valid_until
from {{ ref('attribute_timeline') }}
where (valid_until is not null and valid_until <= valid_from)
   or (is_current and superseded_by_value is not null)
