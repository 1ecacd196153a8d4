-- The published patients: anonsql makes them 3-anonymous over age, sex and zip with at least 2
-- distinct diagnoses per class, drops patient_id (its role is identifier), and writes this model.
{{ config(materialized='anonsql_kanon', k=3, l_diversity=2, seed=0) }}
select * from {{ ref('patients') }}
