-- drydock schema (PostgreSQL), version 16: reserved (job_overlap); filled in by the change that needs it.
SELECT 1;
