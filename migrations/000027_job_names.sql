-- drydock schema, version 27: reserved (job_names); filled in by the change that needs it.
SELECT 1;
