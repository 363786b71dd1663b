-- drydock schema, version 26: reserved (job_overlap); filled in by the change that needs it.
SELECT 1;
