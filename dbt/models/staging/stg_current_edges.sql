select source_id, target_id, relation_type, weight
from {{ source('kg', 'graph_edges') }}
where valid_until is null
