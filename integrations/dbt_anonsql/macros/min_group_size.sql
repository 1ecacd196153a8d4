{#- Minimum group size of a row-level or aggregate model: every combination of the dimensions
    (NULL a value of its own) counts at least n contributors. A row is a contributor; with
    entity_key, a distinct entity (a NULL key counts once per group); with count_column (an
    aggregate, e.g. an anonsql_safe_table's `value`), the sum of its non-NULL counts, a group whose
    counts are all NULL (suppressed) being unpublished, and a count of 0 an empty cell (published
    as anonsql publishes it, its zero_unsafe option aside). The `anonsql tables --min-count` rule
    read on a table: returns the groups of 1 to n - 1, smallest first, with the totals. -#}
{% test min_group_size(model, dimensions=none, n=5, entity_key=none, count_column=none) %}
  {%- set dims = dbt_anonsql.resolve_columns('min_group_size', model, dimensions, 'qi', 'dimensions') -%}
  {%- set n = dbt_anonsql.whole_number('min_group_size', 'n', n, 1) -%}
  {%- if entity_key is not none and count_column is not none -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql.min_group_size: give entity_key or count_column, not both") }}
  {%- endif -%}
  {{ return(adapter.dispatch('min_group_size', 'dbt_anonsql')(model, dims, n, entity_key, count_column)) }}
{% endtest %}

{% macro default__min_group_size(model, dims, n, entity_key, count_column) %}
{%- if count_column is not none -%}
  {%- set contributors = 'SUM(' ~ adapter.quote(count_column) ~ ')' -%}
{%- elif entity_key is not none -%}
  {%- set contributors = 'COUNT(DISTINCT ' ~ adapter.quote(entity_key) ~ ') + MAX(CASE WHEN '
      ~ adapter.quote(entity_key) ~ ' IS NULL THEN 1 ELSE 0 END)' -%}
{%- else -%}
  {%- set contributors = 'COUNT(*)' -%}
{%- endif -%}
-- groups of the dimensions counting fewer than n contributors
WITH groups AS (
  SELECT {{ dbt_anonsql.quoted(dims) }}, {{ contributors }} AS group_size
  FROM {{ model }}
  GROUP BY {{ dbt_anonsql.quoted(dims) }}
  {%- if count_column is not none %}
  HAVING COUNT({{ adapter.quote(count_column) }}) > 0
  {%- endif %}
)
SELECT {{ dbt_anonsql.quoted(dims, 'g') }}, g.group_size,
       COUNT(*) OVER () AS violating_groups,
       SUM(g.group_size) OVER () AS violating_rows
FROM groups AS g
WHERE g.group_size > 0 AND g.group_size < {{ n }}
ORDER BY g.group_size, {{ dbt_anonsql.quoted(dims, 'g') }}
{% endmacro %}
