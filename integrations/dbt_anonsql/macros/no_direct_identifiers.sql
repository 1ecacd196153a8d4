{#- No column reads as a direct identifier, by the rules of anonsql's warning
    (anonsql/identifiers.py, the constants copied here): its name holds an identifier's word (id,
    email, name, ...; split at `_`, spaces and CamelCase); it is unique (as many distinct non-NULL
    values as rows) or nearly so (distinct values >= half the rows and half the rows share their
    value with at most 4 others); >= 90% of its non-NULL values are e-mail addresses, UUIDs,
    phone numbers, digit strings of 9+ digits or whole numbers in scientific notation (text), or
    whole numbers of 9+ digits (numbers). A table of fewer than 2 rows passes. `columns` left out:
    every column not declared a quasi-identifier (meta anonsql role qi). Returns one row per
    column that reads as an identifier, with its measures and the total. -#}
{% test no_direct_identifiers(model, columns=none) %}
  {%- if columns is none -%}
    {%- set quasi = dbt_anonsql.columns_with_role(model, 'qi') | map('lower') | list -%}
    {%- set names = [] -%}
    {%- for column in adapter.get_columns_in_relation(model) if column.name | lower not in quasi -%}
      {%- do names.append(column.name) -%}
    {%- endfor -%}
  {%- else -%}
    {%- set names = dbt_anonsql.resolve_columns('no_direct_identifiers', model, columns, 'identifier', 'columns') -%}
  {%- endif -%}
  {{ return(adapter.dispatch('no_direct_identifiers', 'dbt_anonsql')(model, names)) }}
{% endtest %}

{#- The words of a column name, lower case: PatientId and patient_id -> patient, id (identifiers.name_words). -#}
{% macro name_words(name) %}
  {%- set spaced = modules.re.sub('([A-Z]+)([A-Z][a-z])', '\\1 \\2', modules.re.sub('([a-z0-9])([A-Z])', '\\1 \\2', name)) -%}
  {%- set words = [] -%}
  {%- for word in modules.re.split('[^A-Za-z0-9]+', spaced) if word -%}{%- do words.append(word | lower) -%}{%- endfor -%}
  {{ return(words) }}
{% endmacro %}

{% macro default__no_direct_identifiers(model, names) %}
{%- set name_words = ['id', 'ids', 'uuid', 'guid', 'ssn', 'nhs', 'mrn', 'passport', 'iban', 'email', 'mail', 'phone',
                      'telephone', 'mobile', 'fax', 'name', 'firstname', 'lastname', 'surname', 'fullname', 'username',
                      'login', 'patient', 'address', 'street', 'ip'] -%}
{%- set formats = [('e-mail addresses', '^[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\\.[A-Za-z]{2,}$', none),
                   ('UUIDs', '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$', none),
                   ('phone numbers', '^(\\+|00)?\\(?[0-9][0-9 ().-]{6,18}[0-9]$',
                    ['^([0-9]{4}[-./][0-9]{1,2}[-./][0-9]{1,2}|[0-9]{1,2}[-./][0-9]{1,2}[-./][0-9]{2,4})$',
                     '^[0-9]+([.,][0-9]+)?$']),
                   ('digit strings of 9 or more digits', '^[0-9]{9,}$', none),
                   ('whole numbers in scientific notation', '^[0-9](\\.[0-9]+)?[eE]\\+?(0?[89]|[1-9][0-9])$', none)] -%}
{%- if names | length == 0 %}
-- every column is a quasi-identifier: none to scan
SELECT CAST(NULL AS {{ dbt_anonsql.text_type() }}) AS column_name WHERE 1 = 0
{%- else %}
-- per column A: its non-NULL rows, |dom(A)|, the rows sharing their value with <= 4 others, and the
-- rows in an identifier's format
WITH total AS (
  SELECT COUNT(*) AS n_rows FROM {{ model }}
), measures AS (
{%- for name in names %}
  {%- set kind = dbt_anonsql.column_kind(model, name) %}
  {%- set by_name = (dbt_anonsql.name_words(name) | select('in', name_words) | list | length) > 0 %}
  {%- set v = 'CAST(g.v AS ' ~ dbt_anonsql.text_type() ~ ')' %}
  SELECT {{ dbt_anonsql.literal(name) }} AS column_name, {{ loop.index }} AS position,
         {{ 1 if by_name else 0 }} AS by_name,
         COUNT(*) AS n_distinct,
         COALESCE(SUM(g.n), 0) AS n_values,
         COALESCE(SUM(CASE WHEN g.n <= 5 THEN g.n ELSE 0 END), 0) AS n_few,
  {%- if kind == 'text' %}
    {%- for what, pattern, unless in formats %}
         COALESCE(SUM(CASE WHEN {{ dbt_anonsql.regex_match(v, pattern) }}
           {%- for other in (unless or []) %} AND NOT {{ dbt_anonsql.regex_match(v, other) }}{% endfor %}
           THEN g.n ELSE 0 END), 0) AS n_format_{{ loop.index }}{{ ',' if not loop.last }}
    {%- endfor %}
  {%- elif kind in ('integer', 'float', 'decimal') %}
         COALESCE(SUM(CASE WHEN ABS(g.v) >= 100000000 AND g.v = FLOOR(g.v) THEN g.n ELSE 0 END), 0) AS n_format_1,
         0 AS n_format_2, 0 AS n_format_3, 0 AS n_format_4, 0 AS n_format_5
  {%- else %}
         0 AS n_format_1, 0 AS n_format_2, 0 AS n_format_3, 0 AS n_format_4, 0 AS n_format_5
  {%- endif %}
  FROM (SELECT {{ adapter.quote(name) }} AS v, COUNT(*) AS n
        FROM {{ model }}
        WHERE {{ adapter.quote(name) }} IS NOT NULL
        GROUP BY {{ adapter.quote(name) }}) AS g
  {{ 'UNION ALL' if not loop.last }}
{%- endfor %}
), flagged AS (
  SELECT m.*, t.n_rows,
         CASE WHEN m.n_distinct = t.n_rows THEN 1 ELSE 0 END AS is_unique,
         CASE WHEN m.n_distinct >= 0.5 * t.n_rows AND m.n_few >= 0.5 * t.n_rows THEN 1 ELSE 0 END AS nearly_unique,
         CASE WHEN (m.n_format_1 > 0 AND m.n_format_1 >= 0.9 * m.n_values)
                OR (m.n_format_2 > 0 AND m.n_format_2 >= 0.9 * m.n_values)
                OR (m.n_format_3 > 0 AND m.n_format_3 >= 0.9 * m.n_values)
                OR (m.n_format_4 > 0 AND m.n_format_4 >= 0.9 * m.n_values)
                OR (m.n_format_5 > 0 AND m.n_format_5 >= 0.9 * m.n_values) THEN 1 ELSE 0 END AS by_format
  FROM measures AS m
  CROSS JOIN total AS t
)
SELECT column_name, n_rows, n_distinct, by_name, is_unique, nearly_unique, by_format,
       COUNT(*) OVER () AS violating_columns
FROM flagged
WHERE n_rows >= 2 AND (by_name = 1 OR is_unique = 1 OR nearly_unique = 1 OR by_format = 1)
ORDER BY position
{%- endif %}
{% endmacro %}
