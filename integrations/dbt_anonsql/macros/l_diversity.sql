{#- l-diversity of a sensitive column S within the equivalence classes E over the
    quasi-identifiers (Machanavajjhala et al. 2007; NULL = ⊥ a value of its own in both).
    kind='distinct': E holds at least l distinct S values. kind='entropy': exp(H(E)) >= l, with
    H(E) = -sum_v p_E(v) ln p_E(v), within anonsql's tolerance ln l - 1e-9. Returns the classes
    below l, smallest first, with the totals. The same verdict as `anonsql check --l-diversity`
    (distinct) and the entropy l of its report. -#}
{% test l_diversity(model, quasi_identifiers=none, sensitive=none, l=2, kind='distinct') %}
  {%- set qi = dbt_anonsql.resolve_columns('l_diversity', model, quasi_identifiers, 'qi', 'quasi_identifiers') -%}
  {%- set s = dbt_anonsql.resolve_column('l_diversity', model, sensitive, 'sensitive', 'sensitive') -%}
  {%- if kind not in ('distinct', 'entropy') -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql.l_diversity: kind must be 'distinct' or 'entropy', not " ~ kind) }}
  {%- endif -%}
  {%- if kind == 'distinct' -%}
    {%- set l = dbt_anonsql.whole_number('l_diversity', 'l', l, 1) -%}
  {%- elif l is string or l is boolean or l is none or l < 1 -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql.l_diversity: l must be a number >= 1, not " ~ l) }}
  {%- endif -%}
  {%- if execute and s in qi -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql.l_diversity: sensitive column " ~ s ~ " is also a quasi-identifier") }}
  {%- endif -%}
  {{ return(adapter.dispatch('l_diversity', 'dbt_anonsql')(model, qi, s, l, kind)) }}
{% endtest %}

{% macro default__l_diversity(model, qi, s, l, kind) %}
-- per class E: distinct S values (NULL one of them) and the entropy H(E)
WITH cells AS (
  SELECT {{ dbt_anonsql.quoted(qi) }}, {{ adapter.quote(s) }} AS s_value, COUNT(*) AS n
  FROM {{ model }}
  GROUP BY {{ dbt_anonsql.quoted(qi) }}, {{ adapter.quote(s) }}
), classes AS (
  SELECT {{ dbt_anonsql.quoted(qi) }}, SUM(n) AS group_size, COUNT(*) AS distinct_values,
         LN(CAST(SUM(n) AS {{ dbt_anonsql.double_type() }}))
           - SUM(n * LN(CAST(n AS {{ dbt_anonsql.double_type() }}))) / SUM(n) AS entropy
  FROM cells
  GROUP BY {{ dbt_anonsql.quoted(qi) }}
)
SELECT {{ dbt_anonsql.quoted(qi, 'c') }}, c.group_size, c.distinct_values, EXP(c.entropy) AS entropy_l,
       COUNT(*) OVER () AS violating_groups,
       SUM(c.group_size) OVER () AS violating_rows
FROM classes AS c
{%- if kind == 'distinct' %}
WHERE c.distinct_values < {{ l }}
{%- else %}
WHERE c.entropy < LN(CAST({{ l }} AS {{ dbt_anonsql.double_type() }})) - 1e-9
{%- endif %}
ORDER BY c.group_size, {{ dbt_anonsql.quoted(qi, 'c') }}
{% endmacro %}
