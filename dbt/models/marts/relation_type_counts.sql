-- How often each relation type occurs in the current graph, and how much evidence it has.
with edge_documents as (
    select relation_type, unnest(document_ids) as document_id from {{ ref('stg_current_edges') }}
),
documents as (
    select relation_type, count(distinct document_id) as documents from edge_documents group by relation_type
)
select e.relation_type,
       count(*) as edges,
       sum(e.weight)::bigint as supporting_mentions,
       count(distinct e.source_id) as distinct_sources,
       count(distinct e.target_id) as distinct_targets,
       coalesce(any_value(d.documents), 0) as documents,
       count(*) / sum(count(*)) over () as share_of_edges
from {{ ref('stg_current_edges') }} e
left join documents d using (relation_type)
group by e.relation_type
