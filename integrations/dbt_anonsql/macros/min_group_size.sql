{#- Minimum group size of an aggregate (or row-level) model: every combination of the dimensions
    (NULL a value of its own) counts at least n contributors. Without entity_key a row is a
    contributor; with it, the distinct entities (an entity with NULL key counts once per group).
    The `anonsql tables --min-count` threshold rule read on the published table: returns the groups
    below n, smallest first, with the totals. -#}
{% test min_group_size(model, dimensions=none, n=5, entity_key=none) %}
  {%- set dims = dbt_anonsql.resolve_columns('min_group_size', model, dimensions, 'qi', 'dimensions') -%}
  {%- set n = dbt_anonsql.whole_number('min_group_size', 'n', n, 1) -%}
  {{ return(adapter.dispatch('min_group_size', 'dbt_anonsql')(model, dims, n, entity_key)) }}
{% endtest %}

{% macro default__min_group_size(model, dims, n, entity_key) %}
{%- set contributors = 'COUNT(*)' if entity_key is none else
    'COUNT(DISTINCT ' ~ adapter.quote(entity_key) ~ ') + MAX(CASE WHEN ' ~ adapter.quote(entity_key)
    ~ ' IS NULL THEN 1 ELSE 0 END)' -%}
-- groups of the dimensions counting fewer than n contributors
WITH groups AS (
  SELECT {{ dbt_anonsql.quoted(dims) }}, {{ contributors }} AS group_size
  FROM {{ model }}
  GROUP BY {{ dbt_anonsql.quoted(dims) }}
)
SELECT {{ dbt_anonsql.quoted(dims, 'g') }}, g.group_size,
       COUNT(*) OVER () AS violating_groups,
       SUM(g.group_size) OVER () AS violating_rows
FROM groups AS g
WHERE g.group_size < {{ n }}
ORDER BY g.group_size, {{ dbt_anonsql.quoted(dims, 'g') }}
{% endmacro %}
