-- Each current entity with its number of distinct neighbours and total edge weight.
with incident as (
    select source_id as entity_id, target_id as neighbour_id, weight from {{ ref('stg_current_edges') }}
    union all
    select target_id, source_id, weight from {{ ref('stg_current_edges') }}
)
select e.entity_id, e.name, e.entity_type, e.mention_count,
       count(distinct i.neighbour_id) as neighbours,
       coalesce(sum(i.weight), 0) as edge_weight
from {{ ref('stg_current_entities') }} e
left join incident i using (entity_id)
group by all
