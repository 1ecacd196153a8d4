-- A dbt Python model's input (the relation its code passes, e.g. dbt.ref('patients')), bound as a
-- subquery of that relation's own query, written to the model's private input table for the job.
CREATE TABLE $out AS SELECT * FROM $query
