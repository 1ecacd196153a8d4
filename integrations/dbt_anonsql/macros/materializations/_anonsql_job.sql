{#- The fixing half: a model materialized by an anonsql job. The model's SQL is first written to a
    private input table beside it (`<model>__anonsql_private_input`: it holds the original values,
    and is dropped whatever the job's outcome); then anonsql's Python API runs on the adapter's own
    connection, in dbt's process, and writes the model's relation itself, re-checked by anonsql's
    SQL before it commits. Only adapters that run Python in dbt's process can (dbt-duckdb); the
    others refuse in one line. -#}

{#- `name` quoted as anonsql's table names are read (anonsql.sql.TableName.parse): "schema"."name". -#}
{% macro _anonsql_name(relation) %}
  {{- return('"' ~ (relation.schema | replace('"', '""')) ~ '"."' ~ (relation.identifier | replace('"', '""')) ~ '"') -}}
{% endmacro %}

{#- The Python module dbt-duckdb runs for the job: anonsql.<function>(connection, input, **kwargs). -#}
{% macro _anonsql_python(function, input_relation, kwargs) %}
import json

import anonsql

JOB = json.loads({{ tojson(tojson({'function': function, 'input': dbt_anonsql._anonsql_name(input_relation),
                                   'schema': input_relation.schema, 'identifier': input_relation.identifier,
                                   'kwargs': kwargs})) }})
RUN = {"k_anonymize": anonsql.k_anonymize, "safe_table": anonsql.safe_table}[JOB["function"]]


class dbtObj:
    def __init__(self, load_df_function):
        self.load_df_function = load_df_function


def model(dbt, con):
    """Run the job on a cursor of dbt's connection (dbt-duckdb wraps it; its cursor() is a plain
    DuckDB connection to the same database); the private input goes whatever happens."""
    quoted = '"{}"."{}"'.format(JOB["schema"].replace('"', '""'), JOB["identifier"].replace('"', '""'))
    cursor = con.cursor()
    try:
        report = RUN(cursor, JOB["input"], **JOB["kwargs"])
    finally:
        cursor.execute("DROP TABLE IF EXISTS " + quoted)
        cursor.close()
    if not report.ok:
        raise RuntimeError("anonsql " + JOB["function"] + " did not hold: " + "; ".join(report.lines()))
    return None


def materialize(df, con):
    """anonsql wrote the model's relation itself."""
{% endmacro %}

{#- Before the job: refuse on an adapter that cannot run it, write the model's SQL to the private
    input table, and return {target, input, code} (the Python module of the job). The materialization
    itself runs the code (dbt lets only a materialization's own `statement` submit Python), then
    calls anonsql_job_done. -#}
{% macro anonsql_job_start(function, kwargs) %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- if not adapter.dispatch('runs_python_in_process', 'dbt_anonsql')() -%}
    {{ exceptions.raise_compiler_error("materialized='anonsql_" ~ ('kanon' if function == 'k_anonymize' else 'safe_table')
       ~ "' on " ~ target_relation ~ ": dbt-" ~ adapter.type() ~ " runs no Python in dbt's process, where anonsql "
       ~ "runs; build the model with dbt-duckdb, or run `anonsql` on the table") }}
  {%- endif -%}
  {%- set input_relation = api.Relation.create(database=target_relation.database, schema=target_relation.schema,
        identifier=target_relation.identifier ~ '__anonsql_private_input', type='table') -%}
  {%- set existing = adapter.get_relation(database=target_relation.database, schema=target_relation.schema,
                                           identifier=target_relation.identifier) -%}
  {{ run_hooks(pre_hooks, inside_transaction=False) }}
  {{ run_hooks(pre_hooks, inside_transaction=True) }}
  {% do adapter.drop_relation(input_relation) %}
  {% call statement('anonsql_input') -%}
    {{ get_create_table_as_sql(False, input_relation, sql) }}
  {%- endcall %}
  {%- if existing is not none and existing.type != 'table' -%}
    {% do adapter.drop_relation(existing) %}
  {%- endif -%}
  {% do adapter.commit() %}
  {%- do kwargs.update({'out': dbt_anonsql._anonsql_name(target_relation), 'replace': true}) -%}
  {{ return({'target': target_relation, 'new': existing is none,
             'code': dbt_anonsql._anonsql_python(function, input_relation, kwargs)}) }}
{% endmacro %}

{#- After the job: the relation in dbt's cache, the post-hooks, the relation returned. -#}
{% macro anonsql_job_done(job) %}
  {% do adapter.cache_added(job.target) if job.new %}
  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {% do adapter.commit() %}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {{ return({'relations': [job.target]}) }}
{% endmacro %}

{#- Does the adapter run a Python job in dbt's own process, on its connection? -#}
{% macro default__runs_python_in_process() %}{{ return(false) }}{% endmacro %}
{% macro duckdb__runs_python_in_process() %}{{ return(true) }}{% endmacro %}
