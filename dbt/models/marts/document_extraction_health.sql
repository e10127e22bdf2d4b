-- One row per current document: how its chunks fared in extraction, and an overall health label.
with chunks as (
    select document_id, count(*) as chunks from {{ source('kg', 'chunks') }} group by document_id
),
extractions as (
    select x.document_id,
           count(distinct x.chunk_id) as chunks_extracted,
           count(distinct x.chunk_id) filter (where x.status = 'error') as chunks_failed,
           count(distinct x.chunk_id) filter (where x.status = 'ok' and x.mention_count = 0) as chunks_without_entities,
           coalesce(sum(x.mention_count) filter (where x.status = 'ok'), 0)::bigint as mentions,
           coalesce(sum(x.relation_count) filter (where x.status = 'ok'), 0)::bigint as relations,
           coalesce(sum(x.attribute_count) filter (where x.status = 'ok'), 0)::bigint as attribute_observations,
           coalesce(sum(x.bad_lines), 0)::bigint as bad_lines,
           string_agg(distinct x.extractor_version, ', ' order by x.extractor_version) as extractor_versions,
           max(x.extracted_at) as last_extracted_at
    from {{ source('kg', 'chunk_extractions') }} x
    join {{ source('kg', 'chunks') }} c on c.chunk_id = x.chunk_id
    group by x.document_id
)
select d.document_id, d.title, d.source_type, d.status as document_status, d.error as document_error,
       coalesce(c.chunks, 0) as chunks,
       coalesce(x.chunks_extracted, 0) as chunks_extracted,
       coalesce(x.chunks_failed, 0) as chunks_failed,
       coalesce(x.chunks_without_entities, 0) as chunks_without_entities,
       coalesce(x.mentions, 0) as mentions,
       coalesce(x.relations, 0) as relations,
       coalesce(x.attribute_observations, 0) as attribute_observations,
       coalesce(x.bad_lines, 0) as bad_lines,
       x.extractor_versions,
       x.last_extracted_at,
       case when d.status <> 'ok' then 'unreadable'
            when coalesce(c.chunks, 0) = 0 then 'no_chunks'
            when coalesce(x.chunks_failed, 0) > 0 then 'failed_chunks'
            when coalesce(x.chunks_extracted, 0) < c.chunks then 'not_extracted'
            when x.chunks_without_entities = c.chunks then 'no_entities'
            else 'ok' end as health
from {{ source('kg', 'documents') }} d
left join chunks c using (document_id)
left join extractions x using (document_id)
where d.valid_until is null
