{#- Columns of a tested model: given as arguments, else read from the model's column meta
    `meta: {anonsql: {role: qi|identifier|sensitive|class}}` (the one place columns are declared). -#}

{#- The dbt node (model, seed, snapshot or source) whose relation `model` is, or none (a `where:` subquery). -#}
{% macro _node_of(model) %}
  {%- if not execute or graph is not defined or model is string -%}{{ return(none) }}{%- endif -%}
  {%- for node in (graph.nodes.values() | list) + (graph.sources.values() | list)
        if node.resource_type in ('model', 'seed', 'snapshot', 'source') -%}
    {%- if (node.identifier if node.resource_type == 'source' else (node.alias or node.name)) | lower
            == (model.identifier or '') | lower
          and (node.schema or '') | lower == (model.schema or '') | lower -%}
      {{ return(node) }}
    {%- endif -%}
  {%- endfor -%}
  {{ return(none) }}
{% endmacro %}

{#- The names of the columns of `model` (a relation) whose meta.anonsql.role is `role`, in the order of its yml. -#}
{% macro columns_with_role(model, role) %}
  {{ return(dbt_anonsql.declared_columns(dbt_anonsql._node_of(model), role)) }}
{% endmacro %}

{#- The same for a node (the model being built, or one of the graph): `columns.<name>.meta.anonsql.role`
    (or under the column's config.meta). -#}
{% macro declared_columns(node, role) %}
  {%- set found = [] -%}
  {%- if node is not none -%}
    {%- for name, column in (node.columns or {}).items() -%}
      {%- set config_meta = (column.config or {}).get('meta') or {} if column.config is defined else {} -%}
      {%- set declared = (column.meta or {}).get('anonsql') or config_meta.get('anonsql') or {} -%}
      {%- if declared.get('role') == role -%}{%- do found.append(column.name or name) -%}{%- endif -%}
    {%- endfor -%}
  {%- endif -%}
  {{ return(found) }}
{% endmacro %}

{#- `given` as a list of names (one string is one name), else the columns of `role`; an error naming
    the test when neither gives any. -#}
{% macro resolve_columns(test, model, given, role, argument) %}
  {%- if given is none -%}
    {%- set names = dbt_anonsql.columns_with_role(model, role) -%}
  {%- elif given is string -%}
    {%- set names = [given] -%}
  {%- else -%}
    {%- set names = given | list -%}
  {%- endif -%}
  {%- if names | length == 0 and not execute -%}
    {{ return(['parsing']) }}  {#- the graph is read when the test runs, not while dbt parses it -#}
  {%- elif names | length == 0 -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql." ~ test ~ " on " ~ model ~ ": give " ~ argument
       ~ " or declare columns with meta: {anonsql: {role: " ~ role ~ "}}") }}
  {%- endif -%}
  {{ return(names) }}
{% endmacro %}

{#- One column: given, else the single column of `role`. -#}
{% macro resolve_column(test, model, given, role, argument) %}
  {%- set names = dbt_anonsql.resolve_columns(test, model, given, role, argument) -%}
  {%- if names | length != 1 -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql." ~ test ~ " on " ~ model ~ ": " ~ argument
       ~ " is one column; found " ~ (names | join(', '))) }}
  {%- endif -%}
  {{ return(names[0]) }}
{% endmacro %}

{#- Column names quoted by the adapter and joined: `"a", "select"`. With `prefix`, each is qualified. -#}
{% macro quoted(names, prefix=none) %}
  {%- set parts = [] -%}
  {%- for name in names -%}
    {%- do parts.append((prefix ~ '.' if prefix else '') ~ adapter.quote(name)) -%}
  {%- endfor -%}
  {{- return(parts | join(', ')) -}}
{% endmacro %}

{#- A whole number >= `least`, else an error naming the test and the argument. -#}
{% macro whole_number(test, argument, value, least) %}
  {%- if value is none or value is string or value is boolean or (value | int) != value or value < least -%}
    {{ exceptions.raise_compiler_error("dbt_anonsql." ~ test ~ ": " ~ argument ~ " must be a whole number >= "
       ~ least ~ ", not " ~ value) }}
  {%- endif -%}
  {{ return(value | int) }}
{% endmacro %}

{#- Null-safe equality of two expressions (NULL, the suppressed value, equals NULL). -#}
{% macro null_safe_equal(left, right) %}
  {{- return(adapter.dispatch('null_safe_equal', 'dbt_anonsql')(left, right)) -}}
{% endmacro %}

{% macro default__null_safe_equal(left, right) %}
  {{- return(left ~ ' IS NOT DISTINCT FROM ' ~ right) -}}
{% endmacro %}

{#- anonsql's kind of column `name` of `model` (anonsql.catalog.type_kind): the first kind one of
    whose stems the type name contains (text first: `character varying` is text); the type name
    itself when none does, '' when the column or the relation is not known. -#}
{% macro column_kind(model, name) %}
  {%- if not execute or model is string -%}{{ return('') }}{%- endif -%}
  {%- set kinds = [('text', ['char', 'text', 'string', 'varchar', 'uuid', 'enum']), ('integer', ['int', 'serial']),
                   ('float', ['double', 'float', 'real']), ('decimal', ['decimal', 'numeric']), ('boolean', ['bool']),
                   ('timestamp', ['timestamp']), ('date', ['date'])] -%}
  {%- for column in adapter.get_columns_in_relation(model) if column.name == name -%}
    {%- set low = column.data_type | lower -%}
    {%- for kind, stems in kinds -%}
      {%- for stem in stems if stem in low -%}{{ return(kind) }}{%- endfor -%}
    {%- endfor -%}
    {{ return(low) }}
  {%- endfor -%}
  {{ return('') }}
{% endmacro %}

{#- `expression` matches the regular expression `pattern` (a search, as the patterns are anchored). -#}
{% macro regex_match(expression, pattern) %}
  {{- return(adapter.dispatch('regex_match', 'dbt_anonsql')(expression, pattern)) -}}
{% endmacro %}

{% macro default__regex_match(expression, pattern) %}
  {{- return('REGEXP_MATCHES(' ~ expression ~ ', ' ~ dbt_anonsql.literal(pattern) ~ ')') -}}
{% endmacro %}

{% macro postgres__regex_match(expression, pattern) %}
  {{- return('(' ~ expression ~ ' ~ ' ~ dbt_anonsql.literal(pattern) ~ ')') -}}
{% endmacro %}

{% macro spark__regex_match(expression, pattern) %}
  {{- return('(' ~ expression ~ ' RLIKE ' ~ dbt_anonsql.literal(pattern) ~ ')') -}}
{% endmacro %}

{#- A SQL string literal of `text`: quotes doubled; on Spark, whose literals read backslash escapes
    (and take '' as two literals joined), backslashes and quotes escaped by a backslash. -#}
{% macro literal(text) %}
  {{- return(adapter.dispatch('literal', 'dbt_anonsql')(text)) -}}
{% endmacro %}

{% macro default__literal(text) %}
  {{- return("'" ~ (text | replace("'", "''")) ~ "'") -}}
{% endmacro %}

{% macro spark__literal(text) %}
  {{- return("'" ~ (text | replace("\\", "\\\\") | replace("'", "\\'")) ~ "'") -}}
{% endmacro %}

{#- The SQL types the tests cast to: a double and a text (Spark spells them DOUBLE and STRING). -#}
{% macro double_type() %}{{ return(adapter.dispatch('double_type', 'dbt_anonsql')()) }}{% endmacro %}
{% macro default__double_type() %}{{ return('DOUBLE PRECISION') }}{% endmacro %}
{% macro spark__double_type() %}{{ return('DOUBLE') }}{% endmacro %}
{% macro text_type() %}{{ return(adapter.dispatch('text_type', 'dbt_anonsql')()) }}{% endmacro %}
{% macro default__text_type() %}{{ return('VARCHAR') }}{% endmacro %}
{% macro spark__text_type() %}{{ return('STRING') }}{% endmacro %}
