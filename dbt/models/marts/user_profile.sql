-- One row per chat user: the name they go by, the person entity it names, and what is known about them.
with facts as (
    select user_id,
           count(*) filter (where is_active) as active_facts,
           count(*) filter (where is_active and source = 'auto_extraction') as learned_facts,
           count(*) filter (where is_active and source <> 'auto_extraction') as manual_facts,
           count(*) filter (where superseded_by is not null) as superseded_facts,
           count(*) filter (where duplicate_of is not null) as duplicates_set_aside,
           max(learned_at) as last_learned_at
    from {{ source('kg', 'user_facts') }}
    group by user_id
),
by_type as (
    select user_id, map(list(fact_type order by fact_type), list(n order by fact_type)) as facts_by_type
    from (
        select user_id, fact_type, count(*) as n
        from {{ source('kg', 'user_facts') }}
        where is_active
        group by user_id, fact_type
    )
    group by user_id
),
users as (
    -- chat speakers, and users known only from manual facts
    select user_id from {{ source('kg', 'chat_users') }}
    union
    select user_id from {{ source('kg', 'user_facts') }}
)
select u.user_id,
       c.name,
       c.name_source,
       c.entity_id as person_entity_id,
       c.entity_name as person_entity_name,
       coalesce(c.message_count, 0) as message_count,
       coalesce(c.document_count, 0) as conversation_count,
       c.first_message_at,
       c.last_message_at,
       coalesce(f.active_facts, 0) as active_facts,
       coalesce(f.learned_facts, 0) as learned_facts,
       coalesce(f.manual_facts, 0) as manual_facts,
       coalesce(f.superseded_facts, 0) as superseded_facts,
       coalesce(f.duplicates_set_aside, 0) as duplicates_set_aside,
       coalesce(t.facts_by_type, map()) as facts_by_type,
       f.last_learned_at
from users u
left join {{ source('kg', 'chat_users') }} c using (user_id)
left join facts f using (user_id)
left join by_type t using (user_id)
