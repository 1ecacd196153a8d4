from anonsql.dbt import kanon


def model(dbt, session):
    """The same release as patients_k3, as a dbt Python model: anonsql's kanon job on the seed."""
    dbt.config(materialized="table")
    return kanon(dbt, session, dbt.ref("patients"), qi=["age", "sex", "zip"], k=3,
                 l_diversity={"diagnosis": 2}, drop=["patient_id"], seed=0)
