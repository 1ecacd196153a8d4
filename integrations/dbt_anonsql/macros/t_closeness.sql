{#- t-closeness of a sensitive column S (Li et al. 2007): within every equivalence class E over the
    quasi-identifiers (NULL = ⊥ a value of its own in both), the distance D[p_E, p] from E's
    distribution of S to the whole table's p is at most t. The distance is anonsql's: over the m
    sorted values v_1..v_m of S (NULL last), numbers and dates take the ordered distance
    1/(m-1) sum_i |sum_{j<=i} (p_E(v_j) - p(v_j))|, other columns the equal distance
    1/2 sum_v |p_E(v) - p(v)|. Returns the classes farther than t, smallest first, with the totals:
    the same verdict as `anonsql check --t-closeness`. -#}
{% test t_closeness(model, quasi_identifiers=none, sensitive=none, t=0.2) %}
  {%- set qi = dbt_anonsql.resolve_columns('t_closeness', model, quasi_identifiers, 'qi', 'quasi_identifiers') -%}
  {%- set s = dbt_anonsql.resolve_column('t_closeness', model, sensitive, 'sensitive', 'sensitive') -%}
  {%- if t is string or t is boolean or t is none or t < 0 or t > 1 -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql.t_closeness: t must be a number from 0 to 1, not " ~ t) }}
  {%- endif -%}
  {%- if execute and s in qi -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql.t_closeness: sensitive column " ~ s ~ " is also a quasi-identifier") }}
  {%- endif -%}
  {{ return(adapter.dispatch('t_closeness', 'dbt_anonsql')(model, qi, s, t, dbt_anonsql.column_kind(model, s) in ('integer', 'float', 'decimal', 'date', 'timestamp'))) }}
{% endtest %}

{% macro default__t_closeness(model, qi, s, t, ordered) %}
-- cells: rows per class e and value v; vals: the table's values, numbered i (NULL last)
WITH cells AS (
  SELECT {{ dbt_anonsql.quoted(qi) }}, DENSE_RANK() OVER (ORDER BY {{ dbt_anonsql.quoted(qi) }}) AS e,
         {{ adapter.quote(s) }} AS v, COUNT(*) AS n
  FROM {{ model }}
  GROUP BY {{ dbt_anonsql.quoted(qi) }}, {{ adapter.quote(s) }}
), vals AS (
  SELECT v, SUM(n) AS n_v, ROW_NUMBER() OVER (ORDER BY v NULLS LAST) AS i
  FROM cells
  GROUP BY v
), sizes AS (
  SELECT e, {{ dbt_anonsql.quoted(qi) }}, SUM(n) AS size
  FROM cells
  GROUP BY e, {{ dbt_anonsql.quoted(qi) }}
), grid AS (
  -- p_E(v_i) - p(v_i) for every class and value
  SELECT z.e, x.i,
         CAST(COALESCE(c.n, 0) AS {{ dbt_anonsql.double_type() }}) / z.size
           - CAST(x.n_v AS {{ dbt_anonsql.double_type() }}) / (SELECT SUM(n_v) FROM vals) AS diff
  FROM sizes AS z
  CROSS JOIN vals AS x
  LEFT JOIN cells AS c ON c.e = z.e AND {{ dbt_anonsql.null_safe_equal('c.v', 'x.v') }}
), cumulative AS (
  SELECT e, diff, SUM(diff) OVER (PARTITION BY e ORDER BY i) AS cum
  FROM grid
), distances AS (
  SELECT e,
  {%- if ordered %}
         SUM(ABS(cum)) / GREATEST((SELECT COUNT(*) FROM vals) - 1, 1) AS distance
  {%- else %}
         SUM(ABS(diff)) / 2 AS distance
  {%- endif %}
  FROM cumulative
  GROUP BY e
)
SELECT {{ dbt_anonsql.quoted(qi, 'z') }}, z.size AS group_size, d.distance,
       COUNT(*) OVER () AS violating_groups,
       SUM(z.size) OVER () AS violating_rows
FROM sizes AS z
JOIN distances AS d ON d.e = z.e
WHERE d.distance > {{ t }}
ORDER BY z.size, {{ dbt_anonsql.quoted(qi, 'z') }}
{% endmacro %}
