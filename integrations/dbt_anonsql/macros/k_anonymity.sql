{#- k-anonymity: every equivalence class E (the rows sharing one combination of the
    quasi-identifiers, NULL = ⊥ a value of its own) holds |E| >= k rows. Returns the classes with
    |E| < k, smallest first, each with the total of such classes and of the rows they hold, so
    `dbt test --store-failures` shows what failed. The same verdict as `anonsql check --k`. -#}
{% test k_anonymity(model, quasi_identifiers=none, k=5) %}
  {%- set qi = dbt_anonsql.resolve_columns('k_anonymity', model, quasi_identifiers, 'qi', 'quasi_identifiers') -%}
  {%- set k = dbt_anonsql.whole_number('k_anonymity', 'k', k, 1) -%}
  {{ return(adapter.dispatch('k_anonymity', 'dbt_anonsql')(model, qi, k)) }}
{% endtest %}

{% macro default__k_anonymity(model, qi, k) %}
-- equivalence classes E over the quasi-identifiers with |E| < k
WITH classes AS (
  SELECT {{ dbt_anonsql.quoted(qi) }}, COUNT(*) AS group_size
  FROM {{ model }}
  GROUP BY {{ dbt_anonsql.quoted(qi) }}
  HAVING COUNT(*) < {{ k }}
)
SELECT {{ dbt_anonsql.quoted(qi, 'c') }}, c.group_size,
       COUNT(*) OVER () AS violating_groups,
       SUM(c.group_size) OVER () AS violating_rows
FROM classes AS c
ORDER BY c.group_size, {{ dbt_anonsql.quoted(qi, 'c') }}
{% endmacro %}
