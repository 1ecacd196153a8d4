-- PostgreSQL: how long one attempt to lock the source may wait (SET LOCAL: until the transaction
-- ends), so a run blocked by another session can say so while it keeps waiting.
SELECT set_config('lock_timeout', $timeout, TRUE)
