{#- materialized='anonsql_kanon': the model's rows made k-anonymous over the quasi-identifiers by
    anonsql's bottom-up cell suppression (Kameya & Hayashi 2016; `anonsql kanon`). Config: qi
    (default: the columns with meta anonsql role qi), k, class (default: role class), cost, seed,
    l_diversity ({column: l}, or a whole number l for every column of role sensitive), drop
    (default: the columns of role identifier, unless pseudonymized), pseudonymize (keyed by
    $ANONSQL_PSEUDONYM_KEY or key_file), and the other k_anonymize options entropy_l, t_closeness,
    alpha, key_file. -#}
{% materialization anonsql_kanon, default %}
  {%- set qi = config.get('qi') or dbt_anonsql.declared_columns(model, 'qi') -%}
  {%- set classes = dbt_anonsql.declared_columns(model, 'class') -%}
  {%- set identifiers = dbt_anonsql.declared_columns(model, 'identifier') -%}
  {%- set sensitive = dbt_anonsql.declared_columns(model, 'sensitive') -%}
  {%- if not qi -%}
    {{ exceptions.raise_compiler_error("materialized='anonsql_kanon' on " ~ this ~ ": give config qi or declare "
       ~ "columns with meta: {anonsql: {role: qi}}") }}
  {%- endif -%}
  {%- set pseudonymize = config.get('pseudonymize') -%}
  {%- set kwargs = {'qi': qi, 'class_column': config.get('class', classes[0] if classes else none),
                    'k': config.get('k', 5), 'cost': config.get('cost', 'mar'), 'seed': config.get('seed', 0),
                    'drop': config.get('drop', none if pseudonymize else identifiers or none),
                    'pseudonymize': pseudonymize} -%}
  {%- set l = config.get('l_diversity') -%}
  {%- if l is number -%}
    {%- set by_column = {} -%}
    {%- for s in sensitive -%}{%- do by_column.update({s: l}) -%}{%- endfor -%}
    {%- set l = by_column -%}
  {%- endif -%}
  {%- for option, value in [('l_diversity', l), ('entropy_l', config.get('entropy_l')),
                            ('t_closeness', config.get('t_closeness')), ('alpha', config.get('alpha')),
                            ('key_file', config.get('key_file'))] if value is not none -%}
    {%- do kwargs.update({option: value}) -%}
  {%- endfor -%}
  {%- set job = dbt_anonsql.anonsql_job_start('k_anonymize', kwargs) -%}
  {%- if job.code -%}
    {% call statement('main', language='python') -%}{{ job.code }}{%- endcall %}
  {%- endif %}
  {{ return(dbt_anonsql.anonsql_job_done(job)) }}
{% endmaterialization %}
