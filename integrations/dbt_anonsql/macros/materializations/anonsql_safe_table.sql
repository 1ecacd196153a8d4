{#- materialized='anonsql_safe_table': a safe aggregate table of the model's rows by anonsql's
    primary and secondary cell suppression (`anonsql tables`): counts (or sums of `measure`) by
    dims with their margins, cells below min_count contributors suppressed, audited by the
    attacker's linear program (needs anonsql's `tables` extra). Config: dims (default: the columns
    with meta anonsql role qi), min_count, margins, measure, contributor, dominance, p_percent,
    protection, zero_unsafe. anonsql also writes the private `<model>_private_audit` beside it. -#}
{% materialization anonsql_safe_table, default %}
  {%- set dims = config.get('dims') or dbt_anonsql.declared_columns(model, 'qi') -%}
  {%- if not dims -%}
    {{ exceptions.raise_compiler_error("materialized='anonsql_safe_table' on " ~ this ~ ": give config dims or "
       ~ "declare columns with meta: {anonsql: {role: qi}}") }}
  {%- endif -%}
  {%- set kwargs = {'dims': dims, 'min_count': config.get('min_count', 3)} -%}
  {%- for option in ['margins', 'measure', 'contributor', 'dominance', 'p_percent', 'protection', 'zero_unsafe']
        if config.get(option) is not none -%}
    {%- do kwargs.update({option: config.get(option)}) -%}
  {%- endfor -%}
  {%- set job = dbt_anonsql.anonsql_job_start('safe_table', kwargs) -%}
  {%- if job.code -%}
    {% call statement('main', language='python') -%}{{ job.code }}{%- endcall %}
  {%- endif %}
  {{ return(dbt_anonsql.anonsql_job_done(job)) }}
{% endmaterialization %}
