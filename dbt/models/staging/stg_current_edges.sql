select edge_id, source_id, target_id, relation_type, weight, document_ids
from {{ source('kg', 'graph_edges') }}
where valid_until is null
