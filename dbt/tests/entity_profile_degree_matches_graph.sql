-- The profile's degree counts the same current edges as the graph nodes' degree.
select p.entity_id, p.degree, n.degree as graph_degree
from {{ ref('entity_profile') }} p
join {{ source('kg', 'graph_nodes') }} n on n.node_id = p.entity_id and n.valid_until is null
where p.degree <> n.degree
