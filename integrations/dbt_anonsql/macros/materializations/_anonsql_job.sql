{#- The fixing half: a model materialized by an anonsql job. The model's SQL is first written to a
    private input table beside it (`<model>__anonsql_private_input`: it holds the original values,
    and is dropped whatever the job's outcome); then anonsql runs the job and writes the model's
    relation itself, re-checked by anonsql's SQL before it commits. Where dbt runs Python in its own
    process (dbt-duckdb) the job runs there, on a cursor of dbt's connection. Elsewhere (dbt-postgres)
    it runs under `anonsql dbt build`, which runs dbt in its process: the materialization logs a
    request (anonsql-dbt-job {json}: names and options, never a value or a credential) that
    anonsql's callback runs before the log call returns (anonsql/release/dbt_build.py); under a plain
    `dbt build` the materialization refuses in one line. -#}

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

{#- Before the job: refuse where it cannot run, write the model's SQL to the private input table,
    commit, and return {target, new, code, request}: the Python module of the job where dbt runs
    Python in its process (the materialization itself runs it: dbt lets only a materialization's own
    `statement` submit Python), else the request it logs for `anonsql dbt build`. Then the
    materialization calls anonsql_job_done. -#}
{% macro anonsql_job_start(function, kwargs) %}
  {%- set target_relation = this.incorporate(type='table') -%}
  {%- set in_process = adapter.dispatch('runs_python_in_process', 'dbt_anonsql')() -%}
  {%- set scheme = adapter.dispatch('anonsql_database_url_scheme', 'dbt_anonsql')() -%}
  {%- if not in_process and scheme is none -%}
    {{ exceptions.raise_compiler_error("materialized='anonsql_" ~ ('kanon' if function == 'k_anonymize' else 'safe_table')
       ~ "' on " ~ target_relation ~ ": anonsql runs its jobs on dbt-duckdb and dbt-postgres, not on dbt-"
       ~ adapter.type()) }}
  {%- endif -%}
  {%- if not in_process and not env_var('ANONSQL_DBT_BUILD', '') -%}
    {{ exceptions.raise_compiler_error("materialized='anonsql_" ~ ('kanon' if function == 'k_anonymize' else 'safe_table')
       ~ "' on " ~ target_relation ~ ": dbt-" ~ adapter.type() ~ " runs no Python in dbt's process, where anonsql "
       ~ "runs; build the project with `anonsql dbt build`") }}
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
  {%- if in_process -%}
    {{ return({'target': target_relation, 'new': existing is none,
               'code': dbt_anonsql._anonsql_python(function, input_relation, kwargs)}) }}
  {%- endif -%}
  {{ return({'target': target_relation, 'new': existing is none, 'code': none,
             'request': 'anonsql-dbt-job ' ~ tojson({'adapter': adapter.type(), 'function': function,
                                                     'scheme': scheme,
                                                     'input': dbt_anonsql._anonsql_name(input_relation),
                                                     'kwargs': kwargs})}) }}
{% endmacro %}

{#- After the Python job, or for `anonsql dbt build` (no code: the request logged, which anonsql
    runs before log returns; then the model's rows counted, the main statement of the run results):
    the relation in dbt's cache, the post-hooks, the relation returned. -#}
{% macro anonsql_job_done(job) %}
  {%- if not job.code -%}
    {% do log(job.request) %}
    {% call statement('main') -%} select count(*) from {{ job.target }} {%- endcall %}
  {%- endif %}
  {% do adapter.cache_added(job.target) if job.new %}
  {{ run_hooks(post_hooks, inside_transaction=True) }}
  {% do adapter.commit() %}
  {{ run_hooks(post_hooks, inside_transaction=False) }}
  {{ return({'relations': [job.target]}) }}
{% endmacro %}

{#- Does the adapter run a Python job in dbt's own process, on its connection? -#}
{% macro default__runs_python_in_process() %}{{ return(false) }}{% endmacro %}
{% macro duckdb__runs_python_in_process() %}{{ return(true) }}{% endmacro %}

{#- The scheme of the URL anonsql opens the adapter's database by under `anonsql dbt build`
    (anonsql.connect); none where anonsql cannot. -#}
{% macro default__anonsql_database_url_scheme() %}{{ return(none) }}{% endmacro %}
{% macro postgres__anonsql_database_url_scheme() %}{{ return('postgresql') }}{% endmacro %}
