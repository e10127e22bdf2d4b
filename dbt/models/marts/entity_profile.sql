-- One row per current entity: names, current attributes, degree and the documents it comes from.
with attributes as (
    select entity_id,
           map_from_entries(list(struct_pack(k := attr_key, v := value) order by attr_key)) as current_attributes,
           count(*) as attribute_count
    from {{ source('kg', 'entity_attributes') }}
    where valid_until is null
    group by entity_id
),
incident as (
    select source_id as entity_id, target_id as neighbour_id, 'out' as direction from {{ ref('stg_current_edges') }}
    union all
    select target_id, source_id, 'in' from {{ ref('stg_current_edges') }}
),
degree as (
    select entity_id,
           count(*) filter (where direction = 'out') as out_degree,
           count(*) filter (where direction = 'in') as in_degree,
           count(distinct neighbour_id) as neighbours
    from incident
    group by entity_id
),
documents as (
    select e.entity_id, list(distinct c.document_id order by c.document_id) as document_ids
    from {{ ref('stg_current_entities') }} e, unnest(e.source_chunk_ids) as u(chunk_id)
    join {{ source('kg', 'chunks') }} c on c.chunk_id = u.chunk_id
    group by e.entity_id
)
select e.entity_id, e.name, e.entity_type,
       e.aliases, len(e.aliases) as alias_count,
       coalesce(a.current_attributes, map()) as current_attributes, coalesce(a.attribute_count, 0) as attribute_count,
       coalesce(d.out_degree, 0) as out_degree, coalesce(d.in_degree, 0) as in_degree,
       coalesce(d.out_degree, 0) + coalesce(d.in_degree, 0) as degree, coalesce(d.neighbours, 0) as neighbours,
       e.mention_count, e.document_count, coalesce(docs.document_ids, []) as document_ids,
       e.first_seen, e.last_seen
from {{ ref('stg_current_entities') }} e
left join attributes a using (entity_id)
left join degree d using (entity_id)
left join documents docs using (entity_id)
